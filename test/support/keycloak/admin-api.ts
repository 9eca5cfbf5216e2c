// The Keycloak stand-in's admin REST API: the subset under /admin/realms/<realm> that
// `gw idp setup` uses, with Keycloak's status codes, error bodies and representations (README.md
// names the source of each behaviour). A route gets the realm, the path after it split into
// segments, the query and the decoded JSON body, and returns the answer.
import { randomUUID } from 'node:crypto';
import {
  type Client,
  type ClientScope,
  type Component,
  type Group,
  groupPath,
  MAPPER_TYPES,
  type Mapper,
  OIDC,
  type Realm,
  type User,
} from './model.ts';

export interface Answer {
  status: number;
  body?: unknown;
  /** For 201: the path of the new object (the server makes it an absolute URL). */
  created?: string;
}

type Query = URLSearchParams;
// Keycloak's rule for client scope names (ClientScopeResource).
const SCOPE_NAME = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const DEFAULT_MAX = 100;

const error = (status: number, message: string): Answer => ({ status, body: { errorMessage: message } });
const notFound = (message: string): Answer => ({ status: 404, body: { error: message } });
const noContent: Answer = { status: 204 };
const ok = (body: unknown): Answer => ({ status: 200, body });

export function adminRoute(realm: Realm, segments: string[], method: string, query: Query, body: unknown): Answer {
  const [collection, id, sub, ...rest] = segments;
  const base = `/admin/realms/${encodeURIComponent(realm.name)}`;
  switch (collection) {
    case 'client-scopes':
      return clientScopes(realm, base, id, sub, rest, method, body);
    case 'default-default-client-scopes':
      return realmDefaults(realm, true, id, method);
    case 'default-optional-client-scopes':
      return realmDefaults(realm, false, id, method);
    case 'clients':
      return clients(realm, id, sub, rest, method, query);
    case 'groups':
      return groups(realm, base, id, method, query, body);
    case 'users':
      return users(realm, base, id, sub, rest, method, query, body);
    case 'components':
      return components(realm, id, method, query);
    default:
      return notFound('HTTP 404 Not Found');
  }
}

// ---------------------------------------------------------------------------------------------
// Client scopes and their protocol mappers.

function scopeRepresentation(scope: ClientScope): Record<string, unknown> {
  return {
    id: scope.id,
    name: scope.name,
    ...(scope.description ? { description: scope.description } : {}),
    protocol: scope.protocol,
    attributes: { ...scope.attributes },
    ...(scope.protocolMappers.length > 0 ? { protocolMappers: scope.protocolMappers.map(mapperRepresentation) } : {}),
  };
}

function mapperRepresentation(mapper: Mapper): Record<string, unknown> {
  return { ...mapper, config: { ...mapper.config } };
}

/** Keycloak's mapper config is a map of strings: scalars become strings, anything else is refused. */
function toConfig(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  const config: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (entry === null || entry === undefined) continue;
    if (typeof entry === 'object') return undefined;
    config[key] = String(entry);
  }
  return config;
}

function toMapper(input: unknown): Mapper | Answer {
  const rep = (input ?? {}) as Record<string, unknown>;
  const config = toConfig(rep.config);
  if (typeof rep.name !== 'string' || typeof rep.protocolMapper !== 'string' || !config)
    return { status: 400, body: { error: 'Cannot parse the JSON' } };
  if (!MAPPER_TYPES.has(rep.protocolMapper)) return notFound('ProtocolMapper provider not found');
  if (
    rep.protocolMapper === 'oidc-audience-mapper' &&
    !config['included.client.audience'] &&
    !config['included.custom.audience']
  )
    return {
      status: 400,
      body: {
        error: 'aud.mapper.validation.error',
        error_description: 'Either Included Client Audience or Included Custom Audience must be specified',
      },
    };
  return {
    id: randomUUID(),
    name: rep.name,
    protocol: typeof rep.protocol === 'string' ? rep.protocol : OIDC,
    protocolMapper: rep.protocolMapper,
    consentRequired: rep.consentRequired === true,
    config,
  };
}

const isAnswer = (value: Mapper | Answer): value is Answer => 'status' in value;

