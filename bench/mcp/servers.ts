// The MCP servers of the benchmark, seen from the harness: each group in its own child process
// (servers-process.ts), stopped with the harness.
import { fileURLToPath } from 'node:url';
import { spawnChild } from '../gateway/child-process.ts';

export type ServersSpec =
  | { role: 'list'; count: number; tools: number; delayMs: number }
  | { role: 'call'; stateless: boolean; json: boolean };

export interface McpServers {
  /** One port per server; each serves MCP at /mcp. */
  ports: number[];
  pid: number;
  stop(): Promise<void>;
}

const serversProcess = fileURLToPath(new URL('./servers-process.ts', import.meta.url));

export async function startMcpServers(spec: ServersSpec): Promise<McpServers> {
  const child = spawnChild(`MCP servers (${spec.role})`, process.execPath, [serversProcess, JSON.stringify(spec)], {
    ipc: true,
  });
  try {
    const { ports } = (await child.nextMessage()) as { ports: number[] };
    return { ports, pid: child.pid, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

export function mcpUrl(port: number, path = '/mcp'): URL {
  return new URL(`http://127.0.0.1:${port}${path}`);
}
