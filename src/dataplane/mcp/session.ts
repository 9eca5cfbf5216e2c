// A gateway MCP session: the client's side (its protocol version, capabilities and streams) and
// one upstream session per target (its session id, or its live SSE connection, and the version
// agreed with it). Everything a replica needs to carry on is sealed into the session id at
// initialize; the live parts (streams, SSE connections, caches) stay in the replica's memory
// (session-registry.ts). Messages of the targets come back here to be made the client's: their
// request ids and progress tokens tagged with the target, resource URIs prefixed.
import { createHash, randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { ClientScope, MessageSink } from './client-scope.ts';
import { EventStream } from './event-stream.ts';
import type { McpPolicyHooks } from './hooks.ts';
import {
  errorMessage,
  isPlainObject,
  isRequest,
  isResponse,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  progressTokenOf,
  withProgressToken,
} from './jsonrpc.ts';
import { type Naming, prefixedUri, tagId, untagId } from './naming.ts';
import { isSupportedVersion } from './protocol-version.ts';
import type { SessionRegistry } from './session-registry.ts';
import type { SessionSealer } from './session-seal.ts';
import type { McpTarget } from './targets.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS, SETUP_TIMEOUT_MS, type UpstreamContext } from './upstream-http.ts';
import { SseTargetConnection } from './upstream-sse.ts';
import { deleteSession, listen, type PostOutcome, postMessage } from './upstream-streamable.ts';

/** A compiled `mcp` GwBackend as sessions, the multiplexer and the transports see it (backend.ts compiles it). */
export interface McpBackend {
  /** "namespace/name" of the GwBackend. */
  readonly name: string;
  /** What session ids are bound to: the Gateway and the backend (an id of another is not valid here). */
  readonly binding: string;
  /** Targets by name, in the order the backend lists them. */
  readonly targets: ReadonlyMap<string, McpTarget>;
  readonly naming: Naming;
  readonly sessionRouting: 'Stateful' | 'Stateless';
  readonly failureMode: 'FailClosed' | 'FailOpen';
  readonly sealer: SessionSealer;
  /** Sessions held by this replica (shared by every configuration that has this backend). */
  readonly sessions: SessionRegistry<McpSession>;
  /** Authorization and guardrails of the backend's `mcp` policy (docs/mcp.md "Authorization", "Guardrails"). */
  readonly hooks: McpPolicyHooks;
}

/** gw's own name towards targets when it initializes without a client (stateless requests). */
export const GATEWAY_CLIENT_INFO: JsonObject = { name: 'gw', version: '1.0.0' };

/** The client's initialize parameters that targets get again when gw initializes them later. */
export interface ClientParams {
  capabilities: JsonObject;
  clientInfo: JsonObject;
}

/** Feature flags of a target's capabilities, as letters (sealed compactly). */
export type TargetFeatures = string;

export function featuresOf(capabilities: unknown): TargetFeatures {
  const caps = isPlainObject(capabilities) ? capabilities : {};
  const resources = isPlainObject(caps.resources) ? caps.resources : undefined;
  return [
    caps.tools !== undefined ? 't' : '',
    caps.prompts !== undefined ? 'p' : '',
    resources ? 'r' : '',
    resources?.subscribe === true ? 's' : '',
    caps.logging !== undefined ? 'l' : '',
    caps.completions !== undefined ? 'c' : '',
  ].join('');
}

/** A target's link in a session: its upstream session and how to reach it. */
export class TargetLink {
  target: McpTarget;
  /** Streamable HTTP: the target's Mcp-Session-Id (undefined when it keeps no sessions). */
  sessionId: string | undefined;
  /** SSE: the live connection, which is the upstream session. */
  sse: SseTargetConnection | undefined;
  version: string;
  features: TargetFeatures;
  /** The target's initialize result (passed to the client as it is when it is the only target). */
  initializeResult: JsonObject | undefined;
  /** No upstream session yet (resumed elsewhere, expired, added by a new configuration). */
  needsInit: boolean;
  /** The HTTP error status the target refused its last initialize with, if that was why it failed. */
  initRefusal: number | undefined;
  #initializing: Promise<string | undefined> | undefined;
  /** Stops the target's GET stream. */
  listening: AbortController | undefined;

  constructor(target: McpTarget, version: string, features: TargetFeatures, needsInit: boolean) {
    this.target = target;
    this.version = version;
    this.features = features;
    this.needsInit = needsInit;
  }

  /** (Re)initializes once however many callers ask at the same time; a failure reason, or undefined. */
  ensureInitialized(session: McpSession, scope: ClientScope): Promise<string | undefined> {
    if (!this.needsInit) return Promise.resolve(undefined);
    this.#initializing ??= session.initializeTarget(this, scope).finally(() => {
      this.#initializing = undefined;
    });
    return this.#initializing;
  }

  close(): void {
    this.listening?.abort();
    this.listening = undefined;
    this.sse?.close();
    this.sse = undefined;
  }
}

