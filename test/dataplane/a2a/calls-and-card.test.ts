// The a2a kind's two pure parts: naming a call (method and task of JSON-RPC bodies of both
// generations and of REST paths under any prefix), and rewriting an agent card's URLs for the
// route it was reached through (prefixes on either side, the agent's other origins, gRPC left out).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CardAddress, rewriteAgentCard } from '../../../src/dataplane/backends/a2a/agent-card.ts';
import { isRestPath, jsonRpcCall, restCall } from '../../../src/dataplane/backends/a2a/calls.ts';

describe('a2a calls', () => {
  const rpc = (method: string, params: unknown) => jsonRpcCall({ jsonrpc: '2.0', id: 1, method, params });

  it('JSON-RPC: the method as sent and the task where each method of either generation names it', () => {
    assert.deepEqual(rpc('SendMessage', { message: { taskId: 't1' } }), {
      binding: 'jsonrpc',
      method: 'SendMessage',
      taskId: 't1',
    });
    assert.deepEqual(rpc('SendMessage', { message: {} }), { binding: 'jsonrpc', method: 'SendMessage' });
    assert.equal(rpc('GetTask', { id: 't2' })?.taskId, 't2');
    assert.equal(rpc('CreateTaskPushNotificationConfig', { taskId: 't3', id: 'cfg' })?.taskId, 't3');
    assert.equal(rpc('message/stream', { message: { taskId: 't4' } })?.taskId, 't4');
    assert.equal(rpc('tasks/resubscribe', { id: 't5' })?.taskId, 't5');
    assert.equal(rpc('tasks/pushNotificationConfig/set', { taskId: 't6' })?.taskId, 't6');
    assert.equal(rpc('tasks/pushNotificationConfig/get', { id: 't7', pushNotificationConfigId: 'c' })?.taskId, 't7');
    // An unknown method is named (bounded) but no task is guessed for it.
    const long = rpc('x'.repeat(1000), { id: 't8' });
    assert.ok(
      long && long.method.length === 257 && long.method.startsWith('xxx'),
      'the name is cut to 256 characters and the mark',
    );
    assert.equal(long.taskId, undefined);
    assert.equal(rpc('GetTask', { id: 42 })?.taskId, undefined, 'a task id that is no string is not one');
    assert.equal(jsonRpcCall({ method: 'GetTask' }), undefined, 'no jsonrpc member: not JSON-RPC');
    assert.equal(jsonRpcCall([{ jsonrpc: '2.0', method: 'GetTask' }]), undefined);
  });

  it('REST: the spec method of each path, under any prefix, v1.0 and v0.3 paths alike', () => {
    assert.deepEqual(restCall('POST', '/a2a/rest/message:send', { message: { taskId: 't1' } }), {
      binding: 'rest',
      method: 'SendMessage',
      taskId: 't1',
    });
    assert.equal(restCall('POST', '/v1/message:stream')?.method, 'SendStreamingMessage');
    assert.deepEqual(restCall('POST', '/tenant-a/tasks/t%2F2:cancel'), {
      binding: 'rest',
      method: 'CancelTask',
      taskId: 't/2',
    });
    assert.equal(restCall('GET', '/tasks/t3:subscribe')?.method, 'SubscribeToTask');
    assert.equal(restCall('POST', '/tasks/t3:subscribe')?.method, 'SubscribeToTask');
    assert.deepEqual(restCall('GET', '/v1/tasks/t4'), { binding: 'rest', method: 'GetTask', taskId: 't4' });
    assert.equal(restCall('GET', '/tasks')?.method, 'ListTasks');
    assert.equal(restCall('POST', '/tasks/t5/pushNotificationConfigs')?.method, 'CreateTaskPushNotificationConfig');
    assert.equal(restCall('GET', '/tasks/t5/pushNotificationConfigs')?.method, 'ListTaskPushNotificationConfigs');
    assert.deepEqual(restCall('GET', '/tasks/t5/pushNotificationConfigs/c1'), {
      binding: 'rest',
      method: 'GetTaskPushNotificationConfig',
      taskId: 't5',
    });
    assert.equal(
      restCall('DELETE', '/tasks/t5/pushNotificationConfigs/c1')?.method,
      'DeleteTaskPushNotificationConfig',
    );
    assert.equal(restCall('GET', '/extendedAgentCard')?.method, 'GetExtendedAgentCard');
    assert.equal(restCall('GET', '/v1/card')?.method, 'GetExtendedAgentCard');
    assert.equal(restCall('GET', '/index.html'), undefined);
    assert.equal(restCall('POST', '/a2a/jsonrpc'), undefined);
    assert.ok(isRestPath('/x/message:send'));
    assert.ok(!isRestPath('/a2a/jsonrpc'));
  });
});

