// nginx as a reverse proxy in front of the OpenAI mocks, run from a temporary directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAT_BODY, CHAT_HEADERS, CHAT_PATH, CHAT_STREAM_BODY } from '../chat-request.ts';
import { freePort, spawnChild, waitUntilAnswers } from '../child-process.ts';
import { nginxConfig } from '../nginx-config.ts';
import { type TargetDefinition, TargetUnavailable } from './target.ts';

export const NGINX_INSTALL_HINT = 'install it with "apt-get install -y nginx-light" (or the "nginx" package)';

/** The nginx binary on PATH (or in sbin, which PATH often lacks for non-root users), or undefined. */
export function findNginx(): string | undefined {
  const path = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin']);
  for (const dir of path) {
    if (dir === '') continue;
    const candidate = join(dir, 'nginx');
    try {
      execFileSync(candidate, ['-v'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not there, or not runnable: try the next directory
    }
  }
  return undefined;
}

export function nginxTarget(workerProcesses: number): TargetDefinition {
  return {
    id: 'nginx',
    label: 'nginx',
    upstreamFamily: 'openai',
    start: async (ports) => {
      const binary = findNginx();
      if (!binary) throw new TargetUnavailable(`nginx is not installed; ${NGINX_INSTALL_HINT}`);
      const dir = mkdtempSync(join(tmpdir(), 'gw-bench-nginx-'));
      const loadPort = await freePort();
      const streamPort = await freePort();
      const file = join(dir, 'nginx.conf');
      writeFileSync(
        file,
        nginxConfig({
          dir,
          workerProcesses,
          loadPort,
          streamPort,
          loadUpstreamPort: ports.openaiFixed,
          streamUpstreamPort: ports.openaiStream,
        }),
      );
      const child = spawnChild('nginx', binary, ['-p', dir, '-c', file, '-e', 'stderr']);
      const stop = async () => {
        await child.stop();
        rmSync(dir, { recursive: true, force: true });
      };
      try {
        await waitUntilAnswers(child, `http://127.0.0.1:${loadPort}/`);
      } catch (error) {
        await stop();
        throw new TargetUnavailable(`nginx did not start: ${(error as Error).message}`);
      }
      return {
        format: 'chat',
        load: { url: `http://127.0.0.1:${loadPort}${CHAT_PATH}`, headers: CHAT_HEADERS, body: CHAT_BODY },
        stream: { url: `http://127.0.0.1:${streamPort}${CHAT_PATH}`, headers: CHAT_HEADERS, body: CHAT_STREAM_BODY },
        pid: child.pid,
        notes: [`worker_processes ${workerProcesses}`],
        stop,
      };
    },
  };
}
