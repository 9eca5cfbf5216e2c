// Starts gw in-process (file store, controller, data plane) on a directory of YAML written by the
// test, bound to 127.0.0.1 on free ports; stopped by the test.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DownstreamLimits } from '../../src/dataplane/server/downstream-limits.ts';
import { Telemetry } from '../../src/dataplane/telemetry/request-telemetry.ts';
import type { AddressLookup } from '../../src/dataplane/upstream/address-lookup.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import type { Reply } from './http-request.ts';
import { until } from './until.ts';

export {
  authBackendYaml,
  catalogConfigMapYaml,
  gatewayYaml,
  gwModelYaml,
  MODEL_ROUTE_YAML,
  prefixRuleYaml,
  pricedGatewayYaml,
  twoListenerGatewayYaml,
} from './objects.ts';

/** A port free right now on 127.0.0.1 (the OS picks it). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A port on 127.0.0.1 where nothing listens, for targets that must be down. Not a free ephemeral
 * port: one of those can be handed to a server of a test running beside this one (or to the
 * gateway under test) between the moment it is picked and the moment it is dialled. Port 1 is
 * privileged and outside the ephemeral range, so no test is ever given it; a connection to it is
 * checked once to be refused.
 */
export async function refusedPort(): Promise<number> {
  refusedPortCheck ??= new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: REFUSED_PORT });
    socket.once('connect', () => {
      socket.destroy();
      reject(new Error(`something listens on 127.0.0.1:${REFUSED_PORT}; the tests need it closed`));
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNREFUSED' ? resolve(REFUSED_PORT) : reject(error),
    );
  });
  return await refusedPortCheck;
}
const REFUSED_PORT = 1;
let refusedPortCheck: Promise<number> | undefined;

/** A TCP server holding `port` on 127.0.0.1, as another process would (the test closes it). */
export async function holdPort(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}

export interface TestGateway {
  gateway: LocalGateway;
  dir: string;
  logs: string[];
  /** Access log lines (JSON), in the order requests finished. */
  accessLog: string[];
  /** The gateway's telemetry (metrics, OTLP exporters). */
  telemetry: Telemetry;
  /** Rewrites a file of the configuration directory. */
  write(file: string, yaml: string): void;
  stop(): Promise<void>;
}

/**
 * gw serving `files` (name → YAML), with `limits` for what clients send and `resolveHost` for the
 * names it resolves per request; resolves when every listener is bound.
 */
export async function startTestGateway(
  files: Record<string, string>,
  limits?: DownstreamLimits,
  resolveHost?: AddressLookup,
): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-test-'));
  for (const [name, yaml] of Object.entries(files)) writeFileSync(join(dir, name), yaml);
  const logs: string[] = [];
  const accessLog: string[] = [];
  const telemetry = new Telemetry({ sink: { write: (line) => accessLog.push(line) } });
  const gateway = new LocalGateway({
    paths: [dir],
    address: '127.0.0.1',
    log: (line) => logs.push(line),
    // Invalid test YAML would otherwise just leave the gateway empty: say why.
    onLoad: (report) => logs.push(...[...report.problems, ...report.warnings].map((problem) => problem.message)),
    telemetry,
    limits,
    resolveHost,
  });
  await gateway.start();
  return {
    gateway,
    dir,
    logs,
    accessLog,
    telemetry,
    write: (file, yaml) => writeFileSync(join(dir, file), yaml),
    stop: async () => {
      await gateway.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The access log line (parsed) of the last request to `path`, once it is written (within a second). */
export async function lastAccessLogLine(gw: TestGateway, path: string): Promise<Record<string, unknown>> {
  const last = () =>
    gw.accessLog.findLast((entry) => (JSON.parse(entry) as Record<string, unknown>)['url.path'] === path);
  if (!(await until(() => last() !== undefined, 1000))) assert.fail(`no access log line for ${path}`);
  return JSON.parse(last()!) as Record<string, unknown>;
}

/**
 * GwBackend `name` for one AI provider on 127.0.0.1:`port`: `family` is its provider family entry
 * (`alpha: {}`, `gamma: {}`, `custom: {…}`), `key` the key gw sends it, `routes` its
 * policies.ai.routes (a YAML flow mapping of path → format; undefined: no policies.ai, so the
 * default routes apply), `morePolicies` other policies.ai
 * entries (YAML flow style: `defaults: [{field: seed, value: 1}], overrides: [...]`); ends with ---.
 */
export function aiBackendYaml(
  name: string,
  port: number,
  family: string,
  key: string,
  routes: string | undefined,
  morePolicies?: string,
): string {
  const ai = routes === undefined ? '' : `\n    ai: {routes: ${routes}${morePolicies ? `, ${morePolicies}` : ''}}`;
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${port}, ${family}}}
  policies:
    auth: {key: ${key}}${ai}
---
`;
}

/**
 * HTTPRoute llm on Gateway ai: one rule for each of `backends`, serving GwBackend <name> at /<name>
 * with the prefix stripped, then `moreRules` (YAML list items indented for `rules:`).
 */
export function llmRouteYaml(backends: string[], moreRules = ''): string {
  const rules = backends
    .map(
      (name) => `    - matches: [{path: {type: PathPrefix, value: /${name}}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]
`,
    )
    .join('');
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
${rules}${moreRules}`;
}

/** A rule (for llmRouteYaml's `moreRules`) named models serving every GwModel attached to it at /models. */
export const GW_MODELS_RULE = `    - name: models
      matches: [{path: {type: PathPrefix, value: /models}}]
      backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]
`;

/** GwBackend web (a static backend on 127.0.0.1:`upstreamPort`) and HTTPRoute web sending all of Gateway ai to it. */
export function webRouteYaml(upstreamPort: number): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstreamPort}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
`;
}

/**
 * A 5xx of gw's own, as the client and the operator see it: asserts that the client got the
 * generic message with a request id (in the body and in x-request-id) and nothing else, and
 * returns the detail the access log wrote under that id.
 */
export async function ownFailureDetail(
  gw: Pick<TestGateway, 'accessLog'>,
  response: Response | Reply,
): Promise<string> {
  assert.ok(response.status >= 500, `expected a 5xx, got ${response.status}`);
  const id = response instanceof Response ? response.headers.get('x-request-id') : response.headers['x-request-id'];
  assert.ok(typeof id === 'string' && id !== '', 'a failure of gw its own carries x-request-id');
  const body = response instanceof Response ? await response.text() : response.body;
  assert.ok(body.includes(`gw could not serve this request`), `generic message expected, got ${body}`);
  assert.ok(body.includes(id), 'the body quotes the request id');
  const detail = await loggedFailure(gw, id);
  assert.ok(!body.includes(detail), 'the client does not get the detail');
  return detail;
}

/** The `error` of the access log line with request.id `id`, once it is written (within a second). */
export async function loggedFailure(gw: Pick<TestGateway, 'accessLog'>, id: string): Promise<string> {
  const entry = () =>
    gw.accessLog.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line['request.id'] === id);
  if (!(await until(() => entry() !== undefined, 1000))) assert.fail(`no access log line for request id ${id}`);
  return String(entry()!.error);
}
