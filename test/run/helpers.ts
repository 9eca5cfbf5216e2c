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

/** The route to a static upstream is the one every gw test uses. */
export { webRouteYaml as routeYaml } from '../helpers/gateway.ts';
