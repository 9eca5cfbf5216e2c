// The attacks of bench/attack.bench.ts, each a client that tries to make gw hold memory or time
// (gw issue 17). An attack starts against a running gw, keeps going until it is stopped, and
// says what it got; its goals are judged on the figures the harness measured. A new attack (a
// bcrypt flood against a Basic-auth route) is one more entry in ATTACKS.
import { constants, connect as http2Connect } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DEFAULT_DOWNSTREAM_LIMITS } from '../../src/dataplane/server/downstream-limits.ts';
import { CHAT_BODY, CHAT_PATH } from '../gateway/chat-request.ts';

export interface AttackTarget {
  /** gw's listener of the plain route (HTTP, so h2c too). */
  port: number;
}

/** What the harness measured for one attack, judged by its goals. */
export interface AttackFigures {
  /** gw's resident size before the attack, its peak during it, and 10 s after it ended (MiB). */
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssAfterMiB: number;
  /** Seconds from the attack's end until gw's resident size was back under the goal's mark, if it got there. */
  rssBackSeconds: number | undefined;
}

export interface RunningAttack {
  /** Ends the attack (its connections closed); resolves when it has stopped. */
  stop(): Promise<void>;
  /** What the attack got, for the report (one line each). */
  outcome(): string[];
  /** Seconds after its start by which gw had closed every connection the attack held, if it had. */
  closedAllAfter(): number | undefined;
}

export interface Attack {
  id: string;
  label: string;
  /** How long the attack runs at least: until gw should have cut what it holds. */
  minimumSeconds: number;
  /** The resident size the attack's memory goal wants gw back under after it (MiB), if it has one. */
  rssBackUnderMiB?: number;
  start(target: AttackTarget): Promise<RunningAttack>;
  /** Each goal of the issue for this attack, met or not. */
  goals(figures: AttackFigures, attack: RunningAttack): { goal: string; met: boolean }[];
}

const SECONDS = 1000;

/** Connections that each send one request and then stall; gw's answer (or silence) recorded per connection. */
class HeldConnections {
  readonly sockets: Socket[] = [];
  readonly statuses = new Map<string, number>();
  private readonly started = performance.now();
  private lastClosedAt: number | undefined;
  private closedByGw = 0;
  private stopping = false;

  open(port: number, send: (socket: Socket) => void): void {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    let status: string | undefined;
    socket.on('data', (chunk: Buffer) => {
      status ??= chunk.toString('latin1', 9, 12);
    });
    socket.once('close', () => {
      const key = status ?? 'no answer';
      this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
      if (!this.stopping) {
        this.closedByGw++;
        this.lastClosedAt = performance.now();
      }
    });
    send(socket);
    this.sockets.push(socket);
  }

  closedAllAfter(): number | undefined {
    if (this.closedByGw < this.sockets.length || this.lastClosedAt === undefined) return undefined;
    return (this.lastClosedAt - this.started) / SECONDS;
  }

  outcome(): string[] {
    const answers = [...this.statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
    const open = this.sockets.length - this.closedByGw;
    return [`${this.sockets.length} connections: ${answers || 'none closed'}${open > 0 ? `; ${open} still open` : ''}`];
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const socket of this.sockets) socket.destroy();
  }
}

const STALLED_BODIES = 300;
const STALLED_BODY_BYTES = 2 * 1024 * 1024;

/** 300 connections each send a 2 MiB chat completion but its last 10 bytes, then stall (issue 17, item 1). */
export const stalledBodies: Attack = {
  id: 'stalled-bodies',
  label: `${STALLED_BODIES} stalled 2 MiB request bodies`,
  minimumSeconds: DEFAULT_DOWNSTREAM_LIMITS.requestBodyIdleTimeoutMs / SECONDS + 2,
  rssBackUnderMiB: 160,
  async start(target) {
    const held = new HeldConnections();
    const body = Buffer.alloc(STALLED_BODY_BYTES - 10, ' ');
    for (let index = 0; index < STALLED_BODIES; index++)
      held.open(target.port, (socket) => {
        socket.write(
          `POST ${CHAT_PATH} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\ncontent-length: ${STALLED_BODY_BYTES}\r\n\r\n`,
        );
        socket.write(body);
      });
    return { stop: () => held.stop(), outcome: () => held.outcome(), closedAllAfter: () => held.closedAllAfter() };
  },
  goals(figures, attack) {
    const idle = DEFAULT_DOWNSTREAM_LIMITS.requestBodyIdleTimeoutMs / SECONDS;
    const closed = attack.closedAllAfter();
    return [
      { goal: 'RSS at most 250 MiB under the attack', met: figures.rssPeakMiB <= 250 },
      {
        goal: 'RSS back under 160 MiB within 10 s after it',
        met: figures.rssBackSeconds !== undefined && figures.rssBackSeconds <= 10,
      },
      {
        goal: `the stalled connections closed within the request-body idle timeout (${idle} s, checked each second)`,
        met: closed !== undefined && closed <= idle + 2,
      },
    ];
  },
};

