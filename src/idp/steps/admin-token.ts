// Step "admin token": the administrator signs in with the password grant of the built-in
// admin-cli client of the admin realm. Later calls use the token, and renew it when Keycloak
// answers 401 (KeycloakAdmin).
import { ADMIN_CLIENT, tokenPath } from '../keycloak-admin.ts';
import type { IdpSettings } from '../settings.ts';
import type { PlannedCall, StepContext } from './context.ts';

export const STEP = 'admin token';

export function planAdminToken(settings: IdpSettings): PlannedCall[] {
  const form = new URLSearchParams({
    client_id: ADMIN_CLIENT,
    grant_type: 'password',
    username: settings.adminUsername,
  });
  return [{ step: STEP, method: 'POST', path: tokenPath(settings.adminRealm), body: `${form}&password=(hidden)` }];
}

export async function obtainAdminToken(context: StepContext): Promise<void> {
  await context.admin.obtainToken(STEP);
  context.reporter.outcome({
    step: STEP,
    object: `${context.settings.adminUsername} of realm ${context.settings.adminRealm}`,
    status: 'checked',
    detail: 'signed in',
  });
}
