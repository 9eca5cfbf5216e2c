// The filters of the traffic view (recent list and live stream alike): route, status class,
// model and free text, read from the query string. An entry matches when it passes every filter
// given; free text matches any field's value, case-insensitively.
import type { TrafficEntry } from '../../../dataplane/telemetry/traffic-entry.ts';

export interface TrafficFilter {
  /** The route's `namespace/name`, exactly. */
  route?: string;
  /** The status's first digit (`5` for `5xx`). */
  statusClass?: number;
  /** The requested or the answering model, exactly. */
  model?: string;
  /** Text found in any field (lower case). */
  text?: string;
}

const MAX_FILTER_LENGTH = 256;

/** The filter of a query string, or what is wrong with it (naming the parameter). */
export function parseTrafficFilter(query: URLSearchParams): TrafficFilter | { problem: string } {
  const filter: TrafficFilter = {};
  for (const name of ['route', 'status', 'model', 'q']) {
    const value = query.get(name);
    if (value === null || value === '') continue;
    if (value.length > MAX_FILTER_LENGTH) return { problem: `${name}: at most ${MAX_FILTER_LENGTH} characters` };
    if (name === 'route') filter.route = value;
    else if (name === 'model') filter.model = value;
    else if (name === 'q') filter.text = value.toLowerCase();
    else {
      const match = /^([1-5])xx$/.exec(value);
      if (!match) return { problem: `status: a status class such as 2xx, 4xx or 5xx, not ${JSON.stringify(value)}` };
      filter.statusClass = Number(match[1]);
    }
  }
  return filter;
}

export function matchesTraffic(entry: TrafficEntry, filter: TrafficFilter): boolean {
  const fields = entry.fields;
  if (filter.route !== undefined && fields.route !== filter.route) return false;
  if (filter.statusClass !== undefined) {
    const status = fields['http.response.status_code'];
    if (typeof status !== 'number' || Math.floor(status / 100) !== filter.statusClass) return false;
  }
  if (
    filter.model !== undefined &&
    fields['gen_ai.request.model'] !== filter.model &&
    fields['gen_ai.response.model'] !== filter.model
  )
    return false;
  if (filter.text !== undefined) {
    const text = filter.text;
    let found = false;
    for (const key in fields) {
      if (String(fields[key]).toLowerCase().includes(text)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}
