// MCP OAuth without a provider quirk list, from a Gateway-wide PreRouting JWT policy: the
// well-known endpoints answer although every other request needs a token, the configured
// resource wins over the computed one, the protected resource metadata names the identity
// provider itself, and gw's authorization server metadata is the provider's (found by OpenID
// Connect Discovery after RFC 8414) with gw taking registrations, passed on as they are.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  discoverAuthorizationServerMetadata,
  extractWWWAuthenticateParams,
  registerClient,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { gatewayYaml } from '../../helpers/gateway.ts';
import { GATEWAY_AI, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { eventually } from '../../helpers/until.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { type IdentityProvider, startIdentityProvider } from './mcp-oauth-idp.ts';

const PUBLIC_RESOURCE = 'https://mcp.example.com/mcp';

function files(idp: { issuer: string; jwksUri: string }, port: number, upstreamPort: number): string {
  return [
    gatewayYaml(port),
    staticBackendYaml('web', upstreamPort),
    prefixRouteYaml('mcp'),
    trafficPolicyYaml('mcp-auth', GATEWAY_AI, {
      phase: 'PreRouting',
      jwtAuthentication: {
        providers: [{ issuer: idp.issuer, audiences: [PUBLIC_RESOURCE], jwks: { remote: { url: idp.jwksUri } } }],
        mcp: { resourceMetadata: { resource: PUBLIC_RESOURCE, resourceName: 'Tools' } },
      },
    }),
  ].join('');
}

describe('MCP OAuth with a standard provider, from a PreRouting policy', () => {
  let idp: IdentityProvider;
  let g: UpstreamGateway;
  let base: string;
  let ports: { port: number; upstreamPort: number };

  before(async () => {
    idp = await startIdentityProvider();
    g = await startUpstreamGateway((given) => {
      ports = given;
      return { 'gw.yaml': files(idp, given.port, given.upstreamPort) };
    });
    base = g.base;
  });

  after(async () => {
    await g?.stop();
    await idp?.close();
  });

  it('points the 401 at the metadata under the configured resource’s origin', async () => {
    const response = await fetch(`${base}/mcp`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 401);
    await response.body?.cancel();
    assert.equal(
      extractWWWAuthenticateParams(response).resourceMetadataUrl?.href,
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    );
  });

  it('serves the metadata despite the PreRouting JWT policy, naming the provider as authorization server', async () => {
    const response = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(await response.json(), {
      resource: PUBLIC_RESOURCE,
      authorization_servers: [idp.issuer],
      bearer_methods_supported: ['header'],
      mcp_protocol_version: '2025-06-18',
      resource_type: 'mcp-server',
      resource_name: 'Tools',
    });
  });

  it('serves the provider’s own metadata with gw taking registrations, and passes them on unchanged', async () => {
    const metadata = await discoverAuthorizationServerMetadata(`${base}/mcp`);
    assert.ok(metadata);
    assert.equal(metadata.issuer, idp.issuer, 'without a provider the issuer stays the provider’s');
    assert.equal(
      metadata.registration_endpoint,
      `${base}/.well-known/oauth-authorization-server/mcp/client-registration`,
    );
    const registered = await registerClient(`${base}/mcp`, {
      metadata,
      clientMetadata: {
        client_name: 'standard client',
        redirect_uris: [],
        grant_types: ['client_credentials'],
        response_types: [],
        scope: 'openid',
      },
    });
    assert.ok(registered.client_id);
    assert.ok(registered.client_secret, 'the provider’s answer comes back whole');
    assert.equal(idp.registrations.at(-1)!.scope, 'openid', 'no Keycloak rewrite for a standard provider');
  });

  it('answers 502 while the provider’s metadata cannot be fetched', async () => {
    g.gw.write(
      'gw.yaml',
      files(
        { issuer: 'http://127.0.0.1:1/realms/gone', jwksUri: 'http://127.0.0.1:1/realms/gone/certs' },
        ports.port,
        ports.upstreamPort,
      ),
    );
    let last: Response | undefined;
    await eventually('the new provider to apply', async () => {
      last = await fetch(`${base}/.well-known/oauth-authorization-server/mcp`);
      if (last.status !== 502) await last.body?.cancel();
      return last.status === 502;
    });
    assert.equal(await last!.text(), "the identity provider's authorization server metadata is not available\n");
    await eventually('the access log to say why', async () =>
      g.gw.accessLog.some(
        (line) => line.includes('mcp oauth: authorization server metadata') && line.includes('127.0.0.1:1'),
      ),
    );
  });
});
