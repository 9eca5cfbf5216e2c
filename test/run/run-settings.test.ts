// The gw run settings file (--config): its keys and the flags they stand for, the errors of a key
// gw does not know or a value it does not take (each naming the key path), and a gw run process
// that runs as the file says, flags given overriding it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { checkRunSettings, RUN_SETTINGS } from '../../src/run/run-settings.ts';
import { runGw, spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml } from '../helpers/gateway.ts';

describe('checkRunSettings', () => {
  it('gives the flags of every key', () => {
    const { flags, problems } = checkRunSettings({
      address: '0.0.0.0',
      admin: { address: '0.0.0.0', port: 15001 },
      workers: 'auto',
      logging: { level: 'warn,dataplane=debug', format: 'text' },
      limits: {
        requestHeaderTimeout: '5s',
        requestBodyIdleTimeout: '20s',
        requestBodyTimeout: '1m',
        responseWriteTimeout: '15s',
        maxBufferedBytes: '128Mi',
        maxBufferedBytesPerListener: 1048576,
      },
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(Object.keys(flags).sort(), RUN_SETTINGS.map((setting) => setting.flag).sort(), 'every key');
    assert.equal(flags['admin-port'], '15001');
    assert.equal(flags['max-buffered-bytes-per-listener'], '1048576');
    assert.deepEqual(checkRunSettings(null), { flags: {}, problems: [] }, 'an empty file');
  });

  it('names the key path of a key it does not know, with the closest known one', () => {
    const { problems } = checkRunSettings({ loging: { level: 'info' }, admin: { prot: 1 }, binds: [] });
    assert.deepEqual(problems, [
      {
        path: 'loging',
        message:
          'loging: unknown key (did you mean logging?); the keys here are address, admin, workers, logging, limits',
      },
      { path: 'admin.prot', message: 'admin.prot: unknown key (did you mean port?); the keys here are address, port' },
      { path: 'binds', message: 'binds: unknown key; the keys here are address, admin, workers, logging, limits' },
    ]);
  });

  it('names the key path of a value gw run does not take', () => {
    const messages = (document: unknown) => checkRunSettings(document).problems.map((problem) => problem.message);
    assert.deepEqual(messages({ admin: { port: 70000 } }), ['admin.port must be a port number, not "70000"']);
    assert.deepEqual(messages({ workers: 0 }), ['workers must be "auto" or a number from 1 to 256, not "0"']);
    assert.deepEqual(messages({ logging: { format: 'xml' } }), ['logging.format must be json or text, not "xml"']);
    assert.match(
      messages({ logging: { level: 'mcp=debug' } })[0]!,
      /^logging\.level "mcp=debug": unknown module "mcp"/,
    );
    assert.deepEqual(messages({ limits: { requestHeaderTimeout: 'soon' } }), [
      'limits.requestHeaderTimeout: "soon" is not a duration such as 3s or 1m30s',
    ]);
    assert.deepEqual(messages({ limits: { maxBufferedBytes: '0' } }), [
      'limits.maxBufferedBytes must be more than 0, not "0"',
    ]);
    assert.deepEqual(messages({ logging: 'info' }), ['logging must be a mapping of keys']);
    assert.deepEqual(messages({ logging: { level: 3 } }), ['logging.level must be a string, not 3']);
    assert.deepEqual(messages(['address']), ['the settings must be a mapping of keys']);
  });
});

describe('gw run --config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-run-settings-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the file sets what the flags would; flags given override it', () => {
    const file = join(dir, 'settings.yaml');
    writeFileSync(file, 'logging: {level: warn, format: text}\nadmin: {port: 15001}\nworkers: 2\n');
    const fromFile = parseRunArgs(['-f', dir, '--config', file]) as Exclude<ReturnType<typeof parseRunArgs>, string>;
    assert.equal(fromFile.logFilter.text, 'warn');
    assert.equal(fromFile.logFormat, 'text');
    assert.equal(fromFile.adminPort, 15001);
    assert.equal(fromFile.workers, 2);
    const overridden = parseRunArgs(['-f', dir, '--config', file, '--log-level', 'debug', '--workers', '1']) as Exclude<
      ReturnType<typeof parseRunArgs>,
      string
    >;
    assert.equal(overridden.logFilter.text, 'debug');
    assert.equal(overridden.workers, 1);
    assert.equal(overridden.adminPort, 15001);
    const json = join(dir, 'settings.json');
    writeFileSync(json, JSON.stringify({ limits: { requestHeaderTimeout: '2s' } }));
    const fromJson = parseRunArgs(['-f', dir, '--config', json]) as { limits: { requestHeaderTimeoutMs: number } };
    assert.equal(fromJson.limits.requestHeaderTimeoutMs, 2000);
  });

  it('a file gw run cannot take is an argument error naming the file and each key path', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'logging: {levle: info}\nadmin: {port: -1}\n');
    const result = await runGw(['run', '-f', dir, '--config', file]);
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      new RegExp(
        `^gw run: --config ${file}: logging\\.levle: unknown key \\(did you mean level\\?\\); the keys here are level, format; admin\\.port must be a port number, not "-1"\\n`,
      ),
    );
    const missing = await runGw(['run', '-f', dir, '--config', join(dir, 'missing.yaml')]);
    assert.match(missing.stderr, /--config \S+missing\.yaml: no such file/);
    writeFileSync(join(dir, 'broken.yaml'), 'logging: {level: [\n');
    const broken = await runGw(['run', '-f', dir, '--config', join(dir, 'broken.yaml')]);
    assert.match(broken.stderr, /broken\.yaml: not YAML or JSON: /);
  });

  it('a gw run process logs and serves its admin endpoints as the file says', async () => {
    const files = mkdtempSync(join(dir, 'files-'));
    const [port, adminPort] = [await freePort(), await freePort()];
    writeFileSync(join(files, 'gw.yaml'), gatewayYaml(port));
    const settings = join(dir, 'run.yaml');
    writeFileSync(settings, `logging: {format: text, level: debug}\nadmin: {port: ${adminPort}}\n`);
    const gw = spawnGw(['run', '-f', files, '--config', settings]);
    try {
      await gw.waitForLog(/Z DEBUG run: configuration update/);
      await gw.waitForLog(new RegExp(`Z INFO {2}run: admin endpoints on http://127\\.0\\.0\\.1:${adminPort} `));
      assert.equal((await fetch(`http://127.0.0.1:${adminPort}/healthz/live`)).status, 200);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0, gw.stderr);
  });
});
