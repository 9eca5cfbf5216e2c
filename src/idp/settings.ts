// The settings of `gw idp setup`: each from a command-line flag, else an environment variable,
// else the config file (YAML or JSON), else its default. One table names all three, so the CLI,
// the checks and docs/idp-setup.md agree.
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from '../util/values.ts';
import { Secret } from './secret.ts';

export interface UserSettings {
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  password: Secret;
}

export interface IdpSettings {
  /** The identity provider's base URL, without a trailing slash (http://localhost:8080, or …/auth for old Keycloak). */
  idpUrl: string;
  realm: string;
  /** The realm of the administrator (Keycloak's is master). */
  adminRealm: string;
  adminUsername: string;
  adminPassword: Secret;
  /** The exact public URL MCP clients connect to: the audience of the tokens. */
  mcpResourceUrl: string;
  /** The client scope carrying the two mappers. */
  scope: string;
  /** The group whose members the printed policy admits. */
  group: string;
  users: UserSettings[];
  /** The HTTPRoute the printed GwPolicy targets. */
  route: string;
  /** Time allowed for each call to Keycloak. */
  timeoutMs: number;
  /** Remove the anonymous Dynamic Client Registration restrictions (only from the flag). */
  allowAnonymousDcr: boolean;
  /** Print the planned calls, make none (only from the flag). */
  dryRun: boolean;
}

type ValueSetting =
  | 'idpUrl'
  | 'realm'
  | 'adminRealm'
  | 'adminUsername'
  | 'adminPassword'
  | 'mcpResourceUrl'
  | 'scope'
  | 'group'
  | 'userPassword'
  | 'route'
  | 'timeout';

export interface SettingSource {
  key: ValueSetting;
  flag: string;
  env: string;
  default?: string;
  secret?: boolean;
  description: string;
}

/** Every single-valued setting: its flag (--name), environment variable and config file key. */
export const SETTING_SOURCES: readonly SettingSource[] = [
  { key: 'idpUrl', flag: 'idp-url', env: 'GW_IDP_URL', description: 'base URL of Keycloak (required)' },
  { key: 'realm', flag: 'realm', env: 'GW_IDP_REALM', description: 'realm to prepare (required)' },
  {
    key: 'adminRealm',
    flag: 'admin-realm',
    env: 'GW_IDP_ADMIN_REALM',
    default: 'master',
    description: 'realm of the administrator',
  },
  {
    key: 'adminUsername',
    flag: 'admin-username',
    env: 'GW_IDP_ADMIN_USERNAME',
    default: 'admin',
    description: 'administrator username',
  },
  {
    key: 'adminPassword',
    flag: 'admin-password',
    env: 'GW_IDP_ADMIN_PASSWORD',
    secret: true,
    description: 'administrator password (required)',
  },
  {
    key: 'mcpResourceUrl',
    flag: 'mcp-resource-url',
    env: 'GW_IDP_MCP_RESOURCE_URL',
    description: 'exact public MCP URL clients connect to: the token audience (required)',
  },
  { key: 'scope', flag: 'scope', env: 'GW_IDP_SCOPE', default: 'mcp-gateway', description: 'client scope name' },
  { key: 'group', flag: 'group', env: 'GW_IDP_GROUP', default: 'mcp-users', description: 'group of permitted users' },
  {
    key: 'userPassword',
    flag: 'user-password',
    env: 'GW_IDP_USER_PASSWORD',
    secret: true,
    description: 'password of the users that have none of their own (required with users)',
  },
  {
    key: 'route',
    flag: 'route',
    env: 'GW_IDP_ROUTE',
    default: 'mcp',
    description: 'HTTPRoute the printed GwPolicy targets',
  },
  {
    key: 'timeout',
    flag: 'timeout',
    env: 'GW_IDP_TIMEOUT',
    default: '10',
    description: 'seconds allowed for each call to Keycloak',
  },
];

/** The users flag (repeatable) and its environment variable; the config file has a `users` list. */
export const USERS_FLAG = 'user';
export const USERS_ENV = 'GW_IDP_USERS';
/** The config file: flag and environment variable. */
export const CONFIG_FLAG = 'config';
export const CONFIG_ENV = 'GW_IDP_CONFIG';

const CONFIG_MAX_BYTES = 64 * 1024;
const USER_FIELDS = ['username', 'email', 'firstName', 'lastName', 'password'] as const;
// Keycloak's rule for client scope names: printable ASCII without space, quote and backslash.
const SCOPE_NAME = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const ROUTE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export interface SettingsInput {
  /** Flag values by setting key (as parsed from the command line). */
  flags: Partial<Record<ValueSetting, string>>;
  /** --user values, in order. */
  userFlags: string[];
  configFlag?: string;
  allowAnonymousDcr: boolean;
  dryRun: boolean;
  env: Record<string, string | undefined>;
  readFile: (path: string) => string;
}

