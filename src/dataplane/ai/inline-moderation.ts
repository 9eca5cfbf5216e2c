// The inline moderation of an alpha (OpenAI) provider (AlphaConfig.moderation: model, policy.input
// and policy.output, each Score or Block), done as agentgateway does it and as OpenAI offers it:
// gw puts the configuration in the `moderation` parameter of every Chat Completions and Responses
// request it sends the provider (replacing the client's), and OpenAI moderates the request and
// the answer it generates, reporting the results in the answer's own `moderation` (decision
// 0029). gw reads those results — for the access log (`gw.ai.moderation`) and CEL
// (`llm.moderation`), the scores of every category — and does not leave Block to the provider
// alone: a flagged side in Block mode is refused (403) and a Block side without results (a server
// that ignored the parameter, a moderation error) fails closed (503). gw checks whole answers
// only, so a streamed request to a provider with a Block side is refused; with Score only, the
// stream's moderation results are recorded as they pass (ModerationStreamReader).
import { StringDecoder } from 'node:string_decoder';
import type { AlphaInlineModeration } from '../../api/types/llm-provider.ts';
import { isPlainObject } from './formats/json.ts';
import type { JsonObject } from './formats/types.ts';
import {
  DEFAULT_MODERATION_MODEL,
  type ModerationVerdict,
  readModerationResults,
} from './guards/moderation-results.ts';
import { DEFAULT_REQUEST_REJECTION, DEFAULT_RESPONSE_REJECTION } from './guards/prompt-guard.ts';
import {
  type InlineModerationRecord,
  MODERATION_SIDES,
  type ModerationMode,
  type ModerationSide,
} from './inline-moderation-record.ts';

/** Route types whose requests gw forwards unread (or as a WebSocket session): no parameter can be added. */
const UNMODERATABLE_ROUTES: ReadonlySet<string> = new Set(['Passthrough', 'Detect', 'Realtime']);

/** A rejection by a Block side: the status and message the client gets. */
export interface ModerationRejection {
  status: number;
  message: string;
  /** For the log: the side and what fired. */
  reason: string;
}

/** The largest stream line the reader looks into (a Responses stream's completed event repeats the whole answer). */
const MAX_STREAM_LINE = 4 * 1024 * 1024;

export const moderationUnavailableMessage = (side: ModerationSide): string =>
  `The ${side === 'input' ? 'request' : 'response'} could not be checked by the provider's moderation, so it was refused; try again later.`;

export class InlineModeration {
  readonly #param: JsonObject;
  readonly #modes: Partial<Record<ModerationSide, ModerationMode>>;
  /** Why a streamed request is refused (a Block side), or undefined when streams are served. */
  readonly streamRefusal: string | undefined;

