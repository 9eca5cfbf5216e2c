// A2A agents and gateway YAML for the a2a backend tests: a v1.0 agent made of @a2a-js/sdk 1.x's
// express handlers (agent card, JSON-RPC, HTTP+JSON) and a v0.3 agent of @a2a-js/sdk 0.3's, each
// on 127.0.0.1 on a free port, recording every request it gets. Their executor echoes a message as
// a task (submitted, working, an artifact, completed); the text `wait` keeps the task working until
// it is cancelled, so that streams, subscriptions and cancellation can be watched mid-task.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AgentCard } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import type { AgentCard as AgentCardV03, Message as MessageV03, Task as TaskV03 } from '@a2a-js/sdk-v03';
import {
  type AgentExecutor as AgentExecutorV03,
  DefaultRequestHandler as DefaultRequestHandlerV03,
  type ExecutionEventBus as ExecutionEventBusV03,
  InMemoryPushNotificationStore as InMemoryPushNotificationStoreV03,
  InMemoryTaskStore as InMemoryTaskStoreV03,
} from '@a2a-js/sdk-v03/server';
import {
  A2AExpressApp,
  restHandler as restHandlerV03,
  UserBuilder as UserBuilderV03,
} from '@a2a-js/sdk-v03/server/express';
import { gatewayYaml } from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';

/** express 5 (the SDK's servers are its handlers), typed as far as these tests use it: it ships no types. */
interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(...handlers: unknown[]): void;
}
type ExpressRequest = IncomingMessage & { originalUrl: string; method: string };
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

/** What an agent was asked: every request, as it arrived. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface TestAgent {
  port: number;
  seen: SeenRequest[];
  /** The card the agent serves itself. */
  card: Record<string, unknown>;
  close(): Promise<void>;
}

/** Bytes, SSE events or a hang-up an agent answers instead of A2A (for the garbage tests). */
export type RawAgent = (req: IncomingMessage, res: ServerResponse) => void;

/** A plain node server answering every request with `answer` (garbage, hang-ups). */
export async function startRawAgent(answer: RawAgent): Promise<TestAgent> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    answer(req, res);
  });
  const port = await listen(server);
  return { port, seen, card: {}, close: () => closeServer(server) };
}

/** Tasks waiting to be cancelled, by id: cancelling resolves their executor. */
type Waiting = Map<string, () => void>;

function textOfV1(parts: readonly { content?: { $case: string; value: unknown } }[]): string {
  const part = parts.find((p) => p.content?.$case === 'text');
  return typeof part?.content?.value === 'string' ? part.content.value : '';
}

/** The v1.0 echo executor. */
function executorV1(waiting: Waiting): AgentExecutor {
  return {
    async execute(context, bus: ExecutionEventBus) {
      const text = textOfV1(context.userMessage.parts as never);
      const { taskId, contextId } = context;
      bus.publish(
        AgentEvent.task(
          context.task ?? {
            id: taskId,
            contextId,
            status: { state: 1, message: undefined, timestamp: undefined },
            artifacts: [],
            history: [context.userMessage],
            metadata: undefined,
          },
        ),
      );
      const status = (state: number) =>
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message: undefined, timestamp: new Date().toISOString() },
          metadata: undefined,
        });
      bus.publish(status(2));
      if (text === 'wait') {
        await new Promise<void>((resolve) => waiting.set(taskId, resolve));
        bus.publish(status(5));
        bus.finished();
        return;
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'answer',
            name: 'answer',
            description: '',
            parts: [
              { content: { $case: 'text', value: `echo: ${text}` }, metadata: undefined, filename: '', mediaType: '' },
            ],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(status(3));
      bus.finished();
    },
    async cancelTask(taskId) {
      waiting.get(taskId)?.();
      waiting.delete(taskId);
    },
  };
}

/**
 * A v1.0 agent (@a2a-js/sdk 1.x): its card at /.well-known/agent-card.json naming JSON-RPC at
 * /a2a/jsonrpc, HTTP+JSON at /a2a/rest and a gRPC interface gw cannot carry, with an icon it serves.
 */
