// traffic.hostRewrite end to end: the Host a backend gets — its own hostname for hostname-based
// backends (a static DNS name, an ExternalName Service) unless None says otherwise, the client's
// for IP backends whatever the mode, and a URL rewrite's hostname always — and backendAuthority.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backendAuthority } from '../../../src/dataplane/policies/forwarding/host-rewrite.ts';
import type { ConnectionSettings } from '../../../src/dataplane/upstream/connection-settings.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { answerPath, startForwardingGateway } from './forwarding-setup.ts';

describe('traffic.hostRewrite', () => {
  let g: UpstreamGateway;
  let named: RecordingUpstream;
  before(async () => {
    // A second upstream reached by the name localhost: a hostname-based backend.
    named = await startRecordingUpstream(answerPath);
    g = await startForwardingGateway(
      [
        { name: 'ip' },
        { name: 'ip-auto', traffic: 'hostRewrite: {mode: Auto}' },
        { name: 'named', backend: 'named' },
        { name: 'named-none', backend: 'named', traffic: 'hostRewrite: {mode: None}' },
        { name: 'named-auto', backend: 'named', traffic: 'hostRewrite: {mode: Auto}' },
        {
          name: 'rewritten',
          backend: 'named',
          extra: '      filters: [{type: URLRewrite, urlRewrite: {hostname: backend.internal}}]\n',
        },
        { name: 'external', backendRef: `{name: external, port: ${named.port}}` },
      ],
      `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: named}
spec: {static: {host: localhost, port: ${named.port}}}
---
apiVersion: v1
kind: Service
metadata: {name: external}
spec: {type: ExternalName, externalName: localhost, ports: [{port: ${named.port}}]}
---
`,
    );
  });
  after(async () => {
    await g.stop();
    await named.close();
  });

  const hostSeen = async (path: string, upstream: RecordingUpstream): Promise<string | undefined> => {
    const reply = await g.send('GET', path, { headers: { host: 'app.example.com' } });
    assert.equal(reply.status, 200, reply.body);
    return upstream.seen.at(-1)?.headers.host;
  };

  it("keeps the client's Host for an IP backend, with or without Auto", async () => {
    assert.equal(await hostSeen('/ip', g.upstream), 'app.example.com');
    assert.equal(await hostSeen('/ip-auto', g.upstream), 'app.example.com');
  });

  it("sends a hostname backend's own name by default and under Auto", async () => {
    assert.equal(await hostSeen('/named', named), `localhost:${named.port}`);
    assert.equal(await hostSeen('/named-auto', named), `localhost:${named.port}`);
    assert.equal(await hostSeen('/external', named), `localhost:${named.port}`);
  });

  it("keeps the client's Host under None", async () => {
    assert.equal(await hostSeen('/named-none', named), 'app.example.com');
  });

  it("keeps a URL rewrite's hostname", async () => {
    assert.equal(await hostSeen('/rewritten', named), 'backend.internal');
  });
});

describe('backendAuthority', () => {
  const settings = (origin: string, socketPath?: string) =>
    ({ key: origin, origin, socket: { socketPath }, requestTimeoutMs: undefined }) as unknown as ConnectionSettings;

  it("is the hostname, with the port unless it is the scheme's default", () => {
    assert.equal(backendAuthority(settings('https://api.example.com:443')), 'api.example.com');
    assert.equal(backendAuthority(settings('http://api.example.com:80')), 'api.example.com');
    assert.equal(backendAuthority(settings('https://api.example.com:8443')), 'api.example.com:8443');
  });

  it('is undefined for IP addresses and Unix sockets', () => {
    assert.equal(backendAuthority(settings('http://10.0.0.1:80')), undefined);
    assert.equal(backendAuthority(settings('https://[2001:db8::1]:443')), undefined);
    assert.equal(backendAuthority(settings('http://localhost', '/run/app.sock')), undefined);
  });
});
