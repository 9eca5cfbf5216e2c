// gw itself: `gw run -f DIR` on a generated configuration, as a child process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AnswerFormat,
  CHAT_4K_BODY,
  CHAT_4K_STREAM_BODY,
  CHAT_BODY,
  CHAT_HEADERS,
  CHAT_PATH,
  CHAT_STREAM_BODY,
  RESPONSES_BODY,
  RESPONSES_PATH,
  RESPONSES_STREAM_BODY,
} from '../chat-request.ts';
import { freePort, spawnChild, waitUntilAnswers } from '../child-process.ts';
import { type BenchBackendAuth, type ProviderFamily, writeGwBenchConfig } from '../gw-config.ts';
import { subscribeToTraffic, type TrafficSubscriber } from '../traffic-subscriber.ts';
import type { UpstreamPorts } from '../upstream.ts';
import { type TargetDefinition, TargetUnavailable, type UpstreamFamily } from './target.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface StartedGw {
  /** The listener's base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  pid: number;
  /** The admin listener's port (/metrics, the web UI). */
  adminPort: number;
  stop(): Promise<void>;
}

/**
 * Runs `gw run -f configDir` (plus `extraArgs`) on this Node and waits until the listener at
 * `listenerUrl` answers HTTP. Throws with gw's last output when it exits or never answers.
 * The admin endpoints get a free port (the default one may be taken by another gw). Standard
 * output, where the access log goes, is discarded; standard error is kept for error messages.
 */
