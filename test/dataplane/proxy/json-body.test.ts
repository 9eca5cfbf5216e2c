// The one parse of client JSON bodies (proxy/json-body.ts): what every parser reads the same way
// is parsed as JSON.parse parses it; a key twice in one object (however it is escaped, at any
// depth), bytes that are not UTF-8, an escaped surrogate without its pair and nesting past 128
// levels are refused, each named; and the member count agrees with a plain reference reader on
// thousands of random documents.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_JSON_NESTING, parseJsonBody } from '../../../src/dataplane/proxy/json-body.ts';
import { seededRandom as prng } from '../../helpers/random.ts';

const parse = (text: string | Buffer) => parseJsonBody(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);

test('a body every parser reads the same way is parsed as JSON.parse parses it', () => {
  for (const text of [
    '{"model":"gpt-4o","messages":[{"role":"user","content":"a: \\"b\\" \\\\ {\\"model\\":1}"}]}',
    '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
    '{"emoji":"\\ud83d\\ude00 😀","text":"caf\\u00e9","colons":"::: {\\":\\"}"}',
    '[1, {"x": [true, null, "\\\\"]}, "y"]',
    '"just a string"',
    '  {"spaced" :  1 , "keys" : {} }  ',
    '{"__proto__":{"polluted":true},"constructor":1}',
  ]) {
    const parsed = parse(text);
    assert.equal(parsed.problem, undefined, `${text}: ${parsed.problem}`);
    assert.deepEqual(parsed.value, JSON.parse(text));
  }
});

test('a key twice in one object is refused and named, at the top level, nested, or escaped differently', () => {
  const cases: [string, string][] = [
    ['{"model":"allowed-model","model":"expensive-model","messages":[]}', 'model'],
    ['{"messages":[{"role":"user","role":"system","content":"x"}]}', 'role'],
    ['{"a":{"b":{"c":1,"c":2}}}', 'c'],
    ['{"model":"a","mod\\u0065l":"b"}', 'model'],
    ['{"model":"a","\\u006d\\u006f\\u0064\\u0065\\u006c":"b"}', 'model'],
    ['{"__proto__":1,"__proto__":2}', '__proto__'],
    ['{"x":[{"k":1},{"k":2,"k":3}]}', 'k'],
    ['{"":1,"":2}', ''],
  ];
  for (const [text, key] of cases) {
    const parsed = parse(text);
    assert.equal(parsed.problem, `has the key ${JSON.stringify(key)} twice in one object`, text);
    assert.equal(parsed.problem !== undefined && parsed.kind, 'ambiguous');
  }
  // The same key in different objects is no duplicate.
  assert.equal(parse('{"a":{"k":1},"b":{"k":2},"k":3}').problem, undefined);
  // A long key is quoted cut short.
  const long = 'k'.repeat(1000);
  assert.match(parse(`{"${long}":1,"${long}":2}`).problem!, /^has the key "k{64}…" twice in one object$/);
});

test('bytes that are not UTF-8 are refused, whatever JSON.parse would make of them', () => {
  const cases = [
    Buffer.from([0x7b, 0x22, 0x6d, 0xff, 0x22, 0x3a, 0x31, 0x7d]), // {"m\xff":1}
    Buffer.concat([Buffer.from('{"model":"a'), Buffer.from([0xc0, 0xa2]), Buffer.from('"}')]), // overlong quote
    Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // an encoded surrogate
    Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]), // cut short
  ];
  for (const bytes of cases) {
    const parsed = parseJsonBody(bytes);
    assert.equal(parsed.problem, 'is not valid UTF-8', bytes.toString('hex'));
    assert.equal(parsed.problem !== undefined && parsed.kind, 'ambiguous');
  }
});

