// A burst of stream events is guarded a slice at a time (exchange.ts guardSlices): slices end on
// event boundaries (LF or CRLF), hold about GUARD_SLICE_CHARS each, and put the text back together
// exactly; a short text is one slice, and a partial last event stays in the last slice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GUARD_SLICE_CHARS, guardSlices } from '../../../src/dataplane/ai/exchange.ts';

describe('guardSlices', () => {
  it('a short text is one slice, the last', () => {
    assert.deepEqual([...guardSlices('data: {}\n\n')], [['data: {}\n\n', true]]);
    assert.deepEqual([...guardSlices('')], [['', true]]);
  });

  for (const newline of ['\n', '\r\n']) {
    it(`a burst is cut on event boundaries (${JSON.stringify(newline)}) and put back together exactly`, () => {
      const event = `data: ${JSON.stringify({ choices: [{ delta: { content: 'word '.repeat(20) } }] })}${newline}${newline}`;
      const text = `${event.repeat(200)}data: {"partial`;
      const slices = [...guardSlices(text)];
      assert.ok(slices.length > 1);
      assert.equal(slices.map(([slice]) => slice).join(''), text);
      assert.deepEqual(
        slices.map(([, last]) => last),
        slices.map((_, i) => i === slices.length - 1),
      );
      for (const [slice, last] of slices.slice(0, -1)) {
        assert.ok(!last && slice.endsWith(`${newline}${newline}`), 'ends on an event boundary');
        assert.ok(slice.length >= GUARD_SLICE_CHARS && slice.length < GUARD_SLICE_CHARS + event.length);
      }
      assert.ok(slices.at(-1)![0].endsWith('data: {"partial'));
    });
  }
});
