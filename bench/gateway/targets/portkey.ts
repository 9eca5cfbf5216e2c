// @portkey-ai/gateway, the TypeScript peer: installed by the benchmark into a cache directory
// outside the repository, run on Node like gw, and pointed at the mocks by its routing headers
// (x-portkey-provider, and x-portkey-custom-host, which it trusts for 127.0.0.1 by default).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CHAT_BODY, CHAT_HEADERS, CHAT_PATH, CHAT_STREAM_BODY } from '../chat-request.ts';
import { errorSummary, freePort, spawnChild, waitUntilAnswers } from '../child-process.ts';
import { upstreamUrl } from '../upstream.ts';
import { type TargetDefinition, TargetUnavailable } from './target.ts';

const PORTKEY_PACKAGE = '@portkey-ai/gateway';
export const PORTKEY_VERSION = '1.15.2';
const PORTKEY_CACHE_DIR = join(tmpdir(), 'gw-bench-portkey');

const packageDir = join(PORTKEY_CACHE_DIR, 'node_modules', ...PORTKEY_PACKAGE.split('/'));
const INSTALL_TIMEOUT_MS = 300_000;

function installedVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** Installs the pinned Portkey into the cache directory unless it is there already; returns its server script. */
async function ensurePortkey(log: (line: string) => void): Promise<string> {
  if (installedVersion() !== PORTKEY_VERSION) {
    log(`installing ${PORTKEY_PACKAGE}@${PORTKEY_VERSION} into ${PORTKEY_CACHE_DIR} (once)`);
    try {
      await promisify(execFile)(
        'npm',
        [
          'install',
          '--prefix',
          PORTKEY_CACHE_DIR,
          '--no-save',
          '--no-audit',
          '--no-fund',
          `${PORTKEY_PACKAGE}@${PORTKEY_VERSION}`,
        ],
        { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      const failure = error as Error & { stderr?: string };
      throw new TargetUnavailable(
        `npm install of ${PORTKEY_PACKAGE} failed: ${errorSummary(failure.stderr ?? failure.message)}`,
      );
    }
  }
  const server = join(packageDir, 'build', 'start-server.js');
  if (!existsSync(server)) throw new TargetUnavailable(`${server} is missing after the install`);
  return server;
}

export function portkeyTarget(log: (line: string) => void): TargetDefinition {
  return {
    id: 'portkey',
    label: `Portkey ${PORTKEY_VERSION}`,
    upstreamFamily: 'openai',
    start: async (ports) => {
      const server = await ensurePortkey(log);
      const port = await freePort();
      // --headless: no log UI; the server listens on every interface (it takes no host option).
      const child = spawnChild('portkey', process.execPath, [server, `--port=${port}`, '--headless'], {
        env: { ...process.env, NODE_ENV: 'production' },
      });
      try {
        await waitUntilAnswers(child, `http://127.0.0.1:${port}/`);
      } catch (error) {
        await child.stop();
        throw new TargetUnavailable(`Portkey did not start: ${(error as Error).message}`);
      }
      const routing = (upstreamPort: number) => ({
        ...CHAT_HEADERS,
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': `${upstreamUrl(upstreamPort)}/v1`,
      });
      const url = `http://127.0.0.1:${port}${CHAT_PATH}`;
      return {
        format: 'chat',
        load: { url, headers: routing(ports.openaiFixed), body: CHAT_BODY },
        stream: { url, headers: routing(ports.openaiStream), body: CHAT_STREAM_BODY },
        pid: child.pid,
        notes: [],
        stop: () => child.stop(),
      };
    },
  };
}
