// A real Envoy ext_proc processor for the tests: @grpc/grpc-js serving ExternalProcessor/Process
// on gw's own protos, each stream handed to a scripted conversation, every message gw sent kept.
import * as grpc from '@grpc/grpc-js';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from '../../../src/dataplane/policies/ext-proc/messages.ts';
import { serviceConstructor } from '../../../src/dataplane/policies/grpc/client.ts';
import { type GrpcTestServer, startGrpcServer } from '../../helpers/grpc-server.ts';

// biome-ignore lint/suspicious/noExplicitAny: a ProcessingRequest as proto-loader decodes it
export type Sent = any;
// biome-ignore lint/suspicious/noExplicitAny: a ProcessingResponse as the test writes it
export type Answer = any;

/** One Process stream as the processor sees it. */
export class Conversation {
  /** Every message gw sent on this stream, in order. */
  readonly messages: Sent[] = [];
  /** Set once gw half-closed the stream (or it ended). */
  halfClosed = false;
  readonly #call: grpc.ServerDuplexStream<Sent, Answer>;
  readonly #queue: Sent[] = [];
  #waiter: ((message: Sent | undefined) => void) | undefined;

  constructor(call: grpc.ServerDuplexStream<Sent, Answer>) {
    this.#call = call;
    call.on('data', (message: Sent) => {
      this.messages.push(message);
      const waiter = this.#waiter;
      this.#waiter = undefined;
      if (waiter) waiter(message);
      else this.#queue.push(message);
    });
    const ended = () => {
      this.halfClosed = true;
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter?.(undefined);
    };
    call.on('end', ended);
    call.on('error', ended);
    call.on('cancelled', ended);
  }

  /** The next message gw sends; undefined once gw half-closed the stream. */
  next(): Promise<Sent | undefined> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.halfClosed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  /** The next message without taking it (next() still gives it); undefined once gw half-closed the stream. */
  async peek(): Promise<Sent | undefined> {
    const message = await this.next();
    if (message !== undefined) this.#queue.unshift(message);
    return message;
  }

  /** The next message, which must be of `kind` (request_headers, response_body...). */
  async expect(kind: string): Promise<Sent> {
    const message = await this.next();
    if (message?.request !== kind)
      throw new Error(`expected ${kind}, got ${message?.request ?? 'the end of the stream'}`);
    return message;
  }

  send(answer: Answer): void {
    this.#call.write(answer);
  }

  /** Ends the stream cleanly (status OK). */
  end(): void {
    this.#call.end();
  }

  /** Fails the stream with a gRPC status. */
  fail(code: grpc.status, details: string): void {
    this.#call.emit('error', { code, details });
  }
}

export interface Processor extends GrpcTestServer {
  conversations: Conversation[];
}

/** Serves ext_proc on 127.0.0.1 (a free port); `script` runs each stream. */
export async function startProcessor(script: (conversation: Conversation) => Promise<void>): Promise<Processor> {
  const conversations: Conversation[] = [];
  const server = await startGrpcServer(serviceConstructor(EXT_PROC_PROTO, EXT_PROC_SERVICE).service, {
    Process: (call: grpc.ServerDuplexStream<Sent, Answer>) => {
      const conversation = new Conversation(call);
      conversations.push(conversation);
      script(conversation).catch((error: Error) => conversation.fail(grpc.status.INTERNAL, error.message));
    },
  });
  return { ...server, conversations };
}

/** A header's value in a HeaderMap gw sent (raw_value as text). */
export function headerOf(map: { headers: { key: string; raw_value: Buffer }[] }, name: string): string | undefined {
  const found = map.headers.find((header) => header.key === name);
  return found ? Buffer.from(found.raw_value).toString('latin1') : undefined;
}

/** A Struct gw sent, as JSON (the well-known types use camelCase names). */
export function structJson(struct: { fields?: Record<string, Sent> } | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(struct?.fields ?? {})) {
    const kind = value.kind as string;
    out[name] = kind === 'structValue' ? structJson(value.structValue) : value[kind];
  }
  return out;
}

/** The scenario a policy's metadataContext names (`{test: {scenario: '"name"'}}`), from a message gw sent. */
export function scenarioOf(message: Sent): string {
  return structJson(message?.metadata_context?.filter_metadata?.test).scenario as string;
}

/** Runs each stream with the script of the scenario its first message names. */
export function byScenario(
  scripts: Record<string, (conversation: Conversation) => Promise<void>>,
): (conversation: Conversation) => Promise<void> {
  return async (conversation) => {
    // The first message names the scenario; the script then reads the stream from the start.
    const first = await conversation.peek();
    if (!first) return;
    const script = scripts[scenarioOf(first)];
    if (!script) throw new Error(`no script for ${scenarioOf(first)}`);
    await script(conversation);
  };
}

/**
 * FullDuplexStreamed on the response (after `response_headers`, answered unchanged): the body back
 * event by event — each complete server-sent event as soon as it is in, what follows the last one
 * held until more comes (a body that is not an event stream comes back at its end) — with
 * `change` applied to the text.
 */
export async function streamEventsBack(conversation: Conversation, change: (text: string) => string): Promise<void> {
  await conversation.expect('response_headers');
  conversation.send({ response_headers: {} });
  let pending = '';
  for (;;) {
    const message = await conversation.next();
    if (!message) return;
    pending += Buffer.from(message.response_body.body ?? []).toString('utf8');
    const end: boolean = message.response_body.end_of_stream;
    const boundary = pending.lastIndexOf('\n\n');
    const cut = end ? pending.length : boundary === -1 ? 0 : boundary + 2;
    const complete = pending.slice(0, cut);
    pending = pending.slice(cut);
    conversation.send({
      response_body: {
        response: { body_mutation: { streamed_response: { body: Buffer.from(change(complete)), end_of_stream: end } } },
      },
    });
    if (end) return;
  }
}
