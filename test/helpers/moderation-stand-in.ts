// A stand-in for OpenAI's moderations API on 127.0.0.1 (`POST /v1/moderations`), speaking its wire
// format: `{"model", "input": text | [texts]}` in, `{"id", "model", "results": [...]}` out, one
// result per text with `flagged`, `categories`, `category_scores` and
// `category_applied_input_types`. A text is flagged under a category when it contains one of that
// category's trigger words (FLAGGING_WORDS); its score is then 0.9, else 0.01. It checks the
// key (an OpenAI-style 401 otherwise), records every request, and can be told to fail.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { closeServer, listen, readBody, sendJson } from './http-server.ts';

/** The words that flag a text, by OpenAI moderation category. */
export const FLAGGING_WORDS: Readonly<Record<string, readonly string[]>> = {
  hate: ['hateful'],
  violence: ['murder'],
  'self-harm': ['hurt myself'],
};

/** OpenAI's moderation categories (those the stand-in answers for every text). */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];

export interface ModerationRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: { model?: string; input?: unknown };
}

/** One moderation result for `text`, as OpenAI writes it. */
export function moderationResult(text: string): Record<string, unknown> {
  const lower = text.toLowerCase();
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const category of MODERATION_CATEGORIES) {
    const fired = (FLAGGING_WORDS[category] ?? []).some((word) => lower.includes(word));
    categories[category] = fired;
    scores[category] = fired ? 0.9 : 0.01;
    applied[category] = ['text'];
  }
  return {
    flagged: Object.values(categories).some(Boolean),
    categories,
    category_scores: scores,
    category_applied_input_types: applied,
  };
}

export interface ModerationStandIn {
  port: number;
  /** The base URL an OpenAI client (or OPENAI_BASE_URL) uses: http://127.0.0.1:<port>/v1. */
  baseUrl: string;
  requests: ModerationRequest[];
  /** The next calls answer this HTTP status (an OpenAI error) instead, until cleared. */
  failWith: number | undefined;
  /** The next calls wait this long before answering. */
  delayMs: number;
  close(): Promise<void>;
}

/** Starts the stand-in; `apiKey` is the key it accepts (Bearer, or the `header` given). */
export async function startModerationStandIn(options: { apiKey: string; header?: string }): Promise<ModerationStandIn> {
  const header = options.header ?? 'authorization';
  const expected = options.header === undefined ? `Bearer ${options.apiKey}` : options.apiKey;
  let server: Server | undefined;
  const standIn: ModerationStandIn = {
    port: 0,
    baseUrl: '',
    requests: [],
    failWith: undefined,
    delayMs: 0,
    close: () => closeServer(server),
  };
  server = createServer(async (req, res) => {
    const text = await readBody(req);
    let body: ModerationRequest['body'];
    try {
      body = JSON.parse(text) as ModerationRequest['body'];
    } catch {
      sendJson(res, 400, openAiError('the body is not JSON', 'invalid_request_error'));
      return;
    }
    standIn.requests.push({ path: req.url ?? '', headers: req.headers, body });
    if (standIn.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, standIn.delayMs));
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/moderations') {
      sendJson(res, 404, openAiError(`no route ${req.method} ${req.url}`, 'invalid_request_error'));
      return;
    }
    if (req.headers[header] !== expected) {
      sendJson(res, 401, openAiError('Incorrect API key provided.', 'invalid_request_error'));
      return;
    }
    if (standIn.failWith !== undefined) {
      sendJson(res, standIn.failWith, openAiError('The server had an error.', 'server_error'));
      return;
    }
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((each) => typeof each === 'string')) {
      sendJson(res, 400, openAiError('input must be a string or an array of strings', 'invalid_request_error'));
      return;
    }
    const model = body.model ?? 'omni-moderation-latest';
    sendJson(res, 200, {
      id: `modr-${standIn.requests.length}`,
      model,
      results: inputs.map((input) => moderationResult(input)),
    });
  });
  standIn.port = await listen(server);
  standIn.baseUrl = `http://127.0.0.1:${standIn.port}/v1`;
  return standIn;
}

function openAiError(message: string, type: string) {
  return { error: { message, type, param: null, code: null } };
}
