// Loopback stand-ins for the AWS endpoints cloudone talks to, speaking their real wire formats:
// STS (the AssumeRole Query API: a form-encoded POST signed with SigV4, answered in XML), the EC2
// instance metadata service (IMDSv2: a PUT for a session token, then the role name and its
// credentials as JSON), the ECS container credentials endpoint (JSON), and an AWS service that
// records what it receives and checks its SigV4 signature. Each test proves a stand-in by
// pointing the AWS SDK's own client or provider at it before pointing gw at it.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { closeServer, listen } from './http-server.ts';
import { type ReceivedRequest, type Sigv4Secrets, type Verified, verifySigv4 } from './sigv4.ts';

export interface StandIn {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

async function start(handler: (request: ReceivedRequest, respond: Respond) => void): Promise<StandIn> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      handler(
        { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) },
        (status, body, type = 'application/json') => {
          res.writeHead(status, { 'content-type': type });
          res.end(body);
        },
      ),
    );
  });
  const port = await listen(server);
  return { server, port, url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

type Respond = (status: number, body: string, type?: string) => void;

/** Temporary credentials a stand-in hands out. */
export interface IssuedCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  /** When they expire (epoch ms). */
  expiresAtMs: number;
}

/** Makes fresh credentials that expire at `expiresAtMs`. */
export function issue(prefix: string, expiresAtMs: number): IssuedCredentials {
  const id = randomUUID().replaceAll('-', '').slice(0, 16).toUpperCase();
  return {
    accessKeyId: `${prefix}${id}`,
    secretAccessKey: `secret/${randomUUID()}`,
    sessionToken: `token+${randomUUID()}==`,
    expiresAtMs,
  };
}

// ---- an AWS service ----------------------------------------------------------------------------

export interface SeenRequest extends ReceivedRequest {
  verified?: Verified;
  problem?: string;
}

/** A service that accepts only requests whose SigV4 signature verifies, and records every request. */
export async function signedService(
  secrets: Sigv4Secrets,
  options: {
    region?: string;
    service?: string;
    allowUnsignedPayload?: boolean;
    answer?: (seen: SeenRequest) => string;
  } = {},
): Promise<StandIn & { seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const standIn = await start((received, respond) => {
    const entry: SeenRequest = { ...received };
    seen.push(entry);
    try {
      entry.verified = verifySigv4(received, { secrets, ...options });
    } catch (error) {
      entry.problem = (error as Error).message;
      return respond(
        403,
        JSON.stringify({ message: `The request signature we calculated does not match: ${entry.problem}` }),
      );
    }
    respond(200, options.answer?.(entry) ?? JSON.stringify({ ok: true }));
  });
  return { ...standIn, seen };
}

/** Sends a request over the wire exactly as given (method, path, headers, body) and reads the answer. */
export function send(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: Buffer | string | AsyncIterable<Buffer>,
): Promise<{ status: number; body: string }> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else
      (async () => {
        for await (const chunk of body) req.write(chunk);
        req.end();
      })().catch(reject);
  });
}

// ---- STS ---------------------------------------------------------------------------------------

export interface AssumeRoleCall {
  form: URLSearchParams;
  /** The caller's own signature, checked against the source credentials. */
  verified?: Verified;
  problem?: string;
  headers: IncomingHttpHeaders;
}

const STS_NS = 'https://sts.amazonaws.com/doc/2011-06-15/';

function xmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface StsStandIn extends StandIn {
  calls: AssumeRoleCall[];
  /** What the next AssumeRole answers: credentials (default: fresh ones for an hour), or an error. */
  next: (call: AssumeRoleCall) => IssuedCredentials | { status: number; code: string; message: string };
  /** Every credential handed out, by access key id (for the signed service's secrets). */
  issued: Map<string, IssuedCredentials>;
  /** Holds answers until released (for concurrent requests); undefined answers at once. */
  gate: Promise<void> | undefined;
}

/**
 * STS's AssumeRole Query API: a SigV4-signed (service sts) form POST with Action=AssumeRole,
 * Version, RoleArn, RoleSessionName and Tags.member.N.Key/Value, answered with an
 * AssumeRoleResponse document (or an ErrorResponse).
 */
