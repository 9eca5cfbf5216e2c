// What gw reads from a Realtime session's server events (OpenAI's Realtime API): the usage of each
// response (`response.done`: response.usage with input_tokens, output_tokens, total_tokens and
// input_token_details.cached_tokens), summed over the session; the model the session runs
// (`session.created` / `session.updated`: session.model); and when the first generated output
// arrived (the first `response.*.delta` of text, audio or a transcript). Only events that can carry
// one of these are parsed; every message is passed on unchanged whatever it holds.
import { isPlainObject, numberOr, objectOr, stringOr } from '../formats/json.ts';
import type { Usage } from '../formats/usage.ts';

/** Server event types whose arrival is the session's first generated output. */
const OUTPUT_DELTAS = [
  '"response.output_text.delta"',
  '"response.output_audio.delta"',
  '"response.output_audio_transcript.delta"',
  '"response.text.delta"',
  '"response.audio.delta"',
  '"response.audio_transcript.delta"',
];

export class RealtimeMeter {
  /** The session's usage so far (every response.done summed); undefined until one reports usage. */
  usage: Usage | undefined = undefined;
  /** The model the server says the session runs. */
  model: string | undefined = undefined;
  /** process.hrtime.bigint() of the first output delta; 0n until then. */
  firstOutputTime = 0n;

  /** Reads one text message from the server. */
  serverText(data: Buffer): void {
    if (this.firstOutputTime === 0n && OUTPUT_DELTAS.some((type) => data.includes(type)))
      this.firstOutputTime = process.hrtime.bigint();
    // A cheap look before a parse: most events (deltas, audio) carry neither usage nor the model.
    const done = data.includes('"response.done"');
    if (!done && !data.includes('"session.')) return;
    let event: unknown;
    try {
      event = JSON.parse(data.toString('utf8'));
    } catch {
      return;
    }
    if (!isPlainObject(event)) return;
    if (event.type === 'response.done') this.#add(objectOr(objectOr(event.response)?.usage));
    else if (event.type === 'session.created' || event.type === 'session.updated') {
      const model = stringOr(objectOr(event.session)?.model);
      if (model !== undefined && model !== '') this.model = model;
    }
  }

  #add(usage: Record<string, unknown> | undefined): void {
    if (usage === undefined) return;
    const input = numberOr(usage.input_tokens);
    const output = numberOr(usage.output_tokens);
    if (input === undefined && output === undefined) return;
    const cached = numberOr(objectOr(usage.input_token_details)?.cached_tokens);
    const sum: Usage = this.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    sum.inputTokens += input ?? 0;
    sum.outputTokens += output ?? 0;
    sum.totalTokens += numberOr(usage.total_tokens) ?? (input ?? 0) + (output ?? 0);
    if (cached !== undefined) sum.cachedInputTokens = (sum.cachedInputTokens ?? 0) + cached;
    this.usage = sum;
  }
}
