// A fetch for the official SDKs (openai, @anthropic-ai/sdk, the MCP SDK) that changes the body
// they send: for tests of bodies an SDK would never write itself (a key twice, bytes that are not
// UTF-8), sent the way the SDK sends everything else.

/** Changes a request body (the SDK's JSON text); undefined keeps it. */
export type BodyRewrite = (text: string) => string | Uint8Array | undefined;

/** `fetch` with every string body passed through `rewrite` first. */
export function rewritingFetch(rewrite: BodyRewrite): typeof fetch {
  return (input, init) => {
    if (typeof init?.body !== 'string') return fetch(input, init);
    const body = rewrite(init.body) ?? init.body;
    return fetch(input, { ...init, body });
  };
}

/** The UTF-8 bytes of `text` with the bytes `inserted` placed right after the first `after`. */
export function withBytesAfter(text: string, after: string, inserted: number[]): Uint8Array {
  const at = text.indexOf(after);
  if (at === -1) throw new Error(`${after} is not in ${text}`);
  const head = Buffer.from(text.slice(0, at + after.length), 'utf8');
  return Buffer.concat([head, Buffer.from(inserted), Buffer.from(text.slice(at + after.length), 'utf8')]);
}

/** `text` with `replacement` in place of the first `search`, which must be there. */
export function replacedOnce(text: string, search: string, replacement: string): string {
  if (!text.includes(search)) throw new Error(`${search} is not in ${text}`);
  return text.replace(search, () => replacement);
}
