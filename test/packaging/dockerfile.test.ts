// The image definition (Dockerfile, .dockerignore): no container engine runs here, so the file is
// linted with dockerfile-utils (the Docker language server's validator) and its properties that
// matter are asserted on its instructions: multi-stage, the base image at the exact Node the lock
// file pins, production dependencies only in the image, a numeric non-root user, and `gw` as the
// entry point — the first word of the command the provisioned data plane runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { validate } from 'dockerfile-utils';
import { containerCommand } from '../../src/provisioning/command.ts';

const root = new URL('../../', import.meta.url);
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
const dockerignore = readFileSync(new URL('.dockerignore', root), 'utf8');
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string }>;
};

interface Instruction {
  keyword: string;
  args: string;
}

/** The instructions, continuation lines joined, comments and the parser directive left out. */
function instructions(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    });
}

/** The build stages: each FROM and the instructions up to the next. */
function stages(list: Instruction[]): { from: string; name?: string; body: Instruction[] }[] {
  const found: { from: string; name?: string; body: Instruction[] }[] = [];
  for (const instruction of list) {
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = instruction.args.split(/\s+/);
      found.push({ from: image!, ...(as?.toUpperCase() === 'AS' && { name }), body: [] });
    } else found.at(-1)?.body.push(instruction);
  }
  return found;
}

const parsed = stages(instructions(dockerfile));
const finalStage = parsed.at(-1)!;
const runCommands = (body: Instruction[]) =>
  body.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args);

describe('the Dockerfile', () => {
  it('passes the linter without a warning', () => {
    assert.deepEqual(
      validate(dockerfile).map((diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`),
      [],
    );
  });

  it('is multi-stage: the build (dev dependencies, tsc) stays out of the image', () => {
    assert.ok(parsed.length >= 2, 'at least a build stage and the image');
    assert.ok(
      parsed.slice(0, -1).every((stage) => stage.name !== undefined),
      'earlier stages are named',
    );
    const copies = finalStage.body.filter((instruction) => instruction.keyword === 'COPY');
    assert.ok(copies.length > 0);
    for (const copy of copies) assert.match(copy.args, /^--from=\S+ \/opt\/gw \/opt\/gw$/, copy.args);
  });

  it('every stage is based on Node at exactly the version the lock file pins', () => {
    const pinned = lock.packages['node_modules/node']?.version;
    assert.match(pinned ?? '', /^24\.\d+\.\d+$/);
    for (const stage of parsed) assert.equal(stage.from, `node:${pinned}-trixie-slim`, 'bump both together');
  });

  it('the image gets production dependencies only, at the locked versions', () => {
    const installs = parsed.flatMap((stage) =>
      runCommands(stage.body).flatMap((run) => run.split('&&').filter((part) => /\bnpm (ci|install|i)\b/.test(part))),
    );
    const intoImage = installs.filter((install) => install.includes('--omit=dev'));
    assert.equal(intoImage.length, 1, 'one install of what the image holds');
    assert.match(intoImage[0]!, /\bnpm ci\b/, 'npm ci: the lock file, not the newest matching versions');
    assert.ok(
      runCommands(finalStage.body).every(
        (run) => !/\bnpm\b/.test(run) || /rm -rf \/usr\/local\/lib\/node_modules/.test(run),
      ),
      'the image itself installs nothing',
    );
    // The stage that installs with --omit=dev is the one the image copies /opt/gw from.
    const source = /--from=(\S+)/.exec(finalStage.body.find((i) => i.keyword === 'COPY')!.args)![1];
    const built = parsed.find((stage) => stage.name === source)!;
    assert.ok(runCommands(built.body).some((run) => /cd \/opt\/gw && npm ci --omit=dev/.test(run)));
  });

  it('runs as a numeric non-root user', () => {
    const users = finalStage.body.filter((instruction) => instruction.keyword === 'USER');
    assert.equal(users.length, 1);
    const [user, group] = users[0]!.args.split(':');
    assert.match(user!, /^\d+$/, "numeric: Kubernetes' runAsNonRoot cannot check a user name");
    assert.notEqual(Number(user), 0);
    assert.notEqual(Number(group ?? user), 0);
    const afterUser = finalStage.body.slice(finalStage.body.indexOf(users[0]!) + 1);
    assert.ok(!afterUser.some((instruction) => instruction.keyword === 'RUN'), 'nothing runs as root after USER');
  });

  it('has gw as its entry point, on the PATH, as the provisioned command expects', () => {
    const entrypoint = finalStage.body.find((instruction) => instruction.keyword === 'ENTRYPOINT');
    assert.deepEqual(JSON.parse(entrypoint!.args), ['gw']);
    assert.ok(runCommands(finalStage.body).some((run) => run.includes('ln -s /opt/gw/bin/gw.js /usr/local/bin/gw')));
    const command = containerCommand({ name: 'g', namespace: 'n', uid: 'u', gatewayClassName: 'gw', listeners: [] });
    assert.equal(command[0], 'gw', 'a container command replaces the entry point: its first word must be on the PATH');
  });
});

describe('the .dockerignore', () => {
  const ignored = dockerignore
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('keeps node_modules, the git metadata and build output out of the context', () => {
    for (const entry of ['node_modules', '.git', 'dist', '*.tgz']) assert.ok(ignored.includes(entry), entry);
  });

  it('keeps everything the Dockerfile copies from the context', () => {
    const copied = parsed
      .flatMap((stage) => stage.body)
      .filter((instruction) => instruction.keyword === 'COPY' && !instruction.args.startsWith('--from'))
      .flatMap((instruction) => instruction.args.split(/\s+/).slice(0, -1));
    assert.ok(copied.includes('src') && copied.includes('package-lock.json'));
    for (const source of copied) assert.ok(!ignored.includes(source), `${source} is copied but ignored`);
  });
});