describe('a2a agent card rewriting', () => {
  const address = (clientPath: string, upstreamPath: string): CardAddress => ({
    gatewayOrigin: 'https://gw.example.com',
    clientPath,
    upstreamPath,
    agentOrigins: ['http://10.0.0.5:9000'],
  });

  it("v1.0: each interface under the route's prefix; other URLs on the agent's origins; gRPC left out", () => {
    const card = {
      supportedInterfaces: [
        { url: 'http://agent.internal:9000/agent/rpc?x=1', protocolBinding: 'JSONRPC' },
        { url: 'http://agent.internal:9000/other', protocolBinding: 'HTTP+JSON' },
        { url: 'agent.internal:9001', protocolBinding: 'GRPC' },
        { url: 'not a url', protocolBinding: 'JSONRPC' },
      ],
      iconUrl: 'http://agent.internal:9000/agent/icon.png',
      provider: { url: 'https://vendor.example.com/' },
      skills: [{ examples: ['http://10.0.0.5:9000/agent/doc'] }],
    };
    const result = rewriteAgentCard(
      card,
      address('/teams/a/agent/.well-known/agent-card.json', '/agent/.well-known/agent-card.json'),
    );
    assert.ok('card' in result);
    assert.deepEqual(result.card, {
      supportedInterfaces: [
        { url: 'https://gw.example.com/teams/a/agent/rpc?x=1', protocolBinding: 'JSONRPC' },
        // The paths share /agent/.well-known/agent-card.json: the route maps /teams/a to the agent's root.
        { url: 'https://gw.example.com/teams/a/other', protocolBinding: 'HTTP+JSON' },
      ],
      iconUrl: 'https://gw.example.com/teams/a/agent/icon.png',
      provider: { url: 'https://vendor.example.com/' },
      skills: [{ examples: ['https://gw.example.com/teams/a/agent/doc'] }],
    });
  });

  it('a prefix rewritten away: the agent base is the root, gw adds the prefix', () => {
    const result = rewriteAgentCard(
      {
        url: 'http://localhost:9999/',
        additionalInterfaces: [{ url: 'http://localhost:9999/rest', transport: 'HTTP+JSON' }],
      },
      address('/agents/echo/.well-known/agent-card.json', '/.well-known/agent-card.json'),
    );
    assert.ok('card' in result);
    assert.equal(result.card.url, 'https://gw.example.com/agents/echo/');
    assert.deepEqual(result.card.additionalInterfaces, [
      { url: 'https://gw.example.com/agents/echo/rest', transport: 'HTTP+JSON' },
    ]);
  });

  it('v0.3: a main url in a transport gw does not carry gives way to another interface, or the card is refused', () => {
    const grpcFirst = rewriteAgentCard(
      {
        url: 'agent:50051',
        preferredTransport: 'GRPC',
        additionalInterfaces: [
          { url: 'agent:50051', transport: 'GRPC' },
          { url: 'http://agent/a2a', transport: 'JSONRPC' },
        ],
      },
      address('/.well-known/agent-card.json', '/.well-known/agent-card.json'),
    );
    assert.ok('card' in grpcFirst);
    assert.equal(grpcFirst.card.url, 'https://gw.example.com/a2a');
    assert.equal(grpcFirst.card.preferredTransport, 'JSONRPC');
    const grpcOnly = rewriteAgentCard(
      { url: 'agent:50051', preferredTransport: 'GRPC' },
      address('/.well-known/agent-card.json', '/.well-known/agent-card.json'),
    );
    assert.deepEqual(grpcOnly, { problem: 'the agent offers only the GRPC transport, which gw does not proxy' });
  });

  it('what is no card is a problem, not a crash', () => {
    const at = address('/.well-known/agent-card.json', '/.well-known/agent-card.json');
    assert.ok('problem' in rewriteAgentCard([], at));
    assert.ok('problem' in rewriteAgentCard('card', at));
    assert.ok('problem' in rewriteAgentCard({ name: 'no url' }, at));
  });
});
