// The requests the benchmark sends: a typical Chat Completions call (about 300 bytes of JSON,
// model gpt-4o-mini), its streaming form, and the Anthropic Messages form used to measure the
// Anthropic mock directly. Plus the checks that a target really answered.

export const CHAT_PATH = '/v1/chat/completions';
export const MESSAGES_PATH = '/v1/messages';

const messages = [
  { role: 'system', content: 'You are a concise assistant for developers. Answer in plain English.' },
  {
    role: 'user',
    content: 'Explain in two sentences why an HTTP proxy keeps upstream connections alive between requests.',
  },
];

export const CHAT_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages,
  temperature: 0.2,
  max_tokens: 256,
  user: 'bench-user-0042',
});

export const CHAT_STREAM_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages,
  temperature: 0.2,
  max_tokens: 256,
  user: 'bench-user-0042',
  stream: true,
  stream_options: { include_usage: true },
});

/** The same conversation as an Anthropic Messages request (system moved to the top level). */
export const MESSAGES_BODY = JSON.stringify({
  model: 'claude-mock-1',
  system: messages[0]!.content,
  messages: [messages[1]],
  temperature: 0.2,
  max_tokens: 256,
});

export const MESSAGES_STREAM_BODY = JSON.stringify({ ...JSON.parse(MESSAGES_BODY), stream: true });

/** Headers of every Chat Completions request; targets add their own (Portkey's routing headers). */
export const CHAT_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  authorization: 'Bearer sk-bench',
};

export const MESSAGES_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  'x-api-key': 'sk-bench',
  'anthropic-version': '2023-06-01',
};

/** The wire format of an answer: what the client asked in. */
export type AnswerFormat = 'chat' | 'messages';

/**
 * Why a non-streaming answer is not a Chat Completions `chat.completion` (or a Messages `message`)
 * with usage; undefined when it is one.
 */
export function answerProblem(format: AnswerFormat, status: number, body: string): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `not JSON: ${body.slice(0, 200)}`;
  }
  const answer = parsed as { object?: unknown; type?: unknown; choices?: unknown; content?: unknown; usage?: unknown };
  if (format === 'chat') {
    if (answer.object !== 'chat.completion') return `not a chat.completion: ${body.slice(0, 200)}`;
    if (!Array.isArray(answer.choices) || answer.choices.length === 0) return 'no choices in the answer';
  } else {
    if (answer.type !== 'message') return `not a message: ${body.slice(0, 200)}`;
    if (!Array.isArray(answer.content) || answer.content.length === 0) return 'no content in the answer';
  }
  if (typeof answer.usage !== 'object' || answer.usage === null) return 'no usage in the answer';
  return undefined;
}

/** Why a streamed answer is not an SSE stream, or undefined when it is one. */
export function streamAnswerProblem(status: number, contentType: string, body: string): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
  if (!contentType.startsWith('text/event-stream')) return `content-type ${contentType}, not text/event-stream`;
  if (!body.includes('data:')) return `no SSE data events: ${body.slice(0, 200)}`;
  return undefined;
}
