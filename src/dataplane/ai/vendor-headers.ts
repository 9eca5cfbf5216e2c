// Headers of one vendor's API do not reach another vendor's (issue 20): a Messages client's
// anthropic-version and anthropic-beta mean nothing to OpenAI, Gemini or Bedrock, and a client's
// x-goog-* or x-amz-* headers mean nothing to Anthropic. When gw translates a request, the client's
// headers of the other vendors are dropped; the provider's own vendor's pass as they came. A request
// forwarded as it is (Passthrough, Detect, a provider of the client's own format) keeps them all.
// A model hosted on a cloud keeps that cloud's headers too: a Claude model on Vertex AI is sent
// Anthropic's format, and a client's x-goog-user-project still means something to Google.
import type { ProviderFamily } from '../../api/vendors.ts';
import type { UpstreamFormat } from './providers/index.ts';

/** Header name prefixes each vendor's API defines, by the wire formats that vendor speaks. */
const VENDOR_PREFIXES: readonly { prefixes: readonly string[]; formats: ReadonlySet<string> }[] = [
  { prefixes: ['anthropic-'], formats: new Set(['messages', 'count_tokens']) },
  { prefixes: ['openai-'], formats: new Set(['completions', 'responses', 'embeddings']) },
  { prefixes: ['x-goog-'], formats: new Set(['gemini', 'gemini_count_tokens', 'vertex-predict']) },
  { prefixes: ['x-amz-', 'x-amzn-'], formats: new Set(['converse', 'bedrock-invoke']) },
];

/** The header prefixes of the cloud a family's models are hosted on, whatever format they speak. */
const PLATFORM_PREFIXES: Partial<Record<ProviderFamily, readonly string[]>> = {
  delta: ['x-goog-'],
  epsilon: ['x-goog-'],
  zeta: ['x-amz-', 'x-amzn-'],
};

/** The prefixes of the vendors other than the one that speaks `format` and the family's cloud. */
function foreignPrefixes(format: UpstreamFormat, family: ProviderFamily): readonly string[] {
  const platform = PLATFORM_PREFIXES[family] ?? [];
  return VENDOR_PREFIXES.filter((vendor) => !vendor.formats.has(format))
    .flatMap((vendor) => vendor.prefixes)
    .filter((prefix) => !platform.includes(prefix));
}

const FOREIGN = new Map<string, readonly string[]>();

/**
 * Removes from `headers` (lower-case names, as the proxy copies them) those of other vendors than
 * `format`'s and the cloud's that hosts `family`'s models.
 */
export function dropForeignVendorHeaders(
  headers: Record<string, string | string[]>,
  format: UpstreamFormat,
  family: ProviderFamily,
): void {
  const key = `${format}/${family}`;
  let prefixes = FOREIGN.get(key);
  if (prefixes === undefined) {
    prefixes = foreignPrefixes(format, family);
    FOREIGN.set(key, prefixes);
  }
  for (const name in headers) {
    // Vendor prefixes all start with a letter among a, o, x: most names are passed over at once.
    const first = name.charCodeAt(0);
    if (first !== 97 && first !== 111 && first !== 120) continue;
    for (const prefix of prefixes) {
      if (name.startsWith(prefix)) {
        delete headers[name];
        break;
      }
    }
  }
}
