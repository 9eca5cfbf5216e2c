// cloudone assumeRole: STS AssumeRole with the ambient credentials as source (spec document 2,
// CloudoneAssumeRole and CloudoneSessionTag). The session name and the session tags may be CEL
// over the request; a value that STS would refuse rejects the request (400) before any call is
// made. Assumed credentials are cached per (session name, tags) — bounded, single-flight,
// refreshed before they expire — and STS is reached through the SDK's own client, so the
// environment AWS users set (AWS_ENDPOINT_URL_STS, AWS_STS_REGIONAL_ENDPOINTS...) applies.
import { randomBytes } from 'node:crypto';
import type { STSClient } from '@aws-sdk/client-sts';
import type { CloudoneAssumeRole } from '../../../../api/types/backend-auth.ts';
import type { Clock } from '../../../../util/clock.ts';
import { compileExpression, type Expression, ExpressionError } from '../../../cel/expression.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { AuthConfigError } from '../errors.ts';
import type { AuthIncoming } from '../kind.ts';
import { secretKey, TokenCache } from '../token-cache.ts';
import {
  type AmbientCredentials,
  AWS_KIND,
  CLOUDONE_FAILURE,
  cached,
  FETCH_TIMEOUT_MS,
  failureText,
  withTimeout,
} from './credentials.ts';
import { sts } from './sdk.ts';
import type { AwsCredentials } from './sign.ts';

/** STS RoleSessionName: 2-64 of [\w+=,.@-]. */
const SESSION_NAME = /^[\w+=,.@-]{2,64}$/;
/** STS session tag keys and values: letters, spaces, digits and _ . : / = + - @. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const MAX_TAGS = 50;
const MAX_TAG_KEY = 128;
const MAX_TAG_VALUE = 256;
/** Assumed-role sessions kept at most (distinct session names and tag values), as agentgateway keeps. */
export const MAX_SESSIONS = 8192;

const INVALID = 'The request cannot be sent: a value gw computes from it for the AWS role session is invalid.';

/** A session name or tag value gw would send: the evaluation of `expression`, or a 400. */
function evaluated(expression: Expression, incoming: AuthIncoming, what: string): string {
  let value: unknown;
  try {
    value = expression.evaluate(incoming.variables?.() ?? {});
  } catch (error) {
    throw new BackendCredentialError(400, INVALID, `${what}: the expression failed: ${failureText(error)}`);
  }
  // A JWT claim may be a number or a boolean: its text is the value, as agentgateway takes it.
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))
    return String(value);
  throw new BackendCredentialError(400, INVALID, `${what}: the expression yielded a ${typeOf(value)}, not a string`);
}

function typeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Map || typeof value === 'object') return 'map';
  return typeof value;
}

function tagValueProblem(value: string): string | undefined {
  if (value === '') return 'is empty';
  if ([...value].length > MAX_TAG_VALUE) return `is longer than ${MAX_TAG_VALUE} characters`;
  if (!TAG_TEXT.test(value)) return 'holds characters STS does not accept in a tag (letters, digits, spaces, _.:/=+-@)';
  return undefined;
}

/** A configured tag, sorted by key; `index` is its place in the configuration (for messages). */
type TagSource = { key: string; value: string } | { key: string; expression: Expression; index: number };

/** What a request's session is: its name (undefined: random) and its tags, sorted by key. */
export interface Session {
  name: string | undefined;
  tags: readonly (readonly [string, string])[];
}

/** An assumeRole compiled: the role, and how a request's session name and tags are found. */
export interface CompiledAssumeRole {
  roleArn: string;
  /** The session of one request; throws a BackendCredentialError 400 when a computed value is invalid. */
  session(incoming: AuthIncoming): Session;
}

