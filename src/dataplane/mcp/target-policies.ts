// An MCP target's own request policies (extAuth, transformation: a GwPolicy naming the target by
// sectionName) on each HTTP request gw sends that target (decision 0045). The multiplexer fans a
// client's request out to its targets; each target's policies check and change gw's request to
// it — method, path, headers, the JSON-RPC body — on a fork of the client request's policy
// exchange, so CEL's `request` is still the client's and one target's changes never reach another.
import type { PolicyExchange } from '../policies/exchange.ts';
import { type NamedStep, PolicyFailure, runSteps } from '../policies/pipeline.ts';

/** One HTTP request to a target, as gw is about to send it. */
export interface TargetCall {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string | string[]>;
  body: string | Buffer | undefined;
}

/**
 * The call as the target's request policies leave it, or why it is not sent: a policy answered
 * (the authorization server refused it) or failed.
 */
export async function targetSubrequest(
  steps: readonly NamedStep[],
  exchange: PolicyExchange | undefined,
  call: TargetCall,
): Promise<TargetCall | { failure: string }> {
  // Every call to a target is made for a client request, which the request handler gives an
  // exchange whenever a target of its backend has policies of its own.
  if (exchange === undefined) return { failure: "the target's request policies have no client request to run on" };
  const at = call.path.indexOf('?');
  const forward = {
    path: at === -1 ? call.path : call.path.slice(0, at),
    query: at === -1 ? '' : call.path.slice(at + 1),
    headers: { ...call.headers },
  };
  const body = call.body === undefined ? Buffer.alloc(0) : Buffer.from(call.body);
  const subrequest = exchange.fork(forward, body, call.method);
  try {
    const answer = await runSteps(steps, subrequest);
    if (answer) return { failure: `refused by the target's request policies (${answer.status})` };
  } catch (error) {
    if (error instanceof PolicyFailure) return { failure: error.message };
    throw error;
  }
  const query = subrequest.forward.query;
  return {
    method: subrequest.method,
    path: query === '' ? subrequest.forward.path : `${subrequest.forward.path}?${query}`,
    headers: subrequest.forward.headers as Record<string, string | string[]>,
    body: subrequest.body === body ? call.body : subrequest.body,
  };
}
