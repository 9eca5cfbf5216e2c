// gw's log of its own 5xx answers (proxy/own-failure.ts): one line per failure, with the request
// id the client was given, so that an operator can find why from what a user quotes. A refused
// configuration fails every request routed to it, and a client can send those as fast as it likes:
// each distinct failure is logged at most once per window, and the next line says how many
// requests failed the same way in between. Details are cut to a bound, and so is the table.
import type { LogFunction } from '../../util/log-line.ts';
import { cutText } from '../../util/values.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';

/** A failure already logged is logged again at most once per this many milliseconds. */
export const FAILURE_LOG_WINDOW_MS = 60_000;
/** Distinct failures remembered; past this the table starts over (a burst of distinct faults). */
const MAX_REMEMBERED = 1_000;
/** Lines per window at most, whatever the failures (reasons that differ per request cannot flood the log either). */
export const MAX_LINES_PER_WINDOW = 100;
/** Most characters of the detail written. */
const MAX_DETAIL_CHARS = 1_024;

interface Seen {
  loggedAt: number;
  /** Requests that failed this way since the last line. */
  suppressed: number;
}

export class FailureLog {
  readonly #log: LogFunction;
  readonly #now: () => number;
  readonly #seen = new Map<string, Seen>();
  #windowStart = Number.NEGATIVE_INFINITY;
  #linesInWindow = 0;
  /** Failures left out because the window's lines were spent. */
  #unlogged = 0;

  constructor(log: LogFunction, now: () => number = Date.now) {
    this.#log = log;
    this.#now = now;
  }

  /** Called for every finished request that was given a request id. */
  report(record: RequestRecord): void {
    const detail = cutText(record.error, MAX_DETAIL_CHARS);
    const key = `${record.gateway}\u0000${record.status}\u0000${detail}`;
    const now = this.#now();
    const seen = this.#seen.get(key);
    if (seen !== undefined && now - seen.loggedAt < FAILURE_LOG_WINDOW_MS) {
      seen.suppressed++;
      return;
    }
    if (now - this.#windowStart >= FAILURE_LOG_WINDOW_MS) {
      this.#windowStart = now;
      this.#linesInWindow = 0;
    }
    if (this.#linesInWindow >= MAX_LINES_PER_WINDOW) {
      this.#unlogged++;
      return;
    }
    this.#linesInWindow++;
    const more =
      seen !== undefined && seen.suppressed > 0 ? ` (and ${seen.suppressed} more like it since the last line)` : '';
    const unlogged =
      this.#unlogged > 0 ? ` (${this.#unlogged} other failures were not logged: too many in a minute)` : '';
    this.#unlogged = 0;
    if (seen === undefined && this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
    this.#seen.set(key, { loggedAt: now, suppressed: 0 });
    this.#log(
      `Gateway ${record.gateway}: request ${record.requestId} answered ${record.status}: ${detail}${more}${unlogged}`,
      'error',
      // The same as fields, named as in the access log, for a collector to join the two.
      { gateway: record.gateway, 'request.id': record.requestId, 'http.response.status_code': record.status },
    );
  }
}