  constructor(config: AlphaInlineModeration) {
    this.#modes = {};
    const policy: JsonObject = {};
    for (const side of MODERATION_SIDES) {
      const mode = config.policy?.[side]?.mode;
      if (mode === undefined) continue;
      this.#modes[side] = mode;
      policy[side] = { mode: mode === 'Block' ? 'block' : 'score' };
    }
    this.#param = { model: config.model ?? DEFAULT_MODERATION_MODEL };
    if (config.policy !== undefined) this.#param.policy = policy;
    const blocking = MODERATION_SIDES.filter((side) => this.#modes[side] === 'Block');
    this.streamRefusal =
      blocking.length === 0
        ? undefined
        : `This provider's inline moderation blocks flagged ${blocking.join(' and ')} (alpha.moderation.policy: Block), ` +
          'which gw checks on whole answers; a streamed answer would reach the client before gw could check it, so ' +
          'streamed requests are refused. Ask without streaming, or set the mode to Score.';
  }

  /**
   * Why a request cannot be moderated, or undefined: a route type whose body gw does not read
   * (the parameter cannot be added), or a stream while a side blocks.
   */
  refusal(routeType: string, stream: boolean): string | undefined {
    if (UNMODERATABLE_ROUTES.has(routeType))
      return (
        `This provider has inline moderation (alpha.moderation), which cannot be added to a ${routeType} request ` +
        '(gw forwards it without reading its API format), so it is refused rather than sent unmoderated. Give the ' +
        'path the route type of its API in ai.routes, or remove alpha.moderation.'
      );
    return stream ? this.streamRefusal : undefined;
  }

  /** Whether a planned request is moderated: a Chat Completions or Responses body gw wrote for the provider. */
  static moderates(providerFormat: string, responseKind: string): boolean {
    return (
      (providerFormat === 'completions' || providerFormat === 'responses') &&
      (responseKind === 'same' || responseKind === 'translate')
    );
  }

  /** `body` (a Chat Completions or Responses request to the provider) with the moderation parameter. */
  mark(body: JsonObject): JsonObject {
    return { ...body, moderation: this.#param };
  }

  /** Reads the moderation of a whole answer (the provider's Chat Completions or Responses body). */
  judge(answer: JsonObject): { record: InlineModerationRecord; rejection?: ModerationRejection } {
    const record = this.#record(answer.moderation);
    for (const side of MODERATION_SIDES) {
      const each = record[side];
      if (each?.mode !== 'Block') continue;
      if (each.verdict === undefined)
        return {
          record,
          rejection: { status: 503, message: moderationUnavailableMessage(side), reason: `${side}: ${each.missing}` },
        };
      if (each.verdict.flagged)
        return {
          record,
          rejection: {
            status: 403,
            message: side === 'input' ? DEFAULT_REQUEST_REJECTION : DEFAULT_RESPONSE_REJECTION,
            reason: `${side} flagged (${each.verdict.categories.join(',')})`,
          },
        };
    }
    return { record };
  }

  /** A reader of the moderation results a streamed answer carries (Score only: Block refuses streams). */
  streamReader(): ModerationStreamReader {
    return new ModerationStreamReader((moderation) => this.#record(moderation));
  }

  #record(moderation: unknown): InlineModerationRecord {
    const record: InlineModerationRecord = {};
    for (const side of MODERATION_SIDES) {
      const mode = this.#modes[side];
      if (mode === undefined) continue;
      const value = isPlainObject(moderation) ? moderation[side] : undefined;
      record[side] = { mode, ...readSide(value) };
    }
    return record;
  }
}

/**
 * One side of an answer's `moderation`: Chat Completions' `{"type": "moderation_results",
 * "results": [...]}`, Responses' single result (`{"type": "moderation_result", "flagged", ...}`),
 * or `{"type": "error", "code", "message"}`.
 */
function readSide(value: unknown): { verdict: ModerationVerdict } | { missing: string } {
  if (!isPlainObject(value)) return { missing: 'the answer carried no moderation results' };
  if (value.type === 'error')
    return { missing: `the provider's moderation failed (${typeof value.code === 'string' ? value.code : 'error'})` };
  const verdict = readModerationResults(Array.isArray(value.results) ? value.results : [value]);
  return verdict === undefined ? { missing: 'the moderation results could not be read' } : { verdict };
}

/**
 * Finds the moderation results in a streamed answer's server-sent events as they pass: a Chat
 * Completions chunk's `moderation`, or the `moderation` of a Responses stream's response (its
 * completed event). The last one seen wins. A line longer than MAX_STREAM_LINE is skipped.
 */
export class ModerationStreamReader {
  readonly #decoder = new StringDecoder('utf8');
  readonly #toRecord: (moderation: unknown) => InlineModerationRecord;
  #line = '';
  #skipping = false;
  #found: unknown;

  constructor(toRecord: (moderation: unknown) => InlineModerationRecord) {
    this.#toRecord = toRecord;
  }

  write(chunk: Buffer): void {
    const lines = this.#decoder.write(chunk).split('\n');
    const last = lines.pop()!;
    for (const piece of lines) {
      const line = this.#line + piece;
      this.#line = '';
      if (this.#skipping) this.#skipping = false;
      else this.#read(line);
    }
    if (this.#skipping) return;
    this.#line += last;
    if (this.#line.length > MAX_STREAM_LINE) {
      this.#line = '';
      this.#skipping = true;
    }
  }

  /** What the stream said, once it is over. */
  finish(): InlineModerationRecord {
    if (!this.#skipping) this.#read(this.#line + this.#decoder.end());
    return this.#toRecord(this.#found);
  }

  #read(line: string): void {
    if (!line.startsWith('data:') || !line.includes('"moderation"')) return;
    let event: unknown;
    try {
      event = JSON.parse(line.slice(5));
    } catch {
      return;
    }
    if (!isPlainObject(event)) return;
    const moderation = isPlainObject(event.response) ? event.response.moderation : event.moderation;
    if (isPlainObject(moderation)) this.#found = moderation;
  }
}