export async function stsStandIn(sourceSecrets: Sigv4Secrets, now: () => number, region?: string): Promise<StsStandIn> {
  const state: StsStandIn = {
    calls: [],
    issued: new Map(),
    gate: undefined,
    next: () => issue('ASIA', now() + 3_600_000),
  } as unknown as StsStandIn;
  const standIn = await start(async (received, respond) => {
    const call: AssumeRoleCall = { form: new URLSearchParams(received.body.toString()), headers: received.headers };
    state.calls.push(call);
    const error = (status: number, code: string, message: string) =>
      respond(
        status,
        `<ErrorResponse xmlns="${STS_NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlText(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
        'text/xml',
      );
    try {
      call.verified = verifySigv4(received, { secrets: sourceSecrets, service: 'sts', ...(region ? { region } : {}) });
    } catch (problem) {
      call.problem = (problem as Error).message;
      return error(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.',
      );
    }
    if (
      received.method !== 'POST' ||
      call.form.get('Action') !== 'AssumeRole' ||
      call.form.get('Version') !== '2011-06-15'
    )
      return error(400, 'InvalidAction', 'Could not find operation');
    if (state.gate) await state.gate;
    const answer = state.next(call);
    if ('code' in answer) return error(answer.status, answer.code, answer.message);
    state.issued.set(answer.accessKeyId, answer);
    const role = call.form.get('RoleArn') ?? '';
    const session = call.form.get('RoleSessionName') ?? '';
    respond(
      200,
      `<AssumeRoleResponse xmlns="${STS_NS}">
  <AssumeRoleResult>
    <SourceIdentity>gw</SourceIdentity>
    <AssumedRoleUser>
      <Arn>${xmlText(role.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/'))}/${xmlText(session)}</Arn>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:${xmlText(session)}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${answer.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${xmlText(answer.secretAccessKey)}</SecretAccessKey>
      <SessionToken>${xmlText(answer.sessionToken)}</SessionToken>
      <Expiration>${new Date(answer.expiresAtMs).toISOString()}</Expiration>
    </Credentials>
    <PackedPolicySize>6</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata>
</AssumeRoleResponse>`,
      'text/xml',
    );
  });
  return Object.assign(state, standIn);
}

/** The session tags of an AssumeRole call, from Tags.member.N.Key / .Value. */
export function tagsOf(form: URLSearchParams): Record<string, string> {
  const tags: Record<string, string> = {};
  for (let n = 1; form.has(`Tags.member.${n}.Key`); n++)
    tags[form.get(`Tags.member.${n}.Key`)!] = form.get(`Tags.member.${n}.Value`) ?? '';
  return tags;
}

// ---- EC2 instance metadata (IMDSv2) and ECS container credentials -------------------------------

export interface MetadataStandIn extends StandIn {
  /** Requests by path, in order. */
  requests: { method: string; url: string; headers: IncomingHttpHeaders }[];
  /** The credentials the next request for them gets. */
  credentials: IssuedCredentials;
}

const IMDS_ROLE = 'gw-node-role';

/** EC2 IMDSv2: PUT /latest/api/token, then the role under /latest/meta-data/iam/security-credentials/. */
export async function imdsStandIn(credentials: IssuedCredentials): Promise<MetadataStandIn> {
  const tokens = new Set<string>();
  const state = { requests: [], credentials } as unknown as MetadataStandIn;
  const standIn = await start((received, respond) => {
    state.requests.push({ method: received.method, url: received.url, headers: received.headers });
    if (received.method === 'PUT' && received.url === '/latest/api/token') {
      if (!received.headers['x-aws-ec2-metadata-token-ttl-seconds']) return respond(400, '', 'text/plain');
      const token = randomUUID();
      tokens.add(token);
      return respond(200, token, 'text/plain');
    }
    if (!tokens.has(String(received.headers['x-aws-ec2-metadata-token']))) return respond(401, '', 'text/plain');
    // Newer SDKs ask the extended path first, then this one when it is absent.
    const base = received.url.startsWith('/latest/meta-data/iam/security-credentials-extended/')
      ? '/latest/meta-data/iam/security-credentials-extended/'
      : '/latest/meta-data/iam/security-credentials/';
    if (received.url === base) return respond(200, IMDS_ROLE, 'text/plain');
    if (received.url === `${base}${IMDS_ROLE}`) {
      const issued = state.credentials;
      return respond(
        200,
        JSON.stringify({
          Code: 'Success',
          LastUpdated: new Date(issued.expiresAtMs - 6 * 3_600_000).toISOString(),
          Type: 'AWS-HMAC',
          AccessKeyId: issued.accessKeyId,
          SecretAccessKey: issued.secretAccessKey,
          Token: issued.sessionToken,
          Expiration: new Date(issued.expiresAtMs).toISOString(),
        }),
      );
    }
    respond(404, '', 'text/plain');
  });
  return Object.assign(state, standIn);
}

/** ECS: GET of AWS_CONTAINER_CREDENTIALS_FULL_URI with the authorization token, answered with JSON credentials. */
export async function ecsStandIn(credentials: IssuedCredentials, authorization: string): Promise<MetadataStandIn> {
  const state = { requests: [], credentials } as unknown as MetadataStandIn;
  const standIn = await start((received, respond) => {
    state.requests.push({ method: received.method, url: received.url, headers: received.headers });
    if (received.method !== 'GET' || received.url !== '/v2/credentials/task')
      return respond(404, '{"message":"not found"}');
    if (received.headers.authorization !== authorization) return respond(403, '{"message":"bad token"}');
    const issued = state.credentials;
    respond(
      200,
      JSON.stringify({
        RoleArn: 'arn:aws:iam::123456789012:role/gw-task-role',
        AccessKeyId: issued.accessKeyId,
        SecretAccessKey: issued.secretAccessKey,
        Token: issued.sessionToken,
        Expiration: new Date(issued.expiresAtMs).toISOString(),
      }),
    );
  });
  return Object.assign(state, standIn);
}

/**
 * Sets environment variables for the duration of `work` and restores them after: the AWS SDK's
 * providers read the environment when they run.
 */
/** Sets `vars` in process.env (undefined deletes) for a suite's life; call the result to restore them. */
export function replaceEnv(vars: Record<string, string | undefined>): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(vars)) {
    saved[name] = process.env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

export async function withEnv<T>(vars: Record<string, string | undefined>, work: () => Promise<T>): Promise<T> {
  const restore = replaceEnv(vars);
  try {
    return await work();
  } finally {
    restore();
  }
}

/** The environment of a machine with no AWS configuration at all (no keys, files, metadata or region). */
export const NO_AWS: Record<string, string | undefined> = {
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_PROFILE: undefined,
  AWS_REGION: undefined,
  AWS_DEFAULT_REGION: undefined,
  AWS_CONFIG_FILE: '/nonexistent/gw-test/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/gw-test/aws-credentials',
  AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
  AWS_ROLE_ARN: undefined,
  AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined,
  AWS_CONTAINER_AUTHORIZATION_TOKEN: undefined,
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_EC2_METADATA_SERVICE_ENDPOINT: undefined,
  AWS_ENDPOINT_URL: undefined,
  AWS_ENDPOINT_URL_STS: undefined,
};
