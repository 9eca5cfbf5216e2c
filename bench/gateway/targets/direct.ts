// The baselines: the load generator talks to a mock itself. The OpenAI one is the reference of
// every target; the Anthropic, Bedrock and Gemini ones those of gw's translated paths, which end
// at those mocks.
import {
  CHAT_BODY,
  CHAT_HEADERS,
  CHAT_PATH,
  CHAT_STREAM_BODY,
  CONVERSE_BODY,
  CONVERSE_PATH,
  CONVERSE_STREAM_PATH,
  GEMINI_BODY,
  GEMINI_PATH,
  GEMINI_STREAM_PATH,
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

/** Bedrock's Converse and ConverseStream, unsigned (the mock checks no signature). */
export const directBedrock: TargetDefinition = {
  id: 'direct-bedrock',
  label: 'direct to the Bedrock mock',
  upstreamFamily: 'bedrock',
  start: async (ports) => ({
    format: 'converse',
    load: { url: upstreamUrl(ports.bedrock) + CONVERSE_PATH, headers: JSON_HEADERS, body: CONVERSE_BODY },
    stream: { url: upstreamUrl(ports.bedrock) + CONVERSE_STREAM_PATH, headers: JSON_HEADERS, body: CONVERSE_BODY },
    notes: [],
    stop: async () => {},
  }),
};

export const directGemini: TargetDefinition = {
  id: 'direct-gemini',
  label: 'direct to the Gemini mock',
  upstreamFamily: 'gemini',
  start: async (ports) => ({
    format: 'gemini',
    load: { url: upstreamUrl(ports.gemini) + GEMINI_PATH, headers: JSON_HEADERS, body: GEMINI_BODY },
    stream: { url: upstreamUrl(ports.gemini) + GEMINI_STREAM_PATH, headers: JSON_HEADERS, body: GEMINI_BODY },
    notes: [],
    stop: async () => {},
  }),
};

const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json' };
