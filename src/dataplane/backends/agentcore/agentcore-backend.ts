// The `aws` backend kind: an Amazon Bedrock AgentCore runtime (GwBackend spec.aws.agentCore),
// invoked with InvokeAgentRuntime as the AWS SDK's bedrock-agentcore client sends it (decision
// 0050): POST /runtimes/{agentRuntimeArn}/invocations?qualifier=…, the client's body as the
// payload, its Content-Type and Accept, its runtime session id (X-Amzn-Bedrock-AgentCore-Runtime-
// Session-Id; one is made when it sends none, as the SDK makes one), signed with SigV4 for
// bedrock-agentcore in the runtime's region with the ambient AWS credentials unless the backend
// policy's auth says otherwise. Every request routed here invokes the runtime: the client's path
// and query are not sent. The answer streams back as it comes (an SSE or chunked answer reaches
// the client piece by piece); AWS's errors are read by ./answers.ts. The connection, backend auth,
// retry, deadlines and passive health are the http kind's (../http.ts operationForwarder).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { fieldNamespace } from '../../../contract/dataplane-config.ts';
import { AuthConfigError, type CompiledBackendAuth, compileBackendAuth } from '../../auth/backend/index.ts';
import { bodyFailure, readRequestBody } from '../../proxy/body.ts';
import { sendText } from '../../proxy/direct-response.ts';
import { hasRequestBody } from '../../proxy/http-forward.ts';
import type { Destination } from '../../upstream/destination.ts';
import { backendAuthOptions } from '../auth-options.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  type RoutedRequest,
} from '../backend.ts';
import {
  backendRefConnection,
  compilePassiveHealth,
  operationForwarder,
  type PreparedOperation,
  type UpstreamOperation,
} from '../http.ts';
import { agentCoreVerdict } from './answers.ts';
import { AGENTCORE_SIGNING_NAME, type AgentCoreRuntime, agentCoreRuntime, isRuntimeProblem } from './runtime.ts';

/** The runtime session header of InvokeAgentRuntime (request and response). */
export const RUNTIME_SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';

export const agentCoreKind: BackendKind<BackendRefInput> = {
  compile(input: BackendRefInput): Backend | BackendRefusal {
    const { object, ref, context, namespace, key } = input;
    const spec = object.kind === 'GwBackend' ? object.spec.aws?.agentCore : undefined;
    if (spec === undefined) return backendRefusal(`backend ${key}: spec.aws sets no agentCore`);
    const policy = ref.policy;
    const runtime = agentCoreRuntime(spec, policy.auth?.cloudone?.region);
    if (isRuntimeProblem(runtime)) return backendRefusal(`backend ${key}: ${runtime.field}: ${runtime.message}`);
    const destination = runtime.endpoint.destination;
    const settings = backendRefConnection(input, destination);
    if ('refused' in settings) return settings;
    // agentgateway signs AgentCore requests with the ambient AWS credentials when no auth is set; so does gw.
    const authNamespace = fieldNamespace(ref.policyNamespaces, 'auth', namespace);
    const auth = compileBackendAuth(
      policy.auth ?? { cloudone: {} },
      context.data,
      authNamespace,
      backendAuthOptions(context, authNamespace, {
        host: destination.host,
        region: runtime.region,
        service: AGENTCORE_SIGNING_NAME,
      }),
    );
    if (auth instanceof AuthConfigError)
      return backendRefusal(`backend ${key}: backend policy auth.${auth.field}: ${auth.message}`);
    const health = compilePassiveHealth(policy.health, key);
    if (health !== undefined && 'refused' in health) return health;
    return operationForwarder(
      settings,
      context.pool(settings),
      auth,
      health,
      new InvokeAgentRuntime(runtime, authorityOf(destination), auth),
    );
  },
};

/** host[:port] of a destination as a Host header says it (the port only when not the scheme's). */
function authorityOf(destination: Destination): string {
  const host = destination.host.includes(':') ? `[${destination.host}]` : destination.host;
  const defaultPort = destination.protocol === 'https:' ? 443 : 80;
  return destination.port === defaultPort ? host : `${host}:${destination.port}`;
}

/** InvokeAgentRuntime of one runtime, as every request routed to the backend becomes. */
class InvokeAgentRuntime implements UpstreamOperation {
  readonly #runtime: AgentCoreRuntime;
  readonly #authority: string;
  /** A signature covers the payload: the body is read whole first (the SDK signs its hash too). */
  readonly #signs: boolean;

  constructor(runtime: AgentCoreRuntime, authority: string, auth: CompiledBackendAuth) {
    this.#runtime = runtime;
    this.#authority = authority;
    this.#signs = auth.sign !== undefined;
  }

  async prepare(
    routed: RoutedRequest,
    headers: Record<string, string | string[]>,
  ): Promise<PreparedOperation | undefined> {
    const { req, res, record, exchange, route } = routed;
    if (req.method !== 'POST') {
      record.error = `AgentCore runtimes are invoked with POST, not ${req.method}`;
      sendText(res, 405, 'An Amazon Bedrock AgentCore runtime is invoked with POST.', { allow: 'POST' });
      return undefined;
    }
    headers.host = this.#authority;
    const session = headers[RUNTIME_SESSION_HEADER];
    if (session === undefined || session === '') headers[RUNTIME_SESSION_HEADER] = randomUUID();
    // The SDK sends a payload without a declared type as bytes.
    headers['content-type'] ??= 'application/octet-stream';
    let body: IncomingMessage | Buffer | undefined = exchange?.body;
    if (body === undefined && this.#signs) {
      try {
        body = await readRequestBody(req, route.maxBufferBytes);
      } catch (error) {
        const { status, message } = bodyFailure(error);
        record.error = `the request body could not be read for signing: ${message}`;
        sendText(res, status, message, { connection: 'close' });
        return undefined;
      }
    } else if (body === undefined && hasRequestBody(req)) body = req;
    return {
      path: this.#runtime.path,
      query: this.#runtime.query,
      body,
      inspect: (response) => agentCoreVerdict(response, record),
    };
  }
}