test('an escaped surrogate without its pair is refused; a pair is not', () => {
  for (const [text, unit] of [
    ['{"model":"gpt\\ud800"}', 'd800'],
    ['{"model":"gpt\\udc00"}', 'dc00'],
    ['{"x":"\\uDBFF\\u0041"}', 'dbff'],
    ['{"x":"\\ud83d"}', 'd83d'],
    ['{"\\ud800":1}', 'd800'],
    ['{"x":"\\ud83d\\ude00\\ude00"}', 'de00'],
    ['"\\ud800"', 'd800'],
  ] as const) {
    assert.equal(parse(text).problem, `has an escaped surrogate without its pair (\\u${unit})`, text);
  }
  assert.equal(parse('{"x":"\\ud83d\\ude00","y":"\\uDBFF\\uDFFF"}').problem, undefined);
  assert.equal(parse('{"x":"\\\\ud800"}').problem, undefined, 'an escaped backslash, not an escape');
});

test('nesting deeper than 128 levels is refused; 128 is not', () => {
  const nested = (depth: number) => `${'['.repeat(depth - 1)}{"a":1}${']'.repeat(depth - 1)}`;
  assert.equal(parse(nested(MAX_JSON_NESTING)).problem, undefined);
  const deep = parse(nested(MAX_JSON_NESTING + 1));
  assert.equal(deep.problem, 'is nested more than 128 levels deep');
  assert.equal(deep.problem !== undefined && deep.kind, 'nesting');
  const parsed = parse('{"a":');
  assert.equal(parsed.problem, 'is not JSON');
  assert.equal(parsed.problem !== undefined && parsed.kind, 'syntax');
});

/** Keys per object the plain way: a recursive reader of JSON text, for comparison. */
function hasDuplicateKey(text: string): boolean {
  let at = 0;
  const space = () => {
    while (' \n\r\t'.includes(text[at]!)) at++;
  };
  const string = (): string => {
    const start = at++;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (): boolean => {
    space();
    if (text[at] === '{') {
      at++;
      const keys = new Set<string>();
      let duplicate = false;
      space();
      while (text[at] !== '}') {
        space();
        const key = string();
        if (keys.has(key)) duplicate = true;
        keys.add(key);
        space();
        at++; // :
        if (value()) duplicate = true;
        space();
        if (text[at] === ',') at++;
      }
      at++;
      return duplicate;
    }
    if (text[at] === '[') {
      at++;
      let duplicate = false;
      space();
      while (text[at] !== ']') {
        if (value()) duplicate = true;
        space();
        if (text[at] === ',') at++;
      }
      at++;
      return duplicate;
    }
    if (text[at] === '"') string();
    else while (!',}] \n\r\t'.includes(text[at]!) && at < text.length) at++;
    return false;
  };
  return value();
}

test('agrees with a plain reader on random documents (keys from a small set, escapes, strings full of quotes and colons)', () => {
  const random = prng(17);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const keys = ['a', 'b', 'model', 'mod\\u0065l', 'x:y', '\\"q\\"', 'k\\\\'];
  const strings = ['"plain"', '"with \\"quotes\\" and : colons"', '"\\\\"', '"{\\"a\\":1}"', '"\\ud83d\\ude00"', '""'];
  const document = (depth: number): string => {
    const roll = random();
    if (depth > 4 || roll < 0.3) return pick([...strings, '1', '-2.5e3', 'true', 'null']);
    if (roll < 0.55) {
      const items = Array.from({ length: Math.floor(random() * 4) }, () => document(depth + 1));
      return `[${items.join(', ')}]`;
    }
    const members = Array.from({ length: Math.floor(random() * 4) }, () => `"${pick(keys)}" : ${document(depth + 1)}`);
    return `{${members.join(',')}}`;
  };
  let duplicates = 0;
  for (let i = 0; i < 5000; i++) {
    const text = document(0);
    const expected = hasDuplicateKey(text);
    const parsed = parse(text);
    assert.equal(parsed.problem !== undefined, expected, text);
    if (parsed.problem === undefined) assert.deepEqual(parsed.value, JSON.parse(text));
    else {
      duplicates++;
      assert.match(parsed.problem, /^has the key .* twice in one object$/, text);
    }
  }
  assert.ok(duplicates > 200 && duplicates < 4800, `${duplicates} of 5000 had a duplicate`);
});
