// Content negotiation as Kubernetes clients use it: an Accept header lists media types in order
// of preference, some with parameters that ask for another representation of the same resource
// (`application/json;as=Table;v=v1;g=meta.k8s.io`,
// `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`). The first one the
// server can produce wins; protobuf types are skipped (gw speaks JSON).

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

export function parseMediaType(text: string): MediaType {
  const [type = '', ...rest] = text.split(';').map((part) => part.trim());
  const params: Record<string, string> = {};
  for (const param of rest) {
    const equals = param.indexOf('=');
    if (equals === -1) continue;
    params[param.slice(0, equals).trim().toLowerCase()] = param
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return { type: type.toLowerCase(), params };
}

export function parseAccept(header: string | undefined): MediaType[] {
  if (!header || header.trim() === '') return [{ type: '*/*', params: {} }];
  return header
    .split(',')
    .map((entry) => parseMediaType(entry))
    .filter((media) => media.type !== '' && media.params.q !== '0');
}

function acceptsJson(media: MediaType): boolean {
  return media.type === 'application/json' || media.type === '*/*' || media.type === 'application/*';
}

/** A representation asked for by `as`/`g`/`v`, or undefined for the plain resource. */
export interface Representation {
  as: string;
  group: string;
  version: string;
}

/**
 * The first acceptable representation among `offers` (each `as`/`g`/versions), or 'plain' for the
 * resource as JSON; undefined when nothing acceptable can be produced (406).
 */
export function negotiate(
  header: string | undefined,
  offers: readonly { as: string; group: string; versions: readonly string[] }[],
): Representation | 'plain' | undefined {
  for (const media of parseAccept(header)) {
    if (!acceptsJson(media)) continue;
    const { as, g, v } = media.params;
    if (as === undefined) return 'plain';
    const offer = offers.find(
      (candidate) => candidate.as === as && candidate.group === g && candidate.versions.includes(v ?? ''),
    );
    if (offer) return { as, group: offer.group, version: v! };
  }
  return undefined;
}

/** The media type of a request body, without parameters (charset). */
export function contentTypeOf(header: string | undefined): string {
  return parseMediaType(header ?? '').type;
}
