// undici, loaded on first use: plain HTTP routes, MCP backends, HTTP/2 providers, remote JWKS,
// external authorization over HTTP and the identity-provider clients use it; a gateway that only
// serves LLM traffic to HTTP/1.1 providers (gw's own client) never does, and does not carry its
// 1.1 MB of source and its code (docs/benchmarks.md, "Memory").
import type * as Undici from 'undici';
import { loadOnFirstUse } from './load-on-first-use.ts';

export const undici = loadOnFirstUse<typeof Undici>('undici');
