// BackendAI.promptCaching on provider bodies (src/dataplane/ai/policies/prompt-caching.ts): where
// the markers go in Anthropic Messages bodies (cache_control) and Bedrock Converse bodies
// (cachePoint) for each option, the minTokens gate, the limit of 4 markers with the client's
// counted first and kept in place, the models Bedrock caches for, and the formats left alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PromptCachingConfig } from '../../../src/api/types/ai.ts';
import type { JsonObject } from '../../../src/dataplane/ai/formats/types.ts';
import { converseModelCaches, estimatePromptTokens } from '../../../src/dataplane/ai/policies/prompt-caching.ts';
import { policy } from './helpers.ts';

const CLAUDE_ON_BEDROCK = 'anthropic.claude-3-7-sonnet-20250219-v1:0';
const EPHEMERAL = { type: 'ephemeral' };
const CACHE_POINT = { cachePoint: { type: 'default' } };

type Block = Record<string, unknown>;
/** The parts of a provider body the tests read. */
interface Wire {
  system?: string | Block[];
  messages: { role: string; content: string | Block[] }[];
  tools?: Block[];
  toolConfig?: { tools: Block[]; toolChoice?: unknown };
}

/** minTokens 0: every request is long enough, so the tests see the placement alone. */
function mark(config: PromptCachingConfig, body: JsonObject, format = 'messages', model = CLAUDE_ON_BEDROCK): Wire {
  const input = structuredClone(body);
  const out = policy({ promptCaching: { minTokens: 0, ...config } }).markPromptCache(input, format, model);
  assert.deepEqual(input, body, 'the input body is not modified');
  return out as unknown as Wire;
}

/** Block `index` of a message's content (which must be blocks). */
function blockOf(content: string | Block[], index: number): Block {
  assert.ok(Array.isArray(content), 'content blocks');
  return content[index] ?? {};
}

/** The paths of the blocks `marked` picks: in system, messages' content, tools and toolConfig.tools. */
function markedPaths(body: Wire, marked: (block: Block) => boolean): string[] {
  const paths: string[] = [];
  const scan = (blocks: unknown, path: string) => {
    if (!Array.isArray(blocks)) return;
    for (const [index, block] of blocks.entries()) if (marked(block as Block)) paths.push(`${path}[${index}]`);
  };
  scan(body.system, 'system');
  for (const [index, message] of body.messages.entries()) scan(message.content, `messages[${index}].content`);
  scan(body.tools, 'tools');
  scan(body.toolConfig?.tools, 'toolConfig.tools');
  return paths;
}

const messagesMarkers = (body: Wire) => markedPaths(body, (block) => block.cache_control !== undefined);
const conversePoints = (body: Wire) => markedPaths(body, (block) => block.cachePoint !== undefined);

