// Step "client scope": an openid-connect client scope with the audience mapper (the MCP URL in
// the aud claim of access tokens) and the group mapper (group names in a groups claim). Found by
// its exact name; created with both mappers in one call; an existing scope keeps everything
// else, and only a mapper that is missing or differs in the keys set here is created or updated.
import { SetupError } from '../errors.ts';
import { describeCall } from '../keycloak-admin.ts';
import { displayJson } from '../secret.ts';
import type { IdpSettings } from '../settings.ts';
import { adminPath, idFromLocation, type PlannedCall, type StepContext } from './context.ts';

export const STEP = 'client scope';
export const PROTOCOL = 'openid-connect';
/** The name of the claim the group mapper writes, which the printed authorization rule reads. */
export const GROUPS_CLAIM = 'groups';

export interface MapperRepresentation {
  id?: string;
  name: string;
  protocol: string;
  protocolMapper: string;
  config: Record<string, string>;
}

interface ClientScopeRepresentation {
  id: string;
  name: string;
  protocol?: string;
  [field: string]: unknown;
}

/** How far the scope got: the procedure reports a scope left half-made when a later call fails. */
export interface ScopeProgress {
  name: string;
  id: string | undefined;
  /** Mappers that are not yet as they should be. */
  pendingMappers: string[];
}

export function desiredMappers(settings: IdpSettings): MapperRepresentation[] {
  return [
    {
      name: 'audience mapper',
      protocol: PROTOCOL,
      protocolMapper: 'oidc-audience-mapper',
      config: { 'included.custom.audience': settings.mcpResourceUrl, 'access.token.claim': 'true' },
    },
    {
      name: 'group mapper',
      protocol: PROTOCOL,
      protocolMapper: 'oidc-group-membership-mapper',
      config: { 'claim.name': GROUPS_CLAIM, 'full.path': 'false', 'access.token.claim': 'true' },
    },
  ];
}

export function scopeRepresentation(settings: IdpSettings): Record<string, unknown> {
  return { name: settings.scope, protocol: PROTOCOL, protocolMappers: desiredMappers(settings) };
}

export function planClientScope(settings: IdpSettings): PlannedCall[] {
  const scopes = adminPath(settings, '/client-scopes');
  const models = adminPath(settings, '/client-scopes/<scope-id>/protocol-mappers/models');
  return [
    { step: STEP, method: 'GET', path: scopes },
    {
      step: STEP,
      method: 'POST',
      path: scopes,
      when: `no client scope is named ${settings.scope}`,
      body: displayJson(scopeRepresentation(settings)),
    },
    {
      step: STEP,
      method: 'PUT',
      path: adminPath(settings, '/client-scopes/<scope-id>'),
      when: `the scope exists with another protocol than ${PROTOCOL}`,
    },
    { step: STEP, method: 'GET', path: models, when: 'the scope exists' },
    ...desiredMappers(settings).flatMap((mapper): PlannedCall[] => [
      {
        step: STEP,
        method: 'POST',
        path: models,
        when: `the scope has no mapper named "${mapper.name}"`,
        body: displayJson(mapper),
      },
      {
        step: STEP,
        method: 'PUT',
        path: `${models}/<mapper-id>`,
        when: `mapper "${mapper.name}" differs in ${Object.keys(mapper.config).join(', ')}`,
      },
      {
        step: STEP,
        method: 'DELETE',
        path: `${models}/<mapper-id>`,
        when: `mapper "${mapper.name}" is of another type than ${mapper.protocolMapper} (then created anew)`,
      },
    ]),
  ];
}

