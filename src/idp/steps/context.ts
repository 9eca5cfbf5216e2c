// What every step of the procedure is given, and how a step describes the calls it would make
// (for --dry-run): the same paths and bodies it sends, secrets shown as "(hidden)".
import type { HttpClient } from '../http-call.ts';
import type { KeycloakAdmin, Method } from '../keycloak-admin.ts';
import type { Reporter } from '../report.ts';
import type { Secret } from '../secret.ts';
import type { IdpSettings } from '../settings.ts';

export interface StepContext {
  settings: IdpSettings;
  admin: KeycloakAdmin;
  http: HttpClient;
  reporter: Reporter;
  /** Every secret known so far (passwords, tokens), for redacting what Keycloak sends back. */
  secrets: Secret[];
}

export interface PlannedCall {
  step: string;
  method: Method;
  /** The path (and query) after idpUrl; ids Keycloak assigns are written <scope-id> and so on. */
  path: string;
  /** When the call is made, if not always. */
  when?: string;
  /** The body as sent, secrets hidden (JSON, or a form for token requests). */
  body?: string;
}

/** Adds the realm's admin path: /admin/realms/<realm><rest>. */
export function adminPath(settings: IdpSettings, rest: string): string {
  return `/admin/realms/${encodeURIComponent(settings.realm)}${rest}`;
}

/** The id at the end of a Location header (Keycloak answers 201 with the new object's URL). */
export function idFromLocation(location: string | undefined): string | undefined {
  if (!location) return undefined;
  const path = location.split('?')[0]!.replace(/\/+$/, '');
  const id = path.slice(path.lastIndexOf('/') + 1);
  return id === '' ? undefined : decodeURIComponent(id);
}
