// One target's measurement: start it, check that it answers like the provider, then the same
// sequence of load runs as every other target, then stop it.
import { request } from 'undici';
import { answerProblem, streamAnswerProblem } from './chat-request.ts';
import { type Endpoint, type FirstByteResult, type RateResult, runLoad, type SaturateResult } from './load.ts';
import { cpuMs, peakRssBytes, processTree } from './process-tree.ts';
import { type RunningTarget, type TargetDefinition, type TargetId, TargetUnavailable } from './targets/target.ts';
import type { UpstreamPorts } from './upstream.ts';

export interface MeasureSettings {
  connections: number;
  durationSeconds: number;
  /** A closed-loop run before the measured one, discarded. */
  warmupSeconds: number;
  /** The fixed rate of the latency run, requests per second. */
  rate: number;
  rateSeconds: number;
  rateWarmupSeconds: number;
  /** The connection count of the peak-memory run. */
  peakConnections: number;
  peakSeconds: number;
  firstByteWarmup: number;
  firstByteRequests: number;
}

export interface PeakRun {
  connections: number;
  /** Summed VmHWM of the target's processes after the run (each process's own peak). */
  rssBytes: number;
  processes: number;
  saturate: SaturateResult;
}

export interface Measured {
  status: 'measured';
  id: TargetId;
  label: string;
  upstreamFamily: TargetDefinition['upstreamFamily'];
  saturate: SaturateResult;
  rate: RateResult;
  /** Undefined when the target does not stream correctly (streamProblem says why). */
  firstByte?: FirstByteResult;
  streamProblem?: string;
  /** CPU time of the target's processes per answered request in the measured run, microseconds. */
  cpuUsPerRequest?: number;
  peak?: PeakRun;
  notes: string[];
}

export interface Unavailable {
  status: 'unavailable';
  id: TargetId;
  label: string;
  reason: string;
}

export type Outcome = Measured | Unavailable;

const VERIFY_TIMEOUT_MS = 10_000;
const MAX_VERIFY_BODY_CHARS = 64 * 1024;

async function send(endpoint: Endpoint): Promise<{ statusCode: number; contentType: string; text: string }> {
  const { statusCode, headers, body } = await request(endpoint.url, {
    method: 'POST',
    headers: endpoint.headers,
    body: endpoint.body,
    headersTimeout: VERIFY_TIMEOUT_MS,
    bodyTimeout: VERIFY_TIMEOUT_MS,
  });
  const text = (await body.text()).slice(0, MAX_VERIFY_BODY_CHARS);
  return { statusCode, contentType: String(headers['content-type'] ?? ''), text };
}

/** Why the target does not answer a plain request like the provider would; undefined when it does. */
async function plainProblem(target: RunningTarget): Promise<string | undefined> {
  try {
    const answer = await send(target.load);
    const problem = answerProblem(target.format, answer.statusCode, answer.text);
    return problem && `a request got ${problem}`;
  } catch (error) {
    return `a request failed: ${(error as Error).message}`;
  }
}

/** Why the target does not stream; undefined when it does. */
async function streamingProblem(target: RunningTarget): Promise<string | undefined> {
  try {
    const answer = await send(target.stream);
    const problem = streamAnswerProblem(target.format, answer.statusCode, answer.contentType, answer.text);
    return problem && `a streaming request got ${problem}`;
  } catch (error) {
    return `a streaming request failed: ${(error as Error).message}`;
  }
}

export async function measureTarget(
  definition: TargetDefinition,
  ports: UpstreamPorts,
  settings: MeasureSettings,
  log: (line: string) => void,
): Promise<Outcome> {
  const unavailable = (reason: string): Unavailable => ({
    status: 'unavailable',
    id: definition.id,
    label: definition.label,
    reason,
  });
  let target: RunningTarget;
  try {
    target = await definition.start(ports);
  } catch (error) {
    if (error instanceof TargetUnavailable) return unavailable(error.message);
    return unavailable(`failed to start: ${(error as Error).message}`);
  }
  try {
    const problem = await plainProblem(target);
    if (problem) return unavailable(`answers wrongly: ${problem}`);
    const streamProblem = await streamingProblem(target);

    const closedLoop = (connections: number, durationSeconds: number) =>
      runLoad({ kind: 'saturate', endpoint: target.load, connections, durationSeconds });

    log(`  warm-up ${settings.warmupSeconds} s`);
    await closedLoop(settings.connections, settings.warmupSeconds);

    log(`  ${settings.connections} connections for ${settings.durationSeconds} s`);
    const tree = target.pid === undefined ? [] : processTree(target.pid);
    const cpuBefore = cpuMs(tree);
    const saturate = await closedLoop(settings.connections, settings.durationSeconds);
    const cpuUsPerRequest =
      target.pid === undefined || saturate.ok === 0 ? undefined : ((cpuMs(tree) - cpuBefore) * 1000) / saturate.ok;

    log(`  ${settings.rate} requests/s for ${settings.rateSeconds} s`);
    const rate = await runLoad({
      kind: 'rate',
      endpoint: target.load,
      connections: settings.connections,
      rate: settings.rate,
      warmupSeconds: settings.rateWarmupSeconds,
      durationSeconds: settings.rateSeconds,
    });

    let firstByte: FirstByteResult | undefined;
    if (streamProblem) {
      log(`  streaming not measured: ${streamProblem}`);
    } else {
      log(`  ${settings.firstByteRequests} streaming requests, one at a time`);
      firstByte = await runLoad({
        kind: 'first-byte',
        endpoint: target.stream,
        warmup: settings.firstByteWarmup,
        requests: settings.firstByteRequests,
      });
    }

    let peak: PeakRun | undefined;
    if (target.pid !== undefined) {
      log(`  ${settings.peakConnections} connections for ${settings.peakSeconds} s (peak memory)`);
      const peakSaturate = await closedLoop(settings.peakConnections, settings.peakSeconds);
      const processes = processTree(target.pid);
      peak = {
        connections: settings.peakConnections,
        rssBytes: peakRssBytes(processes),
        processes: processes.length,
        saturate: peakSaturate,
      };
    }
    return {
      status: 'measured',
      id: definition.id,
      label: definition.label,
      upstreamFamily: definition.upstreamFamily,
      saturate,
      rate,
      firstByte,
      streamProblem,
      cpuUsPerRequest,
      peak,
      notes: target.notes,
    };
  } catch (error) {
    return unavailable(`measurement failed: ${(error as Error).message}`);
  } finally {
    await target.stop();
  }
}
