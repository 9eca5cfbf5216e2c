// The user guide's YAML cannot rot: every ```yaml block of docs/guide/ is a complete set of
// resources that `gw validate` accepts, and the controller accepts every object of it with no
// field refused — a block with its own Gateway on its own, the others (recipes, a backend to
// swap in) added to the quickstart, replacing its objects of the same kind and name.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { runGw } from '../helpers/cli.ts';

const guide = new URL('../../docs/guide/', import.meta.url).pathname;
const quickstart = readFileSync(new URL('../../examples/quickstart.yaml', import.meta.url), 'utf8');

/** Kind/name of each object of a multi-document YAML text, with the document's text. */
function objectsOf(yaml: string): { id: string; text: string }[] {
  return parseAllDocuments(yaml).map((document) => {
    const object = document.toJS() as { kind?: string; metadata?: { name?: string } };
    return { id: `${object.kind}/${object.metadata?.name}`, text: String(document) };
  });
}

/** The block on its own when it has its Gateway, else the quickstart with the block's objects in place of its own. */
function servedWith(yaml: string): string {
  const block = objectsOf(yaml);
  if (block.some(({ id }) => id.startsWith('Gateway/'))) return yaml;
  const replaced = new Set(block.map(({ id }) => id));
  const kept = objectsOf(quickstart).filter(({ id }) => !replaced.has(id));
  return [...kept, ...block].map(({ text }) => text).join('---\n');
}

/** Each ```yaml block of a Markdown text, with the line it starts on. */
function yamlBlocks(markdown: string): { line: number; yaml: string }[] {
  const blocks: { line: number; yaml: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```yaml') continue;
    const end = lines.findIndex((text, j) => j > i && text.trim() === '```');
    assert.ok(end > i, `an unclosed yaml block on line ${i + 1}`);
    blocks.push({ line: i + 1, yaml: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The anchors GitHub gives a Markdown text's headings: lowercase, punctuation dropped, spaces as hyphens. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm))
    anchors.add(
      heading!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/ /g, '-'),
    );
  return anchors;
}

const pages = readdirSync(guide).filter((name) => name.endsWith('.md'));

describe('the user guide (docs/guide/)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-guide-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  it('has pages with YAML in them', () => {
    for (const page of [
      'getting-started.md',
      'providers.md',
      'openai.md',
      'anthropic.md',
      'openai-compatible.md',
      'cookbook.md',
      'troubleshooting.md',
      'deploying.md',
    ])
      assert.ok(pages.includes(page), `docs/guide/${page}`);
    assert.ok(yamlBlocks(readFileSync(join(guide, 'cookbook.md'), 'utf8')).length >= 5, 'the cookbook has its recipes');
  });

  it('links only to files that exist, and to headings that exist on the guide pages and the README', () => {
    const sources = [
      ...pages.map((page) => join(guide, page)),
      join(guide, '../index.md'),
      join(guide, '../../README.md'),
    ];
    const broken: string[] = [];
    for (const source of sources) {
      const text = readFileSync(source, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#');
        const file = path ? resolve(dirname(source), path) : source;
        if (!existsSync(file)) broken.push(`${source}: ${target}`);
        else if (anchor && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${source}: ${target} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  for (const page of pages) {
    const blocks = yamlBlocks(readFileSync(join(guide, page), 'utf8'));
    for (const { line, yaml } of blocks) {
      it(`${page} line ${line}: gw validate accepts it`, async () => {
        const result = await runGw(['validate', '-f', '-'], yaml);
        assert.equal(
          result.code,
          0,
          `docs/guide/${page}, the yaml block on line ${line}:\n${result.stdout}${result.stderr}`,
        );
        assert.doesNotMatch(result.stderr, /warning/i, `docs/guide/${page} line ${line} has fields gw does not know`);
        const file = join(dir, `${page}-${line}.yaml`);
        writeFileSync(file, servedWith(yaml));
        const status = await runGw(['status', '-f', file]);
        assert.equal(status.code, 0, `docs/guide/${page} line ${line}:\n${status.stderr}`);
        const problems = status.stdout
          .split('\n')
          .filter((text) => /=False/.test(text) && !/Conflicted=False/.test(text));
        assert.deepEqual(problems, [], `docs/guide/${page} line ${line}, served:\n${status.stdout}`);
        assert.doesNotMatch(status.stdout, /refused/i);
        assert.match(status.stdout, /Accepted=True/);
      });
    }
  }
});
