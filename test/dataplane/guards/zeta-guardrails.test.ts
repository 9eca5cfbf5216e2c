// What gw makes of Bedrock's ApplyGuardrail answers (decision 0034), one answer shape at a time:
// NONE passes (also with a detect-mode assessment that acted on nothing); BLOCKED anywhere
// rejects, naming each policy that fired by type or name and never by the matched text;
// ANONYMIZED alone masks with one output per text sent, put back in the texts' places (empty
// texts are not sent); a count that does not match, an intervention that names no action, or an
// ANONYMIZED beside a BLOCKED rejects; an answer without an action is a GuardFailure (503).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GuardFailure } from '../../../src/dataplane/ai/guards/guard.ts';
import { guardrailVerdict, policiesThatFired } from '../../../src/dataplane/ai/guards/zeta-guardrails-guard.ts';

const NAME = 'the Bedrock guardrail gr (version 1, us-east-1)';

const ASSESSMENT = {
  topicPolicy: { topics: [{ name: 'Investment', type: 'DENY', action: 'BLOCKED', detected: true }] },
  contentPolicy: {
    filters: [
      { type: 'VIOLENCE', confidence: 'HIGH', filterStrength: 'HIGH', action: 'BLOCKED', detected: true },
      { type: 'INSULTS', confidence: 'LOW', filterStrength: 'HIGH', action: 'NONE', detected: false },
      { type: 'PROMPT_ATTACK', confidence: 'HIGH', filterStrength: 'HIGH', action: 'BLOCKED', detected: true },
    ],
  },
  wordPolicy: {
    customWords: [{ match: 'secret-project-x', action: 'BLOCKED', detected: true }],
    managedWordLists: [{ match: 'darn', type: 'PROFANITY', action: 'BLOCKED', detected: true }],
  },
  sensitiveInformationPolicy: {
    piiEntities: [
      { match: 'jane@example.com', type: 'EMAIL', action: 'ANONYMIZED', detected: true },
      { match: 'bob@example.com', type: 'EMAIL', action: 'ANONYMIZED', detected: true },
    ],
    regexes: [{ name: 'employee-id', match: 'E-12345', regex: 'E-\\d+', action: 'BLOCKED', detected: true }],
  },
  contextualGroundingPolicy: {
    filters: [{ type: 'GROUNDING', threshold: 0.75, score: 0.2, action: 'BLOCKED', detected: true }],
  },
  invocationMetrics: { guardrailProcessingLatency: 80 },
};

const anonymized = (...types: string[]) => [
  {
    sensitiveInformationPolicy: {
      piiEntities: types.map((type) => ({ match: 'x', type, action: 'ANONYMIZED', detected: true })),
      regexes: [],
    },
  },
];

describe('ApplyGuardrail answers', () => {
  it('names each policy that acted, by type or name, never by the matched text', () => {
    const fired = policiesThatFired([ASSESSMENT]);
    assert.deepEqual(fired, [
      'topic:Investment',
      'content:VIOLENCE',
      'content:PROMPT_ATTACK',
      'word:CUSTOM',
      'word:PROFANITY',
      'pii:EMAIL',
      'regex:employee-id',
      'grounding:GROUNDING',
    ]);
    for (const text of ['secret-project-x', 'jane@example.com', 'E-12345', 'darn'])
      assert.ok(!fired.join(',').includes(text), text);
  });

  it('NONE passes, also when a detect-mode policy reports what it saw without acting', () => {
    const detected = [
      { contentPolicy: { filters: [{ type: 'HATE', confidence: 'HIGH', action: 'NONE', detected: true }] } },
    ];
    assert.deepEqual(guardrailVerdict({ action: 'NONE', outputs: [], assessments: detected }, [0], 1, NAME), {
      action: 'pass',
    });
  });

  it('BLOCKED rejects with what fired and the reason Bedrock gives', () => {
    const verdict = guardrailVerdict(
      {
        action: 'GUARDRAIL_INTERVENED',
        actionReason: 'Guardrail blocked.',
        outputs: [{ text: 'Sorry, the model cannot answer this question.' }],
        assessments: [ASSESSMENT],
      },
      [0],
      1,
      NAME,
    );
    assert.equal(verdict.action, 'reject');
    assert.ok(verdict.action === 'reject' && verdict.answer === undefined, "the guard's CustomResponse answers");
    assert.equal(verdict.reason, 'Guardrail blocked.');
    assert.ok(verdict.action === 'reject' && verdict.matched?.includes('topic:Investment'));
  });

  it('ANONYMIZED beside a BLOCKED rejects (the block wins)', () => {
    const assessments = [...anonymized('EMAIL'), { topicPolicy: { topics: [{ name: 'T', action: 'BLOCKED' }] } }];
    const verdict = guardrailVerdict(
      { action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'blocked' }], assessments },
      [0],
      1,
      NAME,
    );
    assert.equal(verdict.action, 'reject');
  });

  it('ANONYMIZED alone masks: each output replaces the text it was sent for, empty texts keep their place', () => {
    const verdict = guardrailVerdict(
      {
        action: 'GUARDRAIL_INTERVENED',
        outputs: [{ text: 'mail {EMAIL}' }, { text: 'call {PHONE}' }],
        assessments: anonymized('EMAIL', 'PHONE'),
      },
      [0, 2],
      3,
      NAME,
    );
    assert.deepEqual(verdict, {
      action: 'mask',
      replacements: ['mail {EMAIL}', undefined, 'call {PHONE}'],
      matched: ['pii:EMAIL', 'pii:PHONE'],
    });
  });

  it('a masking whose outputs do not map one-to-one onto the texts rejects, saying why', () => {
    const verdict = guardrailVerdict(
      { action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'a {EMAIL}\nb {EMAIL}' }], assessments: anonymized('EMAIL') },
      [0, 1],
      2,
      NAME,
    );
    assert.equal(verdict.action, 'reject');
    assert.match(verdict.reason ?? '', /anonymized 2 text\(s\) but answered 1 output\(s\)/);
    const notText = guardrailVerdict(
      { action: 'GUARDRAIL_INTERVENED', outputs: [{}], assessments: anonymized('EMAIL') },
      [0],
      1,
      NAME,
    );
    assert.equal(notText.action, 'reject');
  });

  it('an intervention that names neither BLOCKED nor ANONYMIZED rejects', () => {
    const verdict = guardrailVerdict({ action: 'GUARDRAIL_INTERVENED', outputs: [], assessments: [] }, [0], 1, NAME);
    assert.deepEqual(verdict, { action: 'reject' });
  });

  it('an answer without an action (or not JSON object) is a GuardFailure naming the guardrail', () => {
    for (const answer of [{}, { action: 'MAYBE' }, [], 'NONE', null])
      assert.throws(
        () => guardrailVerdict(answer, [0], 1, NAME),
        (error: unknown) => error instanceof GuardFailure && error.message.startsWith(NAME),
      );
  });
});
