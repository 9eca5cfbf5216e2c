// What the `gw run --workers` tests share: a GET on a fresh connection and the route to a static upstream.
import { request } from 'node:http';

/** A GET on a connection of its own, so that the kernel places every request anew. */
export function getOnNewConnection(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A GwBackend "web" on 127.0.0.1:`upstreamPort` and an HTTPRoute of Gateway "ai" to it. */
export function routeYaml(upstreamPort: number): string {
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
