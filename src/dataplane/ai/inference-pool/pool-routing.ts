// A custom provider's InferencePool (docs/decisions/0049-inference-pool.md): its members — one per
// ready Pod and target port, each with its own connection pool — and its endpoint picker, compiled
// once per configuration; then, per request, the member the request goes to. The picker (ext_proc,
// ./endpoint-picker.ts) names it; an answer naming no member is never followed (the picker does not
// get to send gw's requests elsewhere). When the picker fails, failureMode decides: FailOpen picks
// a member at random, FailClose refuses (503). A pool without a picker picks at random.
import { pickerServiceName, pickerServiceTypeProblem } from '../../../api/kinds/inference/inference-pool.ts';
import type { InferencePoolConfig } from '../../../contract/dataplane-config.ts';
import type { BackendCompileContext } from '../../backends/backend.ts';
import { resolveEndpoint } from '../../policies/endpoint.ts';
import { applyHeaderMutation } from '../../policies/ext-proc/headers.ts';
import type { HeaderMutation } from '../../policies/ext-proc/messages.ts';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from '../../policies/ext-proc/messages.ts';
import type { ExternalProcessorClient } from '../../policies/ext-proc/processor-stream.ts';
import { MESSAGE_TIMEOUT_MS } from '../../policies/ext-proc/settings.ts';
import { grpcClient, serviceConstructor } from '../../policies/grpc/client.ts';
import type { LocalResponse } from '../../policies/types.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import type { UpstreamClient } from '../../upstream/client.ts';
import type { Destination } from '../../upstream/destination.ts';
import {
  askEndpointPicker,
  DESTINATION_ENDPOINT,
  type PickerRequest,
  type PickerResponsePhase,
} from './endpoint-picker.ts';

/** One endpoint of the pool: a ready Pod's IP at a target port. */
export interface PoolMember {
  /** "ip:port" ("[ip]:port" for IPv6), as the picker names it. */
  address: string;
  client: UpstreamClient;
}

interface PoolPicker {
  /** "Service ns/name:port", for the log. */
  name: string;
  client: ExternalProcessorClient;
  failOpen: boolean;
}

export interface PoolRouting {
  /** "InferencePool ns/name". */
  name: string;
  /** By address, in the configuration's order. */
  members: ReadonlyMap<string, PoolMember>;
  picker: PoolPicker | undefined;
}

/** What the caller does with a request: send it to `member` (its headers and body as changed), or answer. */
export type PoolPick =
  /**
   * `failedOpen`: why the picker was not followed (FailOpen chose the member), for the log.
   * `response`: the picker's response phase, which the caller tells the member's response head
   * (or closes when there is none).
   */
  | {
      kind: 'member';
      member: PoolMember;
      body: Buffer | undefined;
      failedOpen?: string;
      response?: PickerResponsePhase;
    }
  /** gw's refusal (503): `detail` for the log only. */
  | { kind: 'refused'; detail: string }
  /** The picker's own answer to the client. */
  | { kind: 'answer'; response: LocalResponse };

