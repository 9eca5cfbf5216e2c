// Family zeta: Amazon Bedrock, through its Converse API. Every chat request (Chat Completions,
// Messages, Responses) is translated to Converse and sent to /model/{modelId}/converse, or
// /converse-stream when the client streams; the model id goes in the path, escaped as Bedrock's
// own client escapes it (`:` of a versioned id as %3A). The region picks the host
// (bedrock-runtime.{region}.amazonaws.com) and is the signing region of the backend auth
// (cloudone, which the endpoint compiles by default: docs/decisions/0019-bedrock.md). A
// configured guardrail is sent as Converse's guardrailConfig.
import type { ZetaConfig } from '../../../api/types/llm-provider.ts';
import type { JsonObject } from '../formats/index.ts';
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { plainPath } from './paths.ts';
import { ProviderPlanner } from './planner.ts';

/** The region when the provider names none (the API's default). */
export const ZETA_DEFAULT_REGION = 'us-east-1';

/** Bedrock's runtime host of a region. */
export function zetaHost(region: string): string {
  return `bedrock-runtime.${region}.amazonaws.com`;
}

/**
 * A model id as one path segment, as the AWS SDK writes a URI label: percent-encoded, with the
 * characters encodeURIComponent leaves alone except `-_.~` encoded too.
 */
export function modelIdSegment(modelId: string): string {
  return encodeURIComponent(modelId).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function compileZeta(
  config: ZetaConfig,
  address: FamilyAddress,
  name: string | undefined,
): ProviderPlanner | ProviderConfigError {
  if (address.pathPrefix !== undefined) {
    return new ProviderConfigError('pathPrefix', 'applies to the alpha and gamma families only; remove it');
  }
  const region = config.region ?? ZETA_DEFAULT_REGION;
  const guardrail: JsonObject | undefined = config.guardrail && {
    guardrailIdentifier: config.guardrail.identifier,
    guardrailVersion: config.guardrail.version,
  };
  const configuredPath = address.path;
  return new ProviderPlanner({
    name,
    family: 'zeta',
    origin: address.origin(zetaHost(region)),
    service: undefined,
    // A Bedrock API key is a bearer token; signed requests (cloudone) are the default.
    keyStyle: 'bearer',
    model: config.model,
    region,
    routes: new Map(),
    converse: {
      path: (model, stream) =>
        configuredPath ?? plainPath(`/model/${modelIdSegment(model)}/${stream ? 'converse-stream' : 'converse'}`),
      ...(guardrail === undefined ? {} : { fields: { guardrailConfig: guardrail } }),
    },
    // Passthrough and Detect requests go to the client's own path (Bedrock's paths have no base).
    forwardedPath: (clientPath) => configuredPath ?? plainPath(clientPath),
    forwardedAnthropicVersion: false,
  });
}
