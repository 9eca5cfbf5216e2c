// MCP protocol versions (date strings that sort in time order) and how gw negotiates them: with
// the client it offers the version the client asked for when gw knows it, else its newest; with
// each target it asks for that same version; the client gets the lowest version of all that were
// agreed, so that every target can be spoken to in it (docs/mcp.md "Protocol versions").

/** The versions gw speaks, oldest first. 2024-11-05 is the HTTP+SSE era, kept for older servers. */
export const SUPPORTED_VERSIONS: readonly string[] = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
export const LATEST_VERSION = '2025-11-25';
/** What a server assumes without an MCP-Protocol-Version header (the 2025-06-18 transport rule). */
export const DEFAULT_HEADER_VERSION = '2025-03-26';

const SUPPORTED = new Set(SUPPORTED_VERSIONS);

export function isSupportedVersion(version: unknown): version is string {
  return typeof version === 'string' && SUPPORTED.has(version);
}

/** The version gw offers for a client's requested one: the same when gw knows it, else gw's newest. */
export function offeredVersion(requested: unknown): string {
  return isSupportedVersion(requested) ? requested : LATEST_VERSION;
}

/** The lowest (oldest) of the versions. */
export function lowestVersion(versions: Iterable<string>, start: string): string {
  let lowest = start;
  for (const version of versions) if (version < lowest) lowest = version;
  return lowest;
}

/** JSON-RPC batches exist in 2025-03-26 and before; 2025-06-18 removed them. */
export function allowsBatches(version: string): boolean {
  return version <= '2025-03-26';
}

/** Servers send a priming SSE event (an id and empty data) from 2025-11-25 on; older clients may not expect one. */
export function wantsPrimingEvent(version: string): boolean {
  return version >= '2025-11-25';
}
