// An agent card as gw serves it: every URL in it that pointed at the agent names gw instead, at
// the address and path prefix the client reached gw through, so that a client that found the
// agent through gw keeps talking to it through gw (decision 0047). The URLs where A2A calls go are
// always rewritten — v0.3's `url` and `additionalInterfaces[].url`, v1.0's
// `supportedInterfaces[].url` — and any other absolute URL in the card on one of the agent's own
// origins (an icon, documentation the agent serves). Interfaces gw cannot carry (gRPC) are left out:
// a client choosing them would reach the agent around gw.
//
// Paths map as the route maps them: the path the client asked for and the path gw sent upstream
// share a tail (`/.well-known/agent-card.json`, or more); what comes before it on each side is
// the route's prefix at gw and the agent's base. An agent URL under the agent's base gets gw's
// prefix in its place; any other agent path is put under gw's prefix whole.

/** Where the client reached the card, and where gw fetched it. */
export interface CardAddress {
  /** scheme://host[:port] the client reached gw at (proxy/request-origin.ts). */
  readonly gatewayOrigin: string;
  /** The path the client asked for (normalised), without the query. */
  readonly clientPath: string;
  /** The path gw asked the agent for (after the route's rewrites), without the query. */
  readonly upstreamPath: string;
  /** Origins of the agent as gw reaches it: URLs on them point at the agent wherever they are in the card. */
  readonly agentOrigins: readonly string[];
}

export type CardRewrite = { readonly card: Record<string, unknown> } | { readonly problem: string };

/** Transports (v0.3 `transport`, v1.0 `protocolBinding`) gw proxies on an a2a backend. */
const CARRIED_TRANSPORTS = new Set(['JSONRPC', 'HTTP+JSON']);

/** Rewrites `card` (parsed JSON, changed in place) for a client at `address`; a problem when it is no card. */
export function rewriteAgentCard(card: unknown, address: CardAddress): CardRewrite {
  if (!isObject(card)) return { problem: 'the agent card is not a JSON object' };
  const hasUrl = typeof card.url === 'string';
  if (!hasUrl && !Array.isArray(card.supportedInterfaces))
    return { problem: 'the agent card names no URL (neither url nor supportedInterfaces)' };
  const mapping = new UrlMapping(address, card);
  if (Array.isArray(card.supportedInterfaces)) {
    // A2A v1.0: the interfaces in order of preference.
    card.supportedInterfaces = carriedInterfaces(card.supportedInterfaces, 'protocolBinding', mapping);
  }
  if (Array.isArray(card.additionalInterfaces)) {
    // A2A v0.3: the main url (preferredTransport) and others.
    card.additionalInterfaces = carriedInterfaces(card.additionalInterfaces, 'transport', mapping);
  }
  if (hasUrl) {
    const preferred = typeof card.preferredTransport === 'string' ? card.preferredTransport : 'JSONRPC';
    if (!CARRIED_TRANSPORTS.has(preferred.toUpperCase())) {
      // The main url speaks a transport gw does not carry: another interface becomes the main one.
      const other = (card.additionalInterfaces as unknown[] | undefined)?.[0];
      if (!isObject(other))
        return { problem: `the agent offers only the ${preferred} transport, which gw does not proxy` };
      card.preferredTransport = other.transport;
      card.url = other.url;
    } else card.url = mapping.interfaceUrl(card.url as string) ?? mapping.base();
  }
  for (const key of Object.keys(card)) {
    if (key !== 'url' && key !== 'supportedInterfaces' && key !== 'additionalInterfaces')
      card[key] = mapping.agentUrlsIn(card[key]);
  }
  return { card };
}

/** The interfaces gw carries, their URLs on gw; one with a URL gw cannot read is left out. */
function carriedInterfaces(
  interfaces: unknown[],
  transportField: 'transport' | 'protocolBinding',
  mapping: UrlMapping,
): unknown[] {
  const carried: unknown[] = [];
  for (const entry of interfaces) {
    if (!isObject(entry) || typeof entry.url !== 'string') continue;
    const transport = entry[transportField];
    if (typeof transport === 'string' && !CARRIED_TRANSPORTS.has(transport.toUpperCase())) continue;
    const url = mapping.interfaceUrl(entry.url);
    if (url !== undefined) carried.push({ ...entry, url });
  }
  return carried;
}

class UrlMapping {
  readonly #origin: string;
  /** The route's prefix at gw ('' for none). */
  readonly #gatewayPrefix: string;
  /** The agent's base path before the shared tail ('' for none). */
  readonly #agentPrefix: string;
  readonly #agentOrigins: Set<string>;

  constructor(address: CardAddress, card: Record<string, unknown>) {
    this.#origin = address.gatewayOrigin;
    const client = address.clientPath.split('/');
    const upstream = address.upstreamPath.split('/');
    // The shared tail, segment by segment (the leading empty segment of each stays).
    let shared = 0;
    while (
      shared < client.length - 1 &&
      shared < upstream.length - 1 &&
      client[client.length - 1 - shared] === upstream[upstream.length - 1 - shared]
    )
      shared++;
    this.#gatewayPrefix = trimSlash(client.slice(0, client.length - shared).join('/'));
    this.#agentPrefix = trimSlash(upstream.slice(0, upstream.length - shared).join('/'));
    this.#agentOrigins = new Set(address.agentOrigins);
    // The origins the card gives its interfaces are the agent's, whatever name it knows itself by.
    for (const list of [card.supportedInterfaces, card.additionalInterfaces]) {
      if (!Array.isArray(list)) continue;
      for (const entry of list) if (isObject(entry)) this.#addOrigin(entry.url);
    }
    this.#addOrigin(card.url);
  }

  /** gw's URL of the agent's base: where a v0.3 card's url goes when the agent's cannot be read. */
  base(): string {
    return `${this.#origin}${this.#gatewayPrefix || '/'}`;
  }

  /** An interface's URL on gw; undefined when it is no http(s) URL. */
  interfaceUrl(value: string): string | undefined {
    const url = httpUrl(value);
    return url && this.#onGateway(url);
  }

  /** `value` with every URL on one of the agent's origins rewritten (strings, arrays and objects, recursively). */
  agentUrlsIn(value: unknown): unknown {
    if (typeof value === 'string') {
      const url = httpUrl(value);
      return url && this.#agentOrigins.has(url.origin) ? this.#onGateway(url) : value;
    }
    if (Array.isArray(value)) return value.map((item) => this.agentUrlsIn(item));
    if (isObject(value)) {
      for (const key of Object.keys(value)) value[key] = this.agentUrlsIn(value[key]);
    }
    return value;
  }

  #onGateway(url: URL): string {
    return `${this.#origin}${this.#path(url.pathname)}${url.search}${url.hash}`;
  }

  /** An agent path as gw serves it. */
  #path(path: string): string {
    const agent = this.#agentPrefix;
    let rest = path;
    if (agent !== '' && (path === agent || path.startsWith(`${agent}/`))) rest = path.slice(agent.length);
    const mapped = this.#gatewayPrefix + rest;
    return mapped === '' ? '/' : mapped;
  }

  #addOrigin(value: unknown): void {
    if (typeof value !== 'string') return;
    const url = httpUrl(value);
    if (url) this.#agentOrigins.add(url.origin);
  }
}

/** An absolute http or https URL, or undefined. */
function httpUrl(value: string): URL | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  const url = URL.parse(value);
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url : undefined;
}

function trimSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
