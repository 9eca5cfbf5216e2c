// One completed request as the web UI's traffic view shows it: the access log's default fields
// (access-log.ts: route, backend, status, duration, models, tokens, cost, guard outcomes...) of
// the same RequestRecord, plain JSON, with an id that finds the record again in the process that
// served it (for CEL evaluation against it) and the time it arrived. No headers: the access log
// writes none, and neither does this.
import { accessLogEntry } from './access-log.ts';
import type { RequestRecord } from './request-record.ts';

export interface TrafficEntry {
  /** `<pid>-<seq>`: the serving process and the record's number in its traffic tap. */
  id: string;
  /** When the request arrived, ms since the epoch. */
  time: number;
  /** The access log's default fields (OpenTelemetry names: `http.response.status_code`, `gen_ai.request.model`...). */
  fields: Record<string, string | number | boolean>;
}

export function trafficEntry(record: RequestRecord, id: string): TrafficEntry {
  return { id, time: record.startedAt, fields: accessLogEntry(record) };
}

/** The id of record `seq` of process `pid`. */
export function trafficEntryId(pid: number, seq: number): string {
  return `${pid}-${seq}`;
}

/** The process and sequence number of an entry id, or undefined when it is not one. */
export function parseTrafficEntryId(id: string): { pid: number; seq: number } | undefined {
  const match = /^(\d{1,10})-(\d{1,15})$/.exec(id);
  if (!match) return undefined;
  return { pid: Number(match[1]), seq: Number(match[2]) };
}
