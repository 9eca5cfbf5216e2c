// WebSocket upgrade requests (HTTP/1.1 `Upgrade: websocket`). node hands such a request over with
// its socket instead of a response; gw gives it a response on that socket so that it goes through
// the same request path as any other (listener, routing, traffic policies, the backend), and a
// refusal is an ordinary HTTP answer after which the connection closes. A backend that serves
// WebSocket sessions (an AI backend's Realtime route, ai/realtime/session.ts) takes the socket
// over with `take()` and says when its session is over; every other backend answers over HTTP,
// the upgrade not granted. Other upgrades (h2c) stay ordinary requests: node never hands them over.
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExchangeOutcome } from './client-response.ts';

/** Whether node should hand this request over as an upgrade: a GET asking for a WebSocket. */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return req.method === 'GET' && typeof upgrade === 'string' && upgrade.trim().toLowerCase() === 'websocket';
}

/** An upgrade request's connection, for the backend that serves the session. */
export interface WebSocketUpgrade {
  /**
   * The request's response on the socket. A backend handed another (the response path's capture:
   * a policy works on the response body) cannot serve a session under that policy.
   */
  readonly response: ServerResponse;
  /**
   * The socket and the bytes read past the request head, the response detached from it: the
   * caller writes the handshake and owns the connection from here. Once only.
   */
  take(): { socket: Duplex; head: Buffer };
  /**
   * The session is over, `clean` when it closed normally (the record's error says why not): the
   * request is finished then.
   */
  end(clean: boolean): void;
  /** Called once when the exchange is over: answered over HTTP, or the session ended. */
  onDone(callback: (outcome: ExchangeOutcome) => void): void;
}

const upgrades = new WeakMap<IncomingMessage, WebSocketUpgrade>();

/** The upgrade of a request node handed over, if it was one. */
export function webSocketUpgradeOf(req: IncomingMessage): WebSocketUpgrade | undefined {
  return upgrades.get(req);
}

/** The outcome the request's telemetry reads for a session: 101, complete when it closed cleanly. */
function sessionOutcome(clean: boolean): ExchangeOutcome {
  return { statusCode: 101, getHeaders: () => ({}), writableEnded: clean, writableFinished: clean };
}

/**
 * The response of an upgrade request node handed over (`req`, its socket and the bytes after its
 * head), through which it is served like any request; `webSocketUpgradeOf(req)` gives the socket
 * to a backend that takes it.
 */
export function upgradeResponse(req: IncomingMessage, socket: Duplex, head: Buffer): ServerResponse {
  const res = new ServerResponse(req);
  res.assignSocket(socket as never);
  // The server no longer manages this socket: an HTTP answer ends it.
  res.setHeader('connection', 'close');
  res.once('finish', () => socket.end());
  let done: ((outcome: ExchangeOutcome) => void) | undefined;
  let taken = false;
  let finished = false;
  const finish = (outcome: ExchangeOutcome) => {
    if (finished) return;
    finished = true;
    done?.(outcome);
  };
  res.once('finish', () => {
    if (!taken) finish(res);
  });
  socket.once('close', () => {
    if (!taken) finish(res);
  });
  upgrades.set(req, {
    response: res,
    take() {
      if (taken) throw new Error('the upgrade was taken already');
      taken = true;
      res.detachSocket(socket as never);
      return { socket, head };
    },
    end(clean) {
      finish(sessionOutcome(clean));
    },
    onDone(callback) {
      done = callback;
    },
  });
  return res;
}
