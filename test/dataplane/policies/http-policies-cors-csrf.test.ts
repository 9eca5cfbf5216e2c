// traffic.cors and traffic.csrf end to end: what a browser would see (the CORS headers it checks,
// preflights answered by gw) and which cross-site requests reach the backend.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { startPolicyGateway } from './http-policies-setup.ts';

describe('traffic.cors', () => {
  let g: UpstreamGateway;

  before(async () => {
    g = await startPolicyGateway([
      {
        name: 'cors',
        traffic: `cors:
  allowOrigins: ['https://app.example.com', 'https://*.example.org']
  allowMethods: [GET, POST]
  allowHeaders: [x-token, content-type]
  exposeHeaders: [x-total]
  maxAge: 60`,
      },
      { name: 'open', traffic: `cors: {allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*']}` },
      { name: 'cred', traffic: `cors: {allowOrigins: ['*'], allowCredentials: true, allowMethods: ['*']}` },
    ]);
  });
  after(() => g?.stop());

  const preflight = (path: string, origin: string, extra: Record<string, string> = {}) =>
    g.send('OPTIONS', path, { headers: { origin, 'access-control-request-method': 'POST', ...extra } });
  const forwarded = (method: string, path: string) =>
    g.upstream.seen.some((seen) => seen.method === method && seen.url === path);

  it('answers a preflight from an allowed origin itself, with the allowed methods, headers and max age', async () => {
    const response = await preflight('/cors/a', 'https://app.example.com', {
      'access-control-request-headers': 'x-token',
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(response.headers['access-control-allow-methods'], 'GET,POST');
    assert.equal(response.headers['access-control-allow-headers'], 'x-token,content-type');
    assert.equal(response.headers['access-control-max-age'], '60');
    assert.equal(response.headers['access-control-expose-headers'], 'x-total');
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
    assert.equal(response.headers.vary, 'Origin');
    assert.equal(response.body, '');
    assert.equal(forwarded('OPTIONS', '/cors/a'), false, 'a preflight is not forwarded');
  });

  it('answers a preflight from another origin without CORS headers, and does not forward it', async () => {
    const response = await preflight('/cors/b', 'https://evil.example.net');
    assert.equal(response.status, 200);
    assert.equal(response.headers['access-control-allow-origin'], undefined);
    assert.equal(response.headers['access-control-allow-methods'], undefined);
    assert.equal(forwarded('OPTIONS', '/cors/b'), false);
  });

  it('forwards a request from an allowed origin and lets the browser read the response', async () => {
    const response = await g.send('GET', '/cors/c', {
      headers: {
        origin: 'https://app.example.com',
        'x-reply-vary': 'Accept-Encoding',
        'x-reply-access-control-allow-origin': '*',
      },
    });
    assert.equal(response.status, 200);
    assert.ok(forwarded('GET', '/cors/c'));
    // gw's value replaces the backend's own: two values would make the browser refuse both.
    assert.equal(response.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(response.headers['access-control-expose-headers'], 'x-total');
    assert.equal(response.headers.vary, 'Accept-Encoding, Origin');
  });

  it('matches wildcard subdomains on scheme, port and a real subdomain only', async () => {
    const allowOrigin = async (origin: string) =>
      (await g.send('GET', '/cors/w', { headers: { origin } })).headers['access-control-allow-origin'];
    assert.equal(await allowOrigin('https://a.example.org'), 'https://a.example.org');
    assert.equal(await allowOrigin('https://a.b.example.org'), 'https://a.b.example.org');
    assert.equal(await allowOrigin('https://A.Example.org:443'), 'https://A.Example.org:443');
    assert.equal(await allowOrigin('https://example.org'), undefined);
    assert.equal(await allowOrigin('http://a.example.org'), undefined);
    assert.equal(await allowOrigin('https://a.example.org:8443'), undefined);
    assert.equal(await allowOrigin('https://a.example.org.evil.net'), undefined);
    assert.equal(await allowOrigin('null'), undefined);
  });

  it('forwards requests from other origins and without Origin untouched', async () => {
    const other = await g.send('POST', '/cors/o', { headers: { origin: 'https://evil.example.net' }, body: 'x' });
    assert.equal(other.status, 200);
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    const none = await g.send('GET', '/cors/n');
    assert.equal(none.headers['access-control-allow-origin'], undefined);
    assert.equal(none.headers.vary, undefined);
  });

  it('forwards an OPTIONS request that is not a preflight', async () => {
    const response = await g.send('OPTIONS', '/cors/opt', { headers: { origin: 'https://app.example.com' } });
    assert.ok(forwarded('OPTIONS', '/cors/opt'));
    assert.equal(response.headers['access-control-allow-origin'], 'https://app.example.com');
  });

  it('with "*" and no credentials answers "*" and echoes the method and headers asked for', async () => {
    const response = await preflight('/open', 'https://anyone.example', {
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'X-A,  x-b',
    });
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.equal(response.headers['access-control-allow-methods'], 'PUT');
    assert.equal(response.headers['access-control-allow-headers'], 'X-A, x-b');
    assert.equal(response.headers['access-control-max-age'], '5', "Gateway API's default");
    assert.equal(response.headers.vary, undefined);
    const simple = await g.send('GET', '/open', { headers: { origin: 'https://anyone.example' } });
    assert.equal(simple.headers['access-control-allow-origin'], '*');
  });

  it('with "*" and credentials reflects the origin, as browsers require', async () => {
    const response = await preflight('/cred', 'https://anyone.example');
    assert.equal(response.headers['access-control-allow-origin'], 'https://anyone.example');
    assert.equal(response.headers['access-control-allow-credentials'], 'true');
    assert.equal(response.headers['access-control-allow-methods'], 'POST');
    const simple = await g.send('GET', '/cred', { headers: { origin: 'https://anyone.example', cookie: 'a=b' } });
    assert.equal(simple.headers['access-control-allow-origin'], 'https://anyone.example');
    assert.equal(simple.headers['access-control-allow-credentials'], 'true');
    assert.equal(simple.headers.vary, 'Origin');
  });
});

describe('traffic.csrf', () => {
  let g: UpstreamGateway;
  let own: string;

  before(async () => {
    g = await startPolicyGateway([
      { name: 'csrf', traffic: `csrf: {additionalOrigins: ['https://trusted.example.com']}` },
    ]);
    own = g.base;
  });
  after(() => g?.stop());

  const post = (path: string, headers: Record<string, string>) =>
    g.send('POST', path, { headers: { 'content-type': 'text/plain', ...headers }, body: 'data' });
  const reached = (path: string) => g.upstream.seen.some((seen) => seen.url === path);

  it('lets safe methods through from any origin', async () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      const response = await g.send(method, `/csrf/safe-${method}`, { headers: { origin: 'https://evil.example' } });
      assert.equal(response.status, 200, method);
    }
  });

  it('refuses an unsafe request from another origin with 403, before the backend', async () => {
    const response = await post('/csrf/evil', { origin: 'https://evil.example' });
    assert.equal(response.status, 403);
    assert.equal(response.body, 'CSRF validation failed\n');
    assert.equal(reached('/csrf/evil'), false);
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const other = await g.send(method, '/csrf/evil-method', { headers: { origin: 'https://evil.example' } });
      assert.equal(other.status, 403, method);
    }
  });

  it("accepts the request's own origin, case and default port aside", async () => {
    assert.equal((await post('/csrf/own', { origin: own })).status, 200);
    assert.equal((await post('/csrf/own-case', { origin: own.toUpperCase() })).status, 200);
    assert.ok(reached('/csrf/own'));
    assert.equal((await post('/csrf/other-port', { origin: 'http://127.0.0.1:1' })).status, 403);
    assert.equal((await post('/csrf/https', { origin: own.replace('http:', 'https:') })).status, 403);
  });

  it('accepts additionalOrigins, and requests without Origin (not a browser cross-site request)', async () => {
    assert.equal((await post('/csrf/trusted', { origin: 'https://trusted.example.com:443' })).status, 200);
    assert.equal((await post('/csrf/none', {})).status, 200);
    assert.ok(reached('/csrf/none'));
  });

  it('refuses the opaque origin "null"', async () => {
    assert.equal((await post('/csrf/null', { origin: 'null' })).status, 403);
  });

  it('trusts Sec-Fetch-Site: same-origin and none, and refuses cross-site unless the origin is trusted', async () => {
    assert.equal((await post('/csrf/sfs-same', { 'sec-fetch-site': 'same-origin' })).status, 200);
    assert.equal((await post('/csrf/sfs-none', { 'sec-fetch-site': 'none' })).status, 200);
    const cross = await post('/csrf/sfs-cross', { 'sec-fetch-site': 'cross-site', origin: own });
    assert.equal(cross.status, 403, 'Sec-Fetch-Site wins over a matching Origin');
    const sameSite = await post('/csrf/sfs-same-site', { 'sec-fetch-site': 'same-site' });
    assert.equal(sameSite.status, 403);
    const trusted = await post('/csrf/sfs-trusted', {
      'sec-fetch-site': 'cross-site',
      origin: 'https://trusted.example.com',
    });
    assert.equal(trusted.status, 200);
  });
});
