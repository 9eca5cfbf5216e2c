// The requests the benchmark sends: a typical Chat Completions call (about 300 bytes of JSON,
// model gpt-4o-mini), its streaming form, and the Anthropic Messages form used to measure the
// Anthropic mock directly. Plus the checks that a target really answered.

export const CHAT_PATH = '/v1/chat/completions';
export const MESSAGES_PATH = '/v1/messages';
export const RESPONSES_PATH = '/v1/responses';
/** The paths of the direct Bedrock and Gemini rows (the model in the path, as the SDKs send it). */
export const CONVERSE_PATH = '/model/bench-model/converse';
export const CONVERSE_STREAM_PATH = '/model/bench-model/converse-stream';
export const GEMINI_PATH = '/v1beta/models/gemini-2.5-flash:generateContent';
export const GEMINI_STREAM_PATH = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse';

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

/**
 * A 4 KiB prompt of plain prose with digits, addresses and names but nothing a builtin guard
 * matches (issue 21's guard rows scan it whole and let it through).
 */
const LONG_PROMPT = (() => {
  const sentence =
    'Order 4471 left the Leeds warehouse at 09:30 on 12 March; the courier, Ana Ruiz, called 3 times before noon. ';
  let text = '';
  while (text.length < 4096) text += sentence;
  return text.slice(0, 4096);
})();

export const CHAT_4K_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [messages[0], { role: 'user', content: LONG_PROMPT }],
  temperature: 0.2,
  max_tokens: 256,
  user: 'bench-user-0042',
});

export const CHAT_4K_STREAM_BODY = JSON.stringify({
  ...JSON.parse(CHAT_4K_BODY),
  stream: true,
  stream_options: { include_usage: true },
});

/** The same conversation as an OpenAI Responses API request (the system prompt as instructions). */
export const RESPONSES_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  instructions: messages[0]!.content,
  input: [{ role: 'user', content: messages[1]!.content }],
  temperature: 0.2,
  max_output_tokens: 256,
  user: 'bench-user-0042',
});

export const RESPONSES_STREAM_BODY = JSON.stringify({ ...JSON.parse(RESPONSES_BODY), stream: true });

/** The same conversation as a Bedrock Converse request (what gw sends the Bedrock mock). */
export const CONVERSE_BODY = JSON.stringify({
  system: [{ text: messages[0]!.content }],
  messages: [{ role: 'user', content: [{ text: messages[1]!.content }] }],
  inferenceConfig: { temperature: 0.2, maxTokens: 256 },
});

/** The same conversation as a Gemini generateContent request. */
export const GEMINI_BODY = JSON.stringify({
  systemInstruction: { parts: [{ text: messages[0]!.content }] },
  contents: [{ role: 'user', parts: [{ text: messages[1]!.content }] }],
  generationConfig: { temperature: 0.2, maxOutputTokens: 256 },
});

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
export type AnswerFormat = 'chat' | 'messages' | 'responses' | 'converse' | 'gemini';

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
  const answer = parsed as Record<string, unknown>;
  const kindProblem = ANSWER_CHECKS[format](answer);
  if (kindProblem !== undefined) return `${kindProblem}: ${body.slice(0, 200)}`;
  const usage = format === 'gemini' ? answer.usageMetadata : answer.usage;
  if (typeof usage !== 'object' || usage === null) return 'no usage in the answer';
  return undefined;
}

const nonEmptyArray = (value: unknown) => Array.isArray(value) && value.length > 0;

/** Why an answer is not of its format's kind (with content), or undefined. */
const ANSWER_CHECKS: Record<AnswerFormat, (answer: Record<string, unknown>) => string | undefined> = {
  chat: (answer) =>
    answer.object !== 'chat.completion'
      ? 'not a chat.completion'
      : nonEmptyArray(answer.choices)
        ? undefined
        : 'no choices in the answer',
  messages: (answer) =>
    answer.type !== 'message'
      ? 'not a message'
      : nonEmptyArray(answer.content)
        ? undefined
        : 'no content in the answer',
  responses: (answer) =>
    answer.object !== 'response'
      ? 'not a response'
      : nonEmptyArray(answer.output)
        ? undefined
        : 'no output in the answer',
  converse: (answer) =>
    nonEmptyArray((answer.output as { message?: { content?: unknown } } | undefined)?.message?.content)
      ? undefined
      : 'not a Converse answer with content',
  gemini: (answer) => (nonEmptyArray(answer.candidates) ? undefined : 'not a generateContent answer with candidates'),
};

/**
 * Why a streamed answer is not an SSE stream (Bedrock's: an AWS event stream), or undefined when it
 * is one.
 */
export function streamAnswerProblem(
  format: AnswerFormat,
  status: number,
  contentType: string,
  body: string,
): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
  if (format === 'converse') {
    return contentType.startsWith('application/vnd.amazon.eventstream')
      ? undefined
      : `content-type ${contentType}, not application/vnd.amazon.eventstream`;
  }
  if (!contentType.startsWith('text/event-stream')) return `content-type ${contentType}, not text/event-stream`;
  if (!body.includes('data:')) return `no SSE data events: ${body.slice(0, 200)}`;
  return undefined;
}
