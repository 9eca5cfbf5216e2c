// Frontend.networkAuthorization: a CEL rule on each connection's source, decided before TLS or
// HTTP; a denied connection is closed without an answer. The sources here come from PROXY
// headers (the test client is always 127.0.0.1). Also the CEL ip/cidr functions the rules use.
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { compileExpression, type Expression } from '../../../src/dataplane/cel/expression.ts';
import { compileNetworkAuthorization } from '../../../src/dataplane/server/network-authorization.ts';
import {
  CA,
  type FrontendGateway,
  getRequest,
  proxyV1,
  rawExchange,
  startFrontendGateway,
  statusOf,
} from './helpers.ts';

function evaluate(source: string, variables: Record<string, unknown> = {}): unknown {
  const expression = compileExpression(source) as Expression;
  return expression.evaluate(variables);
}

describe('CEL ip and cidr functions', () => {
  it('test addresses against ranges, IPv4 and IPv6', () => {
    const source = { source: { address: '10.20.30.40', port: 1n } };
    assert.equal(evaluate("cidr('10.0.0.0/8').containsIP(source.address)", source), true);
    assert.equal(evaluate("cidr('10.0.0.0/16').containsIP(source.address)", source), false);
    assert.equal(evaluate("cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))"), false);
    assert.equal(evaluate("cidr('2001:db8::/32').containsIP('2001:db8:ffff::1')"), true);
    assert.equal(evaluate("cidr('2001:db8::/32').containsIP('2001:db9::1')"), false);
    // IPv4 clients of a dual-stack socket appear IPv4-mapped; IPv4 ranges still match them.
    assert.equal(evaluate("cidr('192.168.0.0/16').containsIP('::ffff:192.168.1.2')"), true);
    assert.equal(evaluate("cidr('0.0.0.0/0').containsIP('::1')"), false);
  });

  it('compare ranges, and take them apart', () => {
    assert.equal(evaluate("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')"), true);
    assert.equal(evaluate("cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))"), false);
    assert.equal(evaluate("cidr('10.1.2.3/8').prefixLength()"), 8n);
    assert.equal(evaluate("string(cidr('10.1.2.3/8').masked())"), '10.0.0.0/8');
    assert.equal(evaluate("string(cidr('10.1.2.3/8').ip())"), '10.1.2.3');
    assert.equal(evaluate("string(ip('2001:0DB8:0:0:0:0:0:1'))"), '2001:db8::1');
    assert.equal(
      evaluate("ip('::1').family() == 6 && ip('127.0.0.2').isLoopback() && ip('0.0.0.0').isUnspecified()"),
      true,
    );
  });

  it('validate text, and fail the expression on text that is no address', () => {
    assert.equal(evaluate("isIP('1.2.3.4') && isIP('fe80::1') && !isIP('1.2.3') && !isIP('example.com')"), true);
    assert.equal(evaluate("isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0')"), true);
    assert.throws(() => evaluate("cidr('10.0.0.0/33').containsIP('10.0.0.1')"), /not a CIDR range/);
    assert.throws(() => evaluate("cidr('10.0.0.0/8').containsIP('ten')"), /not an IP address/);
  });
});

describe('network authorization rules', () => {
  const rule = (action: 'Allow' | 'Deny' | 'Require', ...matchExpressions: string[]) => {
    const compiled = compileNetworkAuthorization({ action, policy: { matchExpressions } });
    assert.notEqual(typeof compiled, 'string');
    return compiled as Exclude<typeof compiled, string>;
  };

  it('Allow and Require admit what every expression matches; a failing expression does not match', () => {
    for (const action of ['Allow', 'Require'] as const) {
      const allow = rule(action, "cidr('10.0.0.0/8').containsIP(source.address)", 'source.port > 1024');
      assert.equal(allow.allows({ address: '10.1.1.1', port: 5000 }), true);
      assert.equal(allow.allows({ address: '10.1.1.1', port: 80 }), false);
      assert.equal(allow.allows({ address: '192.168.1.1', port: 5000 }), false);
      assert.equal(
        rule(action, "cidr('bad').containsIP(source.address)").allows({ address: '10.1.1.1', port: 1 }),
        false,
      );
    }
  });

  it('Deny refuses what it matches, and never on a failing expression', () => {
    const deny = rule('Deny', "cidr('192.168.0.0/16').containsIP(source.address)");
    assert.equal(deny.allows({ address: '192.168.7.7', port: 1 }), false);
    assert.equal(deny.allows({ address: '10.0.0.1', port: 1 }), true);
    assert.equal(rule('Deny', 'source.missing == 1').allows({ address: '192.168.7.7', port: 1 }), true);
  });

  it('names the expression that does not compile', () => {
    const problem = compileNetworkAuthorization({
      action: 'Allow',
      policy: { matchExpressions: ['true', 'source.address ==='] },
    });
    assert.equal(typeof problem, 'string');
    assert.match(problem as string, /^policy\.matchExpressions\[1\] does not compile/);
  });
});

describe('Frontend.networkAuthorization', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway(
      `{proxyProtocol: {version: V1}, networkAuthorization: {policy: {matchExpressions: ["cidr('10.0.0.0/8').containsIP(source.address)"]}}}`,
    );
  });

  after(async () => {
    await gateway?.stop();
  });

  it('serves connections the rule allows and closes the others without an answer', async () => {
    const allowed = await rawExchange(gateway.httpPort, proxyV1('10.9.8.7', 4000) + getRequest());
    assert.equal(statusOf(allowed.data), 200, allowed.data);
    const denied = await rawExchange(gateway.httpPort, proxyV1('192.0.2.1', 4000) + getRequest());
    assert.deepEqual(denied, { data: '', closed: true });
  });

  it('decides before TLS: a denied client gets no handshake', async () => {
    const outcome = (address: string) =>
      new Promise<string>((resolve) => {
        const raw = netConnect(gateway.httpsPort, '127.0.0.1', () => {
          raw.write(proxyV1(address, 4000));
          const secure = tlsConnect({ socket: raw, servername: 'a.example.test', ca: CA }, () => {
            resolve('handshake');
            secure.destroy();
          });
          secure.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        });
      });
    assert.equal(await outcome('10.0.0.1'), 'handshake');
    assert.equal(await outcome('172.16.0.1'), 'ECONNRESET');
  });

  it('with action Deny, refuses the matching sources only', async () => {
    await gateway.reconfigure(
      `{proxyProtocol: {version: V1}, networkAuthorization: {action: Deny, policy: {matchExpressions: ["cidr('10.0.0.0/8').containsIP(source.address)"]}}}`,
      async () => statusOf((await rawExchange(gateway.httpPort, proxyV1('192.0.2.1', 1) + getRequest())).data) === 200,
    );
    const denied = await rawExchange(gateway.httpPort, proxyV1('10.0.0.1', 1) + getRequest());
    assert.deepEqual(denied, { data: '', closed: true });
  });

  it('closes every connection while the Allow rule fails to evaluate (fail closed)', async () => {
    await gateway.reconfigure(
      `{networkAuthorization: {policy: {matchExpressions: ["cidr('10.0.0.0/99').containsIP(source.address)"]}}}`,
      // Served under the Deny rule before; closed under this one.
      async () => (await rawExchange(gateway.httpPort, proxyV1('192.0.2.1', 1) + getRequest())).data === '',
    );
    assert.deepEqual(await rawExchange(gateway.httpPort, getRequest()), { data: '', closed: true });
  });
});
