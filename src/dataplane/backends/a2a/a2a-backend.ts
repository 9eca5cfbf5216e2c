// The a2a backend kind: an A2A agent at a host and port (GwBackend spec.a2a), proxied with both
// bindings (JSON-RPC and HTTP+JSON) of both protocol generations (v1.0 and v0.3). Requests go
// through the http kind's forwarder (../http.ts), so the backend policy's connection settings
// (tls, tunnel, timeouts), backend auth and health apply as to any HTTP backend, and the agent's
// answers — SSE streams included — reach the client event by event, never gathered. What the
// kind adds (decision 0047):
//
// - the agent card (/.well-known/agent-card.json, the older /.well-known/agent.json, and the
//   extended card of either binding) names gw, not the agent (./card-response.ts);
// - each call's method and task id are recorded for telemetry (./calls.ts): a POST body is read
//   (up to the listener's buffer limit), parsed once, and exactly those bytes are forwarded;
// - gw's own answers to a call (a body it cannot read, an agent it cannot reach) take the error
//   shape of the call's binding (./binding-errors.ts).

import { readClientBody } from '../../mcp/client-input.ts';
import { hasRequestBody } from '../../proxy/http-forward.ts';
import { parseJsonBody } from '../../proxy/json-body.ts';
import type { A2aRequestRecord } from '../../telemetry/request-record.ts';
import { staticDestination } from '../../upstream/destinations.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  isRefusal,
  type RoutedRequest,
} from '../backend.ts';
import { compileHttpForwarder, type ForwardingChanges, type HttpForwarder } from '../http.ts';
import { type A2aBinding, JsonRpcCode, sendA2aError, upstreamFailureAnswer } from './binding-errors.ts';
import { type A2aCall, CARD_METHODS, isRestPath, jsonRpcCall, restCall } from './calls.ts';
import { serveCardResponse } from './card-response.ts';

/** The agent card's well-known paths: v0.3 and later, and the older name. */
const CARD_SUFFIXES = ['/.well-known/agent-card.json', '/.well-known/agent.json'];

/** An agent card request's record: protocol a2a, no method. */
const AGENT_CARD: A2aRequestRecord = Object.freeze({});

export const a2aKind: BackendKind<BackendRefInput> = {
  compile(input: BackendRefInput): Backend | BackendRefusal {
    const { object, ref } = input;
    if (object.kind !== 'GwBackend' || object.spec.a2a === undefined)
      return backendRefusal(`backend ${input.key}: not an a2a GwBackend`);
    const { host, port } = object.spec.a2a;
    const tls = ref.policy.tls !== undefined;
    const forwarder = compileHttpForwarder(input, staticDestination({ host, port }, tls), 'static');
    if (isRefusal(forwarder)) return forwarder;
    const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    // How the agent may name itself in its card when it names the address gw reaches it at.
    const origins = [`http://${authority}`, `https://${authority}`].map((origin) => new URL(origin).origin);
    return new A2aBackend(forwarder, origins);
  },
};

class A2aBackend implements Backend {
  readonly type = 'static' as const;
  readonly #forwarder: HttpForwarder;
  readonly #agentOrigins: readonly string[];
  /** Set with a health policy: false while the agent is evicted. */
  readonly available?: () => boolean;

  constructor(forwarder: HttpForwarder, agentOrigins: readonly string[]) {
    this.#forwarder = forwarder;
    this.#agentOrigins = agentOrigins;
    if (forwarder.available) this.available = forwarder.available;
  }

  serve(routed: RoutedRequest): Promise<void> {
    const { req, record, forward } = routed;
    const method = req.method ?? 'GET';
    if (method === 'GET' && CARD_SUFFIXES.some((suffix) => forward.path.endsWith(suffix))) {
      record.a2a = AGENT_CARD;
      return serveCardResponse(this.#forwarder, routed, NO_CHANGES, 'body', this.#agentOrigins);
    }
    if (method === 'POST' && hasRequestBody(req)) return this.#servePost(routed);
    const call = restCall(method, forward.path);
    if (call === undefined) return this.#forwarder.serve(routed);
    record.a2a = recordOf(call);
    const how: ForwardingChanges = { answerFailure: upstreamFailureAnswer('rest', req.headers, null) };
    if (call.method === 'GetExtendedAgentCard')
      return serveCardResponse(this.#forwarder, routed, how, 'body', this.#agentOrigins);
    return this.#forwarder.forward(routed, how);
  }

  /** A POST: its body read and parsed once for the call it makes, then those bytes forwarded. */
  async #servePost(routed: RoutedRequest): Promise<void> {
    const { req, res, record, forward } = routed;
    // Until the body says otherwise, a call is REST on a REST path and JSON-RPC elsewhere.
    let binding: A2aBinding = isRestPath(forward.path) ? 'rest' : 'jsonrpc';
    const body = await readClientBody(routed);
    if (!Buffer.isBuffer(body)) {
      record.error = `a2a: ${body.message}`;
      return sendA2aError(res, binding, req.headers, { ...body, code: JsonRpcCode.InvalidRequest });
    }
    const parsed = parseJsonBody(body);
    if (parsed.problem !== undefined) {
      // gw forwards only what it read: a body parsers could read differently, or no JSON at all, goes nowhere.
      record.error = `a2a: the request body ${parsed.problem}`;
      return sendA2aError(res, binding, req.headers, {
        status: 400,
        message: `the request body ${parsed.problem}`,
        code: JsonRpcCode.ParseError,
      });
    }
    const rpc = jsonRpcCall(parsed.value);
    const call = rpc ?? restCall('POST', forward.path, parsed.value);
    if (call) {
      record.a2a = recordOf(call);
      binding = call.binding;
    }
    const id = rpc ? (parsed.value as { id?: unknown }).id : null;
    const how: ForwardingChanges = { body, answerFailure: upstreamFailureAnswer(binding, req.headers, id) };
    if (rpc && CARD_METHODS.has(rpc.method))
      return serveCardResponse(this.#forwarder, routed, how, 'result', this.#agentOrigins);
    return this.#forwarder.forward(routed, how);
  }
}

const NO_CHANGES: ForwardingChanges = Object.freeze({});

function recordOf(call: A2aCall): A2aRequestRecord {
  return call.taskId === undefined ? { method: call.method } : { method: call.method, taskId: call.taskId };
}