/** Settings that cannot be used; every problem is listed. */
export class SettingsError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.problems = problems;
  }
}

interface ConfigUser {
  username?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  password?: string;
}

interface ConfigFile {
  values: Partial<Record<ValueSetting, string>>;
  users?: ConfigUser[];
}

export function resolveSettings(input: SettingsInput): IdpSettings {
  const problems: string[] = [];
  const configPath = input.configFlag ?? nonEmpty(input.env[CONFIG_ENV]);
  const config = configPath === undefined ? { values: {} } : readConfig(configPath, input.readFile, problems);

  const value = (key: ValueSetting): string | undefined => {
    const source = SETTING_SOURCES.find((entry) => entry.key === key)!;
    return input.flags[key] ?? nonEmpty(input.env[source.env]) ?? config.values[key] ?? source.default;
  };
  const required = (key: ValueSetting): string => {
    const found = value(key);
    if (found === undefined || found.trim() === '') {
      const source = SETTING_SOURCES.find((entry) => entry.key === key)!;
      problems.push(`${key} is required: set --${source.flag}, ${source.env} or "${key}" in the config file`);
      return '';
    }
    return found;
  };

  const idpUrl = checkBaseUrl(required('idpUrl'), problems);
  const realmText = required('realm');
  const realm = realmText === '' ? '' : checkName('realm', realmText, problems);
  const adminRealm = checkName('adminRealm', value('adminRealm')!, problems);
  const adminUsername = checkName('adminUsername', value('adminUsername')!, problems);
  const adminPassword = required('adminPassword');
  const mcpResourceUrl = checkResourceUrl(required('mcpResourceUrl'), problems);
  const scope = value('scope')!;
  if (!SCOPE_NAME.test(scope))
    problems.push(`scope "${scope}": Keycloak takes printable ASCII without spaces, quotes or backslashes`);
  const group = checkName('group', value('group')!, problems);
  const route = value('route')!;
  if (!ROUTE_NAME.test(route) || route.length > 240)
    problems.push(`route "${route}" is not a Kubernetes object name (lowercase letters, digits, "-" and ".")`);
  const timeoutSeconds = Number(value('timeout'));
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0 || timeoutSeconds > 300)
    problems.push(`timeout "${value('timeout')}" must be a number of seconds above 0 and at most 300`);

  const users = resolveUsers(input, config, value('userPassword'), problems);
  if (problems.length > 0) throw new SettingsError(problems);
  return {
    idpUrl,
    realm,
    adminRealm,
    adminUsername,
    adminPassword: new Secret(adminPassword),
    mcpResourceUrl,
    scope,
    group,
    users,
    route,
    timeoutMs: Math.round(timeoutSeconds * 1000),
    allowAnonymousDcr: input.allowAnonymousDcr,
    dryRun: input.dryRun,
  };
}

/** Every secret of the settings, for redacting text Keycloak sends back. */
export function secretsOf(settings: IdpSettings): Secret[] {
  return [settings.adminPassword, ...settings.users.map((user) => user.password)];
}

function resolveUsers(
  input: SettingsInput,
  config: ConfigFile,
  sharedPassword: string | undefined,
  problems: string[],
): UserSettings[] {
  let entries: ConfigUser[];
  let origin: string;
  if (input.userFlags.length > 0) {
    entries = input.userFlags.map(parseUserText);
    origin = `--${USERS_FLAG}`;
  } else if (nonEmpty(input.env[USERS_ENV]) !== undefined) {
    entries = input.env[USERS_ENV]!.split(';')
      .map((text) => text.trim())
      .filter((text) => text !== '')
      .map(parseUserText);
    origin = USERS_ENV;
  } else {
    entries = config.users ?? [];
    origin = 'the config file';
  }
  const users: UserSettings[] = [];
  const seenNames = new Set<string>();
  const seenEmails = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const where = `user ${index + 1} of ${origin}`;
    const username = entry.username?.trim() ?? '';
    const email = entry.email?.trim() ?? '';
    if (username === '' || /\s/.test(username)) {
      problems.push(`${where}: a username without spaces is required`);
      continue;
    }
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
      problems.push(`${where} (${username}): an email address is required`);
      continue;
    }
    // Keycloak keeps usernames and emails in lower case: two that differ only in case are one.
    if (seenNames.has(username.toLowerCase())) problems.push(`${where}: username ${username} is listed twice`);
    if (seenEmails.has(email.toLowerCase())) problems.push(`${where}: email ${email} is listed twice`);
    seenNames.add(username.toLowerCase());
    seenEmails.add(email.toLowerCase());
    const password = entry.password ?? sharedPassword;
    if (password === undefined || password === '') {
      problems.push(
        `${where} (${username}): a password is required: set --user-password, GW_IDP_USER_PASSWORD, or "userPassword" or the user's "password" in the config file`,
      );
      continue;
    }
    users.push({
      username,
      email,
      // Keycloak's user profile asks a user without first and last name for them at first login,
      // which a password grant cannot answer: every user gets both.
      firstName: entry.firstName?.trim() || username,
      lastName: entry.lastName?.trim() || 'User',
      password: new Secret(password),
    });
  }
  return users;
}

