// Step "anonymous DCR": only with --allow-anonymous-dcr, and for local testing only. A new realm
// refuses anonymous Dynamic Client Registration from any host (the Trusted Hosts policy) and for
// any client scope not listed (Allowed Client Scopes); MCP clients register anonymously, so for a
// local test these two are removed: every registration policy component whose providerId is
// trusted-hosts, and allowed-client-templates of subType anonymous. Without the flag nothing is
// read or changed.
import type { IdpSettings } from '../settings.ts';
import { adminPath, type PlannedCall, type StepContext } from './context.ts';

export const STEP = 'anonymous DCR';
/** The component type of client registration policies. */
export const REGISTRATION_POLICY_TYPE = 'org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy';

export const WARNING =
  '--allow-anonymous-dcr removes the anonymous client registration restrictions of the realm: anyone who can reach Keycloak can register clients. This is for local testing only — in production keep Dynamic Client Registration restricted (trusted redirect hosts, allowed client scopes and protocol mappers, no full-scope access, client limits, user consent, no service accounts or client credentials for registered clients).';

interface ComponentRepresentation {
  id: string;
  name?: string;
  providerId?: string;
  subType?: string;
}

/** The restrictions the flag removes. */
export function isAnonymousRestriction(component: ComponentRepresentation): boolean {
  return (
    component.providerId === 'trusted-hosts' ||
    (component.providerId === 'allowed-client-templates' && component.subType === 'anonymous')
  );
}

export function planAnonymousDcr(settings: IdpSettings): PlannedCall[] {
  if (!settings.allowAnonymousDcr) return [];
  const components = adminPath(settings, '/components');
  return [
    { step: STEP, method: 'GET', path: `${components}?${new URLSearchParams({ type: REGISTRATION_POLICY_TYPE })}` },
    {
      step: STEP,
      method: 'DELETE',
      path: `${components}/<component-id>`,
      when: 'for each policy whose providerId is trusted-hosts, or allowed-client-templates with subType anonymous',
    },
  ];
}

export async function relaxAnonymousDcr(context: StepContext): Promise<void> {
  const { settings, admin, reporter } = context;
  const object = 'anonymous registration restrictions';
  if (!settings.allowAnonymousDcr) {
    reporter.outcome({
      step: STEP,
      object,
      status: 'skipped',
      detail: 'kept; --allow-anonymous-dcr removes them for local testing',
    });
    return;
  }
  reporter.warning(WARNING);
  const componentsPath = adminPath(settings, '/components');
  const policies = await admin.list<ComponentRepresentation>(STEP, componentsPath, { type: REGISTRATION_POLICY_TYPE });
  const restrictions = policies.filter(isAnonymousRestriction);
  if (restrictions.length === 0) {
    reporter.outcome({ step: STEP, object, status: 'unchanged', detail: 'none left' });
    return;
  }
  for (const component of restrictions) {
    // A 404 means it is gone already (removed meanwhile): the outcome is the same.
    await admin.call(STEP, 'DELETE', `${componentsPath}/${encodeURIComponent(component.id)}`, { accept: [404] });
    reporter.outcome({
      step: STEP,
      object: `policy "${component.name ?? component.id}"`,
      status: 'removed',
      detail: `${component.providerId}, ${component.subType ?? 'no subType'}`,
    });
  }
}
