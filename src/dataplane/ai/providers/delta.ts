// Family delta: the Gemini API (generativelanguage.googleapis.com). Chat Completions, Messages and
// Responses API requests are translated to generateContent; the model and streaming are in the
// URL (/v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse), and the key goes in
// x-goog-api-key (keyStyle). Embeddings requests are translated to batchEmbedContents and
// count_tokens requests to countTokens, at the same model path. docs/decisions/0020-gemini.md says
// why gw speaks generateContent rather than Gemini's OpenAI-compatible endpoint.
import type { DeltaConfig } from '../../../api/types/llm-provider.ts';
import type { GeminiMethod } from '../formats/gemini/path.ts';
import { type ExchangeTranslation, translateCountTokens, translateEmbeddings } from '../formats/index.ts';
import type { ClientFormat } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import type { ConfiguredPath } from './paths.ts';
import {
  compileHosted,
  type ExchangePlanner,
  type HostedFamily,
  type PlannedExchange,
  type ProviderPlanner,
} from './planner.ts';
import type { UpstreamFormat } from './types.ts';

export const DELTA_DEFAULT_HOST = 'generativelanguage.googleapis.com';

// A Gemini model id (gemini-2.5-flash, gemini-2.0-flash-001): the only text gw puts in the path,
// so nothing else (a slash, a query, a dot segment) may reach it.
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const STREAM_QUERY: readonly (readonly [string, string])[] = Object.freeze([['alt', 'sse'] as const]);

/** The bare model id of a request's model (`models/` dropped), or why it cannot go in the path. */
function geminiModelId(model: string | undefined, method: string): { id: string } | string {
  if (model === undefined) return `The request names no model; ${method} needs one (or set the provider model).`;
  // The SDKs' resource name form: models/gemini-2.5-flash.
  const id = model.startsWith('models/') ? model.slice('models/'.length) : model;
  if (!MODEL_ID.test(id)) {
    return `The model ${JSON.stringify(model)} is not a Gemini model id (letters, digits, ".", "_" and "-").`;
  }
  return { id };
}

/**
 * The path of one request's method (generateContent, streamGenerateContent, countTokens). Under
 * the default (or a pathPrefix) base the model and the method are appended; a configured `path`
 * is used as it is, for generateContent and its stream only. A stream always asks for SSE. The
 * epsilon family (Vertex AI) routes its Gemini models the same way, under its own base.
 */
export function geminiRoute(
  route: ConfiguredPath,
  model: string | undefined,
  method: GeminiMethod,
  configuredPath: boolean,
): ConfiguredPath | string {
  const stream = method === 'streamGenerateContent';
  const query =
    stream && !route.query.some(([name]) => name === 'alt') ? [...route.query, ...STREAM_QUERY] : route.query;
  if (configuredPath) {
    if (method === 'countTokens') return configuredPathRefusal(method);
    return { path: route.path, query };
  }
  const checked = geminiModelId(model, method);
  if (typeof checked === 'string') return checked;
  return { path: `${route.path}/${checked.id}:${method}`, query };
}

/** Why a method other than generateContent is not sent to a configured path. */
function configuredPathRefusal(method: string): string {
  return `The provider's configured path is its generateContent endpoint; ${method} is served only under the provider's default paths (remove path).`;
}

/**
 * An exchange with one method of a Google model (`{models route}/{id}:{method}`): the model id is
 * checked as for generateContent, then the request is translated. Not under a configured path,
 * which is the generateContent endpoint.
 */
export function googleModelExchange(
  route: ConfiguredPath,
  model: string | undefined,
  method: string,
  configuredPath: boolean,
  providerFormat: UpstreamFormat,
  translate: (id: string) => ExchangeTranslation | string,
): PlannedExchange | string {
  if (configuredPath) return configuredPathRefusal(method);
  const checked = geminiModelId(model, method);
  if (typeof checked === 'string') return checked;
  const translation = translate(checked.id);
  if (typeof translation === 'string') return translation;
  return {
    route: { path: `${route.path}/${checked.id}:${method}`, query: route.query },
    providerFormat,
    model: checked.id,
    translation,
  };
}

/** Embeddings (batchEmbedContents) and count_tokens (countTokens) on the Gemini API. */
function deltaExchanges(configuredPath: boolean): ReadonlyMap<ClientFormat, ExchangePlanner> {
  const gemini = (routes: ReadonlyMap<UpstreamFormat, ConfiguredPath>) => routes.get('gemini')!;
  return new Map<ClientFormat, ExchangePlanner>([
    [
      'embeddings',
      (body, model, routes) =>
        googleModelExchange(gemini(routes), model, 'batchEmbedContents', configuredPath, 'gemini', (id) =>
          translateEmbeddings('gemini', body, id),
        ),
    ],
    [
      'count_tokens',
      (body, model, routes) =>
        googleModelExchange(gemini(routes), model, 'countTokens', configuredPath, 'gemini', (id) =>
          translateCountTokens('gemini', body, id),
        ),
    ],
  ]);
}

export function compileDelta(config: DeltaConfig, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  const configuredPath = address.path !== undefined;
  const delta: HostedFamily = {
    family: 'delta',
    defaultHost: DELTA_DEFAULT_HOST,
    keyStyle: 'x-goog-api-key',
    basePath: '/v1beta',
    paths: [['gemini', '/models']],
    forwardedAnthropicVersion: false,
    modelRoute: (route, model, method) => geminiRoute(route, model, method, configuredPath),
    exchanges: deltaExchanges(configuredPath),
  };
  return compileHosted(delta, address, name, config.model);
}
