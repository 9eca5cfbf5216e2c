// A gw with its web UI for tests: a LocalGateway (the files given, or gw's own API server) and
// the admin listener with the UI on a free loopback port, as gw run wires them; the example
// configuration the UI tests show (the quickstart, the policies example and a few models).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LiveTraffic, objectSource, type UiSources } from '../../src/admin/ui/sources.ts';
import { type AdminUi, createAdminUi } from '../../src/admin/ui/ui-server.ts';
import { type AdminServer, startAdminServer } from '../../src/dataplane/telemetry/admin-server.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import { freePort, refusedPort } from './gateway.ts';

const examples = join(import.meta.dirname, '..', '..', 'examples');

/** The Secret value the example holds: no UI answer may contain it. */
export const EXAMPLE_SECRET_VALUE = 'key-for-team-a';

/**
 * The quickstart and policies examples on `port`, and a second Gateway `models` on `modelsPort`
 * serving a concrete model, an Internal one, and a virtual (failover) model of the two.
 */
export async function exampleConfiguration(port: number, modelsPort: number): Promise<string> {
  const down = await refusedPort();
  const quickstart = readFileSync(join(examples, 'quickstart.yaml'), 'utf8').replace('port: 8080', `port: ${port}`);
  const policies = readFileSync(join(examples, 'policies.yaml'), 'utf8');
  const models = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: models, namespace: default}
spec:
  gatewayClassName: gw
  listeners: [{name: llm, protocol: HTTP, port: ${modelsPort}}]
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: primary, namespace: default}
spec:
  parentRefs: [{name: models}]
  provider: Alpha
  baseURL: http://127.0.0.1:${down}/v1
  match: {model: primary-model}
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: fallback, namespace: default}
spec:
  parentRefs: [{name: models}]
  provider: Alpha
  baseURL: http://127.0.0.1:${down}/v1
  visibility: Internal
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: smart, namespace: default}
spec:
  parentRefs: [{name: models}]
  virtualModel:
    failover:
      targets:
        - {modelRef: {name: primary}, priority: 0}
        - {modelRef: {name: fallback}, priority: 1}
`;
  return `${quickstart}\n---\n${policies}\n---\n${models}`;
}

export interface UiGateway {
  gateway: LocalGateway;
  ui: AdminUi;
  admin: AdminServer;
  /** http://127.0.0.1:PORT */
  url: string;
  /** The quickstart Gateway's listener port. */
  listenerPort: number;
  /** The models Gateway's listener port. */
  modelsPort: number;
  stop(): Promise<void>;
}

/**
 * The UI's sources for an in-process gateway on loopback, as gw run gives them (src/cli/run.ts
 * uiSources) for a single process: its controller, its data plane's unbound ports and health.
 */
export function localUiSources(gateway: LocalGateway, source: UiSources['source'], live?: LiveTraffic): UiSources {
  return {
    controller: gateway.controller,
    source,
    listenAddress: '127.0.0.1',
    unboundPorts: () => gateway.dataPlane.unboundPorts,
    healthReports: async () => [{ worker: 0, reports: gateway.dataPlane.healthReports() }],
    ...(live && { live }),
  };
}

export interface UiGatewayOptions {
  /** Serve gw's own API server (editable) instead of the files. */
  apiServer?: boolean;
  /** The address the UI is told the admin listener binds (it binds 127.0.0.1 in tests). */
  adminAddress?: string;
  token?: string;
}

export async function startUiGateway(options: UiGatewayOptions = {}): Promise<UiGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-ui-'));
  const listenerPort = await freePort();
  const modelsPort = await freePort();
  writeFileSync(join(dir, 'example.yaml'), await exampleConfiguration(listenerPort, modelsPort));
  const gateway = new LocalGateway({
    paths: options.apiServer ? [] : [dir],
    address: '127.0.0.1',
    ...(options.apiServer && { api: { dataDir: join(dir, 'data'), port: 0 } }),
  });
  await gateway.start();
  const sources = localUiSources(
    gateway,
    objectSource({ api: gateway.api?.api, kube: false, paths: options.apiServer ? [] : [dir] }),
  );
  const ui = createAdminUi({ sources, adminAddress: options.adminAddress ?? '127.0.0.1', token: options.token });
  const admin = await startAdminServer({ port: 0, ready: () => true, metrics: { render: () => '' }, routes: ui });
  return {
    gateway,
    ui,
    admin,
    url: `http://127.0.0.1:${admin.port}`,
    listenerPort,
    modelsPort,
    stop: async () => {
      await admin.close();
      await gateway.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Splits a multi-document YAML text into its documents (for creating them one by one). */
export function yamlDocuments(text: string): string[] {
  return text
    .split(/^---$/m)
    .map((part) => part.trim())
    .filter((part) => part.replace(/^#.*$/gm, '').trim() !== '');
}

/** One answer of the UI's API: its path, status and text. */
export interface UiAnswerText {
  path: string;
  status: number;
  text: string;
}

/**
 * The answer of every GET endpoint of the UI's API that shows objects or their state (overview,
 * routes, policies, models, objects, traffic), of every object, and of the effective policy
 * (explain) at every route, route rule, GwBackend and Service, each checked to be an answer (200):
 * what a test that no value reaches the browser reads through.
 */
export async function everyGetAnswer(url: string): Promise<UiAnswerText[]> {
  const read = async (path: string) => {
    const response = await fetch(`${url}${path}`);
    const answer = { path, status: response.status, text: await response.text() };
    // Every one answers, but the traffic endpoints of a gw without a data plane in reach (404).
    if (!(path.startsWith('/ui/api/traffic/') && answer.status === 404))
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
    return answer;
  };
  const paths = ['overview', 'routes', 'policies', 'models', 'objects', 'session', 'traffic/recent', 'traffic/series'];
  const answers = await Promise.all(paths.map((p) => read(`/ui/api/${p}`)));
  const objects = JSON.parse(answers.find((a) => a.path === '/ui/api/objects')!.text).objects as {
    kindKey: string;
    namespace?: string;
    name: string;
  }[];
  const routes = JSON.parse(answers.find((a) => a.path === '/ui/api/routes')!.text) as {
    routes: { namespace?: string; name: string; rules: { name?: string }[] }[];
    backends: { namespace?: string; name: string }[];
  };
  const query = (values: Record<string, string | undefined>) =>
    new URLSearchParams(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined));
  const more = [
    ...objects.map((o) => `/ui/api/object?${query({ kind: o.kindKey, namespace: o.namespace, name: o.name })}`),
    ...routes.routes.flatMap((r) => [
      `/ui/api/explain?${query({ what: 'route', namespace: r.namespace ?? 'default', name: r.name })}`,
      ...r.rules
        .filter((rule) => rule.name)
        .map(
          (rule) =>
            `/ui/api/explain?${query({ what: 'route', namespace: r.namespace ?? 'default', name: r.name, section: rule.name })}`,
        ),
    ]),
    ...routes.backends.map(
      (b) => `/ui/api/explain?${query({ what: 'backend', namespace: b.namespace ?? 'default', name: b.name })}`,
    ),
  ];
  return [...answers, ...(await Promise.all(more.map(read)))];
}
