// A 5xx of gw's own: a configuration gw refuses to serve, or a fault in gw itself. What failed can
// name objects, fields and Secrets of the configuration, which are the operator's business, not
// the client's: the client gets a generic message and a request id; the detail goes to the
// access log's `error` (with `request.id`), to gw's log (server/failure-log.ts) and, for a refused
// configuration, to the object's status (controller/refusals.ts).
import { randomUUID } from 'node:crypto';
import type { RequestRecord } from '../telemetry/request-record.ts';
import type { ClientResponse } from './client-response.ts';
import { sendText } from './direct-response.ts';

/** The response header that carries the request id of a failure of gw's own. */
export const REQUEST_ID_HEADER = 'x-request-id';

export interface OwnFailure {
  /** What the client reads. */
  readonly message: string;
  readonly headers: Record<string, string>;
}

/** Records the detail on the request and gives the client's side of it. */
export function ownFailure(record: RequestRecord, detail: string): OwnFailure {
  record.error = detail;
  if (record.requestId === '') record.requestId = randomUUID();
  return {
    message: `gw could not serve this request; its operator can find why under request id ${record.requestId}`,
    headers: { [REQUEST_ID_HEADER]: record.requestId },
  };
}

/** Answers a failure of gw's own as plain text (status 500 unless given). */
export function sendOwnFailure(res: ClientResponse, record: RequestRecord, detail: string, status = 500): void {
  const failure = ownFailure(record, detail);
  sendText(res, status, failure.message, failure.headers);
}
