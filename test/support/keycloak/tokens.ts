// Tokens of the Keycloak stand-in: access and refresh tokens as signed JWTs (RS256, the realm's
// key), remembered with their expiry so that a stale one is refused. Time is the stand-in's clock,
// which tests move forward to make tokens expire.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Realm, User } from './model.ts';

interface Issued {
  realm: string;
  userId: string;
  clientId: string;
  kind: 'access' | 'refresh';
  /** Seconds on the stand-in's clock. */
  expiresAt: number;
}

/** The most tokens remembered; the oldest are forgotten first (and then refused as unknown). */
const MAX_REMEMBERED = 10_000;

export class TokenStore {
  readonly #issued = new Map<string, Issued>();
  readonly #now: () => number;
  readonly #issuer: (realm: string) => string;

  constructor(now: () => number, issuer: (realm: string) => string) {
    this.#now = now;
    this.#issuer = issuer;
  }

  /** The token endpoint's answer for a successful grant. */
  async grant(realm: Realm, user: User, clientId: string): Promise<Record<string, unknown>> {
    const now = this.#now();
    const session = randomUUID();
    const access = await this.#sign(realm, user, clientId, session, 'Bearer', now, realm.accessTokenLifespan);
    const refresh = await this.#sign(realm, user, clientId, session, 'Refresh', now, realm.ssoSessionIdleTimeout);
    this.#remember(access, {
      realm: realm.name,
      userId: user.id,
      clientId,
      kind: 'access',
      expiresAt: now + realm.accessTokenLifespan,
    });
    this.#remember(refresh, {
      realm: realm.name,
      userId: user.id,
      clientId,
      kind: 'refresh',
      expiresAt: now + realm.ssoSessionIdleTimeout,
    });
    return {
      access_token: access,
      expires_in: realm.accessTokenLifespan,
      refresh_expires_in: realm.ssoSessionIdleTimeout,
      refresh_token: refresh,
      token_type: 'Bearer',
      'not-before-policy': 0,
      session_state: session,
      scope: 'profile email',
    };
  }

  /** A token that is known, of that kind, and not expired; undefined otherwise. */
  valid(token: string, kind: Issued['kind']): Issued | undefined {
    const issued = this.#issued.get(token);
    if (!issued || issued.kind !== kind || issued.expiresAt <= this.#now()) return undefined;
    return issued;
  }

  /** Every token handed out so far (tests check none of them is printed). */
  all(): string[] {
    return [...this.#issued.keys()];
  }

  #remember(token: string, issued: Issued): void {
    this.#issued.set(token, issued);
    if (this.#issued.size > MAX_REMEMBERED) this.#issued.delete(this.#issued.keys().next().value!);
  }

  async #sign(
    realm: Realm,
    user: User,
    clientId: string,
    session: string,
    type: string,
    now: number,
    lifespan: number,
  ): Promise<string> {
    return new SignJWT({
      typ: type,
      azp: clientId,
      sid: session,
      preferred_username: user.username,
      scope: 'profile email',
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: realm.key.kid })
      .setIssuer(this.#issuer(realm.name))
      .setSubject(user.id)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + lifespan)
      .sign(realm.key.privateKey);
  }
}
