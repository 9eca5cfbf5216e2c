// An A2A v1.0 agent (@a2a-js/sdk 1.x's express handlers) behind an a2a GwBackend, driven by the
// SDK's own client through gw over both bindings: the client resolves the agent card through gw
// and must then talk only to gw (the agent sees every request with gw's X-Forwarded-For), sends,
// streams (events arrive while the task still runs: nothing is gathered), reads, subscribes to and
// cancels tasks, and sets push notification configs; the access log names each call's method and
// task.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Task } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { freePort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { a2aGatewayYaml, startV1Agent, type TestAgent } from './agents.ts';

function message(text: string, taskId = '') {
  return {
    tenant: '',
    message: {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId,
      role: 1,
      parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: '' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

function artifactText(task: Task): string | undefined {
  const content = task.artifacts[0]?.parts[0]?.content;
  return content?.$case === 'text' ? content.value : undefined;
}

function accessLogOf(gw: TestGateway): Record<string, unknown>[] {
  return gw.accessLog.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('a2a backend: an A2A v1.0 agent through gw', () => {
  let agent: TestAgent;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    agent = await startV1Agent();
    const port = await freePort();
    gw = await startTestGateway({ 'gw.yaml': a2aGatewayYaml(port, agent.port) });
    base = `http://127.0.0.1:${port}/agents/echo`;
  });

  after(async () => {
    await gw?.stop();
    await agent?.close();
  });

  async function clientFor(binding: 'JSONRPC' | 'HTTP+JSON'): Promise<Client> {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
    );
    return await factory.createFromUrl(`${base}/`);
  }

  it("serves the agent card with every URL that pointed at the agent on gw's address, the route's prefix kept", async () => {
    const response = await fetch(`${base}/.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    const card = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(
      (card.supportedInterfaces as { url: string; protocolBinding: string }[]).map((i) => [i.protocolBinding, i.url]),
      [
        ['JSONRPC', `${base}/a2a/jsonrpc`],
        ['HTTP+JSON', `${base}/a2a/rest`],
      ],
      'gRPC, which gw does not carry here, is left out',
    );
    assert.equal(card.iconUrl, `${base}/icon.png`, "a URL on the agent's origin");
    assert.equal(card.documentationUrl, 'https://example.com/docs', 'a URL elsewhere is kept');
    assert.deepEqual(card.provider, agent.card.provider);
    assert.equal(card.name, 'echo');
    // The older well-known name is rewritten the same way (the agent answers it 404 here: passed on).
    const older = await fetch(`${base}/.well-known/agent.json`);
    assert.equal(older.status, 404);
    await older.arrayBuffer();
  });

  for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
    describe(`the ${binding} binding`, () => {
      it('sends a message and reads the task back; the access log names the method and task', async () => {
        const client = await clientFor(binding);
        const seen = agent.seen.length;
        const result = await client.sendMessage(message('hello'));
        assert.ok('id' in result && 'status' in result, `a task: ${JSON.stringify(result)}`);
        const task = result as Task;
        assert.equal(task.status?.state, 3, 'completed');
        assert.equal(artifactText(task), 'echo: hello');
        const read = await client.getTask({ tenant: '', id: task.id });
        assert.equal(read.id, task.id);
        assert.equal(artifactText(read), 'echo: hello');
        // A message continuing the finished task: the agent's own error reaches the client as the SDK's error.
        await assert.rejects(client.sendMessage(message('again', task.id)), /terminal state/);
        const calls = accessLogOf(gw).filter((line) => line.protocol === 'a2a' && line['a2a.method'] !== undefined);
        const methods = calls.slice(-3).map((line) => [line['a2a.method'], line['a2a.task.id']]);
        assert.deepEqual(methods, [
          ['SendMessage', undefined],
          ['GetTask', task.id],
          ['SendMessage', task.id],
        ]);
        for (const request of agent.seen.slice(seen))
          assert.ok(request.headers['x-forwarded-for'], `${request.method} ${request.url} came through gw`);
      });

      it('streams a task event by event, subscribes to it and cancels it', async () => {
        const client = await clientFor(binding);
        const stream = client.sendMessageStream(message('wait'));
        // The task is still running: its first events arrive now, not when the stream ends.
        const first = await stream.next();
        assert.equal(first.done, false);
        assert.equal(first.value?.payload?.$case, 'task');
        const task = first.value!.payload!.value as Task;
        const working = await stream.next();
        assert.equal(working.value?.payload?.$case, 'statusUpdate');
        const subscription = client.resubscribeTask({ tenant: '', id: task.id });
        const current = await subscription.next();
        assert.equal(current.value?.payload?.$case, 'task', 'a subscription starts with the task as it is');
        const cancelled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
        assert.equal(cancelled.id, task.id);
        const rest = [];
        for await (const event of stream) rest.push(event);
        const last = rest.at(-1)?.payload;
        assert.equal(last?.$case, 'statusUpdate');
        assert.equal((last?.value as { status?: { state: number } } | undefined)?.status?.state, 5, 'canceled');
        for await (const _ of subscription);
        const methods = accessLogOf(gw)
          .filter((line) => line['a2a.task.id'] === task.id)
          .map((line) => line['a2a.method']);
        assert.ok(methods.includes('CancelTask') && methods.includes('SubscribeToTask'), methods.join());
      });

      it('creates, reads, lists and deletes push notification configs', async () => {
        const client = await clientFor(binding);
        const task = (await client.sendMessage(message('push me'))) as Task;
        const config = {
          tenant: '',
          id: 'hook-1',
          taskId: task.id,
          url: 'https://hooks.example.com/a2a',
          token: 'opaque',
          authentication: undefined,
        };
        const created = await client.createTaskPushNotificationConfig(config);
        assert.equal(created.url, config.url);
        const read = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
        assert.equal(read.url, config.url);
        const list = await client.listTaskPushNotificationConfig({
          tenant: '',
          taskId: task.id,
          pageSize: 10,
          pageToken: '',
        });
        assert.equal(list.configs.length, 1);
        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
        const methods = accessLogOf(gw)
          .filter((line) => line['a2a.task.id'] === task.id)
          .map((line) => line['a2a.method']);
        assert.deepEqual(methods, [
          'CreateTaskPushNotificationConfig',
          'GetTaskPushNotificationConfig',
          'ListTaskPushNotificationConfigs',
          'DeleteTaskPushNotificationConfig',
        ]);
      });
    });
  }

  it('every request the agent got came through gw', () => {
    assert.ok(agent.seen.length > 10);
    for (const request of agent.seen)
      assert.ok(request.headers['x-forwarded-for'], `${request.method} ${request.url} came through gw`);
  });
});