export async function ensureClientScope(context: StepContext, progress: ScopeProgress): Promise<string> {
  const { settings, admin, reporter } = context;
  const scopesPath = adminPath(settings, '/client-scopes');
  let scope = await findScope(context);
  if (!scope) {
    // One call creates the scope with both mappers: Keycloak never shows it without them.
    progress.pendingMappers = desiredMappers(settings).map((mapper) => mapper.name);
    const created = await admin.call(STEP, 'POST', scopesPath, { body: scopeRepresentation(settings), accept: [409] });
    if (created.status === 409) {
      // Created meanwhile by someone else: carry on with that one, as with any existing scope.
      scope = await findScope(context);
      if (!scope)
        throw new SetupError(
          STEP,
          describeCall('POST', admin.url(scopesPath)),
          409,
          `Keycloak says client scope ${settings.scope} exists, but it is not in the realm's listing`,
        );
    } else {
      const id = idFromLocation(created.location) ?? (await findScope(context))?.id;
      if (!id)
        throw new SetupError(
          STEP,
          describeCall('POST', admin.url(scopesPath)),
          created.status,
          'no id for the new scope',
        );
      progress.id = id;
      progress.pendingMappers = [];
      reporter.outcome({
        step: STEP,
        object: settings.scope,
        status: 'created',
        detail: `with ${desiredMappers(settings)
          .map((mapper) => mapper.name)
          .join(' and ')}`,
      });
      return id;
    }
  }
  progress.id = scope.id;
  progress.pendingMappers = desiredMappers(settings).map((mapper) => mapper.name);
  const scopePath = adminPath(settings, `/client-scopes/${encodeURIComponent(scope.id)}`);
  if (scope.protocol !== PROTOCOL) {
    await admin.call(STEP, 'PUT', scopePath, { body: { ...scope, protocol: PROTOCOL } });
    reporter.outcome({
      step: STEP,
      object: settings.scope,
      status: 'updated',
      detail: `protocol ${scope.protocol ?? 'unset'} → ${PROTOCOL}`,
    });
  } else {
    reporter.outcome({ step: STEP, object: settings.scope, status: 'unchanged' });
  }
  for (const mapper of desiredMappers(settings)) {
    await ensureMapper(context, `${scopePath}/protocol-mappers/models`, mapper);
    progress.pendingMappers = progress.pendingMappers.filter((name) => name !== mapper.name);
  }
  return scope.id;
}

async function findScope(context: StepContext): Promise<ClientScopeRepresentation | undefined> {
  const scopes = await context.admin.list<ClientScopeRepresentation>(
    STEP,
    adminPath(context.settings, '/client-scopes'),
  );
  return scopes.find((scope) => scope.name === context.settings.scope);
}

async function ensureMapper(context: StepContext, modelsPath: string, desired: MapperRepresentation): Promise<void> {
  const { admin, reporter } = context;
  const object = `mapper "${desired.name}"`;
  const mappers = await admin.list<MapperRepresentation>(STEP, modelsPath);
  const existing = mappers.find((mapper) => mapper.name === desired.name);
  if (!existing) {
    const created = await admin.call(STEP, 'POST', modelsPath, { body: desired, accept: [409] });
    if (created.status === 409) {
      // "Protocol mapper exists with same name": made meanwhile; compare it like an existing one.
      const again = (await admin.list<MapperRepresentation>(STEP, modelsPath)).find((m) => m.name === desired.name);
      if (!again)
        throw new SetupError(
          STEP,
          describeCall('POST', admin.url(modelsPath)),
          409,
          `${object} exists but is not listed`,
        );
      return updateMapper(context, modelsPath, again, desired);
    }
    reporter.outcome({ step: STEP, object, status: 'created', detail: desired.protocolMapper });
    return;
  }
  return updateMapper(context, modelsPath, existing, desired);
}

async function updateMapper(
  context: StepContext,
  modelsPath: string,
  existing: MapperRepresentation,
  desired: MapperRepresentation,
): Promise<void> {
  const { admin, reporter } = context;
  const object = `mapper "${desired.name}"`;
  const mapperPath = `${modelsPath}/${encodeURIComponent(existing.id ?? '')}`;
  if (existing.protocolMapper !== desired.protocolMapper || existing.protocol !== desired.protocol) {
    // Another kind of mapper under this name: it cannot become this one, so it is replaced.
    await admin.call(STEP, 'DELETE', mapperPath);
    await admin.call(STEP, 'POST', modelsPath, { body: desired });
    reporter.outcome({
      step: STEP,
      object,
      status: 'updated',
      detail: `replaced a ${existing.protocolMapper} mapper by ${desired.protocolMapper}`,
    });
    return;
  }
  const config = existing.config ?? {};
  const differing = Object.keys(desired.config).filter((key) => config[key] !== desired.config[key]);
  if (differing.length === 0) {
    reporter.outcome({ step: STEP, object, status: 'unchanged' });
    return;
  }
  // Keys set by someone else (id.token.claim…) stay as they are.
  await admin.call(STEP, 'PUT', mapperPath, {
    body: { ...existing, config: { ...config, ...desired.config } },
  });
  reporter.outcome({ step: STEP, object, status: 'updated', detail: `set ${differing.join(', ')}` });
}
