// The procedure of spec document 3, step by step: admin token, client scope with its two
// mappers, default scope of every client, group, users and memberships, (with the flag) anonymous
// registration restrictions removed, discovery. Every step finds what exists and changes only what
// differs; the first failure stops it, naming the step, the call and the status, and says what it
// left half-made.
import { SetupError } from './errors.ts';
import { HttpClient } from './http-call.ts';
import { KeycloakAdmin } from './keycloak-admin.ts';
import { gwPolicyYaml } from './policy.ts';
import type { Reporter } from './report.ts';
import { type IdpSettings, secretsOf } from './settings.ts';
import { obtainAdminToken, planAdminToken } from './steps/admin-token.ts';
import { planAnonymousDcr, relaxAnonymousDcr } from './steps/anonymous-dcr.ts';
import { ensureClientScope, planClientScope, type ScopeProgress } from './steps/client-scope.ts';
import type { PlannedCall, StepContext } from './steps/context.ts';
import { ensureDefaultScope, planDefaultScope } from './steps/default-scope.ts';
import { type DerivedValues, planDiscovery, readDiscovery } from './steps/discovery.ts';
import { ensureGroup, planGroup } from './steps/group.ts';
import { ensureUsers, planUsers } from './steps/users.ts';

export interface SetupResult {
  derived: DerivedValues;
  /** The ready-to-apply GwPolicy, the derived values as comments on top. */
  policyYaml: string;
}

export async function runIdpSetup(settings: IdpSettings, reporter: Reporter): Promise<SetupResult> {
  const secrets = secretsOf(settings);
  const http = new HttpClient(settings.timeoutMs);
  const context: StepContext = {
    settings,
    admin: new KeycloakAdmin(settings, http, reporter, secrets),
    http,
    reporter,
    secrets,
  };
  const scope: ScopeProgress = { name: settings.scope, id: undefined, pendingMappers: [] };
  let scopeComplete = false;
  try {
    await obtainAdminToken(context);
    const scopeId = await ensureClientScope(context, scope);
    await ensureDefaultScope(context, scopeId);
    scopeComplete = true;
    const groupId = await ensureGroup(context);
    await ensureUsers(context, groupId);
    await relaxAnonymousDcr(context);
    const derived = await readDiscovery(context);
    return { derived, policyYaml: gwPolicyYaml(settings, derived) };
  } catch (error) {
    if (error instanceof SetupError && scope.id !== undefined && !scopeComplete) error.halfMade = halfMade(scope);
    throw error;
  } finally {
    await http.close();
  }
}

function halfMade(scope: ScopeProgress): string {
  const what =
    scope.pendingMappers.length > 0
      ? `lacks ${scope.pendingMappers.map((name) => `"${name}"`).join(' and ')} as it should be`
      : 'has its mappers but is not yet a default scope of every client';
  return `client scope ${scope.name} (id ${scope.id}) is half-made: it ${what}, so tokens do not carry the audience and groups claims yet. Running gw idp setup again completes it.`;
}

/** The calls of a run, in order, with the conditions under which each is made (--dry-run). */
export function planIdpSetup(settings: IdpSettings): PlannedCall[] {
  return [
    ...planAdminToken(settings),
    ...planClientScope(settings),
    ...planDefaultScope(settings),
    ...planGroup(settings),
    ...planUsers(settings),
    ...planAnonymousDcr(settings),
    ...planDiscovery(settings),
  ];
}

export function formatPlan(settings: IdpSettings, calls: readonly PlannedCall[]): string {
  const lines = [
    `# gw idp setup --dry-run: no call is made. A run against ${settings.idpUrl} would make these calls`,
    '# in order (<...-id> stands for ids Keycloak assigns; "when" says when a call is made):',
  ];
  for (const call of calls) {
    lines.push(`[${call.step}] ${call.method} ${settings.idpUrl}${call.path}`);
    if (call.when) lines.push(`    when: ${call.when}`);
    if (call.body) lines.push(`    body: ${call.body}`);
  }
  if (!settings.allowAnonymousDcr)
    lines.push('# anonymous registration restrictions are kept (--allow-anonymous-dcr removes them, for local tests)');
  return `${lines.join('\n')}\n`;
}