function clientScopes(
  realm: Realm,
  base: string,
  id: string | undefined,
  sub: string | undefined,
  rest: string[],
  method: string,
  body: unknown,
): Answer {
  if (id === undefined) {
    if (method === 'GET') return ok([...realm.clientScopes.values()].map(scopeRepresentation));
    if (method !== 'POST') return { status: 405 };
    const rep = (body ?? {}) as Record<string, unknown>;
    const name = typeof rep.name === 'string' ? rep.name : '';
    if (!SCOPE_NAME.test(name)) return error(400, `Unexpected name "${name}" for ClientScope`);
    if (rep.protocol !== OIDC && rep.protocol !== 'saml') return error(400, 'Unexpected protocol');
    if ([...realm.clientScopes.values()].some((scope) => scope.name === name))
      return error(409, `Client Scope ${name} already exists`);
    const mappers: Mapper[] = [];
    for (const input of Array.isArray(rep.protocolMappers) ? rep.protocolMappers : []) {
      const mapper = toMapper(input);
      if (isAnswer(mapper)) return mapper;
      if (mappers.some((other) => other.name === mapper.name))
        return error(409, 'Protocol mapper exists with same name');
      mappers.push(mapper);
    }
    const scope: ClientScope = {
      id: randomUUID(),
      name,
      description: typeof rep.description === 'string' ? rep.description : undefined,
      protocol: rep.protocol,
      // Keycloak adds its defaults for an OpenID Connect scope.
      attributes: {
        'include.in.token.scope': 'true',
        'display.on.consent.screen': 'true',
        ...toConfig(rep.attributes),
      },
      protocolMappers: mappers,
    };
    realm.clientScopes.set(scope.id, scope);
    return { status: 201, created: `${base}/client-scopes/${scope.id}` };
  }
  const scope = realm.clientScopes.get(id);
  if (!scope) return notFound('Could not find client scope');
  if (sub === undefined) {
    if (method === 'GET') return ok(scopeRepresentation(scope));
    if (method === 'PUT') {
      const rep = (body ?? {}) as Record<string, unknown>;
      if (typeof rep.name === 'string') {
        if (!SCOPE_NAME.test(rep.name)) return error(400, `Unexpected name "${rep.name}" for ClientScope`);
        if ([...realm.clientScopes.values()].some((other) => other.name === rep.name && other.id !== id))
          return error(409, `Client Scope ${rep.name} already exists`);
        scope.name = rep.name;
      }
      if (typeof rep.protocol === 'string') scope.protocol = rep.protocol;
      if (typeof rep.description === 'string') scope.description = rep.description;
      return noContent;
    }
    if (method === 'DELETE') {
      realm.clientScopes.delete(id);
      realm.realmDefaults.delete(id);
      for (const client of realm.clients.values()) client.scopes.delete(id);
      return noContent;
    }
    return { status: 405 };
  }
  if (sub !== 'protocol-mappers' || rest[0] !== 'models') return notFound('HTTP 404 Not Found');
  const mapperId = rest[1];
  if (mapperId === undefined) {
    if (method === 'GET') return ok(scope.protocolMappers.map(mapperRepresentation));
    if (method !== 'POST') return { status: 405 };
    const mapper = toMapper(body);
    if (isAnswer(mapper)) return mapper;
    if (scope.protocolMappers.some((other) => other.name === mapper.name))
      return error(409, 'Protocol mapper exists with same name');
    scope.protocolMappers.push(mapper);
    return { status: 201, created: `${base}/client-scopes/${scope.id}/protocol-mappers/models/${mapper.id}` };
  }
  const index = scope.protocolMappers.findIndex((mapper) => mapper.id === mapperId);
  if (index === -1) return notFound('Model not found');
  if (method === 'GET') return ok(mapperRepresentation(scope.protocolMappers[index]!));
  if (method === 'DELETE') {
    scope.protocolMappers.splice(index, 1);
    return noContent;
  }
  if (method !== 'PUT') return { status: 405 };
  const updated = toMapper(body);
  if (isAnswer(updated)) return updated;
  scope.protocolMappers[index] = { ...updated, id: mapperId };
  return noContent;
}

