// Shared by the http-policies*.test.ts files: gw in-process with one HTTPRoute `web` whose rules
// (named after the path prefix they serve) each carry a GwPolicy, in front of a recording
// upstream whose answers the test steers from the request.
import type { PolicyRule } from '../../helpers/policy-yaml.ts';
import type { Answer } from '../../helpers/recording-upstream.ts';
import { startRulesGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

/**
 * 200 with JSON describing the request, plus the response headers named in `x-reply-<name>: <value>`
 * request headers, and `?status=` as status.
 */
const describeRequest: Answer = (req, res, seen) => {
  const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith('x-reply-') && typeof value === 'string') res.setHeader(name.slice(8), value);
  }
  const reply = JSON.stringify({ method: seen.method, url: seen.url, headers: seen.headers, body: seen.text });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
  res.end(reply);
};

/** gw with `rules` in front of an upstream answering describeRequest. */
export function startPolicyGateway(rules: PolicyRule[]): Promise<UpstreamGateway> {
  return startRulesGateway(rules, { answer: describeRequest });
}
