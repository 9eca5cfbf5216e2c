// The web UI's live traffic with gw run --workers 2, as a user runs it: the requests come from the
// workers (each sends what it completes to the primary over IPC, only while the UI watches) and
// reach a subscriber of the primary's admin listener; a recorded request's CEL variables come from
// the worker that served it; requests completed while nobody watched are never sent.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type GwProcess, spawnGw } from '../../helpers/cli.ts';
import { freePort, gatewayYaml } from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { until } from '../../helpers/until.ts';
import { getOnNewConnection as get, routeYaml } from '../../run/helpers.ts';
import { followEvents, uiApi } from './live-helpers.ts';

describe('live traffic with gw run --workers 2', () => {
  const upstream = createServer((_req, res) => res.end('upstream'));
  let dir: string;
  let gw: GwProcess;
  let port: number;
  let admin: string;

  before(async () => {
    const upstreamPort = await listen(upstream);
    port = await freePort();
    const adminPort = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'gw-ui-workers-'));
    writeFileSync(join(dir, 'gateway.yaml'), `${gatewayYaml(port)}${routeYaml(upstreamPort)}`);
    gw = spawnGw(['run', '-f', dir, '--workers', '2', '--admin-port', String(adminPort)]);
    await gw.waitForLog(/serving with 2 worker processes/, 30_000);
    admin = `http://127.0.0.1:${adminPort}`;
  });

  after(async () => {
    gw?.child.kill('SIGTERM');
    await gw?.exited;
    await closeServer(upstream);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("streams the workers' requests to a subscriber and evaluates CEL in the worker that served one", async () => {
    // Requests while nobody watches: never sent to the primary.
    for (let i = 0; i < 10; i++) assert.equal((await get(`http://127.0.0.1:${port}/unwatched/${i}`)).status, 200);
    const follower = await followEvents(`${admin}/ui/api/traffic/events`);
    try {
      assert.equal(follower.response.statusCode, 200);
      // The watch message reaches the workers over IPC: poll with requests until one comes through.
      assert.ok(
        await until(
          async () => {
            await get(`http://127.0.0.1:${port}/probe`);
            return follower.named('request').length > 0;
          },
          10_000,
          50,
        ),
      );
      for (let i = 0; i < 20; i++) assert.equal((await get(`http://127.0.0.1:${port}/watched/${i}`)).status, 200);
      // (a probe still on its way may come after `before`)
      const watched = () => follower.named('request').filter((e) => e.fields['url.path'].startsWith('/watched/'));
      assert.ok(await until(() => watched().length === 20, 10_000), JSON.stringify(follower.events));
      const entries = watched();
      const paths = entries.map((e) => e.fields['url.path']).sort();
      assert.deepEqual(paths, Array.from({ length: 20 }, (_, i) => `/watched/${i}`).sort());
      for (const entry of entries) {
        assert.equal(entry.fields.route, 'default/web');
        assert.equal(entry.fields['http.response.status_code'], 200);
        // The id names the worker process that served it, not the primary.
        assert.notEqual(Number(entry.id.split('-')[0]), gw.child.pid);
      }
      const evaluated = await uiApi(admin, 'playground/cel', { id: entries[0].id, expression: 'request.path' });
      assert.equal(evaluated.status, 200, JSON.stringify(evaluated.body));
      assert.equal(evaluated.body.value, entries[0].fields['url.path']);
    } finally {
      follower.close();
    }
    const recent = await uiApi(admin, 'traffic/recent?q=unwatched');
    assert.equal(recent.status, 200);
    assert.deepEqual(recent.body.entries, []);
  });
});
