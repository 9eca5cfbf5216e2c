// What the gw idp setup tests share: the Keycloak stand-in with realm mcp, the command line of a
// run against it, and readers of the command's report.
import { runGw } from '../helpers/cli.ts';
import { ADMIN_USER, type KeycloakStandIn, startKeycloak } from '../support/keycloak/server.ts';

export const REALM = 'mcp';
export const MCP_URL = 'https://gw.example.com/mcp';
/** Distinctive, so that a test can look for them in everything printed. */
export const USER_PASSWORD = 'user-pw-Zq81-never-printed';
export const USERS = ['alice,alice@example.com,Alice,Liddell', 'bob,bob@example.com,Bob,Builder'];

export function startRealm(options: Parameters<typeof startKeycloak>[0] = {}): Promise<KeycloakStandIn> {
  return startKeycloak({ realms: [REALM], ...options });
}

/** `gw idp setup` against the stand-in with the two users; `extra` flags are appended. */
export function setupArgs(kc: KeycloakStandIn, extra: string[] = []): string[] {
  return [
    'idp',
    'setup',
    '--idp-url',
    kc.url,
    '--realm',
    REALM,
    '--admin-password',
    ADMIN_USER.password,
    '--mcp-resource-url',
    MCP_URL,
    ...USERS.flatMap((user) => ['--user', user]),
    '--user-password',
    USER_PASSWORD,
    ...extra,
  ];
}

export function runSetup(kc: KeycloakStandIn, extra: string[] = []) {
  return runGw(setupArgs(kc, extra));
}

/** The report lines ("created   group: mcp-users"…) of a run's standard error. */
export function reportLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => /^ {2}(created|updated|unchanged|removed|skipped|checked) /.test(line))
    .map((line) => line.trim().replace(/\s+/g, ' '));
}

/** The report lines that say something changed. */
export function changes(stderr: string): string[] {
  return reportLines(stderr).filter((line) => /^(created|updated|removed) /.test(line));
}

/** Calls the stand-in received since index `from` that change something. */
export function writes(kc: KeycloakStandIn, from = 0): string[] {
  return kc.calls
    .slice(from)
    .filter((call) => call.method !== 'GET' && !call.path.includes('/protocol/openid-connect/token'))
    .map((call) => `${call.method} ${call.path}`);
}
