// An A2A v0.3 peer behind an a2a GwBackend: @a2a-js/sdk 0.3's agent (JSON-RPC at its card's url,
// HTTP+JSON at /rest) and its client, through gw. The card's `url` and `additionalInterfaces[].url`
// name gw; message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe and the
// tasks/pushNotificationConfig methods work through it, and the access log names them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MessageSendParams, Task } from '@a2a-js/sdk-v03';
import { type Client, ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk-v03/client';
import { freePort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { a2aGatewayYaml, startV03Agent, type TestAgent } from './agents.ts';

function message(text: string, taskId?: string): MessageSendParams {
  return {
    message: {
      kind: 'message',
      messageId: crypto.randomUUID(),
      role: 'user',
      parts: [{ kind: 'text', text }],
      ...(taskId ? { taskId } : {}),
    },
  };
}

describe('a2a backend: an A2A v0.3 peer through gw', () => {
  let agent: TestAgent;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    agent = await startV03Agent();
    const port = await freePort();
    gw = await startTestGateway({ 'gw.yaml': a2aGatewayYaml(port, agent.port, { prefix: '/v03' }) });
    base = `http://127.0.0.1:${port}/v03`;
  });

  after(async () => {
    await gw?.stop();
    await agent?.close();
  });

  async function clientFor(transport: 'JSONRPC' | 'HTTP+JSON'): Promise<Client> {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }),
    );
    return await factory.createFromUrl(`${base}/`);
  }

  it("names gw in the card's url and additional interfaces", async () => {
    const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    assert.equal(card.url, `${base}/`);
    assert.deepEqual(card.additionalInterfaces, [
      { url: `${base}/`, transport: 'JSONRPC' },
      { url: `${base}/rest`, transport: 'HTTP+JSON' },
    ]);
  });

  for (const transport of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`${transport}: send, get, stream, resubscribe, cancel and push notification configs`, async () => {
      const client = await clientFor(transport);
      const task = (await client.sendMessage(message('hello'))) as Task;
      assert.equal(task.kind, 'task');
      assert.equal(task.status.state, 'completed');
      assert.equal((await client.getTask({ id: task.id })).id, task.id);

      const stream = client.sendMessageStream(message('wait'));
      const first = await stream.next();
      assert.equal((first.value as { kind: string }).kind, 'task', 'the first event arrives while the task runs');
      const waiting = first.value as Task;
      const subscription = client.resubscribeTask({ id: waiting.id });
      const cancelled = await client.cancelTask({ id: waiting.id });
      assert.equal(cancelled.id, waiting.id);
      const events = [];
      for await (const event of stream) events.push(event);
      assert.equal((events.at(-1) as { status?: { state: string } }).status?.state, 'canceled');
      for await (const _ of subscription);

      const pushConfig = { id: 'hook', url: 'https://hooks.example.com/a2a' };
      if (transport === 'JSONRPC') {
        const config = await client.setTaskPushNotificationConfig({
          taskId: task.id,
          pushNotificationConfig: pushConfig,
        });
        assert.equal(config.pushNotificationConfig.url, pushConfig.url);
      } else {
        // The 0.3 SDK's REST client and server disagree on this body (its server wants `config`):
        // the body the server reads, as a client would send it.
        const created = await fetch(`${base}/rest/v1/tasks/${task.id}/pushNotificationConfigs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            parent: `tasks/${task.id}`,
            configId: 'hook',
            config: { name: `tasks/${task.id}/pushNotificationConfigs/hook`, pushNotificationConfig: pushConfig },
          }),
        });
        assert.equal(created.status, 201, await created.clone().text());
        await created.arrayBuffer();
      }
      const read = await client.getTaskPushNotificationConfig({
        id: task.id,
        pushNotificationConfigId: 'hook',
      } as Parameters<Client['getTaskPushNotificationConfig']>[0]);
      assert.equal(read.pushNotificationConfig.id, 'hook');
      assert.equal((await client.listTaskPushNotificationConfig({ id: task.id })).length, 1);
      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'hook' });

      const lines = gw.accessLog.map((line) => JSON.parse(line) as Record<string, unknown>);
      const forTask = lines.filter((line) => line['a2a.task.id'] === task.id).map((line) => line['a2a.method']);
      const forWaiting = lines.filter((line) => line['a2a.task.id'] === waiting.id).map((line) => line['a2a.method']);
      if (transport === 'JSONRPC') {
        assert.deepEqual(forTask, [
          'tasks/get',
          'tasks/pushNotificationConfig/set',
          'tasks/pushNotificationConfig/get',
          'tasks/pushNotificationConfig/list',
          'tasks/pushNotificationConfig/delete',
        ]);
        assert.deepEqual(forWaiting.toSorted(), ['tasks/cancel', 'tasks/resubscribe']);
      } else {
        // REST calls are named by the spec's method names, whichever generation's paths they took.
        assert.deepEqual(forTask, [
          'GetTask',
          'CreateTaskPushNotificationConfig',
          'GetTaskPushNotificationConfig',
          'ListTaskPushNotificationConfigs',
          'DeleteTaskPushNotificationConfig',
        ]);
        assert.deepEqual(forWaiting.toSorted(), ['CancelTask', 'SubscribeToTask']);
      }
      for (const request of agent.seen) assert.ok(request.headers['x-forwarded-for'], `${request.url} came through gw`);
    });
  }
});
