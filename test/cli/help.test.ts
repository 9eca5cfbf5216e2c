// The command line helps a newcomer: --help on every command prints its usage and exits 0, gw
// --version prints the package's version, and a misspelt command or option gets the closest one
// suggested.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { closestName } from '../../src/util/did-you-mean.ts';
import { runGw } from '../helpers/cli.ts';

const gwBin = new URL('../../bin/gw.js', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Each command line and what its usage must mention (its own options). */
const HELP: [args: string[], mentions: RegExp][] = [
  [['--help'], /gw run[\s\S]*gw validate[\s\S]*gw version/],
  [['-h'], /gw controller/],
  [['help'], /gw idp setup/],
  [['run', '--help'], /^usage: gw run[\s\S]*--admin-port[\s\S]*--max-buffered-bytes/],
  [['run', '-f', 'x.yaml', '-h'], /^usage: gw run/],
  [['validate', '--help'], /^usage: gw validate[\s\S]*--show-defaults/],
  [['crds', '--help'], /^usage: gw crds[\s\S]*--gateway-api[\s\S]*--output-dir/],
  [['install-manifests', '--help'], /^usage: gw install-manifests[\s\S]*--namespace[\s\S]*--image/],
  [['status', '--help'], /^usage: gw status[\s\S]*--recursive/],
  [['explain', '--help'], /^usage: gw explain[\s\S]*route NAMESPACE\/NAME[\s\S]*backend NAMESPACE\/NAME/],
  [['controller', '--help'], /^usage: gw controller[\s\S]*--kubeconfig/],
  [['idp', '--help'], /gw idp setup[\s\S]*--idp-url/],
  [['idp', 'setup', '--help'], /gw idp setup[\s\S]*--dry-run/],
  [['help', 'validate'], /^usage: gw validate/],
];

describe('gw --help, --version, did you mean', () => {
  for (const [args, mentions] of HELP) {
    it(`gw ${args.join(' ')} prints usage on standard output and exits 0`, async () => {
      const result = await runGw(args);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      assert.match(result.stdout, mentions);
    });
  }

  it('gw --version and gw version print the package version, from the installed command too', async () => {
    for (const args of [['--version'], ['version']]) {
      const result = await runGw(args);
      assert.equal(result.code, 0);
      assert.equal(result.stdout, `gw ${version}\n`);
    }
    const child = spawnSync(process.execPath, [gwBin, '--version'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, `gw ${version}\n`);
  });

  it('gw run --help exits 0 from the installed command (gw run re-executes itself first)', () => {
    const child = spawnSync(process.execPath, [gwBin, 'run', '--help'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /^usage: gw run/);
  });

  it('an unknown command gets the closest one suggested, and the usage, with exit 2', async () => {
    const typo = await runGw(['vaildate', '-f', 'x']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /^gw: unknown command "vaildate"; did you mean "gw validate"\?\n/);
    assert.match(typo.stderr, /Usage:/);
    const far = await runGw(['deploy']);
    assert.equal(far.code, 2);
    assert.match(far.stderr, /^gw: unknown command "deploy"\n/);
    const help = await runGw(['help', 'stauts']);
    assert.match(help.stderr, /did you mean "gw status"\?/);
    const none = await runGw([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Usage:/);
  });

  it('an unknown option gets the closest one suggested, with the command usage, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['run', '-f', 'x', '--adress', '0.0.0.0'],
        /^gw run: unknown option --adress \(did you mean --address\?\)\nusage: gw run/,
      ],
      [['validate', '--recursiv', '-f', 'x'], /^gw validate: unknown option --recursiv \(did you mean --recursive\?\)/],
      [['crds', '--output-dri', 'x'], /^gw crds: unknown option --output-dri \(did you mean --output-dir\?\)/],
      [
        ['controller', '--kubeconfg', 'x'],
        /^gw controller: unknown option --kubeconfg \(did you mean --kubeconfig\?\)/,
      ],
      [['status', '--recursive', '--bogus-option'], /^gw status: unknown option --bogus-option\nusage: gw status/],
      [['idp', 'setup', '--dryrun'], /^gw idp setup: unknown option --dryrun \(did you mean --dry-run\?\)/],
    ];
    for (const [args, expected] of cases) {
      const result = await runGw(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, expected);
    }
  });

  it('suggests only a name within a typo of the word', () => {
    assert.equal(closestName('hots', ['host', 'port', 'path']), 'host');
    assert.equal(closestName('Host', ['host', 'port']), 'host');
    assert.equal(closestName('prot', ['host', 'port']), 'port');
    assert.equal(closestName('targetRef', ['targetRefs', 'targets']), 'targetRefs');
    assert.equal(closestName('xyz', ['host', 'port']), undefined);
    assert.equal(closestName('timeout', ['timeouts', 'retry']), 'timeouts');
    assert.equal(closestName('ab', ['xy']), undefined);
  });
});