/** USERNAME,EMAIL[,FIRST_NAME[,LAST_NAME]] */
function parseUserText(text: string): ConfigUser {
  const [username, email, firstName, lastName, ...rest] = text.split(',').map((part) => part.trim());
  if (rest.length > 0) return { username, email: '' };
  return { username, email, firstName, lastName };
}

function readConfig(path: string, readFile: (path: string) => string, problems: string[]): ConfigFile {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    problems.push(`config file ${path}: ${(error as Error).message}`);
    return { values: {} };
  }
  if (Buffer.byteLength(text) > CONFIG_MAX_BYTES) {
    problems.push(`config file ${path}: larger than ${CONFIG_MAX_BYTES / 1024} KiB`);
    return { values: {} };
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    problems.push(`config file ${path}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
    return { values: {} };
  }
  if (document === null || document === undefined) return { values: {} };
  if (!isPlainObject(document)) {
    problems.push(`config file ${path}: must be a mapping of setting names to values`);
    return { values: {} };
  }
  const config: ConfigFile = { values: {} };
  for (const [key, entry] of Object.entries(document)) {
    if (key === 'users') {
      config.users = readConfigUsers(path, entry, problems);
      continue;
    }
    const source = SETTING_SOURCES.find((candidate) => candidate.key === key);
    if (!source) {
      const known = [...SETTING_SOURCES.map((candidate) => candidate.key), 'users'].join(', ');
      problems.push(`config file ${path}: unknown setting "${key}" (known: ${known})`);
      continue;
    }
    if (typeof entry === 'string' || (typeof entry === 'number' && key === 'timeout')) {
      config.values[source.key] = String(entry);
    } else {
      problems.push(`config file ${path}: "${key}" must be a string`);
    }
  }
  return config;
}

function readConfigUsers(path: string, entry: unknown, problems: string[]): ConfigUser[] {
  if (!Array.isArray(entry)) {
    problems.push(`config file ${path}: "users" must be a list`);
    return [];
  }
  const users: ConfigUser[] = [];
  for (const [index, item] of entry.entries()) {
    if (!isPlainObject(item)) {
      problems.push(`config file ${path}: users[${index}] must be a mapping`);
      continue;
    }
    const user: ConfigUser = {};
    for (const [field, fieldValue] of Object.entries(item)) {
      if (!(USER_FIELDS as readonly string[]).includes(field)) {
        problems.push(
          `config file ${path}: users[${index}]: unknown field "${field}" (known: ${USER_FIELDS.join(', ')})`,
        );
      } else if (typeof fieldValue !== 'string') {
        problems.push(`config file ${path}: users[${index}].${field} must be a string`);
      } else {
        user[field as (typeof USER_FIELDS)[number]] = fieldValue;
      }
    }
    users.push(user);
  }
  return users;
}

function checkBaseUrl(text: string, problems: string[]): string {
  if (text === '') return '';
  const url = parseHttpUrl(text);
  if (url === undefined || url.search !== '' || hasFragmentOrCredentials(url)) {
    problems.push(`idpUrl "${text}" must be an http(s) URL without query, fragment or credentials`);
    return '';
  }
  return url.href.replace(/\/+$/, '');
}

function checkResourceUrl(text: string, problems: string[]): string {
  if (text === '') return '';
  const url = parseHttpUrl(text);
  if (url === undefined || hasFragmentOrCredentials(url)) {
    problems.push(`mcpResourceUrl "${text}" must be an http(s) URL without fragment or credentials`);
    return '';
  }
  // Kept as written: tokens must name exactly the URL clients use.
  return text;
}

function checkName(key: string, text: string, problems: string[]): string {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > 255) problems.push(`${key} must be 1 to 255 characters`);
  return trimmed;
}

function hasFragmentOrCredentials(url: URL): boolean {
  return url.hash !== '' || url.username !== '' || url.password !== '';
}

function parseHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}
