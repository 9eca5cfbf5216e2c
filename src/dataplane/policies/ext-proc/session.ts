// One exchange's conversation with a processor: the stream (opened on the first message), the
// modes in force (a processor may override them), what goes on every message (metadata_context)
// and on the first of each direction (attributes, and protocol_config on the very first), and
// the dynamic metadata the processor returned (CEL `extproc` for the policies after it).
import { fromCelValue } from '../../cel/expression.ts';
import type { NamedExpressions } from '../cel-field.ts';
import type { PolicyExchange } from '../exchange.ts';
import { jsonToStruct, type ProtoStruct, structToJson } from '../grpc/struct.ts';
import {
  ATTRIBUTES_NAMESPACE,
  type BodyModeName,
  type HeaderModeName,
  type ProcessingMode,
  type ProcessingRequest,
  type ProcessingResponse,
} from './messages.ts';
import { connected, ProcessorError, ProcessorStream } from './processor-stream.ts';
import type { ExtProcSettings, ProcessingModes } from './settings.ts';

export type Direction = 'request' | 'response';

const BODY_MODE_NAMES: Record<ProcessingModes['requestBody'], BodyModeName> = {
  None: 'NONE',
  Buffered: 'BUFFERED',
  BufferedPartial: 'BUFFERED_PARTIAL',
  FullDuplexStreamed: 'FULL_DUPLEX_STREAMED',
};

export class ExtProcSession {
  readonly settings: ExtProcSettings;
  readonly exchange: PolicyExchange;
  readonly modes: ProcessingModes;
  /** Set once request body bytes went to the processor: from then on a failure is never failed open. */
  requestBodyStarted = false;
  #stream: ProcessorStream | undefined;
  #sentAny = false;
  #sentFirstOf: Record<Direction, boolean> = { request: false, response: false };
  #metadata: Partial<Record<Direction, ProcessingRequest['metadata_context'] | null>> = {};
  #dynamicMetadata: Record<string, unknown> | undefined;

  constructor(settings: ExtProcSettings, exchange: PolicyExchange) {
    this.settings = settings;
    this.exchange = exchange;
    this.modes = { ...settings.modes };
  }

  /** Opens the stream once the processor is reachable (rejects with a ProcessorError if it is not). */
  async open(): Promise<void> {
    if (this.#stream) return;
    await connected(this.settings.client, this.settings.messageTimeoutMs);
    this.#stream ??= new ProcessorStream(this.settings.client, this.settings.messageTimeoutMs);
  }

  get stream(): ProcessorStream {
    if (!this.#stream) throw new ProcessorError('failed', 'the stream is not open');
    return this.#stream;
  }

  /** Sends one message of `direction`, adding what goes with it; false: wait for onDrain. */
  send(direction: Direction, message: ProcessingRequest): boolean {
    const stream = this.stream;
    const metadata = this.#metadataOf(direction);
    if (metadata) message.metadata_context = metadata;
    if (!this.#sentFirstOf[direction]) {
      this.#sentFirstOf[direction] = true;
      const attributes = this.#attributes(
        direction === 'request' ? this.settings.requestAttributes : this.settings.responseAttributes,
      );
      if (attributes) message.attributes = { [ATTRIBUTES_NAMESPACE]: attributes };
    }
    if (!this.#sentAny) {
      this.#sentAny = true;
      message.protocol_config = {
        request_body_mode: BODY_MODE_NAMES[this.modes.requestBody],
        response_body_mode: BODY_MODE_NAMES[this.modes.responseBody],
        send_body_without_waiting_for_header_response: false,
      };
    }
    return stream.send(message);
  }

  next(): Promise<ProcessingResponse | undefined> {
    return this.stream.next();
  }

  /** Half-closes the stream, if one was opened. */
  close(): void {
    this.#stream?.close();
  }

  cancel(): void {
    this.#stream?.cancel();
  }

  /**
   * Takes a processor's mode_override (when allowModeOverride is set) from a headers response.
   * Header and trailer modes left DEFAULT keep their value; the body modes are taken as given,
   * as Envoy does, except STREAMED which gw does not offer. `bodyStreaming`: the body of this
   * direction already streams to the processor, so its mode can no longer change.
   */
  applyModeOverride(override: ProcessingMode | null | undefined, direction: Direction, bodyStreaming: boolean): void {
    if (!override || !this.settings.allowModeOverride) return;
    const modes = this.modes;
    if (direction === 'request') {
      if (!bodyStreaming) modes.requestBody = bodyMode(override.request_body_mode) ?? modes.requestBody;
      modes.responseHeaders = headerMode(override.response_header_mode) ?? modes.responseHeaders;
      modes.responseBody = bodyMode(override.response_body_mode) ?? modes.responseBody;
      modes.requestTrailers = headerMode(override.request_trailer_mode) ?? modes.requestTrailers;
      modes.responseTrailers = headerMode(override.response_trailer_mode) ?? modes.responseTrailers;
    } else if (!bodyStreaming) {
      modes.responseBody = bodyMode(override.response_body_mode) ?? modes.responseBody;
    }
  }

  /** Merges a processor's dynamic_metadata into CEL `extproc` for the policies that follow. */
  takeDynamicMetadata(metadata: ProtoStruct | null | undefined): void {
    if (!metadata?.fields || Object.keys(metadata.fields).length === 0) return;
    this.#dynamicMetadata = { ...this.#dynamicMetadata, ...structToJson(metadata) };
    this.exchange.setVariable('extproc', this.#dynamicMetadata);
  }

  #metadataOf(direction: Direction): ProcessingRequest['metadata_context'] | undefined {
    if (this.settings.metadataContext.length === 0) return undefined;
    let metadata = this.#metadata[direction];
    if (metadata === undefined) {
      const filterMetadata: Record<string, ProtoStruct> = {};
      for (const [namespace, entries] of this.settings.metadataContext) {
        const struct = this.#attributes(entries);
        if (struct) filterMetadata[namespace] = struct;
      }
      metadata = Object.keys(filterMetadata).length > 0 ? { filter_metadata: filterMetadata } : null;
      this.#metadata[direction] = metadata;
    }
    return metadata ?? undefined;
  }

  /** Evaluates name → CEL into a Struct; an expression that fails is left out (as agentgateway does). */
  #attributes(entries: NamedExpressions): ProtoStruct | undefined {
    if (entries.length === 0) return undefined;
    const variables = this.exchange.cel();
    const values: Record<string, unknown> = {};
    let any = false;
    for (const [name, expression] of entries) {
      try {
        values[name] = fromCelValue(expression.evaluate(variables));
        any = true;
      } catch {
        // a failing expression omits its entry
      }
    }
    return any ? jsonToStruct(values) : undefined;
  }
}

function bodyMode(value: ProcessingMode['request_body_mode']): ProcessingModes['requestBody'] | undefined {
  switch (value) {
    case 'NONE':
    case 0:
      return 'None';
    case 'BUFFERED':
    case 2:
      return 'Buffered';
    case 'BUFFERED_PARTIAL':
    case 3:
      return 'BufferedPartial';
    case 'FULL_DUPLEX_STREAMED':
    case 4:
      return 'FullDuplexStreamed';
    default:
      return undefined;
  }
}

function headerMode(value: HeaderModeName | number | undefined): 'Send' | 'Skip' | undefined {
  if (value === 'SEND' || value === 1) return 'Send';
  if (value === 'SKIP' || value === 2) return 'Skip';
  return undefined;
}
