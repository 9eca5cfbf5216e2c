// gw validate end to end: exit codes, where each error is reported, and hostile input.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { runGw as run } from '../helpers/cli.ts';
import { OLDER_NODE, skipWithoutOlderNode } from '../helpers/older-node.ts';
import { until } from '../helpers/until.ts';

const gwBin = new URL('../../bin/gw.js', import.meta.url).pathname;
const examples = new URL('../../examples/', import.meta.url).pathname;

function tempFile(name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-validate-'));
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

const validBackend = `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: openai, namespace: ai}
spec: {ai: {provider: {alpha: {model: gpt-4o}}}}
`;

describe('gw validate', () => {
  it('accepts the examples', async () => {
    const result = await run(['validate', '-f', examples]);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^\d+ valid\n$/);
  });

  it('reports every error with file, document index, object and field path, and exits 1', async () => {
    const file = tempFile(
      'bad.yaml',
      `${validBackend}---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: broken, namespace: ai}
spec:
  ai: {provider: {}}
  a2a: {host: x, port: 0}
`,
    );
    const result = await run(['validate', '-f', file]);
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n');
    assert.deepEqual(lines, [
      `${file}: document 2: GwBackend ai/broken: spec.ai.provider: Invalid value: "object": exactly one of alpha (OpenAI), betaalpha (Azure OpenAI), beta (Azure AI Foundry), gamma (Anthropic), delta (Google Gemini), epsilon (Google Vertex AI), zeta (Amazon Bedrock), custom must be set`,
      `${file}: document 2: GwBackend ai/broken: spec.a2a.port: Invalid value: 0: spec.a2a.port in body should be greater than or equal to 1`,
      '1 invalid of 2',
    ]);
  });

  it('names the declared field a misspelt one resembles, in the line format of every admission error', async () => {
    const result = await run(
      ['validate', '-f', '-'],
      'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: b, namespace: ai}\nspec:\n  static: {hots: api.example, port: 443}\n',
    );
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      '-: document 1: GwBackend ai/b: spec.static.hots: Unknown field: field not declared in schema; did you mean host?\n1 invalid of 1\n',
    );
  });

  it('accepts a Kubernetes object gw does not read (a Deployment), saying so, and refuses an invalid one', async () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: ai, namespace: team}
spec:
  selector: {matchLabels: {app: ai}}
  template:
    metadata: {labels: {app: ai}}
    spec: {containers: [{name: gw, image: gw}]}
`;
    const file = tempFile('deployment.yaml', `${validBackend}---\n${deployment}`);
    const result = await run(['validate', '-f', file]);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, '2 valid\n');
    assert.match(
      result.stderr,
      /^.*deployment\.yaml: document 2: Deployment team\/ai: note: not read by gw \(a workload: gw runs no pods; its provisioning writes one per Gateway into a cluster\); valid, and stored as is by gw's API server or a cluster\n$/,
    );
    const bad = await run([
      'validate',
      '-f',
      tempFile('bad.yaml', deployment.replace('{app: ai}}\n    spec', '{app: other}}\n    spec')),
    ]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /Deployment team\/ai: spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/,
    );
    assert.doesNotMatch(bad.stderr, /note:/);
  });

  it('reads standard input with -f -', async () => {
    const result = await run(['validate', '-f', '-'], validBackend);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, '1 valid\n');
  });

  it('reads JSON and List kinds, naming the item of an invalid entry', async () => {
    const list = {
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwModelList',
      items: [
        {
          apiVersion: 'gw.dev/v1alpha1',
          kind: 'GwModel',
          metadata: { name: 'gpt-4o' },
          spec: { parentRefs: [{ name: 'ai' }], provider: 'Alpha' },
        },
        {
          apiVersion: 'gw.dev/v1alpha1',
          kind: 'GwModel',
          metadata: { name: 'nothing' },
          spec: { parentRefs: [{ name: 'ai' }] },
        },
      ],
    };
    const file = tempFile('models.json', JSON.stringify(list));
    const result = await run(['validate', '-f', file]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.split('\n')[0],
      `${file}: document 1, item 2: GwModel default/nothing: spec: Invalid value: "object": exactly one of provider, virtualModel must be set`,
    );
  });

  it('prints the objects as stored with --show-defaults', async () => {
    const result = await run(['validate', '--show-defaults', '-f', '-'], validBackend);
    assert.equal(result.code, 0);
    const [stored] = parseAllDocuments(result.stdout).map((d) => d.toJS());
    assert.deepEqual(stored.metadata, { name: 'openai', namespace: 'ai' });
    assert.deepEqual(stored.spec, { ai: { provider: { alpha: { model: 'gpt-4o' } } } });
    const json = await run(['validate', '--show-defaults', '-o', 'json', '-f', '-'], validBackend);
    assert.equal(JSON.parse(json.stdout).kind, 'GwBackend');
  });

  it('reports the same object defined twice', async () => {
    const result = await run(['validate', '-f', '-'], `${validBackend}---\n${validBackend}`);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /-: document 2: GwBackend ai\/openai: Duplicate value: the same object is already defined at -: document 1/,
    );
  });

  it('reports a YAML syntax error at its own line and column, in a later document too, and an unclosed quote or bracket where it opens', async () => {
    // The error is on line 9 of the file (document 2's "name: x", which the next line's deeper
    // indentation turns into a mapping key), not at document 2's start.
    const stream = `${validBackend}---\napiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata:\n  name: x\n    namespace: ai\n`;
    const nested = await run(['validate', '-f', '-'], stream);
    assert.equal(nested.code, 1);
    assert.match(nested.stderr, /^-: document 2 \(line 9, column 9\): malformed YAML\/JSON: /);
    const quote = await run(
      ['validate', '-f', '-'],
      'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata:\n  name: a\nspec:\n  static:\n    host: "x\n    port: 80\n',
    );
    assert.match(
      quote.stderr,
      /^-: document 1 \(line 7, column 11\): malformed YAML\/JSON: Missing closing "quote: what opens here is never closed with " \(the parser gave up at line 9, column 1\)/,
    );
    const bracket = await run(['validate', '-f', '-'], `${validBackend}---\na: "x\\\\"\nb: {c: [1, 2]\nd: 1\n`);
    assert.match(bracket.stderr, /^-: document 2 \(line 7, column 4\): .*never closed with \}/);
  });

  describe('bad input gets an error, never a crash or a hang', () => {
    const cases: [string, string, RegExp][] = [
      [
        'malformed YAML',
        'apiVersion: v1\nkind: [Secret\n',
        /^-: document 1 \(line 2, column 7\): malformed YAML\/JSON: .*never closed with \]/,
      ],
      [
        'duplicate keys',
        'apiVersion: v1\nkind: Secret\nkind: ConfigMap\n',
        /malformed YAML\/JSON: Map keys must be unique/,
      ],
      ['tabs as indentation', 'a:\n\tb: 1\n', /malformed YAML\/JSON: Tabs are not allowed/],
      [
        'deep nesting',
        `${'['.repeat(100000)}${']'.repeat(100000)}`,
        /nests too deeply to parse|nests deeper than 64 levels/,
      ],
      ['moderately deep nesting', `a: ${'['.repeat(80)}${']'.repeat(80)}`, /nests deeper than 64 levels/],
      [
        'an alias bomb',
        'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
        /malformed YAML\/JSON: .*alias/i,
      ],
      ['a scalar document', 'just a string\n', /<root>: Invalid value: "string": a resource must be a mapping/],
      ['a list with non-list items', 'apiVersion: v1\nkind: List\nitems: 5\n', /List: items must be a list/],
      ['wrong types everywhere', 'apiVersion: 5\nkind: true\n', /apiVersion: Required value/],
    ];
    for (const [name, input, expected] of cases) {
      it(name, async () => {
        const started = performance.now();
        const result = await run(['validate', '-f', '-'], input);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, expected);
        assert.ok(performance.now() - started < 5000, 'took too long');
      });
    }

    it('a file over the size limit', async () => {
      const file = tempFile('huge.yaml', `a: "${'x'.repeat(9 * 1024 * 1024)}"\n`);
      const result = await run(['validate', '-f', file]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /gw reads files of at most 8388608 bytes/);
    });

    it('a missing file', async () => {
      const result = await run(['validate', '-f', '/nonexistent/gw.yaml']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /\/nonexistent\/gw.yaml: no such file or directory/);
    });
  });

  it('warns about a CEL syntax error without rejecting the object', async () => {
    const result = await run(
      ['validate', '-f', '-'],
      `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {authorization: {policy: {matchExpressions: ['jwt.sub ==']}}}
`,
    );
    assert.equal(result.code, 0);
    assert.equal(
      result.stderr,
      '-: document 1: GwPolicy default/p: warning: spec.traffic.authorization.policy.matchExpressions[0]: Invalid value: "jwt.sub ==": not a valid CEL expression: Unexpected token: EOF\n',
    );
  });

  it('usage errors exit 2', async () => {
    assert.equal((await run(['validate'])).code, 2);
    assert.equal((await run(['validate', '--bogus'])).code, 2);
    assert.equal((await run(['frobnicate'])).code, 2);
  });
});

describe('the gw executable', () => {
  const olderNodeSkip = skipWithoutOlderNode();
  it('runs under the pinned Node 24', () => {
    const result = spawnSync(process.execPath, [gwBin, 'validate', '-f', examples], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
  });

  it('re-runs itself on the pinned Node when started by an older Node', { skip: olderNodeSkip }, () => {
    const result = spawnSync(OLDER_NODE, [gwBin, 'crds'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /kind: CustomResourceDefinition/);
  });

  it('started by an older Node, passes SIGTERM on to gw run, which stops gracefully', {
    skip: olderNodeSkip,
  }, async () => {
    // No Gateway: nothing binds a port that another test may use.
    const directory = mkdtempSync(join(tmpdir(), 'gw-wrapper-'));
    writeFileSync(join(directory, 'backend.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n');
    const child = spawn(OLDER_NODE, [gwBin, 'run', '-f', directory, '--admin-port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    assert.ok(await until(() => /nothing to serve/.test(stderr), 30_000), stderr);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /stopping/, 'gw itself got the signal and stopped');
  });
});
