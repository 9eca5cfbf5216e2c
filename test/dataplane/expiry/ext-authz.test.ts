// Time and the ext_authz decision cache (traffic.extAuth.cache), on a clock the test moves, against
// a real HTTP authorization server that counts its checks: a cached allow is used until its ttl and
// the server is asked again from then on (a user it revoked is refused then, not before); a cached
// denial ends the same way; a ttl given as an expiry instant (epoch seconds from the server's
// answer) ends at that instant.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { ExtAuth } from '../../../src/api/types/inbound-auth.ts';
import { compileExtAuth } from '../../../src/dataplane/policies/ext-authz/ext-authz.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type CompiledPolicy, isProblem } from '../../../src/dataplane/policies/types.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { runStep } from '../../helpers/policy-step.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';

/** The authorization server's verdict per Authorization header (absent: 403). */
const verdicts = new Map<string, number>();
/** What the server puts in its JSON answer as `exp` (epoch seconds). */
let answerExp = 0;

let server: RecordingUpstream;
before(async () => {
  server = await startRecordingUpstream((req, res) => {
    const status = verdicts.get(String(req.headers.authorization)) ?? 403;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ exp: answerExp }));
  });
});
after(async () => {
  await server.close();
});

describe('ext_authz decisions over time', () => {
  const runtimes: PolicyRuntime[] = [];
  afterEach(() => {
    for (const runtime of runtimes.splice(0)) runtime.close();
    verdicts.clear();
  });

  /** traffic.extAuth in HTTP mode on the server, keyed by Authorization, with `extra` settings, on `clock`. */
  const policyOn = (clock: FakeClock, extra: Partial<ExtAuth>): CompiledPolicy => {
    const runtime = new PolicyRuntime({ clock });
    runtimes.push(runtime);
    const value: ExtAuth = {
      url: `http://127.0.0.1:${server.port}`,
      http: {},
      ...extra,
    };
    const compiled = compileExtAuth(value, compileContext({ runtime }));
    if (isProblem(compiled)) assert.fail(`${compiled.field}: ${compiled.message}`);
    return compiled;
  };
  const checks = () => server.seen.length;
  const send = async (policy: CompiledPolicy, authorization: string) =>
    (await runStep(policy, { authorization })).answer?.status ?? 200;

  it('uses a cached allow until its ttl, then asks again: a revoked user is refused from then on', async () => {
    const clock = fakeClock();
    const policy = policyOn(clock, { cache: { key: ['request.headers.authorization'], ttl: '5s' } });
    verdicts.set('Bearer alice', 200);
    const before = checks();
    assert.equal(await send(policy, 'Bearer alice'), 200);
    assert.equal(checks(), before + 1);
    verdicts.set('Bearer alice', 403);
    clock.advance(4999);
    assert.equal(await send(policy, 'Bearer alice'), 200, 'within the ttl the cached allow is used');
    assert.equal(checks(), before + 1, 'without asking the server');
    clock.advance(1);
    assert.equal(await send(policy, 'Bearer alice'), 403, 'at the ttl the server is asked and refuses');
    assert.equal(checks(), before + 2);
  });

  it('uses a cached denial until its ttl, then asks again: a user granted access gets in from then on', async () => {
    const clock = fakeClock();
    const policy = policyOn(clock, { cache: { key: ['request.headers.authorization'], ttl: '1m' } });
    const before = checks();
    assert.equal(await send(policy, 'Bearer bob'), 403);
    verdicts.set('Bearer bob', 200);
    clock.advance(59_999);
    assert.equal(await send(policy, 'Bearer bob'), 403, 'the cached denial');
    assert.equal(checks(), before + 1);
    clock.advance(1);
    assert.equal(await send(policy, 'Bearer bob'), 200);
    assert.equal(checks(), before + 2);
  });

  it('keeps a decision until the expiry instant a ttl expression gives, on the same clock', async () => {
    const clock = fakeClock();
    const policy = policyOn(clock, {
      http: { responseMetadata: { exp: 'response.json.exp' } },
      cache: { key: ['request.headers.authorization'], ttl: 'int(extauthz.exp)' },
    });
    answerExp = Math.floor(clock.epochMs() / 1000) + 30;
    verdicts.set('Bearer carol', 200);
    const before = checks();
    assert.equal(await send(policy, 'Bearer carol'), 200);
    verdicts.set('Bearer carol', 403);
    clock.advance(answerExp * 1000 - 1 - clock.epochMs());
    assert.equal(await send(policy, 'Bearer carol'), 200, 'before the instant: cached');
    assert.equal(checks(), before + 1);
    clock.advance(1);
    assert.equal(await send(policy, 'Bearer carol'), 403, 'at the instant: asked again');
    assert.equal(checks(), before + 2);
  });

  it('keeps each key to its own ttl', async () => {
    const clock = fakeClock();
    const policy = policyOn(clock, { cache: { key: ['request.headers.authorization'], ttl: '10s' } });
    verdicts.set('Bearer alice', 200);
    verdicts.set('Bearer dave', 200);
    const before = checks();
    await send(policy, 'Bearer alice');
    clock.advance(6000);
    await send(policy, 'Bearer dave');
    verdicts.clear();
    clock.advance(4000);
    assert.equal(await send(policy, 'Bearer dave'), 200, "dave's entry has 6 s left");
    assert.equal(await send(policy, 'Bearer alice'), 403, "alice's entry ended at 10 s");
    assert.equal(checks(), before + 3);
  });
});
