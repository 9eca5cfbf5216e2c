// The Keycloak stand-in's state: realms with their client scopes and protocol mappers, realm
// default scopes, clients and their scope assignments, groups, users (with password, required
// actions and memberships) and components, and each realm's signing key. A new realm is seeded
// as Keycloak seeds one (built-in scopes, clients and client registration policies); README.md
// says where each fact comes from.
import { randomUUID } from 'node:crypto';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK } from 'jose';

export const OIDC = 'openid-connect';
export const REGISTRATION_POLICY_TYPE = 'org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy';

export interface Mapper {
  id: string;
  name: string;
  protocol: string;
  protocolMapper: string;
  consentRequired: boolean;
  config: Record<string, string>;
}

export interface ClientScope {
  id: string;
  name: string;
  description?: string;
  protocol: string;
  attributes: Record<string, string>;
  protocolMappers: Mapper[];
}

export interface Client {
  id: string;
  clientId: string;
  protocol: string;
  publicClient: boolean;
  directAccessGrantsEnabled: boolean;
  /** Assigned scope ids: true for a default scope, false for an optional one. */
  scopes: Map<string, boolean>;
}

export interface Group {
  id: string;
  name: string;
  parentId?: string;
}

export interface User {
  id: string;
  /** Lower case, as Keycloak keeps it. */
  username: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  enabled: boolean;
  emailVerified: boolean;
  createdTimestamp: number;
  requiredActions: string[];
  password?: string;
  groups: Set<string>;
  /** May use the admin API: of every realm when the user is in the admin realm, else of its own. */
  admin: boolean;
}

export interface Component {
  id: string;
  name: string;
  providerId: string;
  providerType: string;
  parentId: string;
  subType?: string;
  config: Record<string, string[]>;
}

export interface RealmKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public key as the certs endpoint lists it. */
  publicJwk: JWK;
}

export interface Realm {
  id: string;
  name: string;
  accessTokenLifespan: number;
  ssoSessionIdleTimeout: number;
  duplicateEmailsAllowed: boolean;
  clientScopes: Map<string, ClientScope>;
  /** Realm default client scopes: scope id → true (default) or false (optional). */
  realmDefaults: Map<string, boolean>;
  clients: Map<string, Client>;
  groups: Map<string, Group>;
  users: Map<string, User>;
  components: Map<string, Component>;
  key: RealmKey;
}

// Keycloak's built-in client scopes of a new realm, and which are realm defaults (true) or
// optional (false); those not listed in either are assigned to no client.
const BUILT_IN_SCOPES: { name: string; protocol: string; realmDefault?: boolean }[] = [
  { name: 'profile', protocol: OIDC, realmDefault: true },
  { name: 'email', protocol: OIDC, realmDefault: true },
  { name: 'roles', protocol: OIDC, realmDefault: true },
  { name: 'web-origins', protocol: OIDC, realmDefault: true },
  { name: 'acr', protocol: OIDC, realmDefault: true },
  { name: 'basic', protocol: OIDC, realmDefault: true },
  { name: 'address', protocol: OIDC, realmDefault: false },
  { name: 'phone', protocol: OIDC, realmDefault: false },
  { name: 'offline_access', protocol: OIDC, realmDefault: false },
  { name: 'microprofile-jwt', protocol: OIDC, realmDefault: false },
  { name: 'role_list', protocol: 'saml', realmDefault: true },
];

const BUILT_IN_CLIENTS: { clientId: string; publicClient: boolean; directAccessGrantsEnabled: boolean }[] = [
  { clientId: 'account', publicClient: true, directAccessGrantsEnabled: false },
  { clientId: 'account-console', publicClient: true, directAccessGrantsEnabled: false },
  { clientId: 'admin-cli', publicClient: true, directAccessGrantsEnabled: true },
  { clientId: 'broker', publicClient: false, directAccessGrantsEnabled: false },
  { clientId: 'realm-management', publicClient: false, directAccessGrantsEnabled: false },
  { clientId: 'security-admin-console', publicClient: true, directAccessGrantsEnabled: false },
];

/** The protocol mapper types the stand-in knows (Keycloak answers 404 for unknown ones). */
export const MAPPER_TYPES = new Set([
  'oidc-audience-mapper',
  'oidc-group-membership-mapper',
  'oidc-usermodel-property-mapper',
  'oidc-usermodel-attribute-mapper',
  'oidc-full-name-mapper',
  'oidc-hardcoded-claim-mapper',
  'oidc-usermodel-realm-role-mapper',
]);

