// AIPromptGuard compiled and applied to whole bodies: what the guards read in each client
// format (system, user, assistant, tool results, tool-call arguments; the provider's answer),
// masking on a copy, list order, rejections with their CustomResponse and the defaults, and the
// configuration gw refuses (guard kinds not served, bad patterns).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AIPromptGuard } from '../../../src/api/types/ai.ts';
import type { JsonObject } from '../../../src/dataplane/ai/formats/types.ts';
import {
  compilePromptGuards,
  DEFAULT_REQUEST_REJECTION,
  DEFAULT_RESPONSE_REJECTION,
  type GuardResult,
} from '../../../src/dataplane/ai/guards/prompt-guard.ts';
import { collectTexts } from '../../../src/dataplane/ai/guards/texts.ts';
import type { ClientFormat } from '../../../src/dataplane/ai/providers/index.ts';
import { EMPTY_GUARD_INPUT, syncGuards } from '../../helpers/guards.ts';

const CARD = '4111 1111 1111 1111';

const guards = syncGuards;

const maskCards = guards({
  request: [{ regex: { action: 'Mask', builtins: ['CreditCard'] } }],
  response: [{ regex: { action: 'Mask', builtins: ['CreditCard'] } }],
});

/** Masks `body` and checks that every text holding the card has the placeholder instead, and the input is unchanged. */
function assertMasked(body: JsonObject, run: (body: JsonObject) => GuardResult) {
  const before = JSON.stringify(body);
  const result = run(body);
  assert.equal(result.rejected, undefined);
  assert.equal(JSON.stringify(body), before, 'the input body is not modified');
  const text = JSON.stringify(result.rejected === undefined ? result.body : undefined);
  assert.ok(!text.includes('4111'), text);
  return { result, text };
}

describe('request texts per client format', () => {
  it('Chat Completions: system, user parts, assistant, tool-call arguments and tool results', () => {
    const body: JsonObject = {
      model: 'm',
      messages: [
        { role: 'system', content: `sys ${CARD}` },
        {
          role: 'user',
          content: [
            { type: 'text', text: `user ${CARD}` },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
        {
          role: 'assistant',
          content: `asst ${CARD}`,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'pay', arguments: `{"card":"${CARD}"}` } }],
        },
        { role: 'tool', tool_call_id: 't', content: `tool ${CARD}` },
      ],
    };
    const { result, text } = assertMasked(body, (b) => maskCards.guardRequest(b, 'completions'));
    assert.equal((text.match(/<CREDIT_CARD>/g) ?? []).length, 5);
    assert.deepEqual(
      result.outcomes.map((o) => [o.side, o.index, o.kind, o.action, o.matched]),
      [['request', 0, 'regex', 'mask', ['CREDIT_CARD']]],
    );
  });

  it('Messages: system blocks, text, tool_use input and tool_result content', () => {
    const body: JsonObject = {
      model: 'm',
      max_tokens: 10,
      system: [{ type: 'text', text: `sys ${CARD}` }],
      messages: [
        { role: 'user', content: `user ${CARD}` },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'pay', input: { card: CARD, n: 1 } }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: `paid ${CARD}` }] }],
        },
      ],
    };
    const { text } = assertMasked(body, (b) => maskCards.guardRequest(b, 'messages'));
    assert.equal((text.match(/<CREDIT_CARD>/g) ?? []).length, 4);
    assert.match(text, /"n":1/);
  });

  it('Responses: instructions, a string input, message items, function calls and their outputs', () => {
    assert.equal(
      (maskCards.guardRequest({ model: 'm', input: `card ${CARD}` }, 'responses') as { body: JsonObject }).body.input,
      'card <CREDIT_CARD>',
    );
    const body: JsonObject = {
      model: 'm',
      instructions: `inst ${CARD}`,
      input: [
        { role: 'user', content: [{ type: 'input_text', text: `user ${CARD}` }] },
        { type: 'function_call', call_id: 'c', name: 'pay', arguments: `{"card":"${CARD}"}` },
        { type: 'function_call_output', call_id: 'c', output: `ok ${CARD}` },
      ],
    };
    const { text } = assertMasked(body, (b) => maskCards.guardRequest(b, 'responses'));
    assert.equal((text.match(/<CREDIT_CARD>/g) ?? []).length, 4);
  });

  it('Gemini: systemInstruction, parts, function call args and responses', () => {
    const body: JsonObject = {
      systemInstruction: { parts: [{ text: `sys ${CARD}` }] },
      contents: [
        { role: 'user', parts: [{ text: `user ${CARD}` }] },
        { role: 'model', parts: [{ functionCall: { name: 'pay', args: { card: CARD } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'pay', response: { receipt: [CARD] } } }] },
      ],
    };
    const { text } = assertMasked(body, (b) => maskCards.guardRequest(b, 'gemini'));
    assert.equal((text.match(/<CREDIT_CARD>/g) ?? []).length, 4);
  });

  it('Embeddings inputs are read too; a body with nothing to find passes as the same object', () => {
    const { text } = assertMasked({ model: 'e', input: ['a', `b ${CARD}`] }, (b) =>
      maskCards.guardRequest(b, 'embeddings'),
    );
    assert.match(text, /"b <CREDIT_CARD>"/);
    const clean: JsonObject = { model: 'm', messages: [{ role: 'user', content: 'hello' }] };
    const result = maskCards.guardRequest(clean, 'completions');
    assert.equal(result.rejected === undefined && result.body, clean);
    assert.equal(result.outcomes[0]!.action, 'pass');
  });
});

