// An OpenAI-style provider that starts a streamed chat completion and then never goes on: for
// tests of a client that leaves mid-stream (the provider request must be aborted under it).
import { createServer, type Server } from 'node:http';
import { closeServer, listen } from './http-server.ts';

export interface HangingProvider {
  server: Server;
  port: number;
  /** How many requests had their connection closed under them. */
  closed(): number;
  close(): Promise<void>;
}

/** Answers every request with one `chat.completion.chunk` event whose content is `content`, then waits forever. */
export async function startHangingProvider(content = 'first'): Promise<HangingProvider> {
  let closed = 0;
  const server = createServer((req, res) => {
    req.resume();
    res.once('close', () => closed++);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = {
      id: 'chatcmpl-hang',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }],
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  const port = await listen(server);
  return { server, port, closed: () => closed, close: () => closeServer(server) };
}
