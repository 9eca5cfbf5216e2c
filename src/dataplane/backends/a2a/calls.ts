// Which A2A call a request is: its method and the task it names, read from as little as the
// bindings need. A JSON-RPC call names its method in the body (as the client spelt it: v1.0's
// `SendMessage` or v0.3's `message/send`) and its task in `params`; an HTTP+JSON (REST) call is its
// HTTP method and path (`POST .../message:send`, `GET .../tasks/{id}`), named with the spec's
// canonical v1.0 method names whichever generation's paths it used (v0.3 puts its paths under
// `/v1/`), so that `a2a.method` compares across bindings. Paths are matched on their trailing
// segments: the agent may live under any prefix (a tenant, a route's prefix).
import { cutText } from '../../../util/values.ts';

/** An A2A call: the method (client-chosen for JSON-RPC, hence bounded) and the task it names, if any. */
export interface A2aCall {
  readonly binding: 'jsonrpc' | 'rest';
  readonly method: string;
  readonly taskId?: string;
}

/** Longest method name or task id kept (a client chooses them; telemetry carries them). */
export const MAX_CALL_TEXT = 256;

/** Where a JSON-RPC method's params name the task (a dotted path into params). */
type TaskIdAt = 'id' | 'taskId' | 'message.taskId' | undefined;

/**
 * The methods of both protocol generations, with where each names its task: A2A v1.0 (what
 * @a2a-js/sdk 1.x speaks) and v0.3 (@a2a-js/sdk 0.3).
 */
const JSON_RPC_METHODS: ReadonlyMap<string, TaskIdAt> = new Map<string, TaskIdAt>([
  // v1.0
  ['SendMessage', 'message.taskId'],
  ['SendStreamingMessage', 'message.taskId'],
  ['GetTask', 'id'],
  ['ListTasks', undefined],
  ['CancelTask', 'id'],
  ['SubscribeToTask', 'id'],
  ['CreateTaskPushNotificationConfig', 'taskId'],
  ['GetTaskPushNotificationConfig', 'taskId'],
  ['ListTaskPushNotificationConfigs', 'taskId'],
  ['DeleteTaskPushNotificationConfig', 'taskId'],
  ['GetExtendedAgentCard', undefined],
  // v0.3
  ['message/send', 'message.taskId'],
  ['message/stream', 'message.taskId'],
  ['tasks/get', 'id'],
  ['tasks/cancel', 'id'],
  ['tasks/resubscribe', 'id'],
  ['tasks/pushNotificationConfig/set', 'taskId'],
  ['tasks/pushNotificationConfig/get', 'id'],
  ['tasks/pushNotificationConfig/list', 'id'],
  ['tasks/pushNotificationConfig/delete', 'id'],
  ['agent/getAuthenticatedExtendedCard', undefined],
]);

/** Whether `method` is one of the A2A methods gw knows (telemetry labels only those by name). */
export function isKnownMethod(method: string): boolean {
  return JSON_RPC_METHODS.has(method);
}

/** The JSON-RPC methods whose result is an agent card (its URLs are rewritten like the well-known card's). */
export const CARD_METHODS: ReadonlySet<string> = new Set([
  'GetExtendedAgentCard',
  'agent/getAuthenticatedExtendedCard',
]);

/** The call a parsed JSON-RPC request body makes, or undefined when the body is no JSON-RPC request. */
export function jsonRpcCall(body: unknown): A2aCall | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') return undefined;
  const method = cutText(body.method, MAX_CALL_TEXT);
  const at = JSON_RPC_METHODS.get(body.method);
  const taskId = at === undefined ? undefined : taskIdIn(body.params, at);
  return taskId === undefined ? { binding: 'jsonrpc', method } : { binding: 'jsonrpc', method, taskId };
}

/**
 * The REST call an HTTP method and path make, or undefined when they are no A2A operation.
 * `body` is the parsed request body of a POST, for the task a message continues.
 */
export function restCall(httpMethod: string, path: string, body?: unknown): A2aCall | undefined {
  const segments = path.split('/').filter((segment) => segment !== '');
  // Counted from the end: at(0) is the last segment.
  const at = (n: number): string | undefined => segments[segments.length - 1 - n];
  const last = at(0);
  if (last === undefined) return undefined;
  const call = (method: string, taskSegment?: string): A2aCall => {
    const taskId = taskSegment === undefined ? undefined : pathTaskId(taskSegment);
    return taskId === undefined ? { binding: 'rest', method } : { binding: 'rest', method, taskId };
  };
  const verb = customVerb(last);
  if (httpMethod === 'POST') {
    if (verb?.resource === 'message' && (verb.verb === 'send' || verb.verb === 'stream')) {
      const method = verb.verb === 'send' ? 'SendMessage' : 'SendStreamingMessage';
      const taskId = isObject(body) ? taskIdIn(body, 'message.taskId') : undefined;
      return taskId === undefined ? { binding: 'rest', method } : { binding: 'rest', method, taskId };
    }
    if (verb && at(1) === 'tasks' && verb.verb === 'cancel') return call('CancelTask', verb.resource);
    if (verb && at(1) === 'tasks' && verb.verb === 'subscribe') return call('SubscribeToTask', verb.resource);
    if (last === 'pushNotificationConfigs' && at(2) === 'tasks') return call('CreateTaskPushNotificationConfig', at(1));
    return undefined;
  }
  if (httpMethod === 'GET') {
    if (verb && at(1) === 'tasks' && verb.verb === 'subscribe') return call('SubscribeToTask', verb.resource);
    if (verb) return undefined;
    if (last === 'extendedAgentCard' || (last === 'card' && at(1) === 'v1')) return call('GetExtendedAgentCard');
    if (last === 'pushNotificationConfigs' && at(2) === 'tasks') return call('ListTaskPushNotificationConfigs', at(1));
    if (at(1) === 'pushNotificationConfigs' && at(3) === 'tasks') return call('GetTaskPushNotificationConfig', at(2));
    if (at(1) === 'tasks') return call('GetTask', last);
    if (last === 'tasks') return call('ListTasks');
    return undefined;
  }
  if (httpMethod === 'DELETE' && at(1) === 'pushNotificationConfigs' && at(3) === 'tasks')
    return call('DeleteTaskPushNotificationConfig', at(2));
  return undefined;
}

/** Whether a path is one of the REST binding's (any method): gw's own answers there take its error shape. */
export function isRestPath(path: string): boolean {
  return (
    restCall('POST', path) !== undefined ||
    restCall('GET', path) !== undefined ||
    restCall('DELETE', path) !== undefined
  );
}

/** `{id}:cancel` → resource `{id}`, verb `cancel` (Google's custom-method syntax, which the REST binding uses). */
function customVerb(segment: string): { resource: string; verb: string } | undefined {
  const colon = segment.lastIndexOf(':');
  if (colon <= 0) return undefined;
  return { resource: segment.slice(0, colon), verb: segment.slice(colon + 1) };
}

function pathTaskId(segment: string): string | undefined {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    id = segment;
  }
  return id === '' ? undefined : cutText(id, MAX_CALL_TEXT);
}

function taskIdIn(params: unknown, at: Exclude<TaskIdAt, undefined>): string | undefined {
  let value: unknown = params;
  for (const key of at.split('.')) {
    if (!isObject(value)) return undefined;
    value = value[key];
  }
  return typeof value === 'string' && value !== '' ? cutText(value, MAX_CALL_TEXT) : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
