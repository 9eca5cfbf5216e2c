// One ext_proc Process stream: gw's messages out, the processor's in, each wait bounded by the
// message timeout. The processor may ask for more time (override_message_timeout), may close the
// stream cleanly (gw then goes on without it) or fail it (a ProcessorError).
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../grpc/grpc-js.ts';
import type { ProcessingRequest, ProcessingResponse } from './messages.ts';

/** Longest wait a processor may ask for with override_message_timeout. */
export const MAX_MESSAGE_TIMEOUT_MS = 60_000;
/** Messages held unread before gw stops reading the stream (gRPC flow control then holds the processor). */
const MAX_QUEUED = 16;

export type ProcessorFailure = 'unavailable' | 'failed' | 'timeout' | 'protocol';

export class ProcessorError extends Error {
  readonly failure: ProcessorFailure;
  constructor(failure: ProcessorFailure, message: string) {
    super(message);
    this.failure = failure;
  }
}

/** The client of the ExternalProcessor service (the Process method of the loaded service). */
export interface ExternalProcessorClient extends grpc.Client {
  Process(): grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
}

/**
 * Resolves once the client's channel is connected. A channel that cannot connect fails at once
 * (or at the deadline), before anything is sent: the failure mode can still let the request go.
 */
export function connected(client: grpc.Client, timeoutMs: number): Promise<void> {
  const channel = client.getChannel();
  const deadline = Date.now() + timeoutMs;
  const { READY, TRANSIENT_FAILURE, SHUTDOWN } = grpcJs().connectivityState;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const state = channel.getConnectivityState(true);
      if (state === READY) {
        resolve();
        return;
      }
      if (state === TRANSIENT_FAILURE || state === SHUTDOWN) {
        reject(new ProcessorError('unavailable', 'the processor is not reachable'));
        return;
      }
      channel.watchConnectivityState(state, deadline, (error) => {
        if (error) reject(new ProcessorError('timeout', 'timed out connecting to the processor'));
        else check();
      });
    };
    check();
  });
}

export class ProcessorStream {
  readonly #call: grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
  readonly #timeoutMs: number;
  readonly #queue: ProcessingResponse[] = [];
  #waiter: { resolve: (message: ProcessingResponse | undefined) => void; reject: (error: Error) => void } | undefined;
  /** 'closed' once the processor ended the stream cleanly; the error once it failed. */
  #done: 'closed' | ProcessorError | undefined;
  #timer: NodeJS.Timeout | undefined;
  #waitMs: number;
  /** While gw still streams a body the processor may hold before answering, no wait is timed. */
  #inputOpen = false;
  #paused = false;
  #halfClosed = false;
  #closeTimer: NodeJS.Timeout | undefined;

  constructor(client: ExternalProcessorClient, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#waitMs = timeoutMs;
    this.#call = client.Process();
    this.#call.on('data', (message: ProcessingResponse) => this.#receive(message));
    this.#call.on('end', () => this.#finish('closed'));
    this.#call.on('error', (error: grpc.ServiceError) => this.#finish(failureOf(error)));
    this.#call.on('status', () => clearTimeout(this.#closeTimer));
  }

  /** Whether the stream can take messages (not ended by either side). */
  get open(): boolean {
    return this.#done === undefined && !this.#halfClosed;
  }

  /** Sends a message; false when the stream's buffer is full (wait with onDrain). */
  send(message: ProcessingRequest): boolean {
    if (!this.open) return true;
    return this.#call.write(message);
  }

  onDrain(resume: () => void): void {
    this.#call.once('drain', resume);
  }

  /** Marks that gw is (or is no longer) streaming a body the processor may wait for. */
  setInputOpen(open: boolean): void {
    this.#inputOpen = open;
    if (open) this.#disarm();
    else this.#arm();
  }

  /** The processor's next message; undefined once it closed the stream cleanly. */
  next(): Promise<ProcessingResponse | undefined> {
    const queued = this.#queue.shift();
    if (queued) {
      if (this.#paused && this.#queue.length < MAX_QUEUED / 2) {
        this.#paused = false;
        this.#call.resume();
      }
      return Promise.resolve(queued);
    }
    if (this.#done === 'closed') return Promise.resolve(undefined);
    if (this.#done) return Promise.reject(this.#done);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#waitMs = this.#timeoutMs;
      this.#arm();
    });
  }

  /** Half-closes the stream (gw sends nothing more); cancelled if the processor does not end it in time. */
  close(): void {
    if (this.#halfClosed) return;
    this.#halfClosed = true;
    this.#disarm();
    if (this.#done !== undefined) return;
    this.#call.end();
    // Nobody reads any more: let the processor's last messages drain instead of holding them.
    this.#queue.length = 0;
    this.#call.removeAllListeners('data');
    this.#call.on('data', () => undefined);
    this.#call.resume();
    this.#closeTimer = setTimeout(() => this.cancel(), this.#timeoutMs);
    this.#closeTimer.unref();
  }

  /** Ends the stream at once (the exchange failed or went away). */
  cancel(): void {
    this.#halfClosed = true;
    this.#disarm();
    this.#finish(new ProcessorError('failed', 'the stream was cancelled'));
    this.#call.cancel();
  }

  #receive(message: ProcessingResponse): void {
    const override = message.override_message_timeout;
    if (override) {
      // Envoy's rule: a message asking for more time carries nothing else that counts.
      const ms = (override.seconds ?? 0) * 1000 + Math.floor((override.nanos ?? 0) / 1e6);
      if (this.#waiter && ms >= 1) {
        this.#disarm();
        this.#waitMs = Math.min(ms, MAX_MESSAGE_TIMEOUT_MS);
        this.#arm();
      }
      return;
    }
    this.#disarm();
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter.resolve(message);
      return;
    }
    this.#queue.push(message);
    if (this.#queue.length >= MAX_QUEUED && !this.#paused) {
      this.#paused = true;
      this.#call.pause();
    }
  }

  #finish(result: 'closed' | ProcessorError): void {
    if (this.#done !== undefined) return;
    this.#done = result;
    this.#disarm();
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (!waiter) return;
    if (result === 'closed') waiter.resolve(undefined);
    else waiter.reject(result);
  }

  #arm(): void {
    if (this.#timer || !this.#waiter || this.#inputOpen) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#finish(new ProcessorError('timeout', `the processor did not answer within ${this.#waitMs} ms`));
      this.#call.cancel();
    }, this.#waitMs);
  }

  #disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

function failureOf(error: grpc.ServiceError): ProcessorError {
  const { status } = grpcJs();
  if (error.code === status.UNAVAILABLE)
    return new ProcessorError('unavailable', `the processor is not reachable: ${error.details}`);
  if (error.code === status.DEADLINE_EXCEEDED)
    return new ProcessorError('timeout', `the processor timed out: ${error.details}`);
  return new ProcessorError('failed', `the processor failed the stream (${status[error.code]}): ${error.details}`);
}
