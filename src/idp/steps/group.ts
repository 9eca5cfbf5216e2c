// Step "group": the top-level group of permitted users, found with an exact search. Keycloak's
// search answers the hierarchy — a top-level group whose subgroup matches comes back too, with
// the match among its subGroups — so only a top-level group of exactly that name counts.
import { SetupError } from '../errors.ts';
import { describeCall } from '../keycloak-admin.ts';
import { displayJson } from '../secret.ts';
import type { IdpSettings } from '../settings.ts';
import { adminPath, idFromLocation, type PlannedCall, type StepContext } from './context.ts';

export const STEP = 'group';

interface GroupRepresentation {
  id: string;
  name: string;
  path?: string;
  parentId?: string;
}

export function planGroup(settings: IdpSettings): PlannedCall[] {
  const groups = adminPath(settings, '/groups');
  const search = new URLSearchParams({ search: settings.group, exact: 'true' });
  return [
    { step: STEP, method: 'GET', path: `${groups}?${search}` },
    {
      step: STEP,
      method: 'POST',
      path: groups,
      when: `there is no top-level group ${settings.group}`,
      body: displayJson({ name: settings.group }),
    },
  ];
}

export async function ensureGroup(context: StepContext): Promise<string> {
  const { settings, admin, reporter } = context;
  const groupsPath = adminPath(settings, '/groups');
  const object = settings.group;
  const existing = await findGroup(context);
  if (existing) {
    reporter.outcome({ step: STEP, object, status: 'unchanged' });
    return existing.id;
  }
  const created = await admin.call(STEP, 'POST', groupsPath, { body: { name: settings.group }, accept: [409] });
  // 409 "Top level group named … already exists": made meanwhile, use it.
  const id =
    created.status === 409
      ? (await findGroup(context))?.id
      : (idFromLocation(created.location) ?? (await findGroup(context))?.id);
  if (!id)
    throw new SetupError(
      STEP,
      describeCall('POST', admin.url(groupsPath)),
      created.status,
      created.status === 409
        ? `Keycloak says ${object} exists, but the exact search does not find it`
        : 'no id for the new group',
    );
  reporter.outcome({ step: STEP, object, status: created.status === 409 ? 'unchanged' : 'created' });
  return id;
}

async function findGroup(context: StepContext): Promise<GroupRepresentation | undefined> {
  const { settings, admin } = context;
  const found = await admin.list<GroupRepresentation>(STEP, adminPath(settings, '/groups'), {
    search: settings.group,
    exact: true,
  });
  return found.find(
    (group) =>
      group.name === settings.group && !group.parentId && (group.path === undefined || group.path === `/${group.name}`),
  );
}
