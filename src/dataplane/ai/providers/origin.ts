// Where a provider is reached. One rule for every family: TLS exactly when the port is 443.
// agentgateway's differs; docs/providers.md explains why gw's is this one.
import type { Origin } from './types.ts';

const TLS_PORT = 443;

export function providerOrigin(host: string, port: number | undefined): Origin {
  const resolvedPort = port ?? TLS_PORT;
  return { protocol: resolvedPort === TLS_PORT ? 'https:' : 'http:', host, port: resolvedPort };
}
