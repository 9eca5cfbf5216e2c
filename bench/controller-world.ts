// The world of the controller benchmark: 1,000 Gateways, 5,000 HTTPRoutes, 5,000 GwPolicies and
// 2,000 GwBackends across 50 namespaces (shared by bench/controller.bench.ts and profiling runs).
export const GATEWAYS = 1_000;
export const ROUTES = 5_000;
export const POLICIES = 5_000;
export const BACKENDS = 2_000;

export function world(port = 8080): unknown[] {
  const objects: unknown[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'gw' },
      spec: { controllerName: 'gw.dev/gateway-controller' },
    },
  ];
  const ns = (i: number) => `team-${i % 50}`;
  for (let i = 0; i < GATEWAYS; i++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: `gw-${i}`, namespace: ns(i) },
      spec: { gatewayClassName: 'gw', listeners: [{ name: 'http', protocol: 'HTTP', port }] },
    });
  }
  for (let i = 0; i < BACKENDS; i++) {
    objects.push({
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwBackend',
      metadata: { name: `llm-${i}`, namespace: ns(i) },
      spec: { ai: { provider: { alpha: { model: 'gpt-4o' } } }, policies: { http: { requestTimeout: '30s' } } },
    });
  }
  for (let i = 0; i < ROUTES; i++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: `route-${i}`, namespace: ns(i) },
      spec: {
        parentRefs: [{ name: `gw-${i % GATEWAYS}` }],
        hostnames: [`r${i}.example.com`],
        rules: [
          {
            name: 'chat',
            matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
            backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: `llm-${i % BACKENDS}` }],
          },
        ],
      },
    });
  }
  for (let i = 0; i < POLICIES; i++) {
    const onRoute = i % 2 === 0;
    objects.push({
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwPolicy',
      metadata: { name: `policy-${i}`, namespace: ns(i) },
      spec: onRoute
        ? {
            targetRefs: [
              {
                group: 'gateway.networking.k8s.io',
                kind: 'HTTPRoute',
                name: `route-${i % ROUTES}`,
                sectionName: 'chat',
              },
            ],
            traffic: { timeouts: { request: '60s' } },
          }
        : {
            targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: `gw-${i % GATEWAYS}` }],
            traffic: { buffer: { request: { maxBytes: '1Mi' } } },
          },
    });
  }
  return objects;
}
