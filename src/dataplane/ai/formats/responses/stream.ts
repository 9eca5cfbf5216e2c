// A Responses API event stream written from the chat form's stream calls, for a client that spoke
// the Responses API to a provider that does not. Every event carries its type as the SSE event
// name and a sequence_number, and items open and close as the API's do, so that the openai SDK's
// ResponseStream assembles them:
//
// start → response.created, response.in_progress; text → a message item (output_item.added,
// content_part.added) then output_text.delta; reasoning → a reasoning item with reasoning_text
// deltas, its signature in encrypted_content of its output_item.done (a signature with no open
// reasoning, redacted reasoning or a tool call's signature → a reasoning item with only
// encrypted_content, added and done at once); a tool call → a function_call item and
// function_call_arguments.delta; the next item, the stop or the end closes the open item (…done
// events); the end → response.completed, or response.incomplete when the token limit or a filter
// cut it short.
import { responsesStreamErrorEvent } from '../errors.ts';
import { encryptedContent } from '../form/signatures.ts';
import type { StopReason, StreamWriter } from '../form/types.ts';
import type { JsonObject } from '../types.ts';
import type { Usage } from '../usage.ts';
import {
  finalEventType,
  functionCallItem,
  itemId,
  messageItem,
  outputText,
  reasoningItem,
  responseObject,
} from './response.ts';

type OpenItem =
  | { kind: 'message'; outputIndex: number; id: string; text: string }
  | { kind: 'reasoning'; outputIndex: number; id: string; text: string; encrypted?: string }
  | { kind: 'function_call'; outputIndex: number; id: string; callId: string; name: string; args: string };

export class ResponsesStreamWriter implements StreamWriter {
  readonly #clientModel: string | undefined;
  readonly #createdAt = Math.floor(Date.now() / 1000);
  #sequence = 0;
  #id = '';
  #model = '';
  readonly #output: JsonObject[] = [];
  #open: OpenItem | undefined;
  // The form's tool index -> its function_call item (late fragments still reach their own item).
  readonly #calls: (OpenItem & { kind: 'function_call' })[] = [];
  #stopReason: StopReason | undefined;

  constructor(options: { model?: string }) {
    this.#clientModel = options.model;
  }

