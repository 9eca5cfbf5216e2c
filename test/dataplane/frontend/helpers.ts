// Shared by the Frontend connection tests: gw with an HTTP and an HTTPS listener on Gateway ai
// (certificate a.example.test from test/fixtures/tls), an echo upstream behind HTTPRoute web, and a
// GwPolicy "frontend" on the Gateway whose frontend section each test writes; raw clients for
// what fetch cannot do (PROXY headers, CONNECT, closed connections).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { freePort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';

export const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');
export const CA = fixture('ca.crt');

/** What the echo upstream saw. */
export interface Echo {
  method: string;
  url: string;
  httpVersion: string;
  headers: IncomingMessage['headers'];
  /** Header names as they arrived (their case). */
  rawHeaders: string[];
  body: string;
}

/** An HTTP/1.1 upstream answering every request with an Echo of it (after `?delay=` ms, if given). */
export async function echoUpstream(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const delay = Number(/[?&]delay=(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      const echo: Echo = {
        method: req.method ?? '',
        url: req.url ?? '',
        httpVersion: req.httpVersion,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString(),
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(echo));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A YAML flow mapping of strings (JSON strings are YAML double-quoted scalars). */
function flowMap(entries: Record<string, string>): string {
  return `{${Object.entries(entries)
    .map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`)
    .join(', ')}}`;
}

/** The GwPolicy "frontend" on Gateway ai (or only its `port`) with `frontend` (a YAML flow mapping). */
export function frontendPolicyYaml(frontend: string, port?: number): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: frontend}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai${port === undefined ? '' : `, port: ${port}`}}]
  frontend: ${frontend}
`;
}

export interface FrontendGateway {
  gw: TestGateway;
  httpPort: number;
  httpsPort: number;
  upstream: { server: Server; port: number };
  /** Replaces the frontend section and waits until `ready()` says the new configuration serves. */
  reconfigure(frontend: string, ready: () => Promise<boolean>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * gw with listeners http (HTTP) and https (HTTPS, certificate a.example.test) on Gateway ai,
 * HTTPRoute web to the echo upstream, and the frontend policy (none when `frontend` is empty) on
 * the Gateway or the port `policyPort` picks. `extra` adds YAML documents (ending with ---).
 */
export async function startFrontendGateway(
  frontend: string,
  extra = '',
  policyPort?: (ports: { httpPort: number; httpsPort: number }) => number,
): Promise<FrontendGateway> {
  const upstream = await echoUpstream();
  const httpPort = await freePort();
  const httpsPort = await freePort();
  const targetPort = policyPort?.({ httpPort, httpsPort });
  const gw = await startTestGateway({
    'gateway.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: v1
kind: Secret
metadata: {name: cert-a}
type: kubernetes.io/tls
stringData: ${flowMap({ 'tls.crt': fixture('a.crt'), 'tls.key': fixture('a.key') })}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners:
    - {name: http, protocol: HTTP, port: ${httpPort}}
    - name: https
      protocol: HTTPS
      port: ${httpsPort}
      tls: {mode: Terminate, certificateRefs: [{name: cert-a}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstream.port}}}
---
${extra}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
`,
    'policy.yaml': frontend === '' ? '' : frontendPolicyYaml(frontend, targetPort),
  });
  return {
    gw,
    httpPort,
    httpsPort,
    upstream,
    async reconfigure(next, ready) {
      gw.write('policy.yaml', frontendPolicyYaml(next, targetPort));
      const deadline = Date.now() + 5000;
      while (!(await ready())) {
        if (Date.now() > deadline) throw new Error(`the configuration ${next} did not take effect`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      await gw.stop();
      upstream.server.close();
    },
  };
}

/** Writes `bytes` on a new connection and collects everything until the server closes it (or `timeoutMs`). */
export function rawExchange(
  port: number,
  bytes: Buffer | string,
  timeoutMs = 3000,
): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closed: false });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closed: true });
    });
  });
}

/** A GET for `path` that closes the connection after the response. */
export function getRequest(path = '/', host = 'gw.test'): string {
  return `GET ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`;
}

/** A PROXY protocol v1 line for a TCP connection from `address`:`port`. */
export function proxyV1(address: string, port: number): string {
  const family = address.includes(':') ? 'TCP6' : 'TCP4';
  const destination = family === 'TCP4' ? '127.0.0.1' : '::1';
  return `PROXY ${family} ${address} ${destination} ${port} 443\r\n`;
}

const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** A PROXY protocol v2 header (command PROXY, TCP over IPv4) from `address`:`port`, with `tlvs` bytes after the addresses. */
export function proxyV2(address: string, port: number, tlvs: Buffer = Buffer.alloc(0)): Buffer {
  const addresses = Buffer.alloc(12);
  address.split('.').forEach((octet, index) => {
    addresses[index] = Number(octet);
  });
  addresses.set([127, 0, 0, 1], 4);
  addresses.writeUInt16BE(port, 8);
  addresses.writeUInt16BE(443, 10);
  const head = Buffer.alloc(4);
  head[0] = 0x21; // version 2, PROXY
  head[1] = 0x11; // AF_INET, STREAM
  head.writeUInt16BE(addresses.length + tlvs.length, 2);
  return Buffer.concat([V2_SIGNATURE, head, addresses, tlvs]);
}

/** A PROXY protocol v2 LOCAL header (the balancer's own connection, no addresses). */
export function proxyV2Local(): Buffer {
  return Buffer.concat([V2_SIGNATURE, Buffer.from([0x20, 0x00, 0x00, 0x00])]);
}

/** The status code of a raw HTTP/1.1 answer, or undefined. */
export function statusOf(data: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(data);
  return match ? Number(match[1]) : undefined;
}

/** The JSON body of a raw HTTP/1.1 answer (connection: close, so the body runs to the end). */
export function bodyOf<T>(data: string): T {
  return JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4)) as T;
}

/** Resolves when `socket` closes; false if it is still open after `timeoutMs`. */
export function closedWithin(socket: Socket, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The access log entries (parsed) written so far. */
export function accessEntries(gw: TestGateway): Record<string, unknown>[] {
  return gw.accessLog.map((line) => JSON.parse(line) as Record<string, unknown>);
}
