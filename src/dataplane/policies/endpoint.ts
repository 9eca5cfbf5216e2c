// Endpoint references of policies (spec document 2, "Endpoint reference"): exactly one of a
// backendRef (a Service, or a GwBackend with a static host) or a url. Resolved once when the
// configuration is compiled (upstream/endpoint-reference.ts, re-exported here); what cannot be
// reached is a problem naming the field. Here: how to connect to a resolved endpoint over HTTP.
import {
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
  type DataLookup,
} from '../upstream/connection-settings.ts';
import {
  type EndpointReference,
  type EndpointScope,
  endpointBackendPolicy,
  type ResolvedEndpoint,
} from '../upstream/endpoint-reference.ts';
import type { PolicyProblem } from './types.ts';

export {
  type EndpointReference,
  type EndpointScope,
  endpointBackendPolicy,
  type ResolvedEndpoint,
  resolveEndpoint,
} from '../upstream/endpoint-reference.ts';

/**
 * How to connect to a resolved endpoint over HTTP: its GwBackend's tcp, tls and http policies
 * applied (a tls policy originates TLS, as it does for any backend), or a problem naming the
 * policy field that cannot be applied (a CA Secret that is missing...).
 */
export function endpointConnectionSettings(
  reference: EndpointReference,
  endpoint: ResolvedEndpoint,
  context: EndpointScope,
  data: DataLookup,
  field: string,
): ConnectionSettings | PolicyProblem {
  const backendPolicy = endpointBackendPolicy(reference, context);
  try {
    return connectionSettings(
      {
        protocol: endpoint.tls || backendPolicy?.tls !== undefined ? 'https:' : 'http:',
        host: endpoint.host,
        port: endpoint.port,
        ...(endpoint.socketPath ? { socketPath: endpoint.socketPath } : {}),
      },
      backendPolicy,
      data,
      context.namespace,
      context,
    );
  } catch (error) {
    if (error instanceof ConnectionSettingsError)
      return { field: `${field}.backendRef`, message: `the GwBackend's policies.${error.field}: ${error.message}` };
    throw error;
  }
}
