// The README's quickstart, as a new user runs it: the gw run command on the README's first screen
// (examples/quickstart.yaml with gw's demo LLM), then the README's curl body, the official openai
// SDK and a plain fetch, streamed and not, each getting the demo's echo back through gw. The test
// reads the command and the request body from the README, so the README and the quickstart stay
// true together.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import OpenAI from 'openai';
import { DEMO_ANSWER_PREFIX, DEMO_LLM_DEFAULT_PORT, DEMO_MODEL, startDemoLlm } from '../../src/demo/demo-llm.ts';
import { spawnGw } from '../helpers/cli.ts';
import { freePort } from '../helpers/gateway.ts';

const root = new URL('../../', import.meta.url).pathname;
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const QUICKSTART = 'examples/quickstart.yaml';
/** The lines a reader sees before scrolling. */
const FIRST_SCREEN_LINES = 30;

/** The README's run command (`npm install && ./bin/gw.js ARGS`), its arguments, and its line. */
function readmeRunCommand(): { args: string[]; line: number } {
  const lines = readme.split('\n');
  const line = lines.findIndex((text) => text.startsWith('npm install && ./bin/gw.js run '));
  assert.ok(line >= 0, 'the README shows `npm install && ./bin/gw.js run ...`');
  return { args: lines[line]!.slice('npm install && ./bin/gw.js '.length).trim().split(/\s+/), line };
}

/** The JSON body of the README's curl request to /v1/chat/completions. */
function readmeCurlBody(): Record<string, unknown> {
  const match = /curl localhost:8080\/v1\/chat\/completions[^\n]*\\\n\s*-d '([^']+)'/.exec(readme);
  assert.ok(match, 'the README shows a curl request to /v1/chat/completions with a -d body');
  return JSON.parse(match[1]!) as Record<string, unknown>;
}

describe('the README quickstart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-quickstart-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is on the README first screen: gw run -f examples/quickstart.yaml --demo-llm, a curl request, and how to switch to a real provider', () => {
    const { args, line } = readmeRunCommand();
    assert.ok(line < FIRST_SCREEN_LINES, `the run command is on line ${line + 1}, below the first screen`);
    assert.deepEqual(args, ['run', '-f', QUICKSTART, '--demo-llm']);
    assert.equal(readmeCurlBody().model, DEMO_MODEL);
    assert.match(readme, /Ollama \(`http:\/\/localhost:11434\/v1`/);
    assert.match(readme, /docs\/guide\/providers\.md/);
  });

  it('answers a chat completion through gw with no API key: the README body, the openai SDK and fetch, streamed and not', async () => {
    const { args } = readmeRunCommand();
    // The README's ports (8080, 8081) may be taken on a shared machine: the test serves the same
    // quickstart on free ports — the file with only its two port lines changed, and --demo-llm-port.
    const [gatewayPort, demoPort] = [await freePort(), await freePort()];
    const original = readFileSync(join(root, QUICKSTART), 'utf8');
    const copy = original
      .replace(/^( {6}port: )8080$/m, `$1${gatewayPort}`)
      .replace(/^( {6}port: )8081$/m, `$1${demoPort}`);
    const changed = copy.split('\n').filter((text, i) => text !== original.split('\n')[i]);
    assert.deepEqual(
      changed,
      [`      port: ${gatewayPort}`, `      port: ${demoPort}`],
      'the two documented ports, nothing else',
    );
    assert.equal(DEMO_LLM_DEFAULT_PORT, 8081, 'the quickstart names the demo LLM default port');
    const file = join(dir, 'quickstart.yaml');
    writeFileSync(file, copy);

    const runArgs = args.map((arg) => (arg === QUICKSTART ? file : arg));
    const gw = spawnGw([...runArgs, '--demo-llm-port', String(demoPort), '--admin-port', '0']);
    try {
      await gw.waitForLog(
        new RegExp(
          `demo LLM \\(an echo, not a model\\) serving the OpenAI API on http://127\\.0\\.0\\.1:${demoPort}/v1`,
        ),
      );
      await gw.waitForLog(new RegExp(`Gateway default/ai: serving http HTTP :${gatewayPort}`));
      const base = `http://127.0.0.1:${gatewayPort}/v1`;

      // The README's curl request, sent with fetch.
      const plain = await fetch(`${base}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(readmeCurlBody()),
      });
      assert.equal(plain.status, 200);
      const completion = (await plain.json()) as { choices: { message: { content: string } }[]; usage: unknown };
      assert.equal(completion.choices[0]!.message.content, `${DEMO_ANSWER_PREFIX} You said: Hello, gw`);

      // A plain fetch, streamed: server-sent chunks that spell the same answer, then [DONE].
      const streamed = await fetch(`${base}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: DEMO_MODEL, stream: true, messages: [{ role: 'user', content: 'stream me' }] }),
      });
      assert.equal(streamed.status, 200);
      assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = (await streamed.text()).split('\n\n').filter((event) => event.startsWith('data: '));
      assert.equal(events.at(-1), 'data: [DONE]');
      const text = events
        .slice(0, -1)
        .map((event) => JSON.parse(event.slice('data: '.length)) as { choices: { delta: { content?: string } }[] })
        .map((chunk) => chunk.choices[0]?.delta.content ?? '')
        .join('');
      assert.equal(text, `${DEMO_ANSWER_PREFIX} You said: stream me`);

      // The official openai SDK: the SDK needs some key; gw and the demo need none.
      const client = new OpenAI({ baseURL: base, apiKey: 'not-needed', maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: DEMO_MODEL,
        messages: [
          { role: 'system', content: 'You are helpful.' },
          { role: 'user', content: [{ type: 'text', text: 'Hello from the SDK' }] },
        ],
      });
      assert.equal(answer.choices[0]!.message.content, `${DEMO_ANSWER_PREFIX} You said: Hello from the SDK`);
      assert.equal(answer.model, DEMO_MODEL);
      assert.ok((answer.usage?.prompt_tokens ?? 0) > 0, 'usage is reported');

      const stream = await client.chat.completions.create({
        model: DEMO_MODEL,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hello, streaming' }],
      });
      let streamedText = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        streamedText += chunk.choices[0]?.delta.content ?? '';
        usage ??= chunk.usage;
      }
      assert.equal(streamedText, `${DEMO_ANSWER_PREFIX} You said: Hello, streaming`);
      assert.ok((usage?.completion_tokens ?? 0) > 0, 'the usage the SDK asked for arrives');

      const models = await client.models.list();
      assert.deepEqual(
        models.data.map((model) => model.id),
        [DEMO_MODEL],
      );
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
  });
});

