// The ext_proc messages (protos/envoy/service/ext_proc/v3/external_processor.proto) as
// @grpc/proto-loader hands them over with gw's loader options: snake_case field names, enums as
// their names (a number when the value is not in the proto), unset message fields null, and the
// set member of a oneof named by the oneof's own field (`response`, `mutation`).
import type { ProtoStruct } from '../grpc/struct.ts';

export const EXT_PROC_PROTO = 'envoy/service/ext_proc/v3/external_processor.proto';
export const EXT_PROC_SERVICE = 'envoy.service.ext_proc.v3.ExternalProcessor';
/** The namespace of `attributes` in ProcessingRequest, as Envoy names its filter. */
export const ATTRIBUTES_NAMESPACE = 'envoy.filters.http.ext_proc';

export interface HeaderValue {
  key: string;
  value?: string;
  raw_value?: Buffer;
}

export type AppendAction =
  | 'APPEND_IF_EXISTS_OR_ADD'
  | 'ADD_IF_ABSENT'
  | 'OVERWRITE_IF_EXISTS_OR_ADD'
  | 'OVERWRITE_IF_EXISTS';

export interface HeaderValueOption {
  header?: HeaderValue | null;
  /** Envoy's deprecated flag; when set it wins over append_action (true appends, false overwrites). */
  append?: { value?: boolean } | null;
  append_action?: AppendAction | number;
  keep_empty_value?: boolean;
}

export interface HeaderMutation {
  set_headers?: HeaderValueOption[];
  remove_headers?: string[];
}

export interface HeaderMap {
  headers: HeaderValue[];
}

export interface StreamedBodyResponse {
  body?: Buffer;
  end_of_stream?: boolean;
}

export interface BodyMutation {
  mutation?: 'body' | 'clear_body' | 'streamed_response';
  body?: Buffer;
  clear_body?: boolean;
  streamed_response?: StreamedBodyResponse | null;
}

export interface CommonResponse {
  status?: 'CONTINUE' | 'CONTINUE_AND_REPLACE' | number;
  header_mutation?: HeaderMutation | null;
  body_mutation?: BodyMutation | null;
  clear_route_cache?: boolean;
}

/** HeadersResponse and BodyResponse have the same shape. */
export interface PhaseResponse {
  response?: CommonResponse | null;
}

export interface ImmediateResponse {
  status?: { code?: string | number } | null;
  headers?: HeaderMutation | null;
  body?: Buffer;
  grpc_status?: { status?: number } | null;
  details?: string;
}

export type HeaderModeName = 'DEFAULT' | 'SEND' | 'SKIP';
export type BodyModeName = 'NONE' | 'STREAMED' | 'BUFFERED' | 'BUFFERED_PARTIAL' | 'FULL_DUPLEX_STREAMED';

export interface ProcessingMode {
  request_header_mode?: HeaderModeName | number;
  response_header_mode?: HeaderModeName | number;
  request_body_mode?: BodyModeName | number;
  response_body_mode?: BodyModeName | number;
  request_trailer_mode?: HeaderModeName | number;
  response_trailer_mode?: HeaderModeName | number;
}

export type ResponseKind =
  | 'request_headers'
  | 'response_headers'
  | 'request_body'
  | 'response_body'
  | 'request_trailers'
  | 'response_trailers'
  | 'immediate_response';

export interface ProcessingResponse {
  response?: ResponseKind;
  request_headers?: PhaseResponse;
  response_headers?: PhaseResponse;
  request_body?: PhaseResponse;
  response_body?: PhaseResponse;
  immediate_response?: ImmediateResponse;
  dynamic_metadata?: ProtoStruct | null;
  mode_override?: ProcessingMode | null;
  override_message_timeout?: { seconds?: number; nanos?: number } | null;
}

export interface HttpHeaders {
  headers: HeaderMap;
  end_of_stream: boolean;
}

export interface HttpBody {
  body: Buffer;
  end_of_stream: boolean;
}

export interface ProcessingRequest {
  request_headers?: HttpHeaders;
  response_headers?: HttpHeaders;
  request_body?: HttpBody;
  response_body?: HttpBody;
  metadata_context?: { filter_metadata: Record<string, ProtoStruct> };
  attributes?: Record<string, ProtoStruct>;
  protocol_config?: {
    request_body_mode: BodyModeName;
    response_body_mode: BodyModeName;
    send_body_without_waiting_for_header_response: boolean;
  };
}
