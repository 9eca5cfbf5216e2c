// The web UI's traffic page as the benchmark sees it: one server-sent events subscriber of gw's
// admin listener (/ui/api/traffic/events), connected before the measurement and kept for all of
// it, reading every event as a browser would. While it is connected gw captures every request
// and sends it on (docs/ui.md "Traffic"); the gw-watched row is measured this way against the gw
// row (nobody watching). If gw dropped the subscriber for not reading (it never should here), the
// row says so: its figures would then not be those of a watched gw.
import { type IncomingMessage, request } from 'node:http';

export interface TrafficSubscriber {
  /** What happened to the subscription, for the row's notes. */
  summary(): string;
  close(): void;
}

export function subscribeToTraffic(adminPort: number): Promise<TrafficSubscriber> {
  return new Promise((resolve, reject) => {
    let events = 0;
    let bytes = 0;
    let closing = false;
    let endedEarly = false;
    const req = request({
      host: '127.0.0.1',
      port: adminPort,
      path: '/ui/api/traffic/events',
      headers: { accept: 'text/event-stream' },
    });
    req.once('error', (error) => {
      if (!closing) reject(error);
    });
    req.once('response', (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`the traffic events answered ${response.statusCode}`));
        return;
      }
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Each request is one event, led by its `event: request` line.
        let at = chunk.indexOf('event: request');
        while (at >= 0) {
          events++;
          at = chunk.indexOf('event: request', at + 1);
        }
      });
      response.once('close', () => {
        if (!closing) endedEarly = true;
      });
      resolve({
        summary: () =>
          `traffic page subscribed (SSE on the admin listener): ${events} request events, ${(bytes / 2 ** 20).toFixed(1)} MiB${endedEarly ? '; gw ended the subscription before the end: the figures are not all watched' : ''}`,
        close: () => {
          closing = true;
          req.destroy();
        },
      });
    });
    req.end();
  });
}
