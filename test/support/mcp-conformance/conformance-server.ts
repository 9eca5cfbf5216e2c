// The MCP server the conformance suite's server scenarios expect (@modelcontextprotocol/conformance
// names the tools, prompts, resources and their results in each scenario's requirements): one
// instance per session, built on the SDK's low-level Server so that tool schemas go out exactly as
// written (JSON Schema 2020-12 keywords included).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  type Tool,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { PNG_BASE64, WAV_BASE64 } from './media.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

interface FixtureTool {
  tool: Tool;
  run(args: Record<string, unknown>, extra: Extra, session: SessionState): Promise<CallToolResult>;
}

/** What one session changes: the log level it asked for and the resources it watches. */
interface SessionState {
  logLevel: LoggingLevel;
  subscriptions: Set<string>;
}

const LOG_LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

const NO_ARGUMENTS = { type: 'object' as const, properties: {} };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

function stringArgument(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string') throw new McpError(ErrorCode.InvalidParams, `argument ${name} must be a string`);
  return value;
}

/** Sends a log line on the request's own stream, unless the session's level filters it out. */
async function log(extra: Extra, session: SessionState, level: LoggingLevel, data: string): Promise<void> {
  if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(session.logLevel)) return;
  await extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'fixture', data } });
}

async function elicit(extra: Extra, message: string, requestedSchema: Record<string, unknown>): Promise<string> {
  const answer = await extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } as never },
    ElicitResultSchema,
  );
  return `action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

const TOOLS: readonly FixtureTool[] = [
  {
    tool: { name: 'test_simple_text', description: 'Returns a simple text', inputSchema: NO_ARGUMENTS },
    run: async () => text('This is a simple text response for testing.'),
  },
  {
    tool: { name: 'test_image_content', description: 'Returns a PNG image', inputSchema: NO_ARGUMENTS },
    run: async () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }),
  },
  {
    tool: { name: 'test_audio_content', description: 'Returns a WAV sound', inputSchema: NO_ARGUMENTS },
    run: async () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
  },
  {
    tool: { name: 'test_embedded_resource', description: 'Returns an embedded resource', inputSchema: NO_ARGUMENTS },
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },
  {
    tool: {
      name: 'test_multiple_content_types',
      description: 'Returns text, an image and a resource',
      inputSchema: NO_ARGUMENTS,
    },
    run: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
  {
    tool: { name: 'test_tool_with_logging', description: 'Logs three lines while it runs', inputSchema: NO_ARGUMENTS },
    run: async (_args, extra, session) => {
      await log(extra, session, 'info', 'Tool execution started');
      await sleep(50);
      await log(extra, session, 'info', 'Tool processing data');
      await sleep(50);
      await log(extra, session, 'info', 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  },
  {
    tool: { name: 'test_error_handling', description: 'Always fails', inputSchema: NO_ARGUMENTS },
    run: async () => ({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    }),
  },
  {
    tool: { name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100', inputSchema: NO_ARGUMENTS },
    run: async (_args, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progress > 0) await sleep(50);
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100 },
          });
        }
      }
      return text('Tool with progress executed successfully');
    },
  },
  {
    tool: {
      name: 'test_sampling',
      description: 'Asks the client to sample an LLM',
      inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
    },
    run: async (args, extra) => {
      const prompt = stringArgument(args, 'prompt');
      const answer = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
        },
        CreateMessageResultSchema,
      );
      const content = answer.content as { type: string; text?: string };
      return text(`LLM response: ${content.type === 'text' ? content.text : `[${content.type}]`}`);
    },
  },
  {
    tool: {
      name: 'test_elicitation',
      description: 'Asks the user for a name and an email address',
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    },
    run: async (args, extra) =>
      text(
        `User response: ${await elicit(extra, stringArgument(args, 'message'), {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        })}`,
      ),
  },
  {
    tool: {
      name: 'test_elicitation_sep1034_defaults',
      description: 'Elicits primitives that have default values',
      inputSchema: NO_ARGUMENTS,
    },
    run: async (_args, extra) =>
      text(
        `Elicitation completed: ${await elicit(extra, 'Please review your details', {
          type: 'object',
          properties: {
            name: { type: 'string', default: 'John Doe' },
            age: { type: 'integer', default: 30 },
            score: { type: 'number', default: 95.5 },
            status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
            verified: { type: 'boolean', default: true },
          },
        })}`,
      ),
  },
  {
    tool: {
      name: 'test_elicitation_sep1330_enums',
      description: 'Elicits every kind of enum',
      inputSchema: NO_ARGUMENTS,
    },
    run: async (_args, extra) =>
      text(
        `Elicitation completed: ${await elicit(extra, 'Please choose', {
          type: 'object',
          properties: {
            untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            titledSingle: {
              type: 'string',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
            titledMulti: {
              type: 'array',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
        })}`,
      ),
  },
  {
    tool: {
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
        },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
      },
    },
    run: async (args) => text(`Received ${JSON.stringify(args)}`),
  },
  {
    tool: {
      name: 'test_reconnection',
      description: 'Closes its SSE stream before it answers, so that the client resumes it',
      inputSchema: NO_ARGUMENTS,
    },
    run: async (_args, extra) => {
      // Only offered to clients that can resume (2025-11-25 and an event store).
      extra.closeSSEStream?.();
      await sleep(100);
      return text('Reconnection test completed');
    },
  },
];

const RESOURCES: ReadonlyMap<string, ReadResourceResult['contents'][number] & { name: string; description: string }> =
  new Map([
    [
      'test://static-text',
      {
        uri: 'test://static-text',
        name: 'static-text',
        description: 'A static text resource',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ],
    [
      'test://static-binary',
      {
        uri: 'test://static-binary',
        name: 'static-binary',
        description: 'A static PNG image',
        mimeType: 'image/png',
        blob: PNG_BASE64,
      },
    ],
    [
      'test://watched-resource',
      {
        uri: 'test://watched-resource',
        name: 'watched-resource',
        description: 'A resource clients subscribe to',
        mimeType: 'text/plain',
        text: 'Watched resource content.',
      },
    ],
  ]);

const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;

function readResource(uri: string): ReadResourceResult {
  const resource = RESOURCES.get(uri);
  if (resource) {
    const { name: _name, description: _description, ...contents } = resource;
    return { contents: [contents] };
  }
  const id = TEMPLATE.exec(uri)?.[1];
  if (id !== undefined) {
    const data = { id: decodeURIComponent(id), templateTest: true, data: `Data for ID: ${decodeURIComponent(id)}` };
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(data) }] };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
}

interface FixturePrompt {
  prompt: Prompt;
  get(args: Record<string, string>): GetPromptResult;
}

const PROMPTS: readonly FixturePrompt[] = [
  {
    prompt: { name: 'test_simple_prompt', description: 'A prompt without arguments' },
    get: () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
    }),
  },
  {
    prompt: {
      name: 'test_prompt_with_arguments',
      description: 'A prompt with two arguments',
      arguments: [
        { name: 'arg1', description: 'First test argument', required: true },
        { name: 'arg2', description: 'Second test argument', required: true },
      ],
    },
    get: (args) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` },
        },
      ],
    }),
  },
  {
    prompt: {
      name: 'test_prompt_with_embedded_resource',
      description: 'A prompt embedding the resource it is given',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    },
    get: (args) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: args.resourceUri as string,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  },
  {
    prompt: { name: 'test_prompt_with_image', description: 'A prompt with an image' },
    get: () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
    }),
  },
];