  failed(status: number, message: string): string {
    return responsesStreamErrorEvent(status, message, this.#sequence++);
  }

  #event(type: string, fields: JsonObject): string {
    const payload = { type, ...fields, sequence_number: this.#sequence++ };
    return `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
  }

  start(id: string, model: string | undefined): string {
    this.#id = id;
    this.#model = this.#clientModel ?? model ?? '';
    const response = responseObject(this.#id, this.#model, this.#createdAt, [], undefined);
    return this.#event('response.created', { response }) + this.#event('response.in_progress', { response });
  }

  text(text: string): string {
    let out = '';
    if (this.#open?.kind !== 'message') {
      out += this.#close();
      const outputIndex = this.#output.length;
      const id = itemId('msg', outputIndex);
      this.#open = { kind: 'message', outputIndex, id, text: '' };
      this.#output.push(messageItem(id, [], 'in_progress'));
      out += this.#event('response.output_item.added', {
        output_index: outputIndex,
        item: messageItem(id, [], 'in_progress'),
      });
      out += this.#event('response.content_part.added', {
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        part: outputText(''),
      });
    }
    const open = this.#open as OpenItem & { kind: 'message' };
    open.text += text;
    return (
      out +
      this.#event('response.output_text.delta', {
        item_id: open.id,
        output_index: open.outputIndex,
        content_index: 0,
        delta: text,
        logprobs: [],
      })
    );
  }

  reasoning(text: string): string {
    let out = '';
    if (this.#open?.kind !== 'reasoning') {
      out += this.#close();
      const outputIndex = this.#output.length;
      const id = itemId('rs', outputIndex);
      this.#open = { kind: 'reasoning', outputIndex, id, text: '' };
      this.#output.push(reasoningItem(id, undefined));
      out += this.#event('response.output_item.added', {
        output_index: outputIndex,
        item: reasoningItem(id, undefined),
      });
      out += this.#event('response.content_part.added', {
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        part: { type: 'reasoning_text', text: '' },
      });
    }
    const open = this.#open as OpenItem & { kind: 'reasoning' };
    open.text += text;
    return (
      out +
      this.#event('response.reasoning_text.delta', {
        item_id: open.id,
        output_index: open.outputIndex,
        content_index: 0,
        delta: text,
      })
    );
  }

  reasoningSignature(signature: string): string {
    const encrypted = encryptedContent({ type: 'reasoning', text: '', signature, path: '' });
    // The signature of the reasoning item streaming now, in its output_item.done.
    if (this.#open?.kind === 'reasoning' && this.#open.encrypted === undefined) {
      this.#open.encrypted = encrypted;
      return '';
    }
    return this.#close() + this.#sealedReasoning(encrypted);
  }

  redactedReasoning(data: string): string {
    const encrypted = encryptedContent({ type: 'reasoning', text: '', redacted: data, path: '' });
    return this.#close() + this.#sealedReasoning(encrypted);
  }

  /** A reasoning item with no text, only encrypted_content: added and done at once. */
  #sealedReasoning(encrypted: string | undefined): string {
    const outputIndex = this.#output.length;
    const item = reasoningItem(itemId('rs', outputIndex), undefined, encrypted);
    this.#output.push(item);
    return (
      this.#event('response.output_item.added', { output_index: outputIndex, item }) +
      this.#event('response.output_item.done', { output_index: outputIndex, item })
    );
  }

  toolStart(index: number, id: string | undefined, name: string, initialArguments: string, signature?: string): string {
    let out = this.#close();
    // A call's signature (Gemini's) goes to the client as a reasoning item before the call, as in
    // a whole response (form/signatures.ts).
    if (signature !== undefined) {
      out += this.#sealedReasoning(encryptedContent({ type: 'reasoning', text: '', signature, path: '' }));
    }
    const outputIndex = this.#output.length;
    const item: OpenItem & { kind: 'function_call' } = {
      kind: 'function_call',
      outputIndex,
      id: itemId('fc', outputIndex),
      callId: id ?? `call_${outputIndex}`,
      name,
      args: '',
    };
    this.#calls[index] = item;
    this.#open = item;
    this.#output.push(functionCallItem(item.id, item.callId, name, '', 'in_progress'));
    out += this.#event('response.output_item.added', {
      output_index: outputIndex,
      item: functionCallItem(item.id, item.callId, name, '', 'in_progress'),
    });
    return initialArguments === '' ? out : out + this.toolArguments(index, initialArguments);
  }

  toolArguments(index: number, fragment: string): string {
    const call = this.#calls[index];
    if (call === undefined) return '';
    call.args += fragment;
    return this.#event('response.function_call_arguments.delta', {
      item_id: call.id,
      output_index: call.outputIndex,
      delta: fragment,
    });
  }

  toolEnd(): string {
    // The item closes when the next one starts, or at the stop.
    return '';
  }

  stop(reason: StopReason | undefined): string {
    this.#stopReason = reason;
    return this.#close();
  }

  done(usage: Usage | undefined): string {
    const out = this.#close();
    // A fragment that came after its call's item closed (providers do not interleave, the formats allow it).
    for (const call of this.#calls) {
      if (call !== undefined) {
        this.#output[call.outputIndex] = functionCallItem(call.id, call.callId, call.name, call.args, 'completed');
      }
    }
    const done = { reason: this.#stopReason, usage };
    const response = responseObject(this.#id, this.#model, this.#createdAt, this.#output, done);
    return out + this.#event(finalEventType(this.#stopReason), { response });
  }

  /** The open item's …done events; its final form replaces the in-progress one in the output. */
  #close(): string {
    const open = this.#open;
    if (open === undefined) return '';
    this.#open = undefined;
    const at = { item_id: open.id, output_index: open.outputIndex };
    let item: JsonObject;
    let out = '';
    if (open.kind === 'message') {
      const part = outputText(open.text);
      item = messageItem(open.id, [part], 'completed');
      out += this.#event('response.output_text.done', { ...at, content_index: 0, text: open.text, logprobs: [] });
      out += this.#event('response.content_part.done', { ...at, content_index: 0, part });
    } else if (open.kind === 'reasoning') {
      item = reasoningItem(open.id, open.text, open.encrypted);
      out += this.#event('response.reasoning_text.done', { ...at, content_index: 0, text: open.text });
      out += this.#event('response.content_part.done', {
        ...at,
        content_index: 0,
        part: { type: 'reasoning_text', text: open.text },
      });
    } else {
      // A tool without parameters streams no arguments: they are still a JSON object.
      if (open.args === '') {
        open.args = '{}';
        out += this.#event('response.function_call_arguments.delta', { ...at, delta: '{}' });
      }
      item = functionCallItem(open.id, open.callId, open.name, open.args, 'completed');
      out += this.#event('response.function_call_arguments.done', { ...at, name: open.name, arguments: open.args });
    }
    this.#output[open.outputIndex] = item;
    return out + this.#event('response.output_item.done', { output_index: open.outputIndex, item });
  }
}
