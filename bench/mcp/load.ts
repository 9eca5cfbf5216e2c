// The MCP load generator, seen from the harness: each job runs in a fresh child process
// (load-process.ts), so that it never shares an event loop with gw or the MCP servers. Every job
// opens its own MCP session on the endpoint first (initialize, notifications/initialized).
import { fileURLToPath } from 'node:url';
import { spawnChild } from '../gateway/child-process.ts';

/** One request at a time on one connection: the round trip of `method` with nothing queued. */
export interface RoundTripJob {
  kind: 'round-trip';
  url: string;
  method: 'tools/list';
  warmup: number;
  requests: number;
}

/**
 * Closed loop: `connections` connections, each sending its next tools/call as soon as the previous
 * answer is read; every request has its own JSON-RPC id (ids are unique within a session).
 */
export interface CallsJob {
  kind: 'calls';
  url: string;
  connections: number;
  /** Run at full load first and not measured. */
  warmupSeconds: number;
  durationSeconds: number;
}

export type McpLoadJob = RoundTripJob | CallsJob;

export interface RoundTripResult {
  kind: 'round-trip';
  p50Ms: number;
  p99Ms: number;
  ok: number;
  /** Items in the last answer's list (the merged list, through gw). */
  items: number;
}

export interface CallsResult {
  kind: 'calls';
  /** Successful answers (HTTP 200 and a JSON-RPC result) per second of the measured run. */
  requestsPerSecond: number;
  ok: number;
  failed: number;
  /** Every answer read, warm-up included (for CPU per request over the whole run). */
  answered: number;
  /** The load generator's own CPU per answer read (µs), over the whole run. */
  loadCpuUs: number;
  p50Ms: number;
  p99Ms: number;
}

type ResultOf<J extends McpLoadJob> = J extends RoundTripJob ? RoundTripResult : CallsResult;

const loadProcess = fileURLToPath(new URL('./load-process.ts', import.meta.url));

export async function runMcpLoad<J extends McpLoadJob>(job: J): Promise<ResultOf<J>> {
  const child = spawnChild(`MCP load (${job.kind})`, process.execPath, [loadProcess, JSON.stringify(job)], {
    ipc: true,
  });
  try {
    const message = (await child.nextMessage()) as { result?: ResultOf<J>; error?: string };
    if (message.error !== undefined) throw new Error(`MCP load generator: ${message.error}`);
    return message.result as ResultOf<J>;
  } finally {
    await child.stop();
  }
}