/** What a session id seals (compact field names: it travels in a header). */
interface SealedState {
  /** The client's protocol version. */
  v: string;
  c: JsonObject;
  i: JsonObject;
  t: { n: string; d: string; v: string; k: TargetFeatures; s?: string; r?: 1 }[];
  /** Targets that failed at initialize (FailOpen): they stay out of the session. */
  x?: string[];
  /** Random: two sessions never seal the same state. */
  u: string;
}

/** The longest client capabilities (as JSON) sealed as they are; larger ones keep their standard parts. */
const MAX_SEALED_CAPABILITIES = 2048;
/** Session ids past this length leave the targets' session ids out (they are re-initialized on resume). */
const MAX_SEALED_LENGTH = 4096;

function identityTag(target: McpTarget): string {
  return createHash('sha256').update(target.identity).digest('base64url').slice(0, 8);
}

/** Progress tokens gw gives targets map to the sinks of the requests they belong to. */
const MAX_PROGRESS_SINKS = 1024;

export class McpSession {
  /** The gateway session id; undefined for a stateless request's transient session. */
  id: string | undefined;
  backend: McpBackend;
  clientVersion: string;
  client: ClientParams;
  readonly links = new Map<string, TargetLink>();
  readonly excluded = new Set<string>();
  /** The client's stream of server-initiated messages (GET). */
  readonly standalone: EventStream;
  /** POST answer streams kept for resumption, by key. */
  readonly streams = new Map<string, EventStream>();
  /** prefixMode Never: which target serves a name ("tool:x"), learnt from lists. */
  readonly owners = new Map<string, string>();
  /** Client requests routed to one target, in flight (id key → that target), for notifications/cancelled. */
  readonly inflight = new Map<string, string>();
  /** Progress tokens given to targets → the sink of their request. */
  readonly progressSinks = new Map<string, MessageSink>();
  /** Headers of the client's latest request: what gw's own calls to targets carry. */
  lastScope: ClientScope;
  /** Legacy SSE transport: every message to the client goes to this sink. */
  legacySink: MessageSink | undefined;
  /** When the client last used the session, on the registry's clock. */
  lastUsed: number;
  closed = false;
  readonly #stop = new AbortController();