export async function startV1Agent(): Promise<TestAgent> {
  const seen: SeenRequest[] = [];
  const server = createServer();
  const port = await listen(server);
  const base = `http://127.0.0.1:${port}`;
  const card = {
    name: 'echo',
    description: 'echoes what it is sent',
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      { url: `127.0.0.1:${port + 1}`, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: { organization: 'gw tests', url: 'https://example.com/' },
    version: '1.0.0',
    documentationUrl: 'https://example.com/docs',
    iconUrl: `${base}/icon.png`,
    capabilities: { streaming: true, pushNotifications: true, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'echo',
        description: 'echo',
        tags: ['echo'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  } as unknown as AgentCard;
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executorV1(new Map()),
    undefined,
    new InMemoryPushNotificationStore(),
    { send: async () => {} },
  );
  const app = express();
  app.use((req: ExpressRequest, _res: ServerResponse, next: () => void) => {
    seen.push({ method: req.method, url: req.originalUrl, headers: req.headers });
    next();
  });
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);
  return { port, seen, card: card as unknown as Record<string, unknown>, close: () => closeServer(server) };
}

function textOfV03(message: MessageV03): string {
  const part = message.parts.find((p) => p.kind === 'text');
  return part?.kind === 'text' ? part.text : '';
}

/** The v0.3 echo executor. */
function executorV03(waiting: Waiting): AgentExecutorV03 {
  return {
    async execute(context, bus: ExecutionEventBusV03) {
      const text = textOfV03(context.userMessage);
      const { taskId, contextId } = context;
      const task: TaskV03 = context.task ?? {
        kind: 'task',
        id: taskId,
        contextId,
        status: { state: 'submitted' },
        history: [context.userMessage],
      };
      bus.publish(task);
      const status = (state: 'working' | 'completed' | 'canceled', final: boolean) =>
        bus.publish({ kind: 'status-update', taskId, contextId, status: { state }, final });
      status('working', false);
      if (text === 'wait') {
        await new Promise<void>((resolve) => waiting.set(taskId, resolve));
        status('canceled', true);
        bus.finished();
        return;
      }
      bus.publish({
        kind: 'artifact-update',
        taskId,
        contextId,
        artifact: { artifactId: 'answer', parts: [{ kind: 'text', text: `echo: ${text}` }] },
      });
      status('completed', true);
      bus.finished();
    },
    async cancelTask(taskId) {
      waiting.get(taskId)?.();
      waiting.delete(taskId);
    },
  };
}

/** A v0.3 agent (@a2a-js/sdk 0.3): JSON-RPC at / (its card's url), HTTP+JSON at /rest. */
export async function startV03Agent(): Promise<TestAgent> {
  const seen: SeenRequest[] = [];
  const server = createServer();
  const port = await listen(server);
  const base = `http://127.0.0.1:${port}`;
  const card: AgentCardV03 = {
    name: 'echo v0.3',
    description: 'echoes what it is sent',
    url: `${base}/`,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [
      { url: `${base}/`, transport: 'JSONRPC' },
      { url: `${base}/rest`, transport: 'HTTP+JSON' },
    ],
    protocolVersion: '0.3.0',
    version: '0.3.0',
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: 'echo', name: 'echo', description: 'echo', tags: ['echo'] }],
  };
  const handler = new DefaultRequestHandlerV03(
    card,
    new InMemoryTaskStoreV03(),
    executorV03(new Map()),
    undefined,
    new InMemoryPushNotificationStoreV03(),
    { send: async () => {} },
  );
  const app = express();
  app.use((req: ExpressRequest, _res: ServerResponse, next: () => void) => {
    seen.push({ method: req.method, url: req.originalUrl, headers: req.headers });
    next();
  });
  app.use('/rest', restHandlerV03({ requestHandler: handler, userBuilder: UserBuilderV03.noAuthentication }));
  new A2AExpressApp(handler).setupRoutes(app as never);
  server.on('request', app);
  return { port, seen, card: card as unknown as Record<string, unknown>, close: () => closeServer(server) };
}

export interface A2aRouteOptions {
  /** The path prefix of the route at gw (rewritten to / for the agent). */
  prefix?: string;
  /** More YAML documents (GwPolicies...), each ending with ---. */
  more?: string;
  /** The GwBackend's spec.policies (YAML flow mapping). */
  policies?: string;
}

/** Gateway ai on `gwPort` with HTTPRoute echo: `prefix` (default /agents/echo) → GwBackend echo (a2a) on `agentPort`. */
export function a2aGatewayYaml(gwPort: number, agentPort: number, options: A2aRouteOptions = {}): string {
  return `${gatewayYaml(gwPort)}${a2aRouteYaml('echo', agentPort, options)}${options.more ?? ''}`;
}

/**
 * GwBackend `name` (a2a, on 127.0.0.1:`agentPort`) and HTTPRoute `name` sending `prefix` (default
 * /agents/echo) to it with the prefix rewritten to /; ends with ---.
 */
export function a2aRouteYaml(name: string, agentPort: number, options: A2aRouteOptions = {}): string {
  const prefix = options.prefix ?? '/agents/echo';
  const policies = options.policies ? `, policies: ${options.policies}` : '';
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec: {a2a: {host: 127.0.0.1, port: ${agentPort}}${policies}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules:
    - name: agent
      matches: [{path: {type: PathPrefix, value: ${prefix}}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]
---
`;
}
