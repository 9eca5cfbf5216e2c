// Keycloak's admin REST API as the procedure uses it: an admin token from the password grant of
// the built-in admin-cli client, JSON calls with that token, and the rule for a stale token —
// Keycloak answers 401, so a new token is obtained (by its refresh token, else by the password
// grant again) and the call is retried once. Any other failure is a SetupError naming the step,
// the call and the status.
import { SetupError } from './errors.ts';
import { type HttpAnswer, type HttpClient, NoAnswer } from './http-call.ts';
import type { Reporter } from './report.ts';
import { redact, Secret, wireForm, wireJson } from './secret.ts';
import type { IdpSettings } from './settings.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The client every Keycloak realm has for command-line administration (public, direct grants). */
export const ADMIN_CLIENT = 'admin-cli';
const DETAIL_MAX = 300;

export interface AdminAnswer {
  status: number;
  /** The decoded JSON answer; undefined for an empty one. */
  body: unknown;
  /** The Location header of a 201 (the new object's URL). */
  location: string | undefined;
}

export interface CallOptions {
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  /** Statuses (besides 2xx) handed back instead of failing, such as 409 for "already exists". */
  accept?: number[];
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

interface HeldToken {
  access: Secret;
  refresh: Secret | undefined;
}

/** The path of a realm's token endpoint. */
export function tokenPath(realm: string): string {
  return `/realms/${encodeURIComponent(realm)}/protocol/openid-connect/token`;
}

/** "METHOD URL" as failures name a call. */
export function describeCall(method: string, url: URL): string {
  return `${method} ${url.href}`;
}

/** The most useful part of an error answer: Keycloak's errorMessage or error_description, else the text. */
export function answerDetail(answer: HttpAnswer, secrets: readonly Secret[]): string {
  let detail = answer.text.replace(/\s+/g, ' ').trim();
  try {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    const parts = [body.errorMessage, body.error, body.error_description].filter(
      (part): part is string => typeof part === 'string' && part !== '',
    );
    if (parts.length > 0) detail = [...new Set(parts)].join(': ');
  } catch {
    // Not JSON: the text itself, shortened.
  }
  if (detail === '') detail = 'an empty answer';
  if (detail.length > DETAIL_MAX) detail = `${detail.slice(0, DETAIL_MAX)}…`;
  return redact(detail, secrets);
}

/**
 * A token request (form POST). Its answer must be JSON: a proxy or network filter that blocks the
 * request answers with a page of its own, and that is said plainly.
 */
export async function requestToken(
  http: HttpClient,
  step: string,
  url: URL,
  form: Record<string, string | Secret>,
  secrets: readonly Secret[],
): Promise<TokenAnswer> {
  const call = describeCall('POST', url);
  let answer: HttpAnswer;
  try {
    answer = await http.send(
      'POST',
      url,
      { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      wireForm(form),
    );
  } catch (error) {
    throw new SetupError(step, call, undefined, redact((error as Error).message, secrets));
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new SetupError(
      step,
      call,
      answer.status,
      `the token response is not JSON (${answer.contentType || 'no content type'}): the request was probably blocked by network rules or a proxy — retry it on a network that allows it`,
    );
  }
  return { status: answer.status, body: body as Record<string, unknown> };
}

export class KeycloakAdmin {
  readonly #settings: IdpSettings;
  readonly #http: HttpClient;
  readonly #reporter: Reporter;
  readonly #secrets: Secret[];
  #token: HeldToken | undefined;

  constructor(settings: IdpSettings, http: HttpClient, reporter: Reporter, secrets: Secret[]) {
    this.#settings = settings;
    this.#http = http;
    this.#reporter = reporter;
    this.#secrets = secrets;
  }

  /** /admin/realms/<realm> of the realm being prepared. */
  get realmPath(): string {
    return `/admin/realms/${encodeURIComponent(this.#settings.realm)}`;
  }

  url(path: string, query?: CallOptions['query']): URL {
    const url = new URL(`${this.#settings.idpUrl}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, String(value));
    return url;
  }

  /** The password grant of admin-cli in the admin realm. */
  async obtainToken(step: string): Promise<void> {
    const url = this.url(tokenPath(this.#settings.adminRealm));
    const answer = await requestToken(
      this.#http,
      step,
      url,
      {
        client_id: ADMIN_CLIENT,
        grant_type: 'password',
        username: this.#settings.adminUsername,
        password: this.#settings.adminPassword,
      },
      this.#secrets,
    );
    this.#token = this.#takeToken(step, url, answer, 'the administrator username or password');
  }

  /** A call to the admin API; a 401 renews the token and retries once. */
  async call(step: string, method: Method, path: string, options: CallOptions = {}): Promise<AdminAnswer> {
    const url = this.url(path, options.query);
    let answer = await this.#send(step, method, url, options.body);
    if (answer.status === 401) {
      await this.#renewToken(step);
      answer = await this.#send(step, method, url, options.body);
      if (answer.status === 401) {
        throw new SetupError(
          step,
          describeCall(method, url),
          401,
          `${answerDetail(answer, this.#secrets)} — refused with a new admin token too: Keycloak does not accept tokens of realm ${this.#settings.adminRealm} here (check adminRealm and Keycloak's hostname setting)`,
        );
      }
    }
    const ok = answer.status >= 200 && answer.status < 300;
    if (!ok && !(options.accept ?? []).includes(answer.status)) {
      const hint = answer.status >= 300 && answer.status < 400 ? ` (redirected to ${answer.location ?? '?'})` : '';
      throw new SetupError(
        step,
        describeCall(method, url),
        answer.status,
        `${answerDetail(answer, this.#secrets)}${hint}`,
      );
    }
    let body: unknown;
    if (answer.text.trim() !== '') {
      try {
        body = JSON.parse(answer.text);
      } catch {
        if (ok)
          throw new SetupError(
            step,
            describeCall(method, url),
            answer.status,
            `the answer is not JSON (${answer.contentType || 'no content type'}): is idpUrl the address of Keycloak, not of a proxy's page?`,
          );
      }
    }
    return { status: answer.status, body, location: answer.location };
  }

  /** A GET whose answer must be a JSON array. */
  async list<T>(step: string, path: string, query?: CallOptions['query']): Promise<T[]> {
    const answer = await this.call(step, 'GET', path, { query });
    if (!Array.isArray(answer.body))
      throw new SetupError(step, describeCall('GET', this.url(path, query)), answer.status, 'the answer is not a list');
    return answer.body as T[];
  }

  /** Every item of a paged listing (Keycloak's first and max parameters). */
  async listAll<T>(step: string, path: string, query: CallOptions['query'] = {}, pageSize = 100): Promise<T[]> {
    const items: T[] = [];
    for (let first = 0; ; first += pageSize) {
      const page = await this.list<T>(step, path, { ...query, first, max: pageSize });
      items.push(...page);
      // Bounded: a realm with more than 100 000 of one kind is not what this procedure prepares.
      if (page.length < pageSize || items.length >= 100_000) return items;
    }
  }

  async #send(step: string, method: Method, url: URL, body: unknown): Promise<HttpAnswer> {
    if (!this.#token) await this.obtainToken(step);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token!.access.reveal()}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.#http.send(method, url, headers, body === undefined ? undefined : wireJson(body));
    } catch (error) {
      const reason = error instanceof NoAnswer ? error.message : String(error);
      throw new SetupError(step, describeCall(method, url), undefined, redact(reason, this.#secrets));
    }
  }

  async #renewToken(step: string): Promise<void> {
    const refresh = this.#token?.refresh;
    if (refresh) {
      const url = this.url(tokenPath(this.#settings.adminRealm));
      const answer = await requestToken(
        this.#http,
        step,
        url,
        { client_id: ADMIN_CLIENT, grant_type: 'refresh_token', refresh_token: refresh },
        this.#secrets,
      );
      if (answer.status === 200) {
        this.#token = this.#takeToken(step, url, answer, 'the refresh token');
        this.#reporter.note('Keycloak answered 401 (the admin token had expired): renewed it with its refresh token');
        return;
      }
      // The refresh token has expired too (400 invalid_grant): sign in again.
    }
    await this.obtainToken(step);
    this.#reporter.note('Keycloak answered 401 (the admin token had expired): obtained a new one');
  }

  #takeToken(step: string, url: URL, answer: TokenAnswer, credentials: string): HeldToken {
    const { status, body } = answer;
    const access = body.access_token;
    if (status === 200 && typeof access === 'string' && access !== '') {
      const token: HeldToken = {
        access: new Secret(access),
        refresh: typeof body.refresh_token === 'string' ? new Secret(body.refresh_token) : undefined,
      };
      this.#secrets.push(token.access, ...(token.refresh ? [token.refresh] : []));
      return token;
    }
    const described = [body.error, body.error_description].filter((part) => typeof part === 'string').join(': ');
    let detail = described || (status === 200 ? 'the answer has no access_token' : 'no error named');
    if (body.error === 'invalid_grant' && status === 401) detail += ` — ${credentials} may be wrong`;
    if (status === 404) detail += ` — does realm ${this.#settings.adminRealm} exist?`;
    throw new SetupError(step, describeCall('POST', url), status, redact(detail, this.#secrets));
  }
}
