// Test input: YAML resources admitted as the API server would, failing the test on any error.
import assert from 'node:assert/strict';
import { parseResources } from '../../src/api/load/documents.ts';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';

export function admitted(yaml: string): KubeObject[] {
  return parseResources(yaml, 'test.yaml').documents.map((document) => {
    const result = admit(document.value);
    assert.deepEqual(result.errors, [], JSON.stringify(document.value));
    return result.object!;
  });
}

/** GatewayClass gw, whose Gateways gw serves; ends with ---. */
export const GATEWAY_CLASS_YAML = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
`;

/** GatewayClass gw and Gateway default/ai with one HTTP listener "http" on `port`; ends with ---. */
export function gatewayYaml(port: number): string {
  return `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec: {gatewayClassName: gw, listeners: [{name: http, protocol: HTTP, port: ${port}}]}
---
`;
}

/**
 * gatewayYaml with a model cost catalog: Gateway ai names GwParameters priced, whose
 * spec.modelCatalog reads ConfigMap prices; with `catalog`, that ConfigMap holding it (JSON) at
 * catalog.json. `gatewayClass` replaces GatewayClass gw's YAML. Ends with ---.
 */
export function pricedGatewayYaml(port: number, options: { catalog?: unknown; gatewayClass?: string } = {}): string {
  return `${options.gatewayClass ?? GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: priced}}
  listeners: [{name: http, protocol: HTTP, port: ${port}}]
---
apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: priced}
spec:
  modelCatalog: {sources: [{configMap: {name: prices}}]}
---
${options.catalog === undefined ? '' : catalogConfigMapYaml('prices', options.catalog)}`;
}

/** ConfigMap `name` holding a model cost catalog (JSON text, or a value to write as JSON) at catalog.json; ends with ---. */
export function catalogConfigMapYaml(name: string, catalog: unknown): string {
  const text = typeof catalog === 'string' ? catalog : JSON.stringify(catalog);
  return `apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}}
data:
  catalog.json: '${text.replaceAll("'", "''")}'
---
`;
}

/** GatewayClass gw and Gateway default/ai with listeners http on `first` and taken on `second`; ends with ---. */
export function twoListenerGatewayYaml(first: number, second: number): string {
  return `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners:
  - {name: http, protocol: HTTP, port: ${first}}
  - {name: taken, protocol: HTTP, port: ${second}}
---
`;
}

/**
 * GwPolicy default/via-proxy on Gateway ai tunnelling through a proxy Service of another namespace,
 * which no ReferenceGrant allows, so the data plane refuses it: every request it covers is a 500 of
 * gw's own. Starts with ---.
 */
export const REFUSED_TUNNEL_POLICY_YAML = `---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: via-proxy}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  backend: {tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}}
`;

/** gatewayYaml on port 8080, for tests that never listen. */
export const GW_GATEWAY = gatewayYaml(8080);

/** HTTPRoute default/models on Gateway ai sending PathPrefix /v1 to the GwModels attached to it (GwModel "*"); ends with ---. */
export const MODEL_ROUTE_YAML = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: models}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /v1}}]
      backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]
---
`;

/** GwModel default/`name` attached to HTTPRoute models, `spec` (indented spec lines) after its parentRefs; ends with ---. */
export function gwModelYaml(name: string, spec: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: ${name}}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: models}]
${spec.replace(/\n$/, '')}
---
`;
}

/** GwBackend `name` with `spec` (one YAML line, e.g. `static: {...}`) and `auth` (a BackendAuth in flow style); ends with ---. */
export function authBackendYaml(name: string, spec: string, auth: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ${spec}
  policies:
    auth: ${auth}
---
`;
}

/** An HTTPRoute rule (indented for `rules:`) sending PathPrefix /`prefix` to GwBackend `name`. */
export function prefixRuleYaml(prefix: string, name: string): string {
  return `    - matches: [{path: {type: PathPrefix, value: /${prefix}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]
`;
}
