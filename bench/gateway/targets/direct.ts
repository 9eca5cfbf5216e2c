// The baselines: the load generator talks to a mock itself. The OpenAI one is the reference of
// every target; the Anthropic one that of gw's translated path, which ends at that mock.
import {
  CHAT_BODY,
  CHAT_HEADERS,
  CHAT_PATH,
  CHAT_STREAM_BODY,
  MESSAGES_BODY,
  MESSAGES_HEADERS,
  MESSAGES_PATH,
  MESSAGES_STREAM_BODY,
} from '../chat-request.ts';
import { upstreamUrl } from '../upstream.ts';
import type { TargetDefinition } from './target.ts';

export const directOpenAi: TargetDefinition = {
  id: 'direct',
  label: 'direct to the OpenAI mock',
  upstreamFamily: 'openai',
  start: async (ports) => ({
    format: 'chat',
    load: { url: upstreamUrl(ports.openaiFixed) + CHAT_PATH, headers: CHAT_HEADERS, body: CHAT_BODY },
    stream: { url: upstreamUrl(ports.openaiStream) + CHAT_PATH, headers: CHAT_HEADERS, body: CHAT_STREAM_BODY },
    notes: [],
    stop: async () => {},
  }),
};

export const directAnthropic: TargetDefinition = {
  id: 'direct-anthropic',
  label: 'direct to the Anthropic mock',
  upstreamFamily: 'anthropic',
  start: async (ports) => ({
    format: 'messages',
    load: { url: upstreamUrl(ports.anthropicFixed) + MESSAGES_PATH, headers: MESSAGES_HEADERS, body: MESSAGES_BODY },
    stream: {
      url: upstreamUrl(ports.anthropicStream) + MESSAGES_PATH,
      headers: MESSAGES_HEADERS,
      body: MESSAGES_STREAM_BODY,
    },
    notes: [],
    stop: async () => {},
  }),
};
