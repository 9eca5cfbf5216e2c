// Step "users": each configured user exists (found by an exact username search), enabled, with
// its email and names, a non-temporary password, and is a member of the group. A user is created
// with its password in one call. For an existing user the password cannot be read back, so it is
// checked by signing in as that user (the password grant of the realm's admin-cli client): only
// a password that does not sign in is set again.
import { SetupError } from '../errors.ts';
import { ADMIN_CLIENT, describeCall, requestToken, tokenPath } from '../keycloak-admin.ts';
import { displayJson } from '../secret.ts';
import type { IdpSettings, UserSettings } from '../settings.ts';
import { adminPath, idFromLocation, type PlannedCall, type StepContext } from './context.ts';

export const STEP = 'users';

interface UserRepresentation {
  id: string;
  username: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  enabled?: boolean;
  requiredActions?: string[];
  [field: string]: unknown;
}

interface GroupReference {
  id: string;
}

export function newUserRepresentation(user: UserSettings): Record<string, unknown> {
  return {
    username: user.username,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    enabled: true,
    credentials: [{ type: 'password', value: user.password, temporary: false }],
  };
}

export function planUsers(settings: IdpSettings): PlannedCall[] {
  return settings.users.flatMap((user): PlannedCall[] => {
    const users = adminPath(settings, '/users');
    const search = new URLSearchParams({ username: user.username, exact: 'true' });
    const userPath = adminPath(settings, `/users/<${user.username}-id>`);
    const signIn = `${new URLSearchParams({ client_id: ADMIN_CLIENT, grant_type: 'password', username: user.username })}&password=(hidden)`;
    return [
      { step: STEP, method: 'GET', path: `${users}?${search}` },
      {
        step: STEP,
        method: 'POST',
        path: users,
        when: `there is no user ${user.username}`,
        body: displayJson(newUserRepresentation(user)),
      },
      { step: STEP, method: 'PUT', path: userPath, when: 'the user exists with another email, name, or disabled' },
      {
        step: STEP,
        method: 'POST',
        path: tokenPath(settings.realm),
        when: 'the user existed: is the password still this one?',
        body: signIn,
      },
      {
        step: STEP,
        method: 'PUT',
        path: `${userPath}/reset-password`,
        when: 'the password does not sign in',
        body: displayJson({ type: 'password', value: user.password, temporary: false }),
      },
      { step: STEP, method: 'GET', path: `${userPath}/groups?first=0&max=100` },
      {
        step: STEP,
        method: 'PUT',
        path: `${userPath}/groups/<group-id>`,
        when: `the user is not in ${settings.group}`,
      },
    ];
  });
}

export async function ensureUsers(context: StepContext, groupId: string): Promise<void> {
  if (context.settings.users.length === 0) {
    context.reporter.outcome({ step: STEP, object: 'users', status: 'skipped', detail: 'none configured' });
    return;
  }
  for (const user of context.settings.users) {
    const id = await ensureUser(context, user);
    await ensureMembership(context, user, id, groupId);
  }
}

async function ensureUser(context: StepContext, user: UserSettings): Promise<string> {
  const { settings, admin, reporter } = context;
  const object = user.username;
  const usersPath = adminPath(settings, '/users');
  let existing = await findUser(context, 'username', user.username);
  if (!existing) {
    const created = await admin.call(STEP, 'POST', usersPath, { body: newUserRepresentation(user), accept: [409] });
    if (created.status !== 409) {
      const id = idFromLocation(created.location) ?? (await findUser(context, 'username', user.username))?.id;
      if (!id)
        throw new SetupError(
          STEP,
          describeCall('POST', admin.url(usersPath)),
          created.status,
          `no id for the new user ${user.username}`,
        );
      reporter.outcome({ step: STEP, object, status: 'created', detail: `${user.email}, password set` });
      return id;
    }
    // 409: the username was taken meanwhile, or another user has this email.
    existing = await findUser(context, 'username', user.username);
    if (!existing) {
      const owner = await findUser(context, 'email', user.email);
      throw new SetupError(
        STEP,
        describeCall('POST', admin.url(usersPath)),
        409,
        `email ${user.email} belongs to ${owner ? `user ${owner.username}` : 'another user'}: give ${user.username} another email`,
      );
    }
  }
  await updateUser(context, user, existing);
  await ensurePassword(context, user, existing);
  return existing.id;
}

