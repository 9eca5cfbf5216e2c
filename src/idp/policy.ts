// The GwPolicy the procedure prints: JWT authentication of the MCP route with the realm as the
// one provider (issuer, the MCP URL as audience, the realm's key set), MCP OAuth for Keycloak
// (Idp02), and an authorization rule that admits members of the group through the groups claim.
import { stringify } from 'yaml';
import type { IdpSettings } from './settings.ts';
import type { DerivedValues } from './steps/discovery.ts';

export function policyName(settings: IdpSettings): string {
  return `${settings.route}-oauth`;
}

/** The CEL expression admitting members of `group` (a CEL string literal: JSON's escapes are CEL's). */
export function groupExpression(derived: DerivedValues): string {
  return `${JSON.stringify(derived.group)} in jwt.${derived.groupsClaim}`;
}

export function gwPolicy(settings: IdpSettings, derived: DerivedValues): Record<string, unknown> {
  return {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwPolicy',
    metadata: { name: policyName(settings) },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: settings.route }],
      traffic: {
        jwtAuthentication: {
          providers: [
            {
              issuer: derived.issuer,
              audiences: [derived.audience],
              jwks: { remote: { url: derived.jwksUri } },
            },
          ],
          mcp: { provider: 'Idp02' },
        },
        authorization: { policy: { matchExpressions: [groupExpression(derived)] } },
      },
    },
  };
}

/** The derived values as comments, then the GwPolicy document. */
export function gwPolicyYaml(settings: IdpSettings, derived: DerivedValues): string {
  const comments = [
    `GwPolicy for MCP authentication with Keycloak realm ${settings.realm}, written by gw idp setup.`,
    `issuer:       ${derived.issuer}`,
    `JWKS path:    ${derived.jwksPath}`,
    `JWKS URL:     ${derived.jwksUri}`,
    `audience:     ${derived.audience}`,
    `groups claim: ${derived.groupsClaim} (members of ${derived.group} are admitted)`,
    `It targets HTTPRoute ${settings.route}, which must serve ${new URL(derived.audience).pathname}.`,
  ];
  // Comment lines cannot break out of the comment: a value with a line break is not possible
  // here (URLs and names were checked), but make sure.
  const header = comments.map((line) => `# ${line.replace(/[\r\n]+/g, ' ')}`).join('\n');
  return `${header}\n${stringify(gwPolicy(settings, derived), { lineWidth: 0 })}`;
}