/** Realm default (or optional) client scopes: one assignment per scope, as Keycloak keeps them. */
function realmDefaults(realm: Realm, isDefault: boolean, id: string | undefined, method: string): Answer {
  if (id === undefined) {
    if (method !== 'GET') return { status: 405 };
    const listed = [...realm.realmDefaults]
      .filter(([, kind]) => kind === isDefault)
      .map(([scopeId]) => realm.clientScopes.get(scopeId))
      .filter((scope): scope is ClientScope => scope !== undefined)
      .map((scope) => ({ id: scope.id, name: scope.name }));
    return ok(listed);
  }
  if (!realm.clientScopes.has(id)) return notFound('Client scope not found');
  if (method === 'PUT') {
    // A second assignment of the same scope breaks the mapping's primary key: a duplicate, 409.
    if (realm.realmDefaults.has(id)) return { status: 409, body: { error: 'unknown_error' } };
    realm.realmDefaults.set(id, isDefault);
    return noContent;
  }
  if (method === 'DELETE') {
    realm.realmDefaults.delete(id);
    return noContent;
  }
  return { status: 405 };
}

// ---------------------------------------------------------------------------------------------
// Clients and their scope assignments.

function clientRepresentation(realm: Realm, client: Client): Record<string, unknown> {
  const names = (kind: boolean) =>
    [...client.scopes]
      .filter(([, isDefault]) => isDefault === kind)
      .map(([scopeId]) => realm.clientScopes.get(scopeId)?.name)
      .filter((name): name is string => name !== undefined);
  return {
    id: client.id,
    clientId: client.clientId,
    enabled: true,
    protocol: client.protocol,
    publicClient: client.publicClient,
    directAccessGrantsEnabled: client.directAccessGrantsEnabled,
    defaultClientScopes: names(true),
    optionalClientScopes: names(false),
  };
}

function page<T>(items: T[], query: Query): T[] {
  const first = Math.max(0, Number(query.get('first') ?? 0) || 0);
  const max = query.has('max') ? Number(query.get('max')) : DEFAULT_MAX;
  return max < 0 ? items.slice(first) : items.slice(first, first + max);
}

function clients(
  realm: Realm,
  id: string | undefined,
  sub: string | undefined,
  rest: string[],
  method: string,
  query: Query,
): Answer {
  if (id === undefined) {
    if (method !== 'GET') return { status: 405 };
    const clientId = query.get('clientId');
    const all = [...realm.clients.values()].filter((client) => clientId === null || client.clientId === clientId);
    return ok(page(all, query).map((client) => clientRepresentation(realm, client)));
  }
  const client = realm.clients.get(id);
  if (!client) return notFound('Could not find client');
  if (sub === undefined && method === 'GET') return ok(clientRepresentation(realm, client));
  if (sub !== 'default-client-scopes' && sub !== 'optional-client-scopes') return notFound('HTTP 404 Not Found');
  const isDefault = sub === 'default-client-scopes';
  const scopeId = rest[0];
  if (scopeId === undefined) {
    if (method !== 'GET') return { status: 405 };
    const listed = [...client.scopes]
      .filter(([, kind]) => kind === isDefault)
      .map(([assigned]) => realm.clientScopes.get(assigned))
      .filter((scope): scope is ClientScope => scope !== undefined)
      .map((scope) => ({ id: scope.id, name: scope.name }));
    return ok(listed);
  }
  const scope = realm.clientScopes.get(scopeId);
  if (!scope) return notFound('Client scope not found');
  if (method === 'PUT') {
    // Keycloak skips a scope the client already has (default or optional) and one of another
    // protocol, without saying so.
    if (!client.scopes.has(scopeId) && scope.protocol === client.protocol) client.scopes.set(scopeId, isDefault);
    return noContent;
  }
  if (method === 'DELETE') {
    client.scopes.delete(scopeId);
    return noContent;
  }
  return { status: 405 };
}

// ---------------------------------------------------------------------------------------------
// Groups.

function groupRepresentation(realm: Realm, group: Group, subGroups: Record<string, unknown>[] = []) {
  const children = [...realm.groups.values()].filter((other) => other.parentId === group.id);
  return {
    id: group.id,
    name: group.name,
    path: groupPath(realm, group),
    ...(group.parentId ? { parentId: group.parentId } : {}),
    subGroupCount: children.length,
    subGroups,
  };
}

/**
 * A search answers the hierarchy: each top-level group whose subtree has a match, its subGroups
 * holding the branches down to the matches.
 */
