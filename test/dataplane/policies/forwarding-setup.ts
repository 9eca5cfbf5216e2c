// Shared by the forwarding*.test.ts files: gw in-process with HTTPRoute `web` whose rules (named
// after the path prefix they serve) each carry a GwPolicy traffic section, in front of a recording
// upstream whose answers the test scripts; and request bodies sent in chunks.
import { Readable } from 'node:stream';
import type { PolicyRule } from '../../helpers/policy-yaml.ts';
import type { Answer } from '../../helpers/recording-upstream.ts';
import { startRulesGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

/** 200 with "ok <path>": the upstream's answer until a test scripts another. */
export const answerPath: Answer = (req, res) => {
  const body = `ok ${req.url}`;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/** gw with `rules` and `moreResources` (YAML documents ending with ---), the upstream answering answerPath. */
export function startForwardingGateway(rules: PolicyRule[], moreResources = ''): Promise<UpstreamGateway> {
  return startRulesGateway(rules, { moreResources, answer: answerPath });
}

/** A body sent chunked (no Content-Length): `count` chunks of `size` bytes, one per turn of the event loop. */
export function chunked(count: number, size: number, fill = 'x'): Readable {
  async function* chunks(): AsyncIterable<Buffer> {
    for (let i = 0; i < count; i++) {
      yield Buffer.alloc(size, fill.charCodeAt(0) + (i % 26));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** The bytes chunked(count, size, fill) sends. */
export function chunkedBytes(count: number, size: number, fill = 'x'): Buffer {
  return Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.alloc(size, fill.charCodeAt(0) + (i % 26))));
}
