// A loopback stand-in for Amazon Bedrock AgentCore's data plane, InvokeAgentRuntime only, in the
// wire format the AWS SDK's bedrock-agentcore client speaks (restJson1): POST
// /runtimes/{agentRuntimeArn}/invocations with the qualifier (and, for a bare runtime id,
// accountId) query parameters, the payload as the body, the runtime session id in
// X-Amzn-Bedrock-AgentCore-Runtime-Session-Id; the answer's body is the runtime's, streamed, and
// AWS's errors carry x-amzn-errortype and a JSON message. Every request's SigV4 signature is
// checked with the AWS SDK's own signer (@smithy/signature-v4): the request re-signed with the
// secret of its access key, at its X-Amz-Date, over the headers it says it signed, must give the
// same Authorization. What each invocation carried is kept in `seen`; what a runtime answers is
// the test's (`answer`), an echo of the payload unless it says otherwise.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { closeServer, listen } from '../../helpers/http-server.ts';

export interface AwsKey {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** One invocation that passed the signature check and named a runtime the stand-in hosts. */
export interface SeenInvocation {
  /** The request target as received (path still encoded, and query). */
  url: string;
  /** The agentRuntimeArn path parameter, decoded: an ARN or a bare runtime id. */
  runtimeParameter: string;
  /** The runtime's ARN (for a bare id, built from accountId and the signing region). */
  runtimeArn: string;
  qualifier: string | undefined;
  accountId: string | undefined;
  sessionId: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  accessKeyId: string;
  region: string;
  service: string;
  signedHeaders: string[];
}

/** What a runtime answers an invocation: writes `res` itself (status, headers, body, as slowly as it likes). */
export type RuntimeAnswer = (seen: SeenInvocation, res: ServerResponse) => void | Promise<void>;

export interface AgentCoreStandIn {
  url: string;
  port: number;
  seen: SeenInvocation[];
  /** The answer of the next invocations; the default echoes the payload as JSON. */
  answer: RuntimeAnswer;
  /** Every request received, signed or not (method and target). */
  received: { method: string; url: string }[];
  close(): Promise<void>;
}

export interface AgentCoreStandInOptions {
  /** The keys whose signatures are accepted. */
  keys: AwsKey[];
  /** The runtimes hosted: ARN → the qualifiers they have (DEFAULT is always there). */
  runtimes: Record<string, string[]>;
}

const ARN = /^arn:aws:bedrock-agentcore:([a-z0-9-]+):(\d{12}):runtime\/(.+)$/;

/** The session id of a request, as the SDK and the service name it. */
const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';

/** Answers an AWS error as restJson1 services do. */
export function sendAwsError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ message });
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${code}:http://internal.amazon.com/coral/com.amazonaws.bedrockagentcore/`,
    'x-amzn-requestid': 'stand-in-request',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The default runtime: echoes what it was sent, with its session id, as JSON. */
export const ECHO: RuntimeAnswer = (seen, res) => {
  const body = JSON.stringify({ echo: seen.body.toString('utf8'), session: seen.sessionId });
  res.writeHead(200, { 'content-type': 'application/json', [SESSION_HEADER]: seen.sessionId });
  res.end(body);
};

