// The Traffic page's API: the recent requests (filtered; asking keeps capture on for a while),
// their live stream as server-sent events (capture on while connected), the time series of
// requests, errors, tokens and cost, and the CEL variables of one recorded request (credentials
// redacted) for the CEL playground. docs/ui.md "Traffic".

import { decodeVariables, displayCel } from '../../../dataplane/telemetry/recorded-cel.ts';
import type { LiveTraffic } from '../sources.ts';
import { parseTrafficFilter } from '../traffic/traffic-filter.ts';
import { MAX_SUBSCRIBERS, RECENT_CAPACITY } from '../traffic/traffic-hub.ts';
import { json, problem, STREAMED, type UiAnswer, type UiContext, type UiEndpoint } from './endpoint.ts';

const DEFAULT_LIMIT = 100;

/** The live traffic, or the answer saying there is none here. */
export function liveTraffic(context: UiContext): LiveTraffic | UiAnswer {
  return context.sources.live ?? problem(404, 'this gw has no live traffic to show (no data plane in reach)');
}

export function isLive(value: LiveTraffic | UiAnswer): value is LiveTraffic {
  return typeof value === 'object' && 'traffic' in value;
}

export const trafficEndpoints: UiEndpoint[] = [
  {
    method: 'GET',
    path: '/ui/api/traffic/recent',
    handle: (context, request) => {
      const live = liveTraffic(context);
      if (!isLive(live)) return live;
      const filter = parseTrafficFilter(request.query);
      if ('problem' in filter) return problem(400, filter.problem);
      const limitText = request.query.get('limit');
      const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > RECENT_CAPACITY)
        return problem(400, `limit: a whole number from 1 to ${RECENT_CAPACITY}`);
      return json(live.traffic.recent(filter, limit));
    },
  },
  {
    method: 'GET',
    path: '/ui/api/traffic/events',
    handle: (context, request) => {
      const live = liveTraffic(context);
      if (!isLive(live)) return live;
      const filter = parseTrafficFilter(request.query);
      if ('problem' in filter) return problem(400, filter.problem);
      if (live.traffic.subscriberCount >= MAX_SUBSCRIBERS)
        return problem(503, `${MAX_SUBSCRIBERS} pages follow the traffic already; close one and try again`);
      const response = request.response;
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      });
      // The browser reconnects after this long when the stream breaks.
      response.write('retry: 3000\n\n');
      live.traffic.subscribe(response, filter);
      return STREAMED;
    },
  },
  {
    method: 'GET',
    path: '/ui/api/traffic/series',
    handle: async (context) => {
      const live = liveTraffic(context);
      if (!isLive(live)) return live;
      return json(await live.series.read());
    },
  },
  {
    method: 'GET',
    path: '/ui/api/traffic/record',
    handle: async (context, request) => {
      const live = liveTraffic(context);
      if (!isLive(live)) return live;
      const id = request.query.get('id') ?? '';
      const variables = await live.traffic.recordedVariables(id);
      if (!variables)
        return problem(404, `request ${JSON.stringify(id)} is no longer held (only the last few hundred are)`);
      return json({ id, variables: displayCel(decodeVariables(variables)) });
    },
  },
];