function searchGroups(realm: Realm, matches: (group: Group) => boolean): Record<string, unknown>[] {
  const branch = (group: Group): Record<string, unknown> | undefined => {
    const children = [...realm.groups.values()].filter((other) => other.parentId === group.id);
    const matchedChildren = children.map(branch).filter((rep): rep is Record<string, unknown> => rep !== undefined);
    if (!matches(group) && matchedChildren.length === 0) return undefined;
    return groupRepresentation(realm, group, matchedChildren);
  };
  return [...realm.groups.values()]
    .filter((group) => !group.parentId)
    .map(branch)
    .filter((rep): rep is Record<string, unknown> => rep !== undefined);
}

function groups(realm: Realm, base: string, id: string | undefined, method: string, query: Query, body: unknown) {
  if (id !== undefined) {
    const group = realm.groups.get(id);
    if (!group) return notFound('Could not find group by id');
    return method === 'GET' ? ok(groupRepresentation(realm, group)) : { status: 405 };
  }
  if (method === 'GET') {
    const search = query.get('search');
    if (search === null)
      return ok(
        page(
          [...realm.groups.values()].filter((group) => !group.parentId),
          query,
        ).map((group) => groupRepresentation(realm, group)),
      );
    const exact = query.get('exact') === 'true';
    const term = search.trim();
    const found = searchGroups(realm, (group) =>
      exact ? group.name === term : group.name.toLowerCase().includes(term.toLowerCase()),
    );
    return ok(page(found, query));
  }
  if (method !== 'POST') return { status: 405 };
  const name = typeof (body as Record<string, unknown>)?.name === 'string' ? (body as { name: string }).name : '';
  if (name.trim() === '') return error(400, 'Group name is missing');
  if ([...realm.groups.values()].some((group) => !group.parentId && group.name === name))
    return error(409, `Top level group named '${name}' already exists.`);
  const group: Group = { id: randomUUID(), name };
  realm.groups.set(group.id, group);
  return { status: 201, created: `${base}/groups/${group.id}` };
}

// ---------------------------------------------------------------------------------------------
// Users, their passwords and group memberships.

function userRepresentation(user: User): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    ...(user.firstName !== undefined ? { firstName: user.firstName } : {}),
    ...(user.lastName !== undefined ? { lastName: user.lastName } : {}),
    ...(user.email !== undefined ? { email: user.email } : {}),
    emailVerified: user.emailVerified,
    createdTimestamp: user.createdTimestamp,
    enabled: user.enabled,
    totp: false,
    disableableCredentialTypes: [],
    requiredActions: [...user.requiredActions],
    notBefore: 0,
    access: { manageGroupMembership: true, view: true, mapRoles: true, impersonate: true, manage: true },
  };
}

function setPassword(user: User, credential: Record<string, unknown>): Answer | undefined {
  if (credential.type !== undefined && credential.type !== 'password') return undefined;
  if (typeof credential.value !== 'string' || credential.value === '')
    return { status: 400, body: { error: 'No password provided' } };
  user.password = credential.value;
  user.requiredActions = user.requiredActions.filter((action) => action !== 'UPDATE_PASSWORD');
  if (credential.temporary === true) user.requiredActions.push('UPDATE_PASSWORD');
  return undefined;
}

function emailTaken(realm: Realm, email: string, except?: string): boolean {
  return (
    !realm.duplicateEmailsAllowed &&
    [...realm.users.values()].some((user) => user.email === email.toLowerCase() && user.id !== except)
  );
}

