// Where a managed service gw calls by its vendor's API (OpenAI's moderations API, Bedrock's
// ApplyGuardrail, Model Armor, a Bedrock AgentCore runtime) is reached: its public endpoint, unless
// gw's environment names another the way the vendor's own tools read it (decision 0028:
// OPENAI_BASE_URL; AWS_ENDPOINT_URL_<SERVICE> then AWS_ENDPOINT_URL, as the AWS SDKs read them;
// CLOUDSDK_API_ENDPOINT_OVERRIDES_MODELARMOR). The variables are read when a
// configuration is compiled, so a change takes effect with the next configuration. An endpoint
// URL may carry a path (a proxy's prefix): calls' paths are appended to it.
import type { Destination } from './connection-settings.ts';

export interface ServiceEndpoint {
  destination: Destination;
  /** The URL's path without its trailing slash ('' for none): every call's path is appended to it. */
  basePath: string;
  /** The environment variable that chose the endpoint; undefined for the public one. */
  variable: string | undefined;
}

/** An endpoint variable that holds no usable URL: the variable and why. */
export interface ServiceEndpointProblem {
  variable: string;
  message: string;
}

/**
 * The endpoint of a service: the first of `variables` set (non-empty) in `env`, else `publicUrl`.
 * A variable's value must be an http or https URL without credentials, query or fragment.
 */
export function serviceEndpoint(
  publicUrl: string,
  variables: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ServiceEndpoint | ServiceEndpointProblem {
  for (const variable of variables) {
    const value = env[variable]?.trim();
    if (value === undefined || value === '') continue;
    const endpoint = parseEndpoint(value, variable);
    return (
      endpoint ?? {
        variable,
        message: `${variable} in gw's environment must be an http or https URL without credentials, query or fragment, such as ${publicUrl}; fix or unset it.`,
      }
    );
  }
  const endpoint = parseEndpoint(publicUrl, undefined);
  if (endpoint === undefined) throw new Error(`not an endpoint URL: ${publicUrl}`);
  return endpoint;
}

/**
 * The AWS SDKs' endpoint variables of a service, by its environment id (BEDROCK_RUNTIME,
 * BEDROCK_AGENTCORE): AWS_ENDPOINT_URL_<id>, then AWS_ENDPOINT_URL; none when
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true, which makes the SDKs ignore them.
 */
export function awsEndpointVariables(serviceId: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.trim().toLowerCase() === 'true') return [];
  return [`AWS_ENDPOINT_URL_${serviceId}`, 'AWS_ENDPOINT_URL'];
}

export function isServiceEndpointProblem(
  value: ServiceEndpoint | ServiceEndpointProblem,
): value is ServiceEndpointProblem {
  return 'message' in value;
}

function parseEndpoint(text: string, variable: string | undefined): ServiceEndpoint | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  const protocol = url.protocol;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { destination: { protocol, host, port }, basePath: url.pathname.replace(/\/+$/, ''), variable };
}