  constructor(backend: McpBackend, clientVersion: string, client: ClientParams, scope: ClientScope) {
    this.backend = backend;
    this.clientVersion = clientVersion;
    this.client = client;
    this.lastScope = scope;
    this.standalone = new EventStream(backend.sessions.now);
    this.lastUsed = backend.sessions.now();
    // Every request in flight to a target listens to it (no signal of its own): no bound to warn at.
    setMaxListeners(0, this.#stop.signal);
  }

  /** A stateless request's session: nothing outlives the request, nothing reaches the client but answers. */
  get stateless(): boolean {
    return this.id === undefined;
  }

  /**
   * A call's upstream context: the scope's headers, the shortest of the deadlines given and the
   * target's own (BackendHTTP.requestTimeout), stopped when the session closes.
   */
  upstreamContext(scope: ClientScope, target: McpTarget, limitMs?: number): UpstreamContext {
    let timeoutMs = shorter(shorter(scope.timeoutMs, target.requestTimeoutMs), limitMs);
    timeoutMs ??= DEFAULT_REQUEST_TIMEOUT_MS;
    const context: UpstreamContext = { headers: scope.headers, incoming: scope.incoming, timeoutMs };
    if (scope.variables) context.variables = scope.variables;
    if (scope.exchange) context.exchange = scope.exchange;
    context.signal = this.#stop.signal;
    return context;
  }

  /** Adds (uninitialized) links for targets the backend has and the session lacks. */
  addMissingLinks(): void {
    for (const target of this.backend.targets.values()) {
      if (!this.links.has(target.name) && !this.excluded.has(target.name))
        this.links.set(target.name, new TargetLink(target, this.clientVersion, '', true));
    }
  }

  /**
   * Moves the session to a newly compiled backend (a configuration change): links follow their
   * target by name; a target now elsewhere starts a new upstream session; removed targets go.
   */
  rebind(backend: McpBackend): void {
    if (backend === this.backend) return;
    this.backend = backend;
    for (const [name, link] of this.links) {
      const target = backend.targets.get(name);
      if (!target) {
        link.close();
        this.links.delete(name);
      } else if (target.identity !== link.target.identity) {
        link.close();
        this.links.set(name, new TargetLink(target, this.clientVersion, '', true));
      } else {
        link.target = target;
      }
    }
    this.addMissingLinks();
  }

  /** Initializes a target's upstream session (the client's parameters, gw's offered version). */
  async initializeTarget(link: TargetLink, scope: ClientScope): Promise<string | undefined> {
    link.close();
    link.initRefusal = undefined;
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: `gw-init-${randomBytes(6).toString('hex')}`,
      method: 'initialize',
      params: {
        protocolVersion: this.clientVersion,
        capabilities: this.client.capabilities,
        clientInfo: this.client.clientInfo,
      },
    };
    const context = this.upstreamContext(scope, link.target, SETUP_TIMEOUT_MS);
    const name = link.target.name;
    let outcome: PostOutcome;
    if (link.target.protocol === 'SSE') {
      const connection = await SseTargetConnection.open(
        link.target,
        context,
        (message) => this.fromTarget(name, message, undefined),
        () => {
          if (link.sse === connection) {
            link.sse = undefined;
            link.needsInit = true;
          }
        },
      );
      if ('failure' in connection) {
        link.initRefusal = connection.httpStatus;
        return connection.failure;
      }
      link.sse = connection;
      outcome = await connection.request(request, context);
    } else {
      link.sessionId = undefined;
      outcome = await postMessage(
        link.target,
        request,
        { sessionId: undefined, protocolVersion: undefined },
        context,
        (m) => this.fromTarget(name, m, scope.sink),
      );
    }
    if (outcome.kind !== 'response') {
      if (outcome.kind !== 'failed') return 'no answer to initialize';
      link.initRefusal = outcome.httpStatus;
      return outcome.reason;
    }
    if ('error' in outcome.message) {
      link.initRefusal = outcome.httpStatus;
      return `initialize refused (${outcome.message.error.code})`;
    }
    const result = outcome.message.result;
    if (!isSupportedVersion(result.protocolVersion))
      return `an unsupported protocol version (${String(result.protocolVersion).slice(0, 32)})`;
    link.version = result.protocolVersion;
    link.features = featuresOf(result.capabilities);
    link.initializeResult = result;
    link.sessionId = outcome.sessionId;
    const initialized: JsonRpcNotification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const sent = await this.#send(link, initialized, context, undefined);
    if (sent.kind !== 'accepted') return sent.kind === 'failed' ? sent.reason : 'the session ended at once';
    link.needsInit = false;
    if (this.standalone.attached || this.legacySink) this.listenTo(link);
    return undefined;
  }

  /**
   * Sends a request to a target and resolves with its answer. A target that has lost the session
   * (404) is initialized again and asked once more; failures come back as `failed`. With the
   * target initialized, the request is on its way when this returns (nothing awaited before the
   * send: a fan-out sends every target's request at once). `body`: the request's JSON text, when
   * the caller made it already (one text for every target of a list).
   */
  async request(link: TargetLink, message: JsonRpcRequest, scope: ClientScope, body?: string): Promise<PostOutcome> {
    for (let attempt = 0; ; attempt++) {
      if (link.needsInit) {
        const problem = await link.ensureInitialized(this, scope);
        if (problem) return { kind: 'failed', reason: problem };
      }
      const outcome = await this.#send(link, message, this.upstreamContext(scope, link.target), scope.sink, body);
      if (outcome.kind !== 'expired' || attempt > 0) return outcome;
      link.needsInit = true;
    }
  }