function users(
  realm: Realm,
  base: string,
  id: string | undefined,
  sub: string | undefined,
  rest: string[],
  method: string,
  query: Query,
  body: unknown,
): Answer {
  const rep = (body ?? {}) as Record<string, unknown>;
  if (id === undefined) {
    if (method === 'GET') {
      const exact = query.get('exact') === 'true';
      const matches = (value: string | undefined, wanted: string | null) =>
        wanted === null ||
        (value !== undefined &&
          (exact ? value.toLowerCase() === wanted.toLowerCase() : value.toLowerCase().includes(wanted.toLowerCase())));
      const found = [...realm.users.values()].filter(
        (user) =>
          matches(user.username, query.get('username')) &&
          matches(user.email, query.get('email')) &&
          matches(user.firstName, query.get('firstName')) &&
          matches(user.lastName, query.get('lastName')),
      );
      return ok(page(found, query).map(userRepresentation));
    }
    if (method !== 'POST') return { status: 405 };
    const username = typeof rep.username === 'string' ? rep.username.trim().toLowerCase() : '';
    if (username === '') return error(400, 'User name is missing');
    if ([...realm.users.values()].some((user) => user.username === username))
      return error(409, 'User exists with same username');
    const email = typeof rep.email === 'string' ? rep.email : undefined;
    if (email !== undefined && emailTaken(realm, email)) return error(409, 'User exists with same email');
    const user: User = {
      id: randomUUID(),
      username,
      email: email?.toLowerCase(),
      firstName: typeof rep.firstName === 'string' ? rep.firstName : undefined,
      lastName: typeof rep.lastName === 'string' ? rep.lastName : undefined,
      enabled: rep.enabled === true,
      emailVerified: rep.emailVerified === true,
      createdTimestamp: Date.now(),
      requiredActions: Array.isArray(rep.requiredActions) ? rep.requiredActions.map(String) : [],
      groups: new Set(),
      admin: false,
    };
    for (const credential of Array.isArray(rep.credentials) ? rep.credentials : []) {
      const refused = setPassword(user, credential as Record<string, unknown>);
      if (refused) return refused;
    }
    realm.users.set(user.id, user);
    return { status: 201, created: `${base}/users/${user.id}` };
  }
  const user = realm.users.get(id);
  if (!user) return notFound('User not found');
  if (sub === undefined) {
    if (method === 'GET') return ok(userRepresentation(user));
    if (method !== 'PUT') return { status: 405 };
    if (typeof rep.username === 'string' && rep.username.toLowerCase() !== user.username)
      return {
        status: 400,
        body: { field: 'username', errorMessage: 'error-user-attribute-read-only', params: ['username'] },
      };
    if (typeof rep.email === 'string') {
      if (emailTaken(realm, rep.email, user.id)) return error(409, 'User exists with same email');
      user.email = rep.email.toLowerCase();
    }
    if (typeof rep.firstName === 'string') user.firstName = rep.firstName;
    if (typeof rep.lastName === 'string') user.lastName = rep.lastName;
    if (typeof rep.enabled === 'boolean') user.enabled = rep.enabled;
    if (typeof rep.emailVerified === 'boolean') user.emailVerified = rep.emailVerified;
    if (Array.isArray(rep.requiredActions)) user.requiredActions = rep.requiredActions.map(String);
    return noContent;
  }
  if (sub === 'reset-password') {
    if (method !== 'PUT') return { status: 405 };
    return setPassword(user, rep) ?? noContent;
  }
  if (sub !== 'groups') return notFound('HTTP 404 Not Found');
  const groupId = rest[0];
  if (groupId === undefined) {
    if (method !== 'GET') return { status: 405 };
    const memberOf = [...user.groups]
      .map((member) => realm.groups.get(member))
      .filter((group): group is Group => group !== undefined)
      .map((group) => ({ id: group.id, name: group.name, path: groupPath(realm, group) }));
    return ok(page(memberOf, query));
  }
  const group = realm.groups.get(groupId);
  if (!group) return notFound('Group not found');
  // Joining a group the user is in already changes nothing.
  if (method === 'PUT') user.groups.add(group.id);
  else if (method === 'DELETE') user.groups.delete(group.id);
  else return { status: 405 };
  return noContent;
}

// ---------------------------------------------------------------------------------------------
// Components (client registration policies and others).

function components(realm: Realm, id: string | undefined, method: string, query: Query): Answer {
  const representation = (component: Component) => ({ ...component, config: structuredClone(component.config) });
  if (id === undefined) {
    if (method !== 'GET') return { status: 405 };
    // Without parent, the realm's own components.
    const parent = query.get('parent') ?? realm.id;
    const type = query.get('type');
    const name = query.get('name');
    const found = [...realm.components.values()].filter(
      (component) =>
        component.parentId === parent &&
        (type === null || component.providerType === type) &&
        (name === null || component.name === name),
    );
    return ok(found.map(representation));
  }
  const component = realm.components.get(id);
  if (!component) return notFound('Could not find component');
  if (method === 'GET') return ok(representation(component));
  if (method === 'DELETE') {
    realm.components.delete(id);
    return noContent;
  }
  return { status: 405 };
}
