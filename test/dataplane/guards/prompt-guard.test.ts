// AIPromptGuard compiled and applied to whole bodies: what the guards read in each client
// format (system, user, assistant, tool results, tool-call arguments; the provider's answer),
// masking on a copy, list order, rejections with their CustomResponse and the defaults, and the
// configuration gw refuses (guard kinds not served, bad patterns).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AIPromptGuard } from '../../../src/api/types/ai.ts';
import type { JsonObject } from '../../../src/dataplane/ai/formats/types.ts';
import {
  type CompiledPromptGuards,
  compilePromptGuards,
  DEFAULT_REQUEST_REJECTION,
  DEFAULT_RESPONSE_REJECTION,
} from '../../../src/dataplane/ai/guards/prompt-guard.ts';

const CARD = '4111 1111 1111 1111';

function guards(config: AIPromptGuard): CompiledPromptGuards {
  const compiled = compilePromptGuards(config, 'ai.promptGuard');
  assert.ok(compiled !== undefined && !('path' in compiled), JSON.stringify(compiled));
  return compiled;
}

const maskCards = guards({
  request: [{ regex: { action: 'Mask', builtins: ['CreditCard'] } }],
  response: [{ regex: { action: 'Mask', builtins: ['CreditCard'] } }],
});

/** Masks `body` and checks that every text holding the card has the placeholder instead, and the input is unchanged. */
function assertMasked(body: JsonObject, run: (body: JsonObject) => ReturnType<CompiledPromptGuards['guardRequest']>) {
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
    const answers: Array<[Parameters<CompiledPromptGuards['guardResponse']>[1], JsonObject]> = [
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
        { request: [{ regex: { builtins: ['Ssn'] } }, { webhook: { backendRef: { name: 'w', port: 80 } } }] },
        'ai.promptGuard.request[1].webhook',
      ],
      [
        { response: [{ regex: { matches: [{ pattern: '(?=x)' }] } }] },
        'ai.promptGuard.response[0].regex.matches[0].pattern',
      ],
    ];
    for (const [config, path] of cases) {
      const compiled = compilePromptGuards(config, 'ai.promptGuard');
      assert.ok(compiled !== undefined && 'path' in compiled);
      assert.equal(compiled.path, path);
    }
    assert.equal(compilePromptGuards(undefined, 'ai.promptGuard'), undefined);
  });
});
