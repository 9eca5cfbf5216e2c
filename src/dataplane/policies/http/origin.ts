// Web origins (scheme://host[:port]) as CORS and CSRF compare them: scheme and host are
// case-insensitive, and a port that is the scheme's default is the same origin without it
// (https://a.example:443 is https://a.example).

export interface Origin {
  /** Lower-case scheme. */
  readonly scheme: string;
  /** Lower-case host; IPv6 addresses keep their brackets. */
  readonly host: string;
  /** The port as written, '' when absent or the scheme's default. */
  readonly port: string;
}

const ORIGIN = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(\[[0-9A-Fa-f:.]+\]|[^/?#@\s:[\]]+)(?::([0-9]{1,5}))?$/;
const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', ws: '80', wss: '443' };

/** The origin `text` names, or undefined for anything else (`null`, a URL with a path, a bad port). */
export function parseOrigin(text: string): Origin | undefined {
  const match = ORIGIN.exec(text);
  if (!match) return undefined;
  const scheme = match[1]!.toLowerCase();
  let port = match[3] ?? '';
  if (port !== '') {
    const number = Number(port);
    if (number < 1 || number > 65535) return undefined;
    port = String(number);
    if (DEFAULT_PORTS[scheme] === port) port = '';
  }
  return { scheme, host: match[2]!.toLowerCase(), port };
}

/** One spelling per origin (lower case, default port dropped), for comparing with ===. */
export function originKey(origin: Origin): string {
  return origin.port === '' ? `${origin.scheme}://${origin.host}` : `${origin.scheme}://${origin.host}:${origin.port}`;
}

/** originKey of `text`, or undefined when it is not an origin. */
export function canonicalOrigin(text: string): string | undefined {
  const origin = parseOrigin(text);
  return origin ? originKey(origin) : undefined;
}
