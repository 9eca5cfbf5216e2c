// Anthropic count_tokens requests as Bedrock's CountTokens (POST /model/{modelId}/count-tokens),
// written by the Converse request writer (converse/request.ts): {input: {converse: {messages,
// system, toolConfig, additionalModelRequestFields}}}, the fields of its ConverseTokensRequest
// (anything else the writer produced is dropped, warned). The answer's inputTokens is Anthropic's
// input_tokens.
import { type ExchangeTranslation, inputUsage, keptFields } from '../exchange-translation.ts';
import type { ChatRequest } from '../form/types.ts';
import { numberOr } from '../json.ts';
import { TranslationError, type TranslationWarning } from '../types.ts';
import { writeConverseRequest } from './request.ts';

const COUNTED_FIELDS: ReadonlySet<string> = new Set([
  'messages',
  'system',
  'toolConfig',
  'additionalModelRequestFields',
]);

export function writeConverseCountTokens(request: ChatRequest): ExchangeTranslation {
  const written = writeConverseRequest(request);
  const warnings: TranslationWarning[] = [...(written.warnings ?? [])];
  const converse = keptFields(written.body, COUNTED_FIELDS, "Bedrock's CountTokens", warnings);
  return {
    body: { input: { converse } },
    ...(warnings.length > 0 ? { warnings } : {}),
    errorsFrom: 'converse',
    readAnswer: (answer) => {
      const tokens = numberOr(answer.inputTokens);
      if (tokens === undefined) throw new TranslationError('inputTokens: missing');
      return { body: { input_tokens: tokens }, usage: inputUsage(tokens) };
    },
  };
}