export async function startAgentCoreStandIn(options: AgentCoreStandInOptions): Promise<AgentCoreStandIn> {
  const keys = new Map(options.keys.map((key) => [key.accessKeyId, key]));
  const standIn: AgentCoreStandIn = {
    url: '',
    port: 0,
    seen: [],
    answer: ECHO,
    received: [],
    close: () => closeServer(server),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, Buffer.concat(chunks), res).catch((error: unknown) =>
        sendAwsError(res, 500, 'InternalServerException', String(error)),
      );
    });
  });

  async function handle(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    standIn.received.push({ method: req.method ?? '', url });
    const [rawPath = '', rawQuery = ''] = url.split('?', 2);
    const match = /^\/runtimes\/([^/]+)\/invocations$/.exec(rawPath);
    if (req.method !== 'POST' || match === null)
      return sendAwsError(res, 404, 'UnknownOperationException', 'no such operation');
    const signature = await checkSignature(req, rawPath, rawQuery, body, keys);
    if ('status' in signature) return sendAwsError(res, signature.status, signature.code, signature.message);
    const query = new URLSearchParams(rawQuery);
    const runtimeParameter = decodeURIComponent(match[1]!);
    const qualifier = query.get('qualifier') ?? undefined;
    const accountId = query.get('accountId') ?? undefined;
    let runtimeArn = runtimeParameter;
    if (!runtimeParameter.startsWith('arn:')) {
      if (accountId === undefined)
        return sendAwsError(res, 400, 'ValidationException', 'accountId is required when agentRuntimeArn is an id');
      runtimeArn = `arn:aws:bedrock-agentcore:${signature.region}:${accountId}:runtime/${runtimeParameter}`;
    }
    const arn = ARN.exec(runtimeArn);
    const qualifiers = options.runtimes[runtimeArn];
    if (arn === null || qualifiers === undefined || arn[1] !== signature.region)
      return sendAwsError(res, 404, 'ResourceNotFoundException', `No agent runtime ${runtimeArn}`);
    if (qualifier !== undefined && qualifier !== 'DEFAULT' && !qualifiers.includes(qualifier))
      return sendAwsError(res, 404, 'ResourceNotFoundException', `No endpoint ${qualifier} for ${runtimeArn}`);
    const sessionId = req.headers[SESSION_HEADER];
    if (typeof sessionId !== 'string' || sessionId.length < 33 || sessionId.length > 256)
      return sendAwsError(
        res,
        400,
        'ValidationException',
        '1 validation error detected: runtimeSessionId must have length between 33 and 256',
      );
    const seen: SeenInvocation = {
      url,
      runtimeParameter,
      runtimeArn,
      qualifier,
      accountId,
      sessionId,
      headers: req.headers,
      body,
      accessKeyId: signature.accessKeyId,
      region: signature.region,
      service: signature.service,
      signedHeaders: signature.signedHeaders,
    };
    standIn.seen.push(seen);
    await standIn.answer(seen, res);
  }

  standIn.port = await listen(server);
  standIn.url = `http://127.0.0.1:${standIn.port}`;
  return standIn;
}

type SignatureCheck =
  | { accessKeyId: string; region: string; service: string; signedHeaders: string[] }
  | { status: number; code: string; message: string };

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/** Checks a request's SigV4 signature as the service does, with the SDK's signer recomputing it. */
async function checkSignature(
  req: IncomingMessage,
  rawPath: string,
  rawQuery: string,
  body: Buffer,
  keys: Map<string, AwsKey>,
): Promise<SignatureCheck> {
  const authorization = req.headers.authorization;
  const date = req.headers['x-amz-date'];
  if (typeof authorization !== 'string' || typeof date !== 'string')
    return { status: 403, code: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const parts = AUTHORIZATION.exec(authorization);
  if (parts === null)
    return { status: 400, code: 'IncompleteSignatureException', message: 'Authorization header requires parameters' };
  const [, accessKeyId, scopeDate, region, service, signedList] = parts as unknown as string[];
  const key = keys.get(accessKeyId!);
  if (key === undefined)
    return {
      status: 403,
      code: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  if (service !== 'bedrock-agentcore' || !date.startsWith(scopeDate!))
    return {
      status: 403,
      code: 'InvalidSignatureException',
      message: `Credential should be scoped to correct service: 'bedrock-agentcore'.`,
    };
  if (key.sessionToken !== undefined && req.headers['x-amz-security-token'] !== key.sessionToken)
    return {
      status: 403,
      code: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  const declaredHash = req.headers['x-amz-content-sha256'];
  if (declaredHash !== undefined && declaredHash !== createHash('sha256').update(body).digest('hex'))
    return {
      status: 400,
      code: 'InvalidSignatureException',
      message: 'The provided x-amz-content-sha256 header does not match what was computed.',
    };
  const signedHeaders = signedList!.split(';');
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    if (name === 'x-amz-date' || name === 'x-amz-security-token') continue;
    const value = req.headers[name];
    if (value === undefined)
      return { status: 403, code: 'InvalidSignatureException', message: `signed header ${name} is missing` };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    const previous = query[name];
    query[name] = previous === undefined ? value : ([] as string[]).concat(previous, value);
  }
  const at = `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 11)}:${date.slice(11, 13)}:${date.slice(13)}`;
  const signer = new SignatureV4({
    credentials: key,
    region: region!,
    service: service!,
    sha256: Hash.bind(null, 'sha256'),
    uriEscapePath: true,
  });
  const expected = await signer.sign(
    {
      method: req.method ?? 'POST',
      protocol: 'https:',
      hostname: headers.host ?? '',
      path: rawPath,
      query,
      headers,
      body,
    },
    { signingDate: new Date(at) },
  );
  if (expected.headers.authorization !== authorization)
    return {
      status: 403,
      code: 'InvalidSignatureException',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    };
  return { accessKeyId: accessKeyId!, region: region!, service: service!, signedHeaders };
}