describe('response texts per client format', () => {
  it('the answer of each chat format is read: content, tool calls, output items, candidates', () => {
    const answers: Array<[ClientFormat, JsonObject]> = [
      [
        'completions',
        {
          choices: [
            {
              message: {
                role: 'assistant',
                content: `c ${CARD}`,
                tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: `"${CARD}"` } }],
              },
            },
          ],
        },
      ],
      [
        'messages',
        {
          content: [
            { type: 'text', text: `c ${CARD}` },
            { type: 'tool_use', input: { c: CARD } },
          ],
        },
      ],
      [
        'responses',
        {
          output: [
            { type: 'message', content: [{ type: 'output_text', text: `c ${CARD}` }] },
            { type: 'function_call', arguments: `"${CARD}"` },
          ],
        },
      ],
      [
        'gemini',
        { candidates: [{ content: { parts: [{ text: `c ${CARD}` }, { functionCall: { args: { c: CARD } } }] } }] },
      ],
    ];
    for (const [format, answer] of answers) {
      const { text, result } = assertMasked(answer, (b) => maskCards.guardResponse(b, format));
      assert.equal((text.match(/<CREDIT_CARD>/g) ?? []).length, 2, format);
      assert.equal(result.outcomes[0]!.side, 'response');
    }
  });
});

