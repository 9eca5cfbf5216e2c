// A stand-in for OpenAI's moderated completions on 127.0.0.1: Chat Completions (whole and
// streamed) and Responses that answer `echo: <last text>` (with "the forbidden word" written as
// "murder", so an answer can be flagged when its prompt is not) and, when the request carries the
// `moderation` parameter, report moderation results as OpenAI does: Chat Completions'
// `moderation: {input: {type: "moderation_results", model, results}, output: {...}}` (the
// stream's in a chunk of its own before [DONE]), Responses' `moderation: {input: <result>,
// output: <result>}`. Results come from the moderations stand-in's word list. It reports and does
// not block, as an OpenAI-compatible server that leaves blocking to gw would.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { closeServer, listen, readBody, sendJson } from './http-server.ts';
import { moderationResult } from './moderation-stand-in.ts';

export interface ModeratedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface ModeratedOpenAiStandIn {
  port: number;
  requests: ModeratedRequest[];
  close(): Promise<void>;
}

/** The stand-in's answer to `text`. */
export const moderatedAnswer = (text: string): string => `echo: ${text.replaceAll('the forbidden word', 'murder')}`;

/** Every string in a message's content (a string, or parts with `text`). */
function texts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) =>
    typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string'
      ? [(part as { text: string }).text]
      : [],
  );
}

type Side = 'input' | 'output';

/** The sides the request's moderation policy names (both when it names none). */
function sides(moderation: unknown): Side[] {
  const policy = (moderation as { policy?: Record<string, unknown> }).policy;
  if (policy === undefined || policy === null) return ['input', 'output'];
  return (['input', 'output'] as const).filter((side) => policy[side] !== undefined && policy[side] !== null);
}

function result(model: string, text: string) {
  return { ...moderationResult(text), model, type: 'moderation_result' };
}

export async function startModeratedOpenAiStandIn(apiKey: string): Promise<ModeratedOpenAiStandIn> {
  let server: Server | undefined;
  const standIn: ModeratedOpenAiStandIn = { port: 0, requests: [], close: () => closeServer(server) };
  server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    standIn.requests.push({ path: req.url ?? '', headers: req.headers, body });
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      sendJson(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error' } });
      return;
    }
    const model = String(body.model);
    const moderation = body.moderation as { model?: string } | undefined;
    const moderationModel = moderation?.model ?? 'omni-moderation-latest';
    if (req.url === '/v1/chat/completions') {
      const messages = (body.messages as Array<{ content?: unknown }>) ?? [];
      const prompt = messages.flatMap((message) => texts(message.content));
      const answer = moderatedAnswer(prompt.at(-1) ?? '');
      const report: Record<string, unknown> = {};
      if (moderation !== undefined)
        for (const side of sides(moderation))
          report[side] = {
            type: 'moderation_results',
            model: moderationModel,
            results: (side === 'input' ? prompt : [answer]).map((text) => result(moderationModel, text)),
          };
      const base = { id: 'chatcmpl-moderated', created: 1_700_000_000, model };
      if (body.stream !== true) {
        sendJson(res, 200, {
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: answer, refusal: null },
              finish_reason: 'stop',
              logprobs: null,
            },
          ],
          usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
          ...(moderation === undefined ? {} : { moderation: report }),
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (fields: Record<string, unknown>) =>
        res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...fields })}\n\n`);
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      for (const word of answer.split(/(?<= )/))
        chunk({ choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      if (moderation !== undefined) chunk({ choices: [], moderation: report });
      res.end('data: [DONE]\n\n');
      return;
    }
    if (req.url === '/v1/responses') {
      const input = body.input;
      const prompt = [
        ...texts(body.instructions),
        ...(typeof input === 'string'
          ? [input]
          : Array.isArray(input)
            ? input.flatMap((item) => texts((item as { content?: unknown }).content))
            : []),
      ];
      const answer = moderatedAnswer(prompt.at(-1) ?? '');
      const report: Record<string, unknown> = {};
      if (moderation !== undefined)
        for (const side of sides(moderation))
          report[side] = result(moderationModel, side === 'input' ? prompt.join('\n') : answer);
      sendJson(res, 200, {
        id: 'resp_moderated',
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model,
        output: [
          {
            type: 'message',
            id: 'msg_moderated',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: answer, annotations: [] }],
          },
        ],
        usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
        ...(moderation === undefined ? {} : { moderation: report }),
      });
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${req.url}`, type: 'invalid_request_error' } });
  });
  standIn.port = await listen(server);
  return standIn;
}
