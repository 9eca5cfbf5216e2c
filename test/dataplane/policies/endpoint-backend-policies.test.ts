// The spec.policies of a GwBackend that a policy's endpoint reference names: ext_authz over HTTP
// applies its connection policies (a tls policy originates TLS, with the CA it names), and an
// endpoint that does not apply a field the GwBackend sets (ext_authz over gRPC and its tls) is
// refused with the field named — never reached without it, which for tls meant plain text.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { gatewayYaml, ownFailureDetail } from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { testCaConfigMapYaml, tlsFixture } from '../../helpers/https-get.ts';
import { indentYaml, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

describe('GwBackend policies of an endpoint reference', () => {
  let authz: Server;
  const checks: string[] = [];
  let g: UpstreamGateway;

  before(async () => {
    // An HTTPS authorization server (certificate for 127.0.0.1, signed by the test CA): allows "Bearer good".
    authz = createServer({ key: tlsFixture('backend.key'), cert: tlsFixture('backend.crt') }, (req, res) => {
      checks.push(req.url ?? '');
      res.writeHead(req.headers.authorization === 'Bearer good' ? 200 : 403).end();
    });
    const authzPort = await listen(authz);
    const scenario = (name: string, extAuth: string) =>
      prefixRouteYaml(name) + trafficPolicyYaml(name, name, `extAuth:\n${indentYaml(extAuth, 2)}`);
    g = await startUpstreamGateway(({ port, upstreamPort }) => ({
      'gw.yaml': `${gatewayYaml(port)}${testCaConfigMapYaml()}${staticBackendYaml('web', upstreamPort)}${staticBackendYaml('authz-tls', authzPort, '{tls: {caCertificateRefs: [{name: test-ca}]}}')}${scenario(
        'http-tls',
        'backendRef: {group: gw.dev, kind: GwBackend, name: authz-tls}\nhttp: {}',
      )}${scenario('grpc-tls', 'backendRef: {group: gw.dev, kind: GwBackend, name: authz-tls}\ngrpc: {}')}`,
    }));
  });

  after(async () => {
    await g?.stop();
    await closeServer(authz);
  });

  it('ext_authz over HTTP reaches a GwBackend with a tls policy over TLS, trusting the CA it names', async () => {
    const allowed = await g.send('GET', '/http-tls/x', { headers: { authorization: 'Bearer good' } });
    assert.equal(allowed.status, 200, allowed.body);
    const denied = await g.send('GET', '/http-tls/x', { headers: { authorization: 'Bearer bad' } });
    assert.equal(denied.status, 403);
    assert.equal(checks.length, 2, 'both checks reached the HTTPS authorization server');
  });

  it('ext_authz over gRPC does not apply the GwBackend tls policy: refused (500) naming it, nothing reaches the upstream', async () => {
    const before = g.upstream.seen.length;
    const refused = await g.send('GET', '/grpc-tls/x', { headers: { authorization: 'Bearer good' } });
    assert.equal(refused.status, 500);
    assert.match(
      await ownFailureDetail(g.gw, refused),
      /GwBackend default\/authz-tls sets policies\.tls, which gw does not apply to this endpoint/,
    );
    assert.equal(g.upstream.seen.length, before);
  });
});
