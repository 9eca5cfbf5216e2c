// HBONE to a mesh destination (src/dataplane/mesh/hbone.ts, decision 0035): mutual TLS with
// workload certificates from a stand-in of Istio's CA, the destination's SPIFFE ID checked (trust
// domain aliases included), an HTTP/2 CONNECT to the pod's address and port, and real HTTP
// through the tunnel to a server behind a stand-in of the destination's ztunnel
// (test/helpers/ztunnel-stand-in.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { HboneError, openHbone } from '../../../src/dataplane/mesh/hbone.ts';
import type { WorkloadCertificate } from '../../../src/dataplane/mesh/workload-certificate.ts';
import { type MeshCaStandIn, skipWithoutOpenssl, startMeshCa } from '../../helpers/mesh-ca-stand-in.ts';
import { issue, type Seen, startZtunnel } from '../../helpers/ztunnel-stand-in.ts';

const GATEWAY = 'spiffe://corp.example/ns/team-a/sa/ai';
const MODEL = 'spiffe://corp.example/ns/team-b/sa/model';
const TOKEN = 'token';

/** A GET through `tunnel` (HTTP/1.1 over the CONNECT stream). */
function getThrough(tunnel: Duplex): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { createConnection: () => tunnel, path: '/v1/models', headers: { host: 'model' } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve(`${response.statusCode} ${body}`));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('HBONE', { skip: skipWithoutOpenssl }, () => {
  let ca: MeshCaStandIn;
  let otherMesh: MeshCaStandIn;
  let dir: string;
  let backend: Server;
  let backendPort: number;
  let gateway: WorkloadCertificate;
  const servers: Http2SecureServer[] = [];

  before(async () => {
    ca = await startMeshCa({ token: TOKEN, clusterId: 'east', identity: GATEWAY });
    otherMesh = await startMeshCa({ token: TOKEN, clusterId: 'east', identity: MODEL });
    dir = mkdtempSync(join(tmpdir(), 'gw-hbone-'));
    gateway = await issue(ca, dir, GATEWAY, TOKEN);
    backend = createServer((request, response) => response.end(`models for ${request.headers.host}`));
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendPort = (backend.address() as AddressInfo).port;
  });
  after(async () => {
    for (const server of servers) server.close();
    backend.close();
    await ca.close();
    await otherMesh.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function ztunnel(identity: string, seen: Seen[], options: { mesh?: MeshCaStandIn; answer?: number } = {}) {
    const started = await startZtunnel(await issue(options.mesh ?? ca, dir, identity, TOKEN), seen, {
      answer: options.answer,
    });
    servers.push(started.server);
    return started.port;
  }

  const open = (hbonePort: number, identities: string[], trustDomains = ['corp.example']) =>
    openHbone(
      gateway,
      { address: '127.0.0.1', port: backendPort, hbonePort, identities },
      { trustDomains, connectTimeoutMs: 5_000 },
    );

  it("carries HTTP to the pod's port, presenting gw's SPIFFE ID, without SNI, the peer's checked", async () => {
    const seen: Seen[] = [];
    const port = await ztunnel(MODEL, seen);
    const tunnel = await open(port, [MODEL]);
    assert.equal(await getThrough(tunnel), '200 models for model');
    tunnel.destroy();
    assert.deepEqual(seen, [{ clientIdentities: [GATEWAY], servername: false, authority: `127.0.0.1:${backendPort}` }]);
  });

  it('refuses a destination showing another identity, naming both', async () => {
    const port = await ztunnel('spiffe://corp.example/ns/team-b/sa/impostor', []);
    await assert.rejects(open(port, [MODEL]), (error: Error) => {
      assert.ok(error instanceof HboneError);
      assert.match(
        error.message,
        /the peer spiffe:\/\/corp\.example\/ns\/team-b\/sa\/impostor is not spiffe:\/\/corp\.example\/ns\/team-b\/sa\/model/,
      );
      return true;
    });
  });

  it('accepts an identity of another trust domain only when both are trusted (additionalTrustDomains)', async () => {
    const port = await ztunnel('spiffe://old.example/ns/team-b/sa/model', []);
    await assert.rejects(open(port, [MODEL], ['corp.example']), /is not spiffe:\/\/corp\.example/);
    const tunnel = await open(port, [MODEL], ['corp.example', 'old.example']);
    assert.equal(await getThrough(tunnel), '200 models for model');
    tunnel.destroy();
  });

  it('with no identity expected, any workload of a trusted trust domain, and no other', async () => {
    const port = await ztunnel('spiffe://partner.example/ns/x/sa/y', []);
    await assert.rejects(open(port, []), /not of a trusted trust domain \(corp\.example\)/);
    const tunnel = await open(port, [], ['corp.example', 'partner.example']);
    tunnel.destroy();
  });

  it("refuses a destination whose certificate is not of the mesh's roots", async () => {
    const port = await ztunnel(MODEL, [], { mesh: otherMesh });
    await assert.rejects(
      open(port, [MODEL]),
      (error: Error) => error instanceof HboneError && !/is not spiffe/.test(error.message),
    );
  });

  it('a CONNECT refused by the destination fails with its status', async () => {
    const port = await ztunnel(MODEL, [], { answer: 403 });
    await assert.rejects(open(port, [MODEL]), /CONNECT answered 403/);
  });
});