export async function createRealm(
  name: string,
  options: { accessTokenLifespan: number; ssoSessionIdleTimeout: number },
): Promise<Realm> {
  const realm: Realm = {
    id: randomUUID(),
    name,
    accessTokenLifespan: options.accessTokenLifespan,
    ssoSessionIdleTimeout: options.ssoSessionIdleTimeout,
    duplicateEmailsAllowed: false,
    clientScopes: new Map(),
    realmDefaults: new Map(),
    clients: new Map(),
    groups: new Map(),
    users: new Map(),
    components: new Map(),
    key: await realmKey(),
  };
  for (const scope of BUILT_IN_SCOPES) {
    const id = randomUUID();
    realm.clientScopes.set(id, {
      id,
      name: scope.name,
      protocol: scope.protocol,
      attributes: { 'include.in.token.scope': 'true', 'display.on.consent.screen': 'true' },
      protocolMappers: [],
    });
    if (scope.realmDefault !== undefined) realm.realmDefaults.set(id, scope.realmDefault);
  }
  for (const client of BUILT_IN_CLIENTS) addClient(realm, client);
  seedComponents(realm);
  return realm;
}

/** A client as Keycloak creates one: the realm default scopes of its protocol assigned. */
export function addClient(
  realm: Realm,
  client: { clientId: string; publicClient: boolean; directAccessGrantsEnabled: boolean; protocol?: string },
): Client {
  const protocol = client.protocol ?? OIDC;
  const scopes = new Map<string, boolean>();
  for (const [scopeId, isDefault] of realm.realmDefaults)
    if (realm.clientScopes.get(scopeId)?.protocol === protocol) scopes.set(scopeId, isDefault);
  const created: Client = { id: randomUUID(), ...client, protocol, scopes };
  realm.clients.set(created.id, created);
  return created;
}

export function addUser(
  realm: Realm,
  user: {
    username: string;
    email?: string;
    firstName?: string;
    lastName?: string;
    password?: string;
    admin?: boolean;
    enabled?: boolean;
    requiredActions?: string[];
  },
): User {
  const created: User = {
    id: randomUUID(),
    username: user.username.toLowerCase(),
    email: user.email?.toLowerCase(),
    firstName: user.firstName,
    lastName: user.lastName,
    enabled: user.enabled ?? true,
    emailVerified: false,
    createdTimestamp: Date.now(),
    requiredActions: user.requiredActions ?? [],
    password: user.password,
    groups: new Set(),
    admin: user.admin ?? false,
  };
  realm.users.set(created.id, created);
  return created;
}

export function groupPath(realm: Realm, group: Group): string {
  const names: string[] = [];
  for (
    let current: Group | undefined = group;
    current;
    current = current.parentId ? realm.groups.get(current.parentId) : undefined
  )
    names.unshift(current.name);
  return `/${names.join('/')}`;
}

function component(realm: Realm, fields: Omit<Component, 'id' | 'parentId'>): void {
  const id = randomUUID();
  realm.components.set(id, { id, parentId: realm.id, ...fields });
}

// The client registration policies Keycloak gives a new realm (anonymous and authenticated),
// and a few components of other types, so that the type filter of the listing matters.
function seedComponents(realm: Realm): void {
  const policy = (name: string, providerId: string, subType: string, config: Record<string, string[]> = {}) =>
    component(realm, { name, providerId, providerType: REGISTRATION_POLICY_TYPE, subType, config });
  const allowedMappers = {
    'allowed-protocol-mapper-types': [
      'saml-user-attribute-mapper',
      'oidc-usermodel-attribute-mapper',
      'saml-user-property-mapper',
      'oidc-usermodel-property-mapper',
      'oidc-full-name-mapper',
      'oidc-address-mapper',
      'oidc-sha256-pairwise-sub-mapper',
      'saml-role-list-mapper',
    ],
  };
  policy('Trusted Hosts', 'trusted-hosts', 'anonymous', {
    'host-sending-registration-request-must-match': ['true'],
    'client-uris-must-match': ['true'],
  });
  policy('Consent Required', 'consent-required', 'anonymous');
  policy('Full Scope Disabled', 'scope', 'anonymous');
  policy('Max Clients Limit', 'max-clients', 'anonymous', { 'max-clients': ['200'] });
  policy('Allowed Protocol Mapper Types', 'allowed-protocol-mappers', 'anonymous', allowedMappers);
  policy('Allowed Client Scopes', 'allowed-client-templates', 'anonymous', { 'allow-default-scopes': ['true'] });
  policy('Allowed Protocol Mapper Types', 'allowed-protocol-mappers', 'authenticated', allowedMappers);
  policy('Allowed Client Scopes', 'allowed-client-templates', 'authenticated', { 'allow-default-scopes': ['true'] });
  const keyProvider = 'org.keycloak.keys.KeyProvider';
  for (const providerId of ['rsa-generated', 'rsa-enc-generated', 'hmac-generated-hs512', 'aes-generated'])
    component(realm, { name: providerId, providerId, providerType: keyProvider, config: { priority: ['100'] } });
  component(realm, {
    name: 'declarative-user-profile',
    providerId: 'declarative-user-profile',
    providerType: 'org.keycloak.userprofile.UserProfileProvider',
    config: {},
  });
}

async function realmKey(): Promise<RealmKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID().replaceAll('-', '').slice(0, 24);
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}