export function compileAssumeRole(config: CloudoneAssumeRole): CompiledAssumeRole | AuthConfigError {
  const field = 'cloudone.assumeRole';
  if (config.sessionName !== undefined && config.sessionNameExpression !== undefined)
    return new AuthConfigError(`${field}.sessionNameExpression`, 'set either sessionName or sessionNameExpression');
  if (config.sessionName !== undefined && !SESSION_NAME.test(config.sessionName))
    return new AuthConfigError(`${field}.sessionName`, 'must be 2-64 characters of letters, digits and _+=,.@-');
  let nameExpression: Expression | undefined;
  if (config.sessionNameExpression !== undefined) {
    const compiled = compileExpression(config.sessionNameExpression);
    if (compiled instanceof ExpressionError)
      return new AuthConfigError(`${field}.sessionNameExpression`, `is not valid CEL: ${compiled.message}`);
    nameExpression = compiled;
  }
  const tags = config.tags ?? [];
  if (tags.length > MAX_TAGS)
    return new AuthConfigError(`${field}.tags`, `at most ${MAX_TAGS} session tags are allowed`);
  const sources: TagSource[] = [];
  const keys = new Set<string>();
  for (const [index, tag] of tags.entries()) {
    const at = `${field}.tags[${index}]`;
    if (tag.key === '' || [...tag.key].length > MAX_TAG_KEY || !TAG_TEXT.test(tag.key))
      return new AuthConfigError(`${at}.key`, `must be 1-${MAX_TAG_KEY} characters STS accepts in a tag key`);
    if (keys.has(tag.key)) return new AuthConfigError(`${at}.key`, `"${tag.key}" is set twice`);
    keys.add(tag.key);
    if ((tag.value === undefined) === (tag.expression === undefined))
      return new AuthConfigError(at, 'set exactly one of value and expression');
    if (tag.value !== undefined) {
      const problem = tagValueProblem(tag.value);
      if (problem !== undefined) return new AuthConfigError(`${at}.value`, problem);
      sources.push({ key: tag.key, value: tag.value });
    } else {
      const compiled = compileExpression(tag.expression!);
      if (compiled instanceof ExpressionError)
        return new AuthConfigError(`${at}.expression`, `is not valid CEL: ${compiled.message}`);
      sources.push({ key: tag.key, expression: compiled, index });
    }
  }
  sources.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const fixedTags = sources.every((tag) => 'value' in tag)
    ? sources.map((tag) => [tag.key, (tag as { value: string }).value] as const)
    : undefined;
  const fixedName = config.sessionName;

  const name = (incoming: AuthIncoming): string | undefined => {
    if (nameExpression === undefined) return fixedName;
    const value = evaluated(nameExpression, incoming, `${field}.sessionNameExpression`);
    if (!SESSION_NAME.test(value))
      throw new BackendCredentialError(
        400,
        INVALID,
        `${field}.sessionNameExpression yielded a name STS refuses (${[...value].length} characters; 2-64 of letters, digits and _+=,.@- are allowed)`,
      );
    return value;
  };
  const tagsOf = (incoming: AuthIncoming): Session['tags'] =>
    fixedTags ??
    sources.map((tag) => {
      if ('value' in tag) return [tag.key, tag.value] as const;
      const value = evaluated(tag.expression, incoming, `${field}.tags[${tag.index}] (${tag.key})`);
      const problem = tagValueProblem(value);
      if (problem !== undefined)
        throw new BackendCredentialError(
          400,
          INVALID,
          `${field}.tags[${tag.index}] (${tag.key}): the expression's value ${problem}`,
        );
      return [tag.key, value] as const;
    });
  return { roleArn: config.roleId, session: (incoming) => ({ name: name(incoming), tags: tagsOf(incoming) }) };
}

/** A RoleSessionName when none is configured: random, so that sessions can be told apart in CloudTrail. */
function randomSessionName(): string {
  return `gw-${randomBytes(8).toString('hex')}`;
}

/** Assumed-role credentials of one role, by session. */
export class RoleSessions {
  readonly #roleArn: string;
  readonly #source: AmbientCredentials;
  readonly #region: () => string | Promise<string>;
  readonly #cache: TokenCache<AwsCredentials>;
  #client: STSClient | undefined;

  constructor(roleArn: string, source: AmbientCredentials, region: () => string | Promise<string>, clock: Clock) {
    this.#roleArn = roleArn;
    this.#source = source;
    this.#region = region;
    this.#cache = new TokenCache<AwsCredentials>({ kind: AWS_KIND, clock, maxEntries: MAX_SESSIONS });
  }

  /** The session's cached credentials while valid, else the one STS call under way for it. */
  get(session: Session): AwsCredentials | Promise<AwsCredentials> {
    const key = secretKey(session.name ?? '', ...session.tags.flat());
    return this.#cache.get(key, () => this.#assume(session));
  }

  async #assume(session: Session): Promise<{ value: AwsCredentials; expiresAtMs: number }> {
    const roleSessionName = session.name ?? randomSessionName();
    try {
      const client = await this.#stsClient();
      const answer = await withTimeout(
        client.send(
          new (sts().AssumeRoleCommand)({
            RoleArn: this.#roleArn,
            RoleSessionName: roleSessionName,
            ...(session.tags.length > 0 ? { Tags: session.tags.map(([Key, Value]) => ({ Key, Value })) } : {}),
          }),
          { abortSignal: AbortSignal.timeout(FETCH_TIMEOUT_MS) },
        ),
        'STS AssumeRole',
      );
      const credentials = answer.Credentials;
      if (!credentials?.AccessKeyId || !credentials.SecretAccessKey || !credentials.SessionToken)
        throw new Error('the answer carries no credentials');
      return cached({
        accessKeyId: credentials.AccessKeyId,
        secretAccessKey: credentials.SecretAccessKey,
        sessionToken: credentials.SessionToken,
        expiration: credentials.Expiration,
      });
    } catch (error) {
      if (error instanceof BackendCredentialError) throw error;
      throw new BackendCredentialError(
        502,
        CLOUDONE_FAILURE,
        `STS AssumeRole ${this.#roleArn} (session ${roleSessionName}): ${failureText(error)}`,
      );
    }
  }

  /** The STS client, in the signing region (as agentgateway assumes roles), made on first use. */
  async #stsClient(): Promise<STSClient> {
    if (this.#client !== undefined) return this.#client;
    const region = await this.#region();
    this.#client ??= new (sts().STSClient)({
      region,
      credentials: async () => this.#source.get(),
      requestHandler: { connectionTimeout: FETCH_TIMEOUT_MS, requestTimeout: FETCH_TIMEOUT_MS },
    });
    return this.#client;
  }
}
