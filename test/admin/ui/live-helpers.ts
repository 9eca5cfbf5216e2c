// gw in-process with the web UI on an admin listener, as gw run wires them (the traffic hub over
// the data plane's traffic tap, the time series over its metrics), for the live traffic and
// playground tests; the playgrounds' world (an OpenAI-compatible stand-in and an MCP server of the
// official SDK behind gw); and a small follower of server-sent events.
import { type IncomingMessage, request } from 'node:http';
import type { LiveTraffic } from '../../../src/admin/ui/sources.ts';
import { TrafficHub } from '../../../src/admin/ui/traffic/traffic-hub.ts';
import { TrafficSeries } from '../../../src/admin/ui/traffic/traffic-series.ts';
import { LocalTrafficSource } from '../../../src/admin/ui/traffic/traffic-source.ts';
import { createAdminUi } from '../../../src/admin/ui/ui-server.ts';
import { SseReader } from '../../../src/dataplane/ai/formats/sse-reader.ts';
import { type AdminServer, startAdminServer } from '../../../src/dataplane/telemetry/admin-server.ts';
import { echoTools, mcpYaml, startStreamableServer, type TestMcpServer } from '../../dataplane/mcp/helpers.ts';
import { localUiSources } from '../../helpers/admin-ui.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type ScriptedProvider, startScriptedProvider } from '../../helpers/scripted-provider.ts';
import { until } from '../../helpers/until.ts';

export interface LiveUi {
  gw: TestGateway;
  live: LiveTraffic;
  admin: AdminServer;
  /** http://127.0.0.1:<admin port> */
  base: string;
  stop(): Promise<void>;
}

/** gw serving `files`, its UI on a loopback admin listener; the series sample every `seriesIntervalMs`. */
export async function startLiveUi(files: Record<string, string>, seriesIntervalMs = 10_000): Promise<LiveUi> {
  const gw = await startTestGateway(files);
  const live: LiveTraffic = {
    traffic: new TrafficHub(new LocalTrafficSource(gw.telemetry.traffic)),
    series: new TrafficSeries(() => gw.telemetry.metrics.snapshot(), seriesIntervalMs),
  };
  const ui = createAdminUi({
    sources: localUiSources(gw.gateway, { kind: 'files', why: 'the test serves files' }, live),
    adminAddress: '127.0.0.1',
  });
  const admin = await startAdminServer({ port: 0, ready: () => true, metrics: gw.telemetry.metrics, routes: ui });
  return {
    gw,
    live,
    admin,
    base: `http://127.0.0.1:${admin.port}`,
    stop: async () => {
      live.traffic.close();
      live.series.stop();
      await admin.close();
      await gw.stop();
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON the tests read field by field.
export type Json = any;

export interface PlaygroundWorld {
  /** The OpenAI-compatible stand-in behind route llm at /openai (11 input, 7 output tokens an answer). */
  provider: ScriptedProvider;
  /** The MCP server behind route mcp (every other path; gw's MCP endpoint is /mcp): tools echo and only-tools. */
  tools: TestMcpServer;
  ui: LiveUi;
  /** gw's listener port (Gateway default/ai, listener http). */
  port: number;
  stop(): Promise<void>;
}

export async function startPlaygroundWorld(seriesIntervalMs?: number): Promise<PlaygroundWorld> {
  const provider = await startScriptedProvider();
  const tools = await startStreamableServer(echoTools('tools'));
  const port = await freePort();
  const ui = await startLiveUi(
    {
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('openai', provider.port, 'alpha: {}', 'sk-upstream', undefined),
        llmRouteYaml(['openai']),
        '---\n',
        mcpYaml([{ name: 'tools', port: tools.port }]),
      ].join(''),
    },
    seriesIntervalMs,
  );
  return {
    provider,
    tools,
    ui,
    port,
    stop: async () => {
      await ui.stop();
      await tools.close();
      await provider.close();
    },
  };
}

/** The UI's own header: what its scripts send with every API call (the cross-site check wants it on changes). */
export const UI_HEADERS = { 'x-gw-ui': '1' };

/** A JSON API call as the UI's scripts make it. */
export async function uiApi(
  base: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = UI_HEADERS,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${base}/ui/api/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export interface Follower {
  response: IncomingMessage;
  events: SseEvent[];
  /** The events named `name` so far, data parsed. */
  named(name: string): Json[];
  /** Waits (up to 10 s) until `count` events named `name` have come. */
  waitFor(name: string, count: number): Promise<Json[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Follows a server-sent event stream (GET, or POST with a JSON body). */
export function followEvents(url: string, body?: unknown): Promise<Follower> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(url, {
      method: text === undefined ? 'GET' : 'POST',
      headers: { ...UI_HEADERS, ...(text !== undefined && { 'content-type': 'application/json' }) },
    });
    req.once('error', reject);
    req.once('response', (response) => {
      const events: SseEvent[] = [];
      const reader = new SseReader();
      let ended!: () => void;
      const endedPromise = new Promise<void>((done) => {
        ended = done;
      });
      response.on('data', (chunk: Buffer) => {
        for (const block of reader.push(chunk))
          if (block.data !== undefined) events.push({ event: block.event, data: block.data });
      });
      response.once('close', ended);
      response.once('error', ended);
      const named = (name: string) => events.filter((e) => e.event === name).map((e) => JSON.parse(e.data));
      resolve({
        response,
        events,
        named,
        waitFor: async (name, count) => {
          if (!(await until(() => named(name).length >= count, 10_000)))
            throw new Error(`${named(name).length} ${name} events came, not ${count}: ${JSON.stringify(events)}`);
          return named(name);
        },
        ended: endedPromise,
        close: () => req.destroy(),
      });
    });
    req.end(text);
  });
}
