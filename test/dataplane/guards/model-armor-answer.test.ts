// Reading Model Armor's sanitize answers (SanitizationResult in proto3 JSON) into what the guard
// does: per-filter matches block (Google's documented example, whose overall state says
// NO_MATCH_FOUND beside a RAI match, included), the overall state blocks alone, CSAM under its
// wire name csamFilterFilterResult, Sensitive Data Protection's inspection blocks and its
// de-identification carries the masked text, and filters that did not run are a failed check
// unless the template ignores partial failures or a match was found anyway.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GuardFailure } from '../../../src/dataplane/ai/guards/guard.ts';
import { readSanitizeAnswer } from '../../../src/dataplane/ai/guards/model-armor-answer.ts';

const SERVICE = 'Model Armor (projects/p/locations/us-central1/templates/t)';
const read = (sanitizationResult: unknown) => readSanitizeAnswer({ sanitizationResult }, SERVICE);
const ran = { executionState: 'EXECUTION_SUCCESS' };
const clean = {
  csam: { csamFilterFilterResult: { ...ran, matchState: 'NO_MATCH_FOUND' } },
  malicious_uris: { maliciousUriFilterResult: { ...ran, matchState: 'NO_MATCH_FOUND' } },
  pi_and_jailbreak: { piAndJailbreakFilterResult: { ...ran, matchState: 'NO_MATCH_FOUND' } },
};

describe('readSanitizeAnswer', () => {
  it('nothing matched: nothing blocks, nothing to mask', () => {
    assert.deepEqual(read({ filterMatchState: 'NO_MATCH_FOUND', invocationResult: 'SUCCESS', filterResults: clean }), {
      blocking: [],
    });
  });

  it("a filter's own match blocks even when the overall state says NO_MATCH_FOUND (Google's documented example)", () => {
    const reading = read({
      filterMatchState: 'NO_MATCH_FOUND',
      invocationResult: 'SUCCESS',
      filterResults: {
        ...clean,
        rai: {
          raiFilterResult: {
            ...ran,
            matchState: 'MATCH_FOUND',
            raiFilterTypeResults: {
              sexually_explicit: { matchState: 'NO_MATCH_FOUND' },
              dangerous: { confidenceLevel: 'HIGH', matchState: 'MATCH_FOUND' },
            },
          },
        },
        csam: { csamFilterFilterResult: { ...ran, matchState: 'MATCH_FOUND' } },
      },
    });
    assert.deepEqual(reading.blocking, ['csam', 'rai:dangerous']);
  });

  it('the overall MATCH_FOUND blocks when no filter names itself', () => {
    assert.deepEqual(read({ filterMatchState: 'MATCH_FOUND', filterResults: {} }).blocking, ['filterMatchState']);
  });

  it('Sensitive Data Protection: inspection blocks by info type; de-identification carries the masked text', () => {
    const inspected = read({
      filterMatchState: 'MATCH_FOUND',
      filterResults: {
        sdp: {
          sdpFilterResult: {
            inspectResult: {
              ...ran,
              matchState: 'MATCH_FOUND',
              findings: [{ infoType: 'EMAIL_ADDRESS' }, { infoType: 'EMAIL_ADDRESS' }, { infoType: 'PHONE_NUMBER' }],
            },
          },
        },
      },
    });
    assert.deepEqual(inspected.blocking, ['sdp:EMAIL_ADDRESS', 'sdp:PHONE_NUMBER']);
    const deidentified = read({
      filterMatchState: 'MATCH_FOUND',
      filterResults: {
        ...clean,
        sdp: {
          sdpFilterResult: {
            deidentifyResult: {
              ...ran,
              matchState: 'MATCH_FOUND',
              data: { text: 'mail [EMAIL_ADDRESS]' },
              transformedBytes: '16',
              infoTypes: ['EMAIL_ADDRESS'],
            },
          },
        },
      },
    });
    assert.deepEqual(deidentified, {
      blocking: [],
      deidentified: { text: 'mail [EMAIL_ADDRESS]', infoTypes: ['sdp:EMAIL_ADDRESS'] },
    });
    // A de-identification without text (of a byte item) has nothing to mask with: it blocks.
    const withoutText = read({
      filterMatchState: 'MATCH_FOUND',
      filterResults: { sdp: { sdpFilterResult: { deidentifyResult: { ...ran, matchState: 'MATCH_FOUND' } } } },
    });
    assert.deepEqual(withoutText.blocking, ['sdp']);
  });

  it('filters that did not run: a failed check, unless the template ignores partial failures or a match stands', () => {
    assert.throws(
      () => read({ filterMatchState: 'NO_MATCH_FOUND', invocationResult: 'FAILURE', filterResults: {} }),
      (error: unknown) =>
        error instanceof GuardFailure && /ran none of its filters \(invocationResult FAILURE\)/.test(error.message),
    );
    assert.throws(
      () =>
        read({
          filterMatchState: 'NO_MATCH_FOUND',
          invocationResult: 'PARTIAL',
          filterResults: clean,
          sanitizationMetadata: { errorCode: '13' },
        }),
      /did not run all of its filters \(invocationResult PARTIAL, error code 13\)/,
    );
    assert.deepEqual(
      read({
        filterMatchState: 'NO_MATCH_FOUND',
        invocationResult: 'PARTIAL',
        filterResults: clean,
        sanitizationMetadata: { ignorePartialInvocationFailures: true },
      }),
      { blocking: [] },
    );
    assert.deepEqual(
      read({
        filterMatchState: 'MATCH_FOUND',
        invocationResult: 'PARTIAL',
        filterResults: {
          ...clean,
          malicious_uris: { maliciousUriFilterResult: { ...ran, matchState: 'MATCH_FOUND' } },
        },
      }).blocking,
      ['malicious_uris'],
    );
  });

  it('an answer gw cannot read is a failed check naming the service', () => {
    for (const answer of [{}, { sanitizationResult: 'x' }, { sanitizationResult: { filterResults: [] } }])
      assert.throws(
        () => readSanitizeAnswer(answer, SERVICE),
        (error: unknown) => error instanceof GuardFailure && error.message.startsWith(SERVICE),
      );
  });
});
