// The webhook guard's wire format (webhook-protocol.ts) and configuration (webhook-guard.ts):
// what gw sends for each side, how each answer reads (pass, reject, a mask mapped back onto the
// texts, and every malformed answer a GuardFailure, never a pass), and the configurations gw
// refuses with the field named: a missing backend, a GwBackend policy gw would not apply, a
// header gw cannot set, CEL or a pattern that does not compile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Webhook } from '../../../src/api/types/ai.ts';
import type { BackendObjectConfig } from '../../../src/contract/dataplane-config.ts';
import { GuardFailure, type GuardText } from '../../../src/dataplane/ai/guards/guard.ts';
import { compilePromptGuards } from '../../../src/dataplane/ai/guards/prompt-guard.ts';
import { webhookGuard } from '../../../src/dataplane/ai/guards/webhook-guard.ts';
import { webhookRequestBody, webhookVerdict } from '../../../src/dataplane/ai/guards/webhook-protocol.ts';
import type { UpstreamClient } from '../../../src/dataplane/upstream/client.ts';
import type { ConnectionSettings } from '../../../src/dataplane/upstream/connection-settings.ts';
import { guardInput } from '../../helpers/guards.ts';

const TEXTS: GuardText[] = [
  { role: 'system', text: 'be kind' },
  { role: 'user', text: 'my code is SECRET-1' },
];

describe('the webhook protocol', () => {
  it('sends one message (or choice) per text, with its role', () => {
    assert.deepEqual(webhookRequestBody('request', TEXTS), {
      body: {
        messages: [
          { role: 'system', content: 'be kind' },
          { role: 'user', content: 'my code is SECRET-1' },
        ],
      },
    });
    assert.deepEqual(webhookRequestBody('response', [{ role: 'assistant', text: 'hi' }]), {
      body: { choices: [{ message: { role: 'assistant', content: 'hi' } }] },
    });
  });

  it('reads pass, reject and mask actions', () => {
    assert.deepEqual(webhookVerdict({ action: {} }, 'request', TEXTS, 'w'), { action: 'pass' });
    assert.deepEqual(webhookVerdict({ action: { reason: 'ok' } }, 'request', TEXTS, 'w'), {
      action: 'pass',
      reason: 'ok',
    });
    assert.deepEqual(webhookVerdict({ action: { body: 'no', status_code: 422, reason: 'r' } }, 'request', TEXTS, 'w'), {
      action: 'reject',
      reason: 'r',
      answer: { status: 422, message: 'no' },
    });
    const masked = [
      { role: 'system', content: 'be kind' },
      { role: 'user', content: 'my code is <SECRET>' },
    ];
    assert.deepEqual(webhookVerdict({ action: { body: { messages: masked } } }, 'request', TEXTS, 'w'), {
      action: 'mask',
      replacements: [undefined, 'my code is <SECRET>'],
    });
    assert.deepEqual(
      webhookVerdict(
        { action: { body: { choices: [{ message: { role: 'assistant', content: 'x' } }] }, reason: 'pii' } },
        'response',
        [{ role: 'assistant', text: 'SECRET' }],
        'w',
      ),
      { action: 'mask', reason: 'pii', replacements: ['x'] },
    );
  });

  it('every answer it cannot read is a GuardFailure naming the service and what is wrong', () => {
    for (const [answer, side, message] of [
      [{}, 'request', /^the webhook answered without an action object$/],
      ['pass', 'request', /without an action object/],
      [{ action: { reason: 3 } }, 'request', /a reason that is not a string/],
      [{ action: { body: 'no' } }, 'request', /a reject action without a status_code from 200 to 599/],
      [{ action: { body: 'no', status_code: 99 } }, 'request', /status_code from 200 to 599/],
      [{ action: { body: 'no', status_code: '403' } }, 'request', /status_code from 200 to 599/],
      [{ action: { body: 7 } }, 'request', /neither a message nor messages/],
      [{ action: { body: { choices: [] } } }, 'request', /a mask action without body\.messages/],
      [{ action: { body: { messages: [] } } }, 'response', /a mask action without body\.choices/],
      [
        { action: { body: { messages: [{ role: 'user', content: 'x' }] } } },
        'request',
        /a mask of 1 messages for the 2/,
      ],
      [
        { action: { body: { messages: [{ role: 'system' }, { role: 'user', content: 'x' }] } } },
        'request',
        /messages\[0\] has no string content/,
      ],
    ] as const) {
      assert.throws(
        () => webhookVerdict(answer, side, TEXTS, 'the webhook'),
        (error: unknown) => error instanceof GuardFailure && message.test(error.message),
        JSON.stringify(answer),
      );
    }
  });
});

