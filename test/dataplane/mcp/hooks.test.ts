// The extension points later policies build on, driven through the real multiplexer against a real
// SDK server: filterListItem hides listed items, checkItem refuses a call as if the tool did not
// exist, guards see the request before routing and the response before the client (and may
// replace or reject either), and `mcp` in CEL names the method, the tool and its target. Also the
// session seal: bound to its backend, refused when tampered with or sealed under another key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { compileExpression, ExpressionError } from '../../../src/dataplane/cel/expression.ts';
import type { ClientScope } from '../../../src/dataplane/mcp/client-scope.ts';
import { type McpCall, type McpRequestInfo, mcpCelValue } from '../../../src/dataplane/mcp/context.ts';
import { type McpGuard, type McpPolicyHooks, NO_MCP_POLICY, runGuards } from '../../../src/dataplane/mcp/hooks.ts';
import type { JsonRpcRequest, JsonRpcResponse } from '../../../src/dataplane/mcp/jsonrpc.ts';
import { handleRequest, initializeSession } from '../../../src/dataplane/mcp/multiplexer.ts';
import { namingFor } from '../../../src/dataplane/mcp/naming.ts';
import type { McpBackend } from '../../../src/dataplane/mcp/session.ts';
import { McpSession } from '../../../src/dataplane/mcp/session.ts';
import { SessionRegistry } from '../../../src/dataplane/mcp/session-registry.ts';
import { parseSessionKey, SessionKeys, SessionSealer } from '../../../src/dataplane/mcp/session-seal.ts';
import type { McpTarget } from '../../../src/dataplane/mcp/targets.ts';
import { echoTools, startStreamableServer, type TestMcpServer } from './helpers.ts';

const scope = (): ClientScope => ({ headers: {}, incoming: {}, timeoutMs: 5000, sink: undefined });
const makeCall = (info: McpRequestInfo): McpCall => ({ info, headers: {}, cel: () => ({ mcp: mcpCelValue(info) }) });
const request = (id: number, method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});

describe('MCP policy hooks', () => {
  let alpha: TestMcpServer;
  let pool: Pool;
  const registries: SessionRegistry<McpSession>[] = [];

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'));
    pool = new Pool(`http://127.0.0.1:${alpha.port}`);
  });
  after(async () => {
    for (const registry of registries) registry.close();
    await pool.close();
    await alpha.close();
  });

  const sessionWith = async (hooks: McpPolicyHooks): Promise<McpSession> => {
    const target: McpTarget = {
      name: 'alpha',
      protocol: 'StreamableHTTP',
      path: '/mcp',
      origin: `http://127.0.0.1:${alpha.port}`,
      pool: () => pool,
      auth: undefined,
      requestTimeoutMs: undefined,
      identity: 'alpha',
    };
    const registry = new SessionRegistry<McpSession>();
    registries.push(registry);
    const backend: McpBackend = {
      name: 'default/tools',
      binding: 'default/ai|GwBackend default/tools',
      targets: new Map([['alpha', target]]),
      naming: namingFor('Always', 1),
      sessionRouting: 'Stateful',
      failureMode: 'FailClosed',
      sealer: new SessionSealer(randomBytes(32)),
      sessions: registry,
      hooks,
    };
    const init = request(0, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    const { session, response } = await initializeSession(
      backend,
      init,
      scope(),
      (version, capabilities, clientInfo) => {
        const created = new McpSession(backend, version, { capabilities, clientInfo }, scope());
        created.id = 'test-session';
        return created;
      },
    );
    assert.ok(session, JSON.stringify(response));
    return session;
  };

  it('filters listed items and refuses calls to items checkItem refuses, as not found', async () => {
    const listed: string[] = [];
    const checked: string[] = [];
    const session = await sessionWith({
      ...NO_MCP_POLICY,
      filterListItem: (kind, item, target, call) => {
        listed.push(`${call.info.method} ${kind} ${target} ${String(item.name ?? item.uri)}`);
        return item.name !== 'only-alpha';
      },
      checkItem: (kind, name, target, call) => {
        checked.push(`${call.info.method} ${kind} ${target} ${name} ${call.info.sessionId}`);
        return name !== 'only-alpha';
      },
    });
    const tools = (await handleRequest(session, request(1, 'tools/list'), scope(), makeCall)) as unknown as {
      result: { tools: { name: string }[] };
    };
    assert.deepEqual(
      tools.result.tools.map((tool) => tool.name),
      ['alpha_echo'],
    );
    assert.deepEqual(listed.sort(), ['tools/list tool alpha echo', 'tools/list tool alpha only-alpha']);
    const refused = await handleRequest(
      session,
      request(2, 'tools/call', { name: 'alpha_only-alpha' }),
      scope(),
      makeCall,
    );
    assert.deepEqual((refused as { error: unknown }).error, {
      code: -32602,
      message: 'Tool alpha_only-alpha not found',
    });
    const allowed = await handleRequest(
      session,
      request(3, 'tools/call', { name: 'alpha_echo', arguments: { text: 'x' } }),
      scope(),
      makeCall,
    );
    assert.ok('result' in allowed);
    await handleRequest(session, request(4, 'resources/read', { uri: 'alpha+memo://alpha/readme' }), scope(), makeCall);
    assert.deepEqual(checked, [
      'tools/call tool alpha only-alpha test-session',
      'tools/call tool alpha echo test-session',
      'resources/read resource alpha memo://alpha/readme test-session',
    ]);
  });

  it('runs guards on the request before routing and on the response before the client', async () => {
    const phases: string[] = [];
    const rewriteArguments: McpGuard = async (message, phase) => {
      phases.push(phase);
      if (phase !== 'request' || !('method' in message)) return { action: 'continue' };
      const text = (message.params?.arguments as { text?: string } | undefined)?.text;
      if (text === 'original')
        return {
          action: 'continue',
          message: { ...message, params: { ...message.params, arguments: { text: 'guarded' } } },
        };
      return { action: 'continue' };
    };
    const blockSecrets: McpGuard = async (message, phase) => {
      if (phase === 'response' && JSON.stringify(message).includes('secret'))
        return { action: 'reject', error: { code: -32001, message: 'blocked by a guardrail' } };
      return { action: 'continue' };
    };
    const session = await sessionWith({ ...NO_MCP_POLICY, guards: [rewriteArguments, blockSecrets] });
    const answer = (await handleRequest(
      session,
      request(1, 'tools/call', { name: 'alpha_echo', arguments: { text: 'original' } }),
      scope(),
      makeCall,
    )) as unknown as { result: { content: { text: string }[] } };
    assert.equal(answer.result.content[0]!.text, 'alpha: guarded');
    assert.deepEqual(phases, ['request', 'response']);
    phases.length = 0;
    const blocked = await handleRequest(
      session,
      request(2, 'tools/call', { name: 'alpha_echo', arguments: { text: 'secret' } }),
      scope(),
      makeCall,
    );
    assert.deepEqual(blocked, { jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'blocked by a guardrail' } });
    const direct = await runGuards(
      [blockSecrets],
      { jsonrpc: '2.0', id: 3, result: { text: 'secret' } } as JsonRpcResponse,
      'response',
      makeCall({ method: 'tools/call' }),
    );
    assert.deepEqual(direct, { error: { code: -32001, message: 'blocked by a guardrail' } });
    const failing = await runGuards(
      [
        async () => {
          throw new Error('down');
        },
      ],
      request(4, 'ping'),
      'request',
      makeCall({ method: 'ping' }),
    );
    assert.ok('error' in failing, 'a guard that throws fails closed');
  });

  it('exposes the request to CEL as mcp', () => {
    const info: McpRequestInfo = {
      method: 'tools/call',
      sessionId: 's1',
      tool: { name: 'echo', target: 'alpha', arguments: { text: 'hi', n: 2 } },
    };
    const evaluate = (source: string) => {
      const expression = compileExpression(source);
      assert.ok(!(expression instanceof ExpressionError), source);
      return expression.evaluate(makeCall(info).cel());
    };
    assert.equal(evaluate('mcp.method == "tools/call" && mcp.methodName == mcp.method'), true);
    assert.equal(evaluate('mcp.tool.name == "echo" && mcp.tool.target == "alpha"'), true);
    assert.equal(evaluate('mcp.tool.arguments.text == "hi" && mcp.tool.arguments.n == 2'), true);
    assert.equal(evaluate('has(mcp.prompt)'), false);
    const resource = compileExpression('mcp.resource.uri == "memo://x" && mcp.resource.target == "beta"');
    assert.ok(!(resource instanceof ExpressionError));
    assert.equal(
      resource.evaluate({
        mcp: mcpCelValue({ method: 'resources/read', resource: { uri: 'memo://x', target: 'beta' } }),
      }),
      true,
    );
  });
});