async function updateUser(context: StepContext, user: UserSettings, existing: UserRepresentation): Promise<void> {
  const { settings, admin, reporter } = context;
  const object = user.username;
  const differing: string[] = [];
  // Keycloak keeps emails in lower case.
  if ((existing.email ?? '').toLowerCase() !== user.email.toLowerCase()) differing.push('email');
  if (existing.firstName !== user.firstName) differing.push('firstName');
  if (existing.lastName !== user.lastName) differing.push('lastName');
  if (existing.enabled !== true) differing.push('enabled');
  if (differing.length === 0) {
    reporter.outcome({ step: STEP, object, status: 'unchanged' });
    return;
  }
  // The whole representation goes back, so that nothing else of the user is cleared.
  const { access: _access, ...representation } = existing;
  await admin.call(STEP, 'PUT', adminPath(settings, `/users/${encodeURIComponent(existing.id)}`), {
    body: { ...representation, email: user.email, firstName: user.firstName, lastName: user.lastName, enabled: true },
  });
  reporter.outcome({ step: STEP, object, status: 'updated', detail: `set ${differing.join(', ')}` });
}

async function ensurePassword(context: StepContext, user: UserSettings, existing: UserRepresentation): Promise<void> {
  const { settings, admin, reporter } = context;
  const object = `password of ${user.username}`;
  let reason: string;
  if ((existing.requiredActions ?? []).includes('UPDATE_PASSWORD')) {
    reason = 'it was temporary';
  } else {
    const url = admin.url(tokenPath(settings.realm));
    const answer = await requestToken(
      context.http,
      STEP,
      url,
      { client_id: ADMIN_CLIENT, grant_type: 'password', username: user.username, password: user.password },
      context.secrets,
    );
    if (answer.status === 200) {
      reporter.outcome({ step: STEP, object, status: 'unchanged', detail: 'it signs in' });
      return;
    }
    const error = answer.body.error;
    const description = typeof answer.body.error_description === 'string' ? answer.body.error_description : '';
    if (answer.status === 401 && error === 'invalid_grant') reason = 'it did not sign in';
    else if (answer.status === 400) reason = `it could not be checked: ${description || String(error)}`;
    else
      throw new SetupError(
        STEP,
        describeCall('POST', url),
        answer.status,
        `checking the password of ${user.username}: ${[error, description].filter(Boolean).join(': ')}`,
      );
  }
  // temporary: false also removes Keycloak's UPDATE_PASSWORD required action.
  await admin.call(STEP, 'PUT', adminPath(settings, `/users/${encodeURIComponent(existing.id)}/reset-password`), {
    body: { type: 'password', value: user.password, temporary: false },
  });
  reporter.outcome({ step: STEP, object, status: 'updated', detail: `set again: ${reason}` });
}

async function ensureMembership(context: StepContext, user: UserSettings, userId: string, groupId: string) {
  const { settings, admin, reporter } = context;
  const object = `${user.username} in ${settings.group}`;
  const userPath = adminPath(settings, `/users/${encodeURIComponent(userId)}`);
  const groups = await admin.listAll<GroupReference>(STEP, `${userPath}/groups`);
  if (groups.some((group) => group.id === groupId)) {
    reporter.outcome({ step: STEP, object, status: 'unchanged' });
    return;
  }
  await admin.call(STEP, 'PUT', `${userPath}/groups/${encodeURIComponent(groupId)}`);
  reporter.outcome({ step: STEP, object, status: 'created' });
}

async function findUser(
  context: StepContext,
  field: 'username' | 'email',
  value: string,
): Promise<UserRepresentation | undefined> {
  const found = await context.admin.list<UserRepresentation>(STEP, adminPath(context.settings, '/users'), {
    [field]: value,
    exact: true,
  });
  return found.find((user) => (user[field] ?? '').toString().toLowerCase() === value.toLowerCase());
}