function messagesRequest(turns = 3): JsonObject {
  const messages = Array.from({ length: turns }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${index}`,
  }));
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: 'You are terse.',
    messages,
    tools: [
      { name: 'first', input_schema: { type: 'object' } },
      { name: 'second', input_schema: { type: 'object' } },
    ],
  };
}

function converseRequest(turns = 3): JsonObject {
  const messages = Array.from({ length: turns }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: [{ text: `turn ${index}` }],
  }));
  return {
    system: [{ text: 'You are terse.' }],
    messages,
    toolConfig: {
      tools: [{ toolSpec: { name: 'first', inputSchema: { json: { type: 'object' } } } }],
      toolChoice: { auto: {} },
    },
  };
}

describe('promptCaching on Anthropic Messages bodies (cache_control)', () => {
  it('defaults: the system prompt and the second-to-last message, strings turned into text blocks', () => {
    const out = mark({}, messagesRequest());
    assert.deepEqual(out.system, [{ type: 'text', text: 'You are terse.', cache_control: EPHEMERAL }]);
    assert.deepEqual(out.messages[1]?.content, [{ type: 'text', text: 'turn 1', cache_control: EPHEMERAL }]);
    assert.equal(out.messages[2]?.content, 'turn 2', 'the current turn is not marked');
    assert.deepEqual(messagesMarkers(out), ['system[0]', 'messages[1].content[0]']);
  });

  it('each option alone: cacheSystem, cacheMessages, cacheTools (the last tool)', () => {
    const only = { cacheSystem: false, cacheMessages: false, cacheTools: false };
    assert.deepEqual(messagesMarkers(mark({ ...only, cacheSystem: true }, messagesRequest())), ['system[0]']);
    assert.deepEqual(messagesMarkers(mark({ ...only, cacheMessages: true }, messagesRequest())), [
      'messages[1].content[0]',
    ]);
    const tools = mark({ ...only, cacheTools: true }, messagesRequest());
    assert.deepEqual(messagesMarkers(tools), ['tools[1]']);
    assert.deepEqual(tools.tools?.[1], { name: 'second', input_schema: { type: 'object' }, cache_control: EPHEMERAL });
  });

  it('all three off: the body is returned as it is', () => {
    const body = messagesRequest();
    const out = policy({
      promptCaching: { cacheSystem: false, cacheMessages: false, cacheTools: false, minTokens: 0 },
    }).markPromptCache(body, 'messages', 'claude');
    assert.equal(out, body);
  });

  it('cacheMessageOffset counts back from the second-to-last message and stops at the first', () => {
    const only = { cacheSystem: false };
    assert.deepEqual(messagesMarkers(mark({ ...only, cacheMessageOffset: 2 }, messagesRequest(5))), [
      'messages[1].content[0]',
    ]);
    assert.deepEqual(messagesMarkers(mark({ ...only, cacheMessageOffset: 1 }, messagesRequest(5))), [
      'messages[2].content[0]',
    ]);
    assert.deepEqual(messagesMarkers(mark({ ...only, cacheMessageOffset: 40 }, messagesRequest(5))), [
      'messages[0].content[0]',
    ]);
    assert.deepEqual(messagesMarkers(mark(only, messagesRequest(1))), [], 'one message: no history to cache');
  });

  it('the marker goes on the last block that takes one (not on thinking)', () => {
    const body = messagesRequest();
    body.messages = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'first', input: {} },
          { type: 'thinking', thinking: 'hmm', signature: 's' },
        ],
      },
      { role: 'user', content: 'again' },
    ];
    const out = mark({ cacheSystem: false }, body);
    assert.deepEqual(blockOf(out.messages[1]!.content, 0).cache_control, EPHEMERAL);
    assert.equal(blockOf(out.messages[1]!.content, 1).cache_control, undefined);
  });

  it('minTokens: below the estimate (characters / 4) nothing is marked, at it everything is', () => {
    const body = messagesRequest();
    const estimate = estimatePromptTokens(body.system, body.messages, body.tools);
    assert.ok(estimate > 0);
    const at = mark({ minTokens: estimate }, body);
    assert.deepEqual(messagesMarkers(at), ['system[0]', 'messages[1].content[0]']);
    const above = policy({ promptCaching: { minTokens: estimate + 1 } }).markPromptCache(body, 'messages', 'claude');
    assert.equal(above, body);
    // The default (1024) leaves a short prompt alone.
    assert.equal(policy({ promptCaching: {} }).markPromptCache(body, 'messages', 'claude'), body);
  });

  it('inline media is not counted as text in the estimate', () => {
    const withImage = (data: string) => [
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] },
    ];
    assert.equal(estimatePromptTokens(withImage('A'.repeat(40_000))), estimatePromptTokens(withImage('')));
    assert.equal(estimatePromptTokens('abcdefgh', ['x']), 3, '9 characters: 3 tokens (rounded up)');
  });

  it("the client's markers are kept where they are and count towards the limit of 4", () => {
    const body = messagesRequest(5);
    body.system = [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const out = mark({ cacheTools: true }, body);
    assert.deepEqual(out.system, body.system, "the client's own marker (and its ttl) stays as it is");
    assert.deepEqual(messagesMarkers(out), ['system[0]', 'messages[3].content[0]', 'tools[1]']);

    // Three of the client's own (one inside a tool result): one marker left, the system's.
    const full = messagesRequest(5);
    full.messages = (full.messages as JsonObject[]).map((message, index) =>
      index === 0
        ? {
            role: 'user',
            content: [
              { type: 'text', text: 'a', cache_control: EPHEMERAL },
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'text', text: 'r', cache_control: EPHEMERAL }],
              },
            ],
          }
        : message,
    );
    (full.tools as JsonObject[])[0] = { name: 'first', input_schema: { type: 'object' }, cache_control: EPHEMERAL };
    const limited = mark({ cacheTools: true }, full);
    assert.deepEqual(messagesMarkers(limited), ['system[0]', 'messages[0].content[0]', 'tools[0]']);
    assert.equal(limited.messages[3]?.content, 'turn 3', 'no fifth marker on the message');
    assert.equal(limited.tools?.[1]?.cache_control, undefined, 'nor on the tools');
  });

  it('a message already marked by the client is not marked again', () => {
    const body = messagesRequest();
    (body.messages as JsonObject[])[1] = {
      role: 'assistant',
      content: [{ type: 'text', text: 'turn 1', cache_control: EPHEMERAL }],
    };
    const out = mark({ cacheSystem: false }, body);
    assert.deepEqual(messagesMarkers(out), ['messages[1].content[0]']);
  });
});

describe('promptCaching on Bedrock Converse bodies (cachePoint)', () => {
  it('defaults: a cache point after the system prompt and after the second-to-last message', () => {
    const out = mark({}, converseRequest(), 'converse');
    assert.deepEqual(out.system, [{ text: 'You are terse.' }, CACHE_POINT]);
    assert.deepEqual(out.messages[1]?.content, [{ text: 'turn 1' }, CACHE_POINT]);
    assert.deepEqual(conversePoints(out), ['system[1]', 'messages[1].content[1]']);
  });

  it('cacheTools: a cache point after the tools; offsets as for Messages', () => {
    const out = mark({ cacheSystem: false, cacheTools: true, cacheMessageOffset: 1 }, converseRequest(4), 'converse');
    assert.deepEqual(conversePoints(out), ['messages[1].content[1]', 'toolConfig.tools[1]']);
    assert.deepEqual(out.toolConfig?.toolChoice, { auto: {} });
  });

  it('minTokens gates the whole request', () => {
    const body = converseRequest();
    const out = policy({ promptCaching: { minTokens: 100_000 } }).markPromptCache(body, 'converse', CLAUDE_ON_BEDROCK);
    assert.equal(out, body);
  });

  it("the client's cache points count towards 4 and are not doubled", () => {
    const body = converseRequest(5);
    body.system = [{ text: 'a' }, CACHE_POINT];
    (body.messages as JsonObject[])[0] = { role: 'user', content: [{ text: 'x' }, CACHE_POINT] };
    (body.messages as JsonObject[])[2] = { role: 'user', content: [{ text: 'y' }, CACHE_POINT] };
    const out = mark({ cacheTools: true }, body, 'converse');
    // Three of the client's; the system already ends in one: the message gets the fourth, the tools none.
    assert.deepEqual(conversePoints(out), [
      'system[1]',
      'messages[0].content[1]',
      'messages[2].content[1]',
      'messages[3].content[1]',
    ]);
    assert.equal(out.toolConfig?.tools.length, 1);
  });

  it('only the Bedrock models that cache get cache points', () => {
    for (const model of [
      CLAUDE_ON_BEDROCK,
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0',
      'amazon.nova-pro-v1:0',
    ]) {
      assert.ok(converseModelCaches(model), model);
    }
    for (const model of ['anthropic.claude-v2:1', 'anthropic.claude-instant-v1', 'meta.llama3-70b-instruct-v1:0']) {
      assert.ok(!converseModelCaches(model), model);
      const body = converseRequest();
      assert.equal(policy({ promptCaching: { minTokens: 0 } }).markPromptCache(body, 'converse', model), body);
    }
  });
});

describe('promptCaching on other formats', () => {
  it('Chat Completions, Responses and Gemini bodies are left as they are (those providers cache by themselves)', () => {
    const caching = policy({ promptCaching: { minTokens: 0, cacheTools: true } });
    for (const format of ['completions', 'responses', 'gemini', 'count_tokens', 'embeddings']) {
      const body = messagesRequest();
      assert.equal(caching.markPromptCache(body, format, 'any'), body, format);
    }
  });

  it('without promptCaching nothing is marked', () => {
    const body = messagesRequest();
    assert.equal(policy({}).markPromptCache(body, 'messages', 'claude'), body);
  });
});
