// gw in-process in front of a recording upstream: the end-to-end setup of the traffic-policy
// tests. The test gives the configuration files (knowing both ports) and how the upstream answers.
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from './gateway.ts';
import { httpRequest, type Reply, type RequestOptions } from './http-request.ts';
import { type PolicyRule, rulesRouteYaml, staticBackendYaml } from './policy-yaml.ts';
import { type Answer, type RecordingUpstream, startRecordingUpstream } from './recording-upstream.ts';

export interface UpstreamGateway {
  gw: TestGateway;
  upstream: RecordingUpstream;
  /** http://127.0.0.1:<port> */
  base: string;
  /** Sends a request to `path` through gw. */
  send(method: string, path: string, options?: Omit<RequestOptions, 'method'>): Promise<Reply>;
  /** Stops gw, then the upstream. */
  stop(): Promise<void>;
}

/** The configuration files (name → YAML) for gw listening on `port` in front of the upstream on `upstreamPort`. */
export type GatewayFiles = (ports: { port: number; upstreamPort: number }) => Record<string, string>;

export async function startUpstreamGateway(files: GatewayFiles, answer?: Answer): Promise<UpstreamGateway> {
  const upstream = await startRecordingUpstream(answer);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gw = await startTestGateway(files({ port, upstreamPort: upstream.port }));
  return {
    gw,
    upstream,
    base,
    send: (method, path, options = {}) => httpRequest(`${base}${path}`, { ...options, method }),
    stop: async () => {
      await gw.stop();
      await upstream.close();
    },
  };
}

/**
 * gw with HTTPRoute web whose rules each carry a GwPolicy (rulesRouteYaml), GwBackend web on the
 * upstream, and `moreResources` (YAML documents ending with ---).
 */
export function startRulesGateway(
  rules: readonly PolicyRule[],
  options: { moreResources?: string; answer?: Answer } = {},
): Promise<UpstreamGateway> {
  return startUpstreamGateway(
    ({ port, upstreamPort }) => ({
      'gw.yaml': `${gatewayYaml(port)}${staticBackendYaml('web', upstreamPort)}${options.moreResources ?? ''}${rulesRouteYaml(rules)}`,
    }),
    options.answer,
  );
}
