// Time and the identity provider's authorization server metadata gw serves to MCP clients
// (traffic.jwtAuthentication.mcp), on a clock the test moves, against a real metadata server that
// counts its fetches: a document is served 5 minutes, then fetched again (the old one served
// meanwhile); after a failed fetch the provider is not asked again for 5 s.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  compileMcpOAuthEndpoint,
  type McpOAuthEndpoint,
} from '../../../src/dataplane/policies/auth/mcp-oauth/endpoint.ts';
import { METADATA_TTL_MS, RETRY_AFTER_MS } from '../../../src/dataplane/policies/auth/mcp-oauth/metadata-source.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { until } from '../../helpers/until.ts';

/** The metadata server: `status` to answer with, fetches so far; its document carries the fetch number as n. */
const provider = { status: 200, fetches: 0 };
let server: ReturnType<typeof createServer>;
let issuer = '';
before(async () => {
  server = createServer((_req, res) => {
    provider.fetches += 1;
    if (provider.status !== 200) return void res.writeHead(provider.status).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, n: provider.fetches }));
  });
  issuer = `http://127.0.0.1:${await listen(server)}/realm`;
});
after(async () => {
  await closeServer(server);
});

describe('MCP OAuth provider metadata over time', () => {
  const runtimes: PolicyRuntime[] = [];
  afterEach(() => {
    for (const runtime of runtimes.splice(0)) runtime.close();
    provider.status = 200;
  });

  const endpointOn = (clock: FakeClock): McpOAuthEndpoint => {
    const runtime = new PolicyRuntime({ clock });
    runtimes.push(runtime);
    const settings = {
      issuer,
      audiences: [],
      provider: undefined,
      resourceMetadata: {},
      clientId: undefined,
      clientSecret: undefined,
      bearerMethods: undefined,
    };
    const endpoint = compileMcpOAuthEndpoint(settings, { runtime }, 'traffic.jwtAuthentication.mcp');
    if (isProblem(endpoint)) assert.fail(`${endpoint.field}: ${endpoint.message}`);
    return endpoint;
  };
  /** What an MCP client asking for the metadata gets: the document's n, or the status gw answered. */
  const served = async (endpoint: McpOAuthEndpoint): Promise<number | string> => {
    const answer = await endpoint.authorizationServer('http://gw.example', '/mcp', () => undefined);
    return answer.status === 200 ? (JSON.parse(String(answer.body)) as { n: number }).n : `status ${answer.status}`;
  };

  it('serves a document for 5 minutes, then fetches it again, serving the old one meanwhile', async () => {
    const clock = fakeClock();
    const endpoint = endpointOn(clock);
    const first = await served(endpoint);
    const fetches = provider.fetches;
    clock.advance(METADATA_TTL_MS - 1);
    assert.equal(await served(endpoint), first, 'within 5 minutes: the document fetched');
    assert.equal(provider.fetches, fetches, 'without asking the provider');
    clock.advance(1);
    assert.equal(await served(endpoint), first, 'at 5 minutes the old document is served while the new one comes');
    assert.ok(await until(async () => (await served(endpoint)) !== first, 2000), 'the new document is served');
    assert.equal(provider.fetches, fetches + 1, 'one fetch for all those requests');
  });

  it('asks a failing provider again only 5 s after the failure', async () => {
    const clock = fakeClock();
    const endpoint = endpointOn(clock);
    provider.status = 503;
    const fetches = provider.fetches;
    assert.equal(await served(endpoint), 'status 502');
    assert.equal(provider.fetches, fetches + 1);
    provider.status = 200;
    clock.advance(RETRY_AFTER_MS - 1);
    assert.equal(await served(endpoint), 'status 502', 'the failure is remembered');
    assert.equal(provider.fetches, fetches + 1, 'the provider is not asked');
    clock.advance(1);
    assert.equal(typeof (await served(endpoint)), 'number', '5 s after the failure it is asked, and answers');
    assert.equal(provider.fetches, fetches + 2);
  });
});