describe('the demo LLM', () => {
  it('refuses what it does not serve in the OpenAI error format, naming what it serves', async () => {
    const demo = await startDemoLlm({ port: 0 });
    try {
      const client = new OpenAI({ baseURL: demo.baseUrl, apiKey: 'not-needed', maxRetries: 0 });
      await assert.rejects(client.embeddings.create({ model: DEMO_MODEL, input: 'x' }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.NotFoundError);
        assert.match(error.message, /serves only POST \/v1\/chat\/completions and GET \/v1\/models/);
        return true;
      });
      await assert.rejects(
        client.chat.completions.create({ model: DEMO_MODEL, messages: [] }),
        (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'messages',
      );
      const broken = await fetch(`${demo.baseUrl}/chat/completions`, { method: 'POST', body: '{not json' });
      assert.equal(broken.status, 400);
      assert.equal(((await broken.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
      const huge = await fetch(`${demo.baseUrl}/chat/completions`, {
        method: 'POST',
        body: 'x'.repeat(2 * 1024 * 1024),
      });
      assert.equal(huge.status, 413);
    } finally {
      await demo.close();
    }
  });

  it('says clearly when its port is taken, and gw run exits 1 naming the option', async () => {
    const holder = await startDemoLlm({ port: 0 });
    try {
      await assert.rejects(
        startDemoLlm({ port: holder.port }),
        new RegExp(`port ${holder.port} on 127\\.0\\.0\\.1 is in use`),
      );
      const gw = spawnGw([
        'run',
        '-f',
        join(root, QUICKSTART),
        '--demo-llm',
        '--demo-llm-port',
        String(holder.port),
        '--admin-port',
        '0',
      ]);
      assert.equal(await gw.exited, 1);
      assert.match(
        gw.stderr,
        /gw run: --demo-llm: the demo LLM cannot listen: port \d+ on 127\.0\.0\.1 is in use by another process; give another --demo-llm-port/,
      );
    } finally {
      await holder.close();
    }
  });
});
