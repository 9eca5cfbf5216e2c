// Shared by the inbound authentication and authorization tests: gw with route web in front of a
// recording upstream (which answers chat completions for the OpenAI client), Secrets and
// ConfigMaps, and the check that no secret ever reaches a log.
import assert from 'node:assert/strict';
import { gatewayYaml, type TestGateway, webRouteYaml } from '../../helpers/gateway.ts';
import { type Answer, answerOk, chatCompletionAnswer } from '../../helpers/recording-upstream.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

/** A Secret or ConfigMap with `entries` as stringData (Secret) or data (ConfigMap). */
export function objectYaml(
  kind: 'Secret' | 'ConfigMap',
  name: string,
  entries: Record<string, string>,
  labels?: Record<string, string>,
): string {
  const metadata = labels ? { name, labels } : { name };
  return `apiVersion: v1
kind: ${kind}
metadata: ${JSON.stringify(metadata)}
${kind === 'Secret' ? 'stringData' : 'data'}: ${JSON.stringify(entries)}
---
`;
}

const chatCompletion = chatCompletionAnswer('hi');

/** A chat completion on POST /v1/chat/completions, `ok` elsewhere. */
const answerChat: Answer = (req, res, seen) =>
  req.method === 'POST' && req.url === '/v1/chat/completions'
    ? chatCompletion(req, res, seen)
    : answerOk(req, res, seen);

/** gw with Gateway ai, route web to a recording upstream, and `objects` (policies, Secrets...) in objects.yaml. */
export function startAuthGateway(objects: string): Promise<UpstreamGateway> {
  return startUpstreamGateway(
    ({ port, upstreamPort }) => ({
      'gw.yaml': `${gatewayYaml(port)}${webRouteYaml(upstreamPort)}`,
      'objects.yaml': objects,
    }),
    answerChat,
  );
}

/** Fails when a log line or access log line of `gw` contains any of `secrets`. */
export function assertNoSecretLogged(gw: TestGateway, secrets: readonly string[]): void {
  for (const line of [...gw.logs, ...gw.accessLog])
    for (const secret of secrets) assert.ok(!line.includes(secret), `a log line contains a secret: ${line}`);
}