const TRICKLED = 300;

/** 300 connections each send a request's headers one byte a second (slowloris). */
export const trickledHeaders: Attack = {
  id: 'trickled-headers',
  label: `${TRICKLED} connections trickling request headers, a byte a second`,
  minimumSeconds: DEFAULT_DOWNSTREAM_LIMITS.requestHeaderTimeoutMs / SECONDS + 2,
  async start(target) {
    const held = new HeldConnections();
    const head = `GET /v1/models HTTP/1.1\r\nhost: bench\r\nx-padding: ${'a'.repeat(200)}\r\n\r\n`;
    for (let index = 0; index < TRICKLED; index++) held.open(target.port, () => undefined);
    let sent = 0;
    const trickle = setInterval(() => {
      for (const socket of held.sockets) if (!socket.destroyed) socket.write(head[sent % head.length]!);
      sent++;
    }, SECONDS);
    return {
      stop: async () => {
        clearInterval(trickle);
        await held.stop();
      },
      outcome: () => held.outcome(),
      closedAllAfter: () => held.closedAllAfter(),
    };
  },
  goals(_figures, attack) {
    const timeout = DEFAULT_DOWNSTREAM_LIMITS.requestHeaderTimeoutMs / SECONDS;
    const closed = attack.closedAllAfter();
    return [
      {
        goal: `the trickling connections closed within the request-header timeout (${timeout} s, checked each second)`,
        met: closed !== undefined && closed <= timeout + 2,
      },
    ];
  },
};

/** HTTP/2 over cleartext: streams opened and cancelled at once, as fast as gw takes them, reconnecting when closed (issue 17, item 11). */
export const rapidReset: Attack = {
  id: 'rapid-reset',
  label: 'h2c rapid reset: streams opened and cancelled at once, reconnecting',
  minimumSeconds: 0,
  async start(target) {
    let running = true;
    let streams = 0;
    let connections = 0;
    let closedByGw = 0;
    const loop = async () => {
      while (running) {
        connections++;
        const session = http2Connect(`http://127.0.0.1:${target.port}`);
        session.on('error', () => undefined);
        const closed = new Promise((resolve) => session.once('close', resolve));
        await new Promise((resolve) => session.once('remoteSettings', resolve).once('close', resolve));
        while (running && !session.closed && !session.destroyed) {
          let stream: ReturnType<typeof session.request>;
          try {
            stream = session.request({ ':method': 'POST', ':path': CHAT_PATH, 'content-type': 'application/json' });
          } catch {
            break; // gw sent GOAWAY
          }
          stream.on('error', () => undefined);
          stream.end(CHAT_BODY);
          stream.close(constants.NGHTTP2_CANCEL);
          streams++;
          if (streams % 50 === 0) await nextTurn();
        }
        if (running) closedByGw++;
        session.destroy();
        await closed;
      }
    };
    const done = loop();
    return {
      stop: async () => {
        running = false;
        await done;
      },
      outcome: () => [
        `${streams} streams opened and cancelled on ${connections} connections; gw closed ${closedByGw} of them`,
      ],
      closedAllAfter: () => undefined,
    };
  },
  goals(figures) {
    return [
      { goal: 'RSS within 50 MiB of before under the attack', met: figures.rssPeakMiB - figures.rssBeforeMiB <= 50 },
    ];
  },
};

export const ATTACKS: readonly Attack[] = [stalledBodies, trickledHeaders, rapidReset];