/** Values offered for completing prompt arguments, filtered by what the client typed. */
const COMPLETIONS = ['paris', 'park', 'party', 'test', 'testing', 'tested'];

/** A fresh server for one session. */
export function createConformanceServer(): Server {
  const session: SessionState = { logLevel: 'debug', subscriptions: new Set() };
  const server = new Server(
    { name: 'gw-conformance-fixture', version: '1.0.0' },
    {
      capabilities: {
        tools: {},
        prompts: {},
        resources: { subscribe: true },
        logging: {},
        completions: {},
      },
      instructions: 'The server of the MCP conformance suite, for testing gw.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map((entry) => entry.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const entry = TOOLS.find((candidate) => candidate.tool.name === request.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return entry.run(request.params.arguments ?? {}, extra, session);
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [...RESOURCES.values()].map(({ uri, name, description, mimeType }) => ({
      uri,
      name,
      description,
      mimeType,
    })),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'test://template/{id}/data',
        name: 'template-data',
        description: 'Data for an id',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(request.params.uri));
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    // Only resources that exist can be watched, which also bounds the set.
    readResource(request.params.uri);
    session.subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    session.subscriptions.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS.map((entry) => entry.prompt) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const entry = PROMPTS.find((candidate) => candidate.prompt.name === request.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const args = request.params.arguments ?? {};
    for (const argument of entry.prompt.arguments ?? []) {
      if (argument.required && args[argument.name] === undefined)
        throw new McpError(ErrorCode.InvalidParams, `Missing argument ${argument.name}`);
    }
    return entry.get(args);
  });

  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    const known =
      ref.type === 'ref/prompt'
        ? PROMPTS.find((entry) => entry.prompt.name === ref.name)?.prompt.arguments?.some(
            (a) => a.name === argument.name,
          )
        : ref.uri === 'test://template/{id}/data' && argument.name === 'id';
    const values = known ? COMPLETIONS.filter((value) => value.startsWith(argument.value)) : [];
    return { completion: { values, total: values.length, hasMore: false } };
  });

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    session.logLevel = request.params.level;
    return {};
  });

  return server;
}