export async function startGw(
  configDir: string,
  listenerUrl: string,
  extraArgs: string[] = [],
  root: string = repoRoot,
): Promise<StartedGw> {
  const adminPort = await freePort();
  const args = [join(root, 'bin', 'gw.js'), 'run', '-f', configDir, '--admin-port', String(adminPort), ...extraArgs];
  const child = spawnChild('gw', process.execPath, args, { cwd: root, discardStdout: true });
  try {
    await waitUntilAnswers(child, `${listenerUrl}/v1/models`);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { url: listenerUrl, pid: child.pid, adminPort, stop: () => child.stop() };
}

/** The passthrough target of each backend auth besides the fixed key. */
const AUTH_TARGETS = {
  sigv4: { id: 'gw-sigv4', label: 'gw, alpha passthrough, SigV4-signed (cloudone)' },
  'token-exchange': { id: 'gw-token-exchange', label: 'gw, alpha passthrough, exchanged token (cached)' },
} as const;

/**
 * The translated targets of issue 20: Chat Completions clients to Bedrock and to Gemini, and
 * Responses API clients to a provider that speaks only Chat Completions (the OpenAI mocks).
 */
const FAMILY_TARGETS: Record<
  'zeta' | 'delta' | 'custom',
  {
    id: 'gw-bedrock' | 'gw-gemini' | 'gw-responses';
    label: string;
    upstream: UpstreamFamily;
    load: keyof UpstreamPorts;
    stream: keyof UpstreamPorts;
    client: AnswerFormat;
  }
> = {
  zeta: {
    id: 'gw-bedrock',
    label: 'gw, Chat Completions → zeta (Bedrock Converse, SigV4)',
    upstream: 'bedrock',
    load: 'bedrock',
    stream: 'bedrock',
    client: 'chat',
  },
  delta: {
    id: 'gw-gemini',
    label: 'gw, Chat Completions → delta (Gemini generateContent)',
    upstream: 'gemini',
    load: 'gemini',
    stream: 'gemini',
    client: 'chat',
  },
  custom: {
    id: 'gw-responses',
    label: 'gw, Responses → Chat Completions (custom provider)',
    upstream: 'openai',
    load: 'openaiFixed',
    stream: 'openaiStream',
    client: 'responses',
  },
};

/** The 4 KiB-prompt pair of issue 21: unguarded, and with regex guards of every builtin. */
const GUARD_TARGETS: Record<string, { id: 'gw-4k' | 'gw-guarded'; label: string }> = {
  false: { id: 'gw-4k', label: 'gw, alpha passthrough, 4 KiB prompt' },
  true: {
    id: 'gw-guarded',
    label: 'gw, alpha passthrough, 4 KiB prompt, regex guards (5 builtins; streamed answers inspected)',
  },
};

/** What a client of each format sends: path, non-streaming body, streaming body. */
const CLIENT_REQUESTS: Partial<Record<AnswerFormat, { path: string; body: string; streamBody: string }>> = {
  chat: { path: CHAT_PATH, body: CHAT_BODY, streamBody: CHAT_STREAM_BODY },
  responses: { path: RESPONSES_PATH, body: RESPONSES_BODY, streamBody: RESPONSES_STREAM_BODY },
};

/**
 * gw in front of the OpenAI mocks (alpha, passthrough) or the Anthropic mocks (gamma, translated);
 * with `baseline`, the gw of that other checkout (the "before" of an A/B); with `auth`, the
 * passthrough target with that backend auth instead of a fixed key; with `prompt4k`, the
 * passthrough target on a 4 KiB prompt, regex-guarded (every builtin) when `guarded` (issue 21);
 * with `watched`, the passthrough target with the web UI's traffic page open and subscribed for the
 * whole measurement (issue 24).
 */
export function gwTarget(
  family: ProviderFamily,
  options: {
    accessLog: boolean;
    extraArgs: string[];
    baseline?: string;
    auth?: Exclude<BenchBackendAuth, 'key'>;
    prompt4k?: { guarded: boolean };
    watched?: boolean;
  },
): TargetDefinition {
  const translated = family === 'gamma';
  const baseline = options.baseline;
  const auth = options.auth === undefined ? undefined : AUTH_TARGETS[options.auth];
  const other = family === 'zeta' || family === 'delta' || family === 'custom' ? FAMILY_TARGETS[family] : undefined;
  const client = other?.client ?? 'chat';
  const request = options.prompt4k
    ? { path: CHAT_PATH, body: CHAT_4K_BODY, streamBody: CHAT_4K_STREAM_BODY }
    : CLIENT_REQUESTS[client];
  if (request === undefined) throw new Error(`no ${client} client request`);
  const guard = options.prompt4k === undefined ? undefined : GUARD_TARGETS[String(options.prompt4k.guarded)];
  const base = translated ? 'gw-translated' : 'gw';
  const watched = options.watched === true;
  const label =
    (watched ? 'gw, alpha passthrough, traffic page open (SSE subscriber)' : undefined) ??
    guard?.label ??
    other?.label ??
    auth?.label ??
    (translated ? 'gw, Chat Completions → gamma (translated)' : 'gw, alpha passthrough');
  return {
    id: watched
      ? 'gw-watched'
      : (guard?.id ?? other?.id ?? auth?.id ?? (baseline === undefined ? base : (`${base}-baseline` as const))),
    label: baseline === undefined ? label : `${label}, baseline`,
    upstreamFamily: other?.upstream ?? (translated ? 'anthropic' : 'openai'),
    start: async (ports) => {
      const dir = mkdtempSync(join(tmpdir(), `gw-bench-${family}-`));
      const loadPort = await freePort();
      const streamPort = await freePort();
      writeGwBenchConfig(dir, {
        family,
        loadUpstreamPort: other ? ports[other.load] : translated ? ports.anthropicFixed : ports.openaiFixed,
        streamUpstreamPort: other ? ports[other.stream] : translated ? ports.anthropicStream : ports.openaiStream,
        loadPort,
        streamPort,
        accessLog: options.accessLog,
        ...(options.auth === undefined ? {} : { auth: options.auth, tokenEndpointPort: ports.tokenEndpoint }),
        ...(options.prompt4k?.guarded ? { guarded: true } : {}),
      });
      let gw: StartedGw;
      try {
        gw = await startGw(dir, `http://127.0.0.1:${loadPort}`, options.extraArgs, baseline);
      } catch (error) {
        rmSync(dir, { recursive: true, force: true });
        throw new TargetUnavailable((error as Error).message);
      }
      let subscriber: TrafficSubscriber | undefined;
      if (watched) {
        try {
          subscriber = await subscribeToTraffic(gw.adminPort);
        } catch (error) {
          await gw.stop();
          rmSync(dir, { recursive: true, force: true });
          throw new TargetUnavailable(`the traffic page could not subscribe: ${(error as Error).message}`);
        }
      }
      const notes = [
        ...(baseline === undefined ? [] : [`gw of ${baseline}`]),
        options.accessLog ? 'access log on (to /dev/null)' : 'access log off',
        ...(options.extraArgs.length > 0 ? [`gw run ${options.extraArgs.join(' ')}`] : []),
      ];
      return {
        format: client,
        load: { url: gw.url + request.path, headers: CHAT_HEADERS, body: request.body },
        stream: {
          url: `http://127.0.0.1:${streamPort}${request.path}`,
          headers: CHAT_HEADERS,
          body: request.streamBody,
        },
        pid: gw.pid,
        notes,
        stop: async () => {
          if (subscriber) {
            notes.push(subscriber.summary());
            subscriber.close();
          }
          await gw.stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}
