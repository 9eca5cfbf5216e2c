// Step "default scope": the client scope becomes a default scope of every client — future ones
// through the realm's default-default-client-scopes (what Dynamic Client Registration gives a new
// client), current ones through each openid-connect client's default-client-scopes. Keycloak
// keeps one assignment per scope: a realm default cannot be added twice (409), and a client's
// assignment is silently kept as it is, optional ones included; so each is read first, and an
// optional assignment is removed before the default one is made.
import type { IdpSettings } from '../settings.ts';
import { PROTOCOL } from './client-scope.ts';
import { adminPath, type PlannedCall, type StepContext } from './context.ts';

export const STEP = 'default scope';
const NAMES_SHOWN = 8;

interface ScopeReference {
  id: string;
  name?: string;
}

interface ClientRepresentation {
  id: string;
  clientId: string;
  protocol?: string;
  defaultClientScopes?: string[];
  optionalClientScopes?: string[];
}

export function planDefaultScope(settings: IdpSettings): PlannedCall[] {
  const realmDefaults = adminPath(settings, '/default-default-client-scopes');
  const realmOptional = adminPath(settings, '/default-optional-client-scopes');
  const client = adminPath(settings, '/clients/<client-id>');
  return [
    { step: STEP, method: 'GET', path: realmDefaults },
    { step: STEP, method: 'GET', path: realmOptional, when: 'the scope is not a realm default yet' },
    {
      step: STEP,
      method: 'DELETE',
      path: `${realmOptional}/<scope-id>`,
      when: 'the scope is a realm optional scope',
    },
    { step: STEP, method: 'PUT', path: `${realmDefaults}/<scope-id>`, when: 'the scope is not a realm default yet' },
    { step: STEP, method: 'GET', path: `${adminPath(settings, '/clients')}?first=0&max=100`, when: 'page by page' },
    {
      step: STEP,
      method: 'GET',
      path: `${client}/default-client-scopes`,
      when: 'a listed client does not show its default scopes',
    },
    {
      step: STEP,
      method: 'DELETE',
      path: `${client}/optional-client-scopes/<scope-id>`,
      when: 'an openid-connect client has the scope as an optional one',
    },
    {
      step: STEP,
      method: 'PUT',
      path: `${client}/default-client-scopes/<scope-id>`,
      when: 'an openid-connect client lacks the scope',
    },
  ];
}

export async function ensureDefaultScope(context: StepContext, scopeId: string): Promise<void> {
  await ensureRealmDefault(context, scopeId);
  await ensureClientDefaults(context, scopeId);
}

async function ensureRealmDefault(context: StepContext, scopeId: string): Promise<void> {
  const { settings, admin, reporter } = context;
  const object = `realm default of new clients`;
  const defaults = await admin.list<ScopeReference>(STEP, adminPath(settings, '/default-default-client-scopes'));
  if (defaults.some((scope) => scope.id === scopeId)) {
    reporter.outcome({ step: STEP, object, status: 'unchanged' });
    return;
  }
  const optionalPath = adminPath(settings, '/default-optional-client-scopes');
  const optional = await admin.list<ScopeReference>(STEP, optionalPath);
  const wasOptional = optional.some((scope) => scope.id === scopeId);
  if (wasOptional) await admin.call(STEP, 'DELETE', `${optionalPath}/${encodeURIComponent(scopeId)}`);
  await admin.call(STEP, 'PUT', adminPath(settings, `/default-default-client-scopes/${encodeURIComponent(scopeId)}`));
  reporter.outcome({
    step: STEP,
    object,
    status: wasOptional ? 'updated' : 'created',
    detail: wasOptional ? 'was a realm optional scope' : undefined,
  });
}

async function ensureClientDefaults(context: StepContext, scopeId: string): Promise<void> {
  const { settings, admin, reporter } = context;
  const clients = await admin.listAll<ClientRepresentation>(STEP, adminPath(settings, '/clients'));
  const oidcClients = clients.filter((client) => (client.protocol ?? PROTOCOL) === PROTOCOL);
  const added: string[] = [];
  for (const client of oidcClients) {
    const clientPath = adminPath(settings, `/clients/${encodeURIComponent(client.id)}`);
    let hasDefault: boolean;
    let hasOptional: boolean;
    if (Array.isArray(client.defaultClientScopes) && Array.isArray(client.optionalClientScopes)) {
      hasDefault = client.defaultClientScopes.includes(settings.scope);
      hasOptional = client.optionalClientScopes.includes(settings.scope);
    } else {
      const defaults = await admin.list<ScopeReference>(STEP, `${clientPath}/default-client-scopes`);
      hasDefault = defaults.some((scope) => scope.id === scopeId);
      hasOptional =
        !hasDefault &&
        (await admin.list<ScopeReference>(STEP, `${clientPath}/optional-client-scopes`)).some(
          (scope) => scope.id === scopeId,
        );
    }
    if (hasDefault) continue;
    if (hasOptional)
      await admin.call(STEP, 'DELETE', `${clientPath}/optional-client-scopes/${encodeURIComponent(scopeId)}`);
    await admin.call(STEP, 'PUT', `${clientPath}/default-client-scopes/${encodeURIComponent(scopeId)}`);
    added.push(client.clientId);
  }
  const object = 'existing clients';
  if (added.length === 0) {
    reporter.outcome({ step: STEP, object, status: 'unchanged', detail: `all ${oidcClients.length} have it` });
    return;
  }
  const names = added.slice(0, NAMES_SHOWN).join(', ') + (added.length > NAMES_SHOWN ? ', …' : '');
  reporter.outcome({ step: STEP, object, status: 'updated', detail: `added to ${added.length}: ${names}` });
}
