// Step "discovery": the realm's OpenID Connect discovery document, read without a token, gives
// the values gw needs — the issuer tokens carry and the key set's URL. Keycloak writes its own
// hostname setting into them, which may differ from the address the procedure used.
import { SetupError } from '../errors.ts';
import { NoAnswer } from '../http-call.ts';
import { answerDetail, describeCall } from '../keycloak-admin.ts';
import { redact } from '../secret.ts';
import type { IdpSettings } from '../settings.ts';
import { GROUPS_CLAIM } from './client-scope.ts';
import type { PlannedCall, StepContext } from './context.ts';

export const STEP = 'discovery';

export interface DerivedValues {
  issuer: string;
  jwksUri: string;
  /** The key set's path on Keycloak (jwks_uri without the base address). */
  jwksPath: string;
  audience: string;
  groupsClaim: string;
  group: string;
}

export function discoveryPath(settings: IdpSettings): string {
  return `/realms/${encodeURIComponent(settings.realm)}/.well-known/openid-configuration`;
}

export function planDiscovery(settings: IdpSettings): PlannedCall[] {
  return [{ step: STEP, method: 'GET', path: discoveryPath(settings), when: 'without a token' }];
}

export async function readDiscovery(context: StepContext): Promise<DerivedValues> {
  const { settings, http, reporter } = context;
  const url = new URL(`${settings.idpUrl}${discoveryPath(settings)}`);
  const call = describeCall('GET', url);
  let answer: Awaited<ReturnType<typeof http.send>>;
  try {
    answer = await http.send('GET', url, { accept: 'application/json' });
  } catch (error) {
    throw new SetupError(
      STEP,
      call,
      undefined,
      redact(error instanceof NoAnswer ? error.message : String(error), context.secrets),
    );
  }
  if (answer.status !== 200) throw new SetupError(STEP, call, answer.status, answerDetail(answer, context.secrets));
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    throw new SetupError(
      STEP,
      call,
      answer.status,
      `the discovery document is not JSON (${answer.contentType || 'no content type'}): the request was probably blocked by network rules or a proxy — retry it on a network that allows it`,
    );
  }
  const { issuer, jwks_uri: jwksUri } = document ?? {};
  let jwksPath: string | undefined;
  try {
    jwksPath = typeof jwksUri === 'string' ? new URL(jwksUri).pathname : undefined;
  } catch {
    jwksPath = undefined;
  }
  if (typeof issuer !== 'string' || issuer === '' || jwksPath === undefined)
    throw new SetupError(STEP, call, answer.status, 'the discovery document names no issuer or no valid jwks_uri');
  const expected = `${settings.idpUrl}/realms/${encodeURIComponent(settings.realm)}`;
  if (issuer !== expected)
    reporter.warning(
      `Keycloak names the issuer ${issuer}, not ${expected} (its hostname setting): tokens carry ${issuer}, so the policy uses it`,
    );
  reporter.outcome({ step: STEP, object: 'OpenID configuration', status: 'checked', detail: 'read' });
  return {
    issuer,
    jwksUri: jwksUri as string,
    jwksPath,
    audience: settings.mcpResourceUrl,
    groupsClaim: GROUPS_CLAIM,
    group: settings.group,
  };
}