  /** Sends a notification or a response to a target (re-initializing an expired session once). */
  async notify(link: TargetLink, message: JsonRpcMessage, scope: ClientScope): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await link.ensureInitialized(this, scope)) return;
      const context = this.upstreamContext(scope, link.target, SETUP_TIMEOUT_MS);
      if ((await this.#send(link, message, context, undefined)).kind !== 'expired') return;
      link.needsInit = true;
    }
  }

  /**
   * One message to a target over its transport: a request resolves with its answer (its other
   * messages delivered to `sink` or the client's streams), anything else with `accepted`.
   */
  #send(
    link: TargetLink,
    message: JsonRpcMessage,
    context: UpstreamContext,
    sink: MessageSink | undefined,
    body?: string,
  ): Promise<PostOutcome> {
    if (link.sse) return isRequest(message) ? link.sse.request(message, context) : link.sse.send(message, context);
    const name = link.target.name;
    return postMessage(
      link.target,
      message,
      { sessionId: link.sessionId, protocolVersion: link.version },
      context,
      (m) => this.fromTarget(name, m, sink),
      body,
    );
  }

  /** A request as `target` gets it: its progress token (if any) tagged, and remembered for the sink. */
  forTarget(target: string, request: JsonRpcRequest, sink: MessageSink | undefined): JsonRpcRequest {
    const token = progressTokenOf(request.params);
    if (token === undefined) return request;
    const tagged = tagId(target, token);
    if (sink && this.progressSinks.size < MAX_PROGRESS_SINKS) this.progressSinks.set(tagged, sink);
    return { ...request, params: withProgressToken(request.params, tagged) };
  }

  /** Forgets the progress token of a finished request. */
  doneWith(target: string, request: JsonRpcRequest): void {
    const token = progressTokenOf(request.params);
    if (token !== undefined) this.progressSinks.delete(tagId(target, token));
  }

  /**
   * A message a target sent that is not the answer gw waits for: made the client's and delivered
   * to the request it relates to (`sink`), else to the client's stream of server messages.
   */
  fromTarget(target: string, message: JsonRpcMessage, sink: MessageSink | undefined): void {
    if (isResponse(message)) return; // an answer nobody waits for (a late one): dropped
    let out: JsonRpcMessage = message;
    let to = sink;
    if (isRequest(message)) {
      const token = progressTokenOf(message.params);
      out = {
        ...message,
        id: tagId(target, message.id),
        ...(token !== undefined ? { params: withProgressToken(message.params, tagId(target, token)) } : {}),
      };
    } else if (message.method === 'notifications/progress') {
      const tagged = message.params?.progressToken;
      const original = tagged === undefined ? undefined : untagId(tagged as JsonRpcId);
      if (!original || original.target !== target) return; // not a token gw gave this target
      out = { ...message, params: { ...message.params, progressToken: original.id } };
      to = this.progressSinks.get(tagged as string) ?? sink;
    } else if (message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId;
      if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
      out = { ...message, params: { ...message.params, requestId: tagId(target, requestId) } };
    } else if (message.method === 'notifications/resources/updated' && this.backend.naming.multiplexed) {
      const uri = message.params?.uri;
      if (typeof uri === 'string') out = { ...message, params: { ...message.params, uri: prefixedUri(target, uri) } };
    }
    this.deliver(out, to);
  }

  /** Delivers to the request's sink when it can take it, else to the legacy stream or the GET stream. */
  deliver(message: JsonRpcMessage, sink: MessageSink | undefined): void {
    if (this.closed) return;
    if (sink?.send(message)) return;
    if (this.legacySink?.send(message)) return;
    if (!this.stateless) this.standalone.push(message);
  }

  /** The client's answer to a target's request (its id tagged by fromTarget), sent back to that target. */
  async answerTarget(response: JsonRpcResponse, scope: ClientScope): Promise<void> {
    const original = response.id === null ? undefined : untagId(response.id);
    const link = original && this.links.get(original.target);
    if (!original || !link) return;
    await this.notify(link, { ...response, id: original.id } as JsonRpcResponse, scope);
  }

  /** Keeps every linked target's stream of server messages open (while the client listens). */
  listenAll(): void {
    for (const link of this.links.values()) if (!link.needsInit) this.listenTo(link);
  }

  /** Stops the targets' GET streams (the client stopped listening). */
  stopListening(): void {
    for (const link of this.links.values()) {
      if (link.target.protocol === 'SSE') continue;
      link.listening?.abort();
      link.listening = undefined;
    }
  }

  /** A target's GET stream, reopened (after its retry, with its last event id) while the client listens. */
  listenTo(link: TargetLink): void {
    if (link.target.protocol === 'SSE' || link.listening || this.closed || this.stateless) return;
    const stop = new AbortController();
    link.listening = stop;
    const name = link.target.name;
    void (async () => {
      let lastEventId: string | undefined;
      for (let failures = 0; failures < 5 && !stop.signal.aborted && !this.closed; ) {
        const outcome = await listen(
          link.target,
          { sessionId: link.sessionId, protocolVersion: link.version },
          {
            ...this.upstreamContext(this.lastScope, link.target),
            signal: AbortSignal.any([stop.signal, this.#stop.signal]),
          },
          lastEventId,
          (message) => this.fromTarget(name, message, undefined),
        );
        if (outcome.kind === 'unsupported') break;
        if (outcome.kind === 'expired') {
          link.needsInit = true;
          if (await link.ensureInitialized(this, this.lastScope)) break;
          continue;
        }
        if (outcome.kind === 'failed') failures++;
        else {
          lastEventId = outcome.lastEventId;
          failures = 0;
        }
        const waitMs = Math.min(outcome.kind === 'ended' ? (outcome.retryMs ?? 1000) : 1000 * 2 ** failures, 5000);
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
      }
      if (link.listening === stop) link.listening = undefined;
    })();
  }

  /** The state a session id seals (bounded: large client data and, past a size, upstream ids are left out). */
  sealedState(): SealedState {
    const capabilities =
      JSON.stringify(this.client.capabilities).length <= MAX_SEALED_CAPABILITIES
        ? this.client.capabilities
        : pick(this.client.capabilities, ['roots', 'sampling', 'elicitation']);
    const info = this.client.clientInfo;
    const state: SealedState = {
      v: this.clientVersion,
      c: capabilities,
      i: { name: String(info.name ?? '').slice(0, 128), version: String(info.version ?? '').slice(0, 64) },
      t: [...this.links.values()].map((link) => {
        const entry: SealedState['t'][number] = {
          n: link.target.name,
          d: identityTag(link.target),
          v: link.version,
          k: link.features,
        };
        if (link.target.protocol === 'SSE' || link.needsInit) entry.r = 1;
        else if (link.sessionId !== undefined) entry.s = link.sessionId;
        return entry;
      }),
      u: randomBytes(6).toString('base64url'),
    };
    if (this.excluded.size > 0) state.x = [...this.excluded];
    return state;
  }

  /** Seals the session into its id (upstream session ids left out when they would make it too long). */
  seal(): string {
    const binding = this.backend.binding;
    const state = this.sealedState();
    const id = this.backend.sealer.seal(state, binding);
    if (id.length <= MAX_SEALED_LENGTH) return id;
    for (const entry of state.t) {
      delete entry.s;
      entry.r = 1;
    }
    return this.backend.sealer.seal(state, binding);
  }

  /** A session rebuilt from its id on a replica that does not hold it; undefined when the id is not valid here. */
  static resume(backend: McpBackend, id: string, scope: ClientScope): McpSession | undefined {
    const state = backend.sealer.open(id, backend.binding) as SealedState | undefined;
    if (!isPlainObject(state) || !isSupportedVersion(state.v) || !Array.isArray(state.t)) return undefined;
    const session = new McpSession(
      backend,
      state.v,
      { capabilities: isPlainObject(state.c) ? state.c : {}, clientInfo: isPlainObject(state.i) ? state.i : {} },
      scope,
    );
    session.id = id;
    for (const name of Array.isArray(state.x) ? state.x : []) if (typeof name === 'string') session.excluded.add(name);
    for (const entry of state.t) {
      const target = backend.targets.get(entry.n);
      if (!target) continue;
      const same = entry.d === identityTag(target) && isSupportedVersion(entry.v);
      const link = new TargetLink(target, same ? entry.v : state.v, same ? entry.k : '', !same || entry.r === 1);
      if (same && entry.r !== 1) link.sessionId = entry.s;
      session.links.set(target.name, link);
    }
    session.addMissingLinks();
    return session;
  }

  /** Ends the session: streams closed, targets' connections dropped, their sessions deleted when asked. */
  close(deleteUpstream: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.standalone.close();
    this.legacySink?.close?.();
    for (const stream of this.streams.values()) stream.close();
    this.streams.clear();
    this.progressSinks.clear();
    for (const link of this.links.values()) {
      const { sessionId, version } = link;
      link.close();
      // (not on the session's own signal, which stops everything below)
      if (deleteUpstream && sessionId !== undefined && link.target.protocol !== 'SSE')
        void deleteSession(
          link.target,
          { sessionId, protocolVersion: version },
          {
            headers: this.lastScope.headers,
            incoming: this.lastScope.incoming,
            exchange: this.lastScope.exchange,
            timeoutMs: SETUP_TIMEOUT_MS,
          },
        );
    }
    this.#stop.abort();
  }
}

/** The shorter of two deadlines (undefined and 0 mean none). */
function shorter(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || a <= 0) return b !== undefined && b > 0 ? b : undefined;
  return b !== undefined && b > 0 && b < a ? b : a;
}

function pick(object: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) if (object[key] !== undefined) out[key] = object[key];
  return out;
}

/** A JSON-RPC error answer for a target that failed. */
export function targetFailure(id: JsonRpcId, target: string, reason: string): JsonRpcResponse {
  return errorMessage(id, -32603, `MCP target ${target} failed: ${reason}`);
}