describe('order, rejections and configuration', () => {
  it('guards run in order on what the previous left; the first rejection stops the rest', () => {
    const chain = guards({
      request: [
        { regex: { action: 'Mask', builtins: ['Email'] } },
        {
          regex: { action: 'Reject', matches: [{ name: 'placeholder', pattern: '<EMAIL_ADDRESS>' }] },
          response: { statusCode: 451, message: 'no mail' },
        },
        { regex: { action: 'Reject', builtins: ['Ssn'] } },
      ],
    });
    const result = chain.guardRequest({ messages: [{ role: 'user', content: 'a@b.io 078-05-1120' }] }, 'completions');
    assert.deepEqual(result.rejected, { status: 451, message: 'no mail' });
    assert.deepEqual(
      result.outcomes.map((o) => o.action),
      ['mask', 'reject'],
    );
  });

  it('defaults: 403 and the request or response message', () => {
    const reject = guards({
      request: [{ regex: { action: 'Reject', builtins: ['Ssn'] } }],
      response: [{ regex: { action: 'Reject', builtins: ['Ssn'] }, response: { message: 'custom' } }],
    });
    const ssn = 'ssn 078-05-1120';
    assert.deepEqual(reject.guardRequest({ messages: [{ role: 'user', content: ssn }] }, 'completions').rejected, {
      status: 403,
      message: DEFAULT_REQUEST_REJECTION,
    });
    assert.deepEqual(reject.guardResponse({ content: [{ type: 'text', text: ssn }] }, 'messages').rejected, {
      status: 403,
      message: 'custom',
    });
    const defaults = guards({ response: [{ regex: { action: 'Reject', builtins: ['Ssn'] } }] });
    assert.equal(
      defaults.guardResponse({ content: [{ type: 'text', text: ssn }] }, 'messages').rejected?.message,
      DEFAULT_RESPONSE_REJECTION,
    );
  });

  it('refused: guard kinds not served, a pattern RE2 cannot compile (each names its field)', () => {
    const cases: Array<[AIPromptGuard, string]> = [
      [
        // A kind no compiler serves (the registry refuses unserved kinds before a configuration gets here).
        { request: [{ regex: { builtins: ['Ssn'] } }, { unknownKind: {} } as never] },
        'ai.promptGuard.request[1].unknownKind',
      ],
      [
        { response: [{ regex: { matches: [{ pattern: '(?=x)' }] } }] },
        'ai.promptGuard.response[0].regex.matches[0].pattern',
      ],
    ];
    for (const [config, path] of cases) {
      const compiled = compilePromptGuards(config, 'ai.promptGuard', EMPTY_GUARD_INPUT);
      assert.ok(compiled !== undefined && 'path' in compiled);
      assert.equal(compiled.path, path);
    }
    assert.equal(compilePromptGuards(undefined, 'ai.promptGuard', EMPTY_GUARD_INPUT), undefined);
  });
});

describe('the roles guard services are told', () => {
  it('each text carries the role of its message; tool results are tool, Gemini model turns assistant', () => {
    const roles = (body: JsonObject, format: ClientFormat) =>
      collectTexts(body, format, 'request').map(({ role, text }) => `${role}:${text}`);
    assert.deepEqual(
      roles(
        {
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: [{ type: 'text', text: 'u' }] },
            { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }] },
            { role: 'tool', content: 't' },
          ],
        },
        'completions',
      ),
      ['system:s', 'user:u', 'assistant:{"a":1}', 'tool:t'],
    );
    assert.deepEqual(
      roles(
        {
          system: 's',
          messages: [
            { role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'f', input: { q: 'a' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }] },
          ],
        },
        'messages',
      ),
      ['system:s', 'assistant:a', 'tool:r'],
    );
    assert.deepEqual(
      roles(
        {
          systemInstruction: { parts: [{ text: 's' }] },
          contents: [
            { role: 'user', parts: [{ text: 'u' }] },
            { role: 'model', parts: [{ functionCall: { name: 'f', args: { q: 'm' } } }] },
            { role: 'user', parts: [{ functionResponse: { name: 'f', response: { r: 'r' } } }] },
          ],
        },
        'gemini',
      ),
      ['system:s', 'user:u', 'assistant:m', 'tool:r'],
    );
    assert.deepEqual(
      roles(
        {
          instructions: 'i',
          input: [
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'u' }] },
            { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
            { type: 'function_call_output', call_id: 'c', output: 'o' },
          ],
        },
        'responses',
      ),
      ['system:i', 'user:u', 'assistant:{}', 'tool:o'],
    );
    assert.deepEqual(
      collectTexts({ content: [{ type: 'text', text: 'a' }] }, 'messages', 'response').map((t) => t.role),
      ['assistant'],
    );
  });
});