describe('webhook guard configurations', () => {
  const backends: Record<string, BackendObjectConfig> = {
    'Service default/guard': { kind: 'Service', spec: { clusterIP: '127.0.0.1', ports: [{ port: 8080 }] } },
    'Service default/h2c-guard': {
      kind: 'Service',
      spec: { clusterIP: '127.0.0.1', ports: [{ port: 8080, appProtocol: 'kubernetes.io/h2c' }] },
    },
    'GwBackend default/guard-backend': {
      kind: 'GwBackend',
      spec: { static: { host: '127.0.0.1', port: 9000 }, policies: { http: { requestTimeout: '1s' } } },
    },
    'GwBackend default/checked': {
      kind: 'GwBackend',
      spec: { static: { host: '127.0.0.1', port: 9000 }, policies: { health: { eviction: {} } } },
    },
    'GwBackend default/tunnelled': {
      kind: 'GwBackend',
      spec: { static: { host: '127.0.0.1', port: 9000 }, policies: { tunnel: { url: 'http://proxy:3128/some/path' } } },
    },
    'GwBackend default/untrusted': {
      kind: 'GwBackend',
      spec: {
        static: { host: '127.0.0.1', port: 9000 },
        policies: { tls: { caCertificateRefs: [{ name: 'missing-ca' }] } },
      },
    },
  } as unknown as Record<string, BackendObjectConfig>;
  const opened: ConnectionSettings[] = [];
  const input = guardInput({
    backends,
    client: (settings) => {
      opened.push(settings);
      return {} as UpstreamClient;
    },
  });
  const PATH = 'ai.promptGuard.request[0].webhook';
  const compile = (config: Partial<Webhook>) =>
    webhookGuard({ backendRef: { name: 'guard', port: 8080 }, ...config } as Webhook, PATH, input);
  const gwBackend = (name: string) => ({ backendRef: { group: 'gw.dev', kind: 'GwBackend', name } });

  it('compiles a webhook on a Service or a GwBackend, FailClosed unless FailOpen', () => {
    const guard = compile({
      headers: { 'x-tenant': 'request.path' },
      forwardHeaderMatches: [{ name: 'X-Team', value: 'a' }],
    });
    assert.ok('check' in guard);
    assert.equal(guard.kind, 'webhook');
    assert.equal(guard.failureMode, 'FailClosed');
    const open = compile({ ...gwBackend('guard-backend'), failureMode: 'FailOpen' });
    assert.ok('check' in open);
    assert.equal(open.failureMode, 'FailOpen');
  });

  it('refuses a CustomResponse on a webhook entry: the webhook chooses its rejection', () => {
    const problem = compilePromptGuards(
      {
        request: [{ regex: { builtins: ['Ssn'] }, response: { statusCode: 422 } }],
        response: [{ webhook: { backendRef: { name: 'guard', port: 8080 } }, response: { message: 'no' } }],
      },
      'ai.promptGuard',
      input,
    );
    assert.ok(problem !== undefined && 'path' in problem, JSON.stringify(problem));
    assert.equal(problem.path, 'ai.promptGuard.response[0].response');
    assert.match(problem.message, /a webhook guard rejects with the status and message its service answers/);
  });

  it('connects as the Service port asks: HTTP/2 without TLS for appProtocol h2c, HTTP/1.1 otherwise', () => {
    assert.ok('check' in compile({ backendRef: { name: 'h2c-guard', port: 8080 } }));
    assert.equal(opened.at(-1)!.origin, 'http://127.0.0.1:8080');
    assert.equal(opened.at(-1)!.http1, undefined, 'an HTTP/2 (h2c) client');
    assert.ok('check' in compile({}));
    assert.notEqual(opened.at(-1)!.http1, undefined, 'gw’s HTTP/1.1 pool');
  });

  it('refuses what it cannot serve, naming the field', () => {
    for (const [config, path, message] of [
      [
        { backendRef: { name: 'nowhere', port: 80 } },
        `${PATH}.backendRef`,
        /Service default\/nowhere is not available/,
      ],
      [gwBackend('checked'), `${PATH}.backendRef`, /sets policies\.health, which gw does not apply/],
      [
        gwBackend('tunnelled'),
        `${PATH}.backendRef`,
        /GwBackend default\/tunnelled policies\.tunnel\.url: a CONNECT proxy is named by scheme, host and port only/,
      ],
      [gwBackend('untrusted'), `${PATH}.backendRef`, /GwBackend default\/untrusted policies\.tls/],
      [
        { headers: { ':path': '"/v2/request"' } },
        `${PATH}.headers.:path`,
        /pseudo-headers such as :path are not supported/,
      ],
      [{ headers: { 'Content-Length': '"1"' } }, `${PATH}.headers.Content-Length`, /gw writes content-length/],
      [{ headers: { 'x-a': 'request.(' } }, `${PATH}.headers.x-a`, /is not valid CEL/],
      [
        { forwardHeaderMatches: [{ name: 'host', value: 'a' }] },
        `${PATH}.forwardHeaderMatches[0].name`,
        /gw writes host/,
      ],
      [
        {
          forwardHeaderMatches: [
            { name: 'x-a', value: 'a' },
            { name: 'x-b', type: 'RegularExpression', value: '(' },
          ],
        },
        `${PATH}.forwardHeaderMatches[1].value`,
        /is not a valid regular expression/,
      ],
    ] as const) {
      const problem = compile(config as Partial<Webhook>);
      assert.ok(!('check' in problem), JSON.stringify(config));
      assert.equal(problem.path, path);
      assert.match(problem.message, message);
    }
  });
});