/** "ip:port", bracketing an IPv6 address as the picker writes it. */
export function memberAddress(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * The pool's routing: `connect` makes the client of a member's destination (the provider's
 * connection settings, TLS as its policy says); the picker's Service resolves in the pool's
 * namespace. Returns why it cannot be served (the provider's traffic is then answered 500).
 */
export function compilePoolRouting(
  key: string,
  pool: InferencePoolConfig,
  namespace: string,
  connect: (destination: Destination) => UpstreamClient,
  tls: boolean,
  context: BackendCompileContext,
): PoolRouting | string {
  const { spec } = pool;
  const members = new Map<string, PoolMember>();
  const inferredVersion = spec.appProtocol === 'kubernetes.io/h2c' ? 'HTTP2' : 'HTTP1';
  for (const ip of pool.endpoints)
    for (const { number: port } of spec.targetPorts) {
      const address = memberAddress(ip, port);
      const destination: Destination = { protocol: tls ? 'https:' : 'http:', host: ip, port, inferredVersion };
      members.set(address, { address, client: connect(destination) });
    }
  const ref = spec.endpointPickerRef;
  if (ref === undefined) return { name: key, members, picker: undefined };
  const name = pickerServiceName(spec);
  if (name === undefined)
    return `${key} spec.endpointPickerRef: ${ref.group || 'core'}/${ref.kind} is not a kind gw calls; refer to a Service`;
  const service = context.backends[`Service ${namespace}/${name}`];
  const typeProblem = service?.kind === 'Service' ? pickerServiceTypeProblem(service.spec.type) : undefined;
  if (typeProblem !== undefined) return `${key} spec.endpointPickerRef: Service ${namespace}/${name} ${typeProblem}`;
  const endpoint = resolveEndpoint(
    { backendRef: { name, ...(ref.port ? { port: ref.port.number } : {}) } },
    { backends: context.backends, namespace },
    'spec.endpointPickerRef',
  );
  if ('field' in endpoint) return `${key} ${endpoint.field}: ${endpoint.message}`;
  const client = grpcClient<ExternalProcessorClient>(
    context.runtime,
    serviceConstructor(EXT_PROC_PROTO, EXT_PROC_SERVICE),
    endpoint,
  );
  return { name: key, members, picker: { name: endpoint.name, client, failOpen: ref.failureMode === 'FailOpen' } };
}

/** The request as the picker sees it; `headers` is changed in place by the picker's header mutations. */
export type PoolRequest = Omit<PickerRequest, 'candidates'>;

/** Chooses the member for one request. */
export async function pickPoolMember(
  routing: PoolRouting,
  request: PoolRequest,
  maxBodyBytes: number,
): Promise<PoolPick> {
  const members = [...routing.members.values()];
  if (members.length === 0) return { kind: 'refused', detail: `${routing.name} has no ready endpoint` };
  const picker = routing.picker;
  if (picker === undefined) return { kind: 'member', member: randomMember(members), body: undefined };
  // A client does not choose the endpoint: only the picker's answer may name it.
  for (const name of Object.keys(request.headers))
    if (name.toLowerCase().startsWith(DESTINATION_ENDPOINT)) delete request.headers[name];
  let failure: string;
  try {
    const answer = await askEndpointPicker(
      picker.client,
      MESSAGE_TIMEOUT_MS,
      { ...request, candidates: [...routing.members.keys()] },
      maxBodyBytes,
    );
    if (answer.kind === 'immediate') return { kind: 'answer', response: answer.response };
    const member = answer.endpoints.map((address) => routing.members.get(address)).find((found) => found);
    if (member !== undefined) {
      for (const mutation of answer.mutations) applyHeaderMutation(request.headers, mutation, NO_PSEUDO);
      return { kind: 'member', member, body: answer.body, response: answer.response };
    }
    answer.response.close();
    failure =
      answer.endpoints.length === 0
        ? 'named no endpoint'
        : `named ${answer.endpoints.join(', ')}, none of them a ready endpoint of the pool`;
  } catch (error) {
    failure = `failed: ${(error as Error).message}`;
  }
  const detail = `${routing.name}: the endpoint picker ${picker.name} ${failure}`;
  if (picker.failOpen) return { kind: 'member', member: randomMember(members), body: undefined, failedOpen: detail };
  return { kind: 'refused', detail };
}

const NO_PSEUDO: ReadonlySet<string> = new Set();

/**
 * Applies the changes the picker made to a response's headers (its response phase) to the
 * client's response headers: fields only, no pseudo-header (the status is the endpoint's).
 */
export function applyPickerResponseChanges(headers: HeaderBag, mutation: HeaderMutation): void {
  applyHeaderMutation(headers, mutation, NO_PSEUDO);
}

function randomMember(members: readonly PoolMember[]): PoolMember {
  return members[Math.floor(Math.random() * members.length)]!;
}