describe('MCP session ids', () => {
  it('open only with the same key and binding, and never when tampered with', () => {
    const sealer = new SessionSealer(randomBytes(32));
    const state = { v: '2025-11-25', t: [{ n: 'alpha', s: 'upstream-id' }] };
    const id = sealer.seal(state, 'gw|backend-a');
    assert.match(id, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(sealer.open(id, 'gw|backend-a'), state);
    assert.equal(sealer.open(id, 'gw|backend-b'), undefined, 'another backend');
    assert.equal(new SessionSealer(randomBytes(32)).open(id, 'gw|backend-a'), undefined, 'another key');
    const flipped = `${id.slice(0, 20)}${id[20] === 'A' ? 'B' : 'A'}${id.slice(21)}`;
    assert.equal(sealer.open(flipped, 'gw|backend-a'), undefined, 'tampered');
    assert.equal(sealer.open('not base64url!', 'gw|backend-a'), undefined);
    assert.equal(sealer.open('AAAA', 'gw|backend-a'), undefined);
    assert.notEqual(sealer.seal(state, 'gw|backend-a'), id, 'a fresh nonce each time');
  });

  it('takes SESSION_KEY as 64 hex digits, shared by every Gateway; otherwise a key per Gateway', () => {
    const hex = randomBytes(32).toString('hex');
    assert.equal((parseSessionKey(hex) as Buffer).toString('hex'), hex);
    assert.equal(parseSessionKey(undefined), undefined);
    assert.match(parseSessionKey('short') as string, /64 hex digits/);
    const shared = new SessionKeys(hex);
    assert.equal(shared.sealerFor('a/gw'), shared.sealerFor('b/gw'));
    const own = new SessionKeys(undefined);
    const sealer = own.sealerFor('a/gw') as SessionSealer;
    assert.equal(own.sealerFor('a/gw'), sealer);
    assert.notEqual(own.sealerFor('b/gw'), sealer);
    assert.match(new SessionKeys('nope').sealerFor('a/gw') as string, /SESSION_KEY/);
  });
});
