// A listener whose port cannot be bound is a failure, not a listener served: the data plane says
// so, serves the Gateway's other listeners, and the Gateway's status shows the listener (and the
// Gateway) Programmed False, reason PortUnavailable, naming the port; the port is tried again, and
// once it is free it is served and the statuses say Programmed again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Telemetry } from '../../src/dataplane/telemetry/request-telemetry.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import { freePort, holdPort, twoListenerGatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { startRecordingUpstream } from '../helpers/recording-upstream.ts';
import { until } from '../helpers/until.ts';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

interface GatewayStatus {
  conditions: Condition[];
  listeners: { name: string; conditions: Condition[] }[];
}

function programmed(conditions: Condition[] | undefined): Condition | undefined {
  return conditions?.find((condition) => condition.type === 'Programmed');
}

/** Waits until `check` stops throwing (5 s at most), then runs it once more for its assertion. */
async function settles(check: () => void | Promise<void>): Promise<void> {
  await until(async () => {
    try {
      await check();
      return true;
    } catch {
      return false;
    }
  }, 5000);
  await check();
}

describe('a listener port that cannot be bound', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('is logged, left out of what is served, and shown as Programmed False (PortUnavailable) until it binds', async () => {
    const upstream = await startRecordingUpstream();
    cleanups.push(() => upstream.close());
    const [free, taken] = [await freePort(), await freePort()];
    const holder = await holdPort(taken);
    cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())).catch(() => undefined));
    const dir = mkdtempSync(join(tmpdir(), 'gw-unbound-'));
    writeFileSync(join(dir, 'gateway.yaml'), twoListenerGatewayYaml(free, taken));
    writeFileSync(join(dir, 'route.yaml'), webRouteYaml(upstream.port));
    const logs: string[] = [];
    const gateway = new LocalGateway({
      paths: [dir],
      address: '127.0.0.1',
      log: (line) => logs.push(line),
      telemetry: new Telemetry({ sink: { write: () => undefined } }),
      bindRetryMs: 100,
    });
    await gateway.start();
    cleanups.push(async () => {
      await gateway.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    assert.ok(
      logs.includes(
        `Gateway default/ai: cannot listen: port ${taken} on 127.0.0.1 is in use by another process (EADDRINUSE)`,
      ),
      logs.join('\n'),
    );
    assert.equal(gateway.serving(), true, 'the other listener serves');
    assert.equal((await fetch(`http://127.0.0.1:${free}/`)).status, 200);
    assert.deepEqual([...gateway.dataPlane.unboundPorts.keys()], [taken]);

    const status = () =>
      gateway.files.store.get('gateway.networking.k8s.io/Gateway', 'default/ai')?.status as GatewayStatus | undefined;
    await settles(() => {
      const listener = programmed(status()?.listeners.find((entry) => entry.name === 'taken')?.conditions);
      assert.equal(listener?.status, 'False');
      assert.equal(listener?.reason, 'PortUnavailable');
      assert.match(listener?.message ?? '', new RegExp(`port ${taken} on 127\\.0\\.0\\.1 is in use`));
    });
    const whole = programmed(status()?.conditions);
    assert.equal(whole?.status, 'False');
    assert.equal(whole?.reason, 'PortUnavailable');
    assert.match(whole?.message ?? '', new RegExp(`listener taken cannot be served: port ${taken}`));
    assert.equal(programmed(status()?.listeners.find((entry) => entry.name === 'http')?.conditions)?.status, 'True');

    // The port is freed: the next try binds it, without any change of the configuration.
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    await settles(() => {
      assert.equal(gateway.dataPlane.unboundPorts.size, 0);
      assert.equal(programmed(status()?.conditions)?.status, 'True');
      assert.equal(programmed(status()?.listeners.find((entry) => entry.name === 'taken')?.conditions)?.status, 'True');
    });
    assert.ok(
      logs.includes(`Gateway default/ai: port ${taken} is bound now; its listeners are served`),
      logs.join('\n'),
    );
    assert.equal(
      logs.filter((line) => line.includes('cannot listen')).length,
      1,
      'the failure is said once, not at every try',
    );
    assert.equal((await fetch(`http://127.0.0.1:${taken}/`)).status, 200);
  });
});
