// One attack measured: a fresh `gw run` in front of the OpenAI mock, the plain route's latency at
// a fixed rate unattacked, then under the attack, gw's resident size before, during and after it,
// and what the attack got.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHAT_BODY, CHAT_HEADERS, CHAT_PATH } from '../gateway/chat-request.ts';
import { freePort } from '../gateway/child-process.ts';
import { writeGwBenchConfig } from '../gateway/gw-config.ts';
import { type RateResult, runLoad } from '../gateway/load.ts';
import { startGw } from '../gateway/targets/gw.ts';
import type { UpstreamPorts } from '../gateway/upstream.ts';
import type { Attack, AttackFigures } from './attacks.ts';

export interface AttackSettings {
  /** Requests a second on the plain route. */
  rate: number;
  /** Connections the plain route's load may use. */
  connections: number;
  /** Seconds of measured load, unattacked and under the attack. */
  loadSeconds: number;
  /** Seconds gw's resident size is watched after the attack ends. */
  afterSeconds: number;
}

export interface AttackRun {
  attack: Attack;
  unattacked: RateResult;
  attacked: RateResult;
  figures: AttackFigures;
  /** Seconds the attack ran. */
  attackSeconds: number;
  outcome: string[];
  goals: { goal: string; met: boolean }[];
}

/** The resident size of a process (VmRSS), MiB. */
export function residentMiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** The highest resident size seen, sampled every 100 ms until stopped. */
function watchPeak(pid: number): { stop(): number } {
  let peak = residentMiB(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, residentMiB(pid));
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, residentMiB(pid));
    },
  };
}

export async function measureAttack(
  attack: Attack,
  upstream: UpstreamPorts,
  settings: AttackSettings,
  log: (line: string) => void,
): Promise<AttackRun> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-attack-'));
  const port = await freePort();
  writeGwBenchConfig(dir, {
    family: 'alpha',
    loadUpstreamPort: upstream.openaiFixed,
    streamUpstreamPort: upstream.openaiStream,
    loadPort: port,
    streamPort: await freePort(),
    accessLog: false,
  });
  const gw = await startGw(dir, `http://127.0.0.1:${port}`);
  try {
    const load = (warmupSeconds: number) =>
      runLoad({
        kind: 'rate',
        endpoint: { url: `http://127.0.0.1:${port}${CHAT_PATH}`, headers: CHAT_HEADERS, body: CHAT_BODY },
        connections: settings.connections,
        rate: settings.rate,
        warmupSeconds,
        durationSeconds: settings.loadSeconds,
      });
    log('  unattacked');
    const unattacked = await load(2);
    await sleep(500);
    const rssBeforeMiB = residentMiB(gw.pid);
    log(`  under attack (at least ${attack.minimumSeconds} s)`);
    const peak = watchPeak(gw.pid);
    const started = performance.now();
    const running = await attack.start({ port });
    const attacked = await load(1);
    const minimumEnd = started + attack.minimumSeconds * 1000;
    while (performance.now() < minimumEnd && running.closedAllAfter() === undefined) await sleep(100);
    await running.stop();
    const attackSeconds = (performance.now() - started) / 1000;
    const stopped = performance.now();
    log(`  after (${settings.afterSeconds} s)`);
    let rssBackSeconds: number | undefined;
    let rssPeakMiB = peak.stop();
    while (performance.now() - stopped < settings.afterSeconds * 1000) {
      const rss = residentMiB(gw.pid);
      if (rssBackSeconds === undefined && attack.rssBackUnderMiB !== undefined && rss < attack.rssBackUnderMiB)
        rssBackSeconds = (performance.now() - stopped) / 1000;
      await sleep(100);
    }
    if (performance.now() - stopped < 200) rssPeakMiB = Math.max(rssPeakMiB, residentMiB(gw.pid));
    const figures: AttackFigures = {
      rssBeforeMiB,
      rssPeakMiB,
      rssAfterMiB: residentMiB(gw.pid),
      rssBackSeconds,
    };
    return {
      attack,
      unattacked,
      attacked,
      figures,
      attackSeconds,
      outcome: running.outcome(),
      goals: attack.goals(figures, running),
    };
  } finally {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
