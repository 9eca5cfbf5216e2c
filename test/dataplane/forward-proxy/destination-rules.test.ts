// The dynamic forward proxy's destination rules on their own (decision 0044): what each default
// refuses, what allowedAddresses and allowedHosts lift (a metadata address only by its own single
// address), deniedAddresses winning, the gateway's own listeners never lifted, and ranges that
// cannot be parsed refused naming their field.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { describe, it } from 'node:test';
import type { DynamicForwardProxyBackend } from '../../../src/api/types/backends.ts';
import {
  DestinationRules,
  DestinationRulesError,
} from '../../../src/dataplane/backends/forward-proxy/destination-rules.ts';

const LISTENER_PORT = 8080;
const servesPort = (port: number) => port === LISTENER_PORT;

describe('dynamic forward proxy destination rules', () => {
  it('refuse loopback, link-local, unspecified and metadata by default; reach public and private ranges', () => {
    const rules = new DestinationRules({}, servesPort);
    const cases: [string, string | undefined][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['169.254.0.1', 'link-local'],
      ['fe80::1', 'link-local'],
      ['febf::1', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['169.254.169.254', 'cloud metadata'],
      ['::ffff:169.254.169.254', 'cloud metadata'],
      ['169.254.170.2', 'cloud metadata'],
      ['100.100.100.200', 'cloud metadata'],
      ['fd00:ec2::254', 'cloud metadata'],
      ['fd20:ce::254', 'cloud metadata'],
      ['10.1.2.3', undefined],
      ['192.168.1.1', undefined],
      ['fd12:3456::1', undefined],
      ['203.0.113.7', undefined],
      ['2001:db8::1', undefined],
    ];
    for (const [address, rule] of cases) assert.equal(rules.refusal('example.com', address, 443), rule, address);
  });

  it('allowedAddresses lifts loopback and link-local, and a metadata address only by its own /32 or /128', () => {
    const wide = new DestinationRules({ allowedAddresses: ['127.0.0.0/8', '169.254.0.0/16', 'fd00::/8'] }, servesPort);
    assert.equal(wide.refusal('h', '127.0.0.5', 80), undefined);
    assert.equal(wide.refusal('h', '169.254.3.4', 80), undefined);
    assert.equal(wide.refusal('h', '169.254.169.254', 80), 'cloud metadata');
    assert.equal(wide.refusal('h', 'fd00:ec2::254', 80), 'cloud metadata');
    assert.equal(wide.refusal('h', '::1', 80), 'loopback');
    const exact = new DestinationRules({ allowedAddresses: ['169.254.169.254/32', 'fd00:ec2::254/128'] }, servesPort);
    assert.equal(exact.refusal('h', '169.254.169.254', 80), undefined);
    assert.equal(exact.refusal('h', 'fd00:ec2::254', 80), undefined);
    assert.equal(exact.refusal('h', '169.254.170.2', 80), 'cloud metadata');
  });

  it('allowedHosts lifts the defaults for the names it lists (exact or *.suffix), never metadata', () => {
    const rules = new DestinationRules({ allowedHosts: ['localhost', '*.internal.example.com'] }, servesPort);
    assert.equal(rules.refusal('localhost', '127.0.0.1', 80), undefined);
    assert.equal(rules.refusal('LocalHost.', '::1', 80), undefined);
    assert.equal(rules.refusal('a.b.internal.example.com', '127.0.0.1', 80), undefined);
    assert.equal(rules.refusal('internal.example.com', '127.0.0.1', 80), 'loopback');
    assert.equal(rules.refusal('evilinternal.example.com', '127.0.0.1', 80), 'loopback');
    assert.equal(rules.refusal('a.internal.example.com', '169.254.169.254', 80), 'cloud metadata');
  });

  it("never lifts the gateway's own listeners; deniedAddresses wins over every allow", () => {
    const rules = new DestinationRules(
      { allowedAddresses: ['127.0.0.0/8', '0.0.0.0/8'], allowedHosts: ['localhost'], deniedAddresses: ['10.0.0.0/8'] },
      servesPort,
    );
    assert.equal(rules.refusal('localhost', '127.0.0.1', LISTENER_PORT), 'gateway listener');
    assert.equal(rules.refusal('h', '0.0.0.0', LISTENER_PORT), 'gateway listener');
    assert.equal(rules.refusal('h', '127.0.0.1', LISTENER_PORT + 1), undefined);
    // This host's own interface addresses on a listener's port are the gateway too.
    const own = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && !entry.internal && entry.family === 'IPv4');
    if (own) assert.equal(rules.refusal('h', own.address, LISTENER_PORT), 'gateway listener');
    assert.equal(rules.refusal('h', '10.9.9.9', 443), 'deniedAddresses');
    const denyAllowed = new DestinationRules(
      { allowedAddresses: ['10.1.0.0/16'], deniedAddresses: ['10.0.0.0/8'] },
      servesPort,
    );
    assert.equal(denyAllowed.refusal('h', '10.1.2.3', 443), 'deniedAddresses');
  });

  it('refuses a range it cannot parse, naming the field', () => {
    const cases: [DynamicForwardProxyBackend, string][] = [
      [{ allowedAddresses: ['127.0.0.1/8', '1:2:3/64'] }, 'allowedAddresses[1]'],
      [{ deniedAddresses: ['::/129'] }, 'deniedAddresses[0]'],
    ];
    for (const [spec, field] of cases) {
      assert.throws(
        () => new DestinationRules(spec, servesPort),
        (error: unknown) => error instanceof DestinationRulesError && error.field === field,
      );
    }
  });
});
