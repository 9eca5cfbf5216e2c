// Runs a compiled traffic policy's request step on a request that never touched a socket: for
// tests that compile a policy directly (policy-context.ts) and look at its answer and record.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PolicyExchange } from '../../src/dataplane/policies/exchange.ts';
import type { CompiledPolicy, LocalResponse } from '../../src/dataplane/policies/types.ts';
import { RequestRecord } from '../../src/dataplane/telemetry/request-record.ts';

/**
 * The step's answer (undefined: the request goes on), the record, the headers forwarded upstream,
 * and the exchange (its finish() runs what the policy left for the end of the request).
 */
export async function runStep(policy: CompiledPolicy, headers: Record<string, string>, method = 'GET') {
  const record = new RequestRecord();
  record.method = method;
  record.path = '/';
  record.requestHeaders = { ...headers };
  const exchange = new PolicyExchange({ method, headers } as IncomingMessage, {} as ServerResponse, record, {
    path: '/',
    query: '',
    headers: { ...headers },
  });
  const answer = (await policy.request!(exchange)) as LocalResponse | undefined;
  return { answer, record, forwarded: exchange.forward.headers, exchange };
}
