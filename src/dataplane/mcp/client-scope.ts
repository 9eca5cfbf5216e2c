// What one client request gives the MCP calls made for it: the headers passed on to targets,
// its deadline, and where related messages go (its SSE answer stream).
import type { IncomingHttpHeaders } from 'node:http';
import type { PolicyExchange } from '../policies/exchange.ts';
import type { CelVariables } from '../telemetry/cel-context.ts';
import type { JsonRpcMessage } from './jsonrpc.ts';

/** Where messages related to one client request go (its SSE answer stream); false when it cannot take them. */
export interface MessageSink {
  send(message: JsonRpcMessage): boolean;
  /** Told when the session ends while the sink is its transport (a legacy SSE stream). */
  close?(): void;
}

/** What a client request gives the calls made for it. */
export interface ClientScope {
  /** Client headers passed on to targets. */
  headers: Record<string, string | string[]>;
  incoming: IncomingHttpHeaders;
  /** The client request's CEL variables, for backend auth expressions (session names, token parameters). */
  variables?: () => CelVariables;
  /** The client request's policy state: a target's own request policies run on forks of it (decision 0045). */
  exchange?: PolicyExchange | undefined;
  /** Deadline of each forwarded request (the route's), if any. */
  timeoutMs: number | undefined;
  /** Messages of the targets that relate to this request. */
  sink: MessageSink | undefined;
}
