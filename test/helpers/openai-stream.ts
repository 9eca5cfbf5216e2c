// What a streamed Chat Completion adds up to, read through the openai SDK's stream: its text and
// the usage chunk (when the client asked for one).
import type OpenAI from 'openai';

export interface StreamedCompletion {
  text: string;
  usage: OpenAI.CompletionUsage | undefined;
}

export async function collectChatStream(
  stream: AsyncIterable<OpenAI.ChatCompletionChunk>,
): Promise<StreamedCompletion> {
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, usage };
}
