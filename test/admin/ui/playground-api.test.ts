// The playgrounds over HTTP (docs/ui.md "Playgrounds"): gw in front of the scripted provider (an
// OpenAI-compatible stand-in) and an MCP server of the official SDK, the UI on its admin listener.
// A chat goes through the chosen listener and route and streams back; the browser's key reaches
// gw and is never echoed; an MCP route's tools are listed and one is called; a CEL expression is
// evaluated against a recorded request (the redacted credentials stay redacted, a runaway
// expression is stopped at its deadline); every playground call is refused without the UI's own
// header (a cross-site page cannot send it) and targets only gw's own listeners.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SCRIPTED_TEXT, SCRIPTED_USAGE, type ScriptedProvider } from '../../helpers/scripted-provider.ts';
import { until } from '../../helpers/until.ts';
import { followEvents, type LiveUi, type PlaygroundWorld, startPlaygroundWorld, uiApi } from './live-helpers.ts';

describe('playgrounds on the admin listener', () => {
  let world: PlaygroundWorld;
  let provider: ScriptedProvider;
  let ui: LiveUi;
  const target = { gateway: 'default/ai', listener: 'http' };

  before(async () => {
    world = await startPlaygroundWorld();
    ({ provider, ui } = world);
  });

  after(async () => {
    await world?.stop();
  });

  it('lists the listeners with their routes and what their rules send to', async () => {
    const { status, body } = await uiApi(ui.base, 'playground/targets');
    assert.equal(status, 200);
    const listener = body.listeners.find((l: { listener: string }) => l.listener === 'http');
    assert.equal(listener.gateway, 'default/ai');
    assert.equal(listener.bound, true);
    const llm = listener.routes.find((r: { route: string }) => r.route === 'default/llm');
    assert.deepEqual(llm.rules[0].kinds, ['ai']);
    assert.deepEqual(llm.rules[0].paths, [{ type: 'PathPrefix', value: '/openai' }]);
    const mcp = listener.routes.find((r: { route: string }) => r.route === 'default/mcp');
    assert.deepEqual(mcp.rules[0].kinds, ['mcp']);
  });

  it("streams a chat through the chosen listener and route, the browser's key going to gw only", async () => {
    const before = provider.requests.length;
    const follower = await followEvents(`${ui.base}/ui/api/playground/chat`, {
      ...target,
      path: '/openai/v1/chat/completions',
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
      apiKey: 'sk-playground-secret',
    });
    assert.equal(follower.response.statusCode, 200);
    await follower.ended;
    const deltas = follower.named('delta').map((d) => d.text);
    assert.ok(deltas.length >= 1, JSON.stringify(follower.events));
    assert.equal(deltas.join(''), SCRIPTED_TEXT);
    const [usage] = follower.named('usage');
    assert.equal(usage.inputTokens, SCRIPTED_USAGE.input);
    assert.equal(usage.outputTokens, SCRIPTED_USAGE.output);
    const [done] = follower.named('done');
    assert.equal(done.status, 200);
    // The provider got a streamed Chat Completions request, through gw (its own key, not the browser's).
    const sent = provider.requests[before]!;
    assert.equal(sent.stream, true);
    assert.equal(sent.body.model, 'gpt-4o');
    assert.doesNotMatch(JSON.stringify(sent.headers), /sk-playground-secret/);
    assert.doesNotMatch(JSON.stringify(follower.events), /sk-playground-secret/);
  });

  it("passes gw's error answer on, and refuses a listener or path gw does not serve", async () => {
    const follower = await followEvents(`${ui.base}/ui/api/playground/chat`, {
      ...target,
      path: '/nowhere/chat/completions',
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
    });
    await follower.ended;
    // The MCP route takes every other path, and its backend refuses a chat body.
    const [error] = follower.named('error');
    assert.equal(error.status, 400);
    assert.ok(error.message.length > 0);
    const unknown = await uiApi(ui.base, 'playground/chat', {
      gateway: 'default/ai',
      listener: 'nope',
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error, /^listener: Gateway default\/ai has no listener nope/);
    const absolute = await uiApi(ui.base, 'playground/chat', {
      ...target,
      path: 'http://169.254.169.254/',
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.equal(absolute.status, 400);
    assert.match(absolute.body.error, /^path: /);
  });

  it("lists an MCP route's tools and calls one", async () => {
    const listed = await uiApi(ui.base, 'playground/mcp/tools', { ...target, path: '/mcp' });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const names = listed.body.tools.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(names, ['echo', 'only-tools']);
    const echo = listed.body.tools.find((t: { name: string }) => t.name === 'echo');
    assert.equal(echo.inputSchema.properties.text.type, 'string');
    const called = await uiApi(ui.base, 'playground/mcp/call', {
      ...target,
      path: '/mcp',
      tool: 'echo',
      arguments: { text: 'hello' },
    });
    assert.equal(called.status, 200, JSON.stringify(called.body));
    assert.deepEqual(called.body.result.content, [{ type: 'text', text: 'tools: hello' }]);
    const wrong = await uiApi(ui.base, 'playground/mcp/call', { ...target, path: '/mcp', tool: 'nope' });
    assert.ok(wrong.status === 502 || wrong.status === 200, JSON.stringify(wrong.body));
    if (wrong.status === 502) assert.match(wrong.body.error, /tools\/call/);
    else assert.equal(wrong.body.result.isError, true);
  });

  it('evaluates a CEL expression against a recorded request, within bounds', async () => {
    const follower = await followEvents(`${ui.base}/ui/api/traffic/events`);
    let id: string;
    try {
      await until(() => ui.gw.telemetry.traffic.watching, 2000);
      const sent = await fetch(`http://127.0.0.1:${world.port}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'client-secret', 'x-team': 'blue' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await sent.text();
      const entries = await follower.waitFor('request', 1);
      id = entries.find((e) => e.fields['url.path'] === '/openai/v1/chat/completions')!.id;
    } finally {
      follower.close();
    }
    const evaluate = (expression: string) => uiApi(ui.base, 'playground/cel', { id, expression });
    const value = await evaluate(
      'request.headers["x-team"] + ":" + string(llm.inputTokens) + ":" + string(response.code)',
    );
    assert.equal(value.status, 200, JSON.stringify(value.body));
    assert.equal(value.body.value, `blue:${SCRIPTED_USAGE.input}:200`);
    assert.deepEqual((await evaluate('{"model": llm.requestModel, "ok": response.code == 200}')).body.value, {
      model: 'gpt-4o',
      ok: true,
    });
    assert.equal((await evaluate('request.headers["x-api-key"]')).body.value, '<redacted>');
    const broken = await evaluate('request.path ==');
    assert.equal(broken.status, 422);
    assert.match(broken.body.error, /^does not compile/);
    const missing = await evaluate('nothing.here');
    assert.equal(missing.status, 422);
    // Nested macros over large lists, none of which can stop early (no d matches, so every
    // exists is false and every all goes on): 200^4 steps, far more work than the deadline allows
    // on any machine.
    const list = `[${Array.from({ length: 200 }, (_, i) => i).join(',')}]`;
    const runaway = await evaluate(
      `${list}.all(a, ${list}.all(b, ${list}.all(c, !${list}.exists(d, d == a + b + c + 5000))))`,
    );
    assert.equal(runaway.status, 422);
    assert.match(runaway.body.error, /took longer than \d+ ms and was stopped/);
  });

  it("refuses every playground call without the UI's own header", async () => {
    for (const path of ['playground/chat', 'playground/mcp/tools', 'playground/mcp/call', 'playground/cel']) {
      const answer = await uiApi(ui.base, path, { ...target }, {});
      assert.equal(answer.status, 403, path);
      assert.match(answer.body.error, /x-gw-ui/);
    }
    const crossSite = await uiApi(
      ui.base,
      'playground/cel',
      { id: '1-1', expression: '1' },
      {
        'x-gw-ui': '1',
        origin: 'http://evil.example',
      },
    );
    assert.equal(crossSite.status, 403);
  });
});
