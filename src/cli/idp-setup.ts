// gw idp setup: prepares a Keycloak realm for gw's MCP authentication (spec document 3) and
// prints the GwPolicy that uses it. Progress goes to standard error, the policy to standard
// output (so that `gw idp setup … > policy.yaml` keeps just the policy). The procedure is in
// src/idp/.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SetupError } from '../idp/errors.ts';
import { CollectingReporter } from '../idp/report.ts';
import {
  CONFIG_FLAG,
  resolveSettings,
  SETTING_SOURCES,
  SettingsError,
  type SettingsInput,
  USERS_ENV,
  USERS_FLAG,
} from '../idp/settings.ts';
import { formatPlan, planIdpSetup, runIdpSetup } from '../idp/setup.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';

export const IDP_USAGE = `Usage: gw idp setup [flags]

Prepares a Keycloak realm (McpIDP Idp02) for gw's MCP authentication: a default client scope
whose mappers put the MCP URL in the audience and group names in a groups claim, a group, its
users; then prints the GwPolicy that checks those tokens. Safe to run again: it changes only what
differs. Each setting comes from its flag, else its environment variable, else the config file.

${SETTING_SOURCES.map((source) => `  --${`${source.flag} VALUE`.padEnd(26)} ${source.env.padEnd(24)} ${source.description}${source.default ? ` (default ${source.default})` : ''}`).join('\n')}
  --${'user USER,EMAIL[,FIRST[,LAST]]'.padEnd(26)} ${USERS_ENV.padEnd(24)} a user to create and add to the group (repeat the flag;
  ${''.padEnd(53)}the variable separates users with ";")
  --${'config FILE'.padEnd(26)} ${'GW_IDP_CONFIG'.padEnd(24)} YAML or JSON file of the settings above (camelCase keys, users: [...])
  --dry-run                    print the calls it would make, make none
  --allow-anonymous-dcr        remove the realm's anonymous client registration restrictions
                               (local testing only)

Passwords are never printed. See docs/idp-setup.md.
`;

export async function idpCommand(args: string[], io: Io): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined || subcommand === 'help' || subcommand === '--help' || subcommand === '-h') {
    io.stdout(IDP_USAGE);
    return subcommand === undefined ? 2 : 0;
  }
  if (subcommand !== 'setup') {
    io.stderr(`gw idp: unknown subcommand "${subcommand}"\n\n${IDP_USAGE}`);
    return 2;
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rest);
  } catch (error) {
    io.stderr(`gw idp setup: ${argsErrorText(error, idpOptions())}\n(gw idp setup --help lists the settings)\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout(IDP_USAGE);
    return 0;
  }
  const flags: SettingsInput['flags'] = {};
  for (const source of SETTING_SOURCES) {
    const value = parsed.values[source.flag];
    if (typeof value === 'string') flags[source.key] = value;
  }
  let settings: ReturnType<typeof resolveSettings>;
  try {
    settings = resolveSettings({
      flags,
      userFlags: (parsed.values[USERS_FLAG] as string[] | undefined) ?? [],
      configFlag: parsed.values[CONFIG_FLAG] as string | undefined,
      allowAnonymousDcr: parsed.values['allow-anonymous-dcr'] === true,
      dryRun: parsed.values['dry-run'] === true,
      env: process.env,
      readFile: (path) => readFileSync(path, 'utf8'),
    });
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    for (const problem of error.problems) io.stderr(`gw idp setup: ${problem}\n`);
    io.stderr('(gw idp setup --help lists the settings)\n');
    return 2;
  }

  if (settings.dryRun) {
    io.stdout(formatPlan(settings, planIdpSetup(settings)));
    return 0;
  }
  io.stderr(`gw idp setup: Keycloak ${settings.idpUrl}, realm ${settings.realm}\n`);
  const reporter = new CollectingReporter((line) => io.stderr(`  ${line}\n`));
  try {
    const result = await runIdpSetup(settings, reporter);
    const changed = reporter.outcomes.filter(
      (outcome) => outcome.status !== 'unchanged' && outcome.status !== 'checked' && outcome.status !== 'skipped',
    );
    io.stderr(
      changed.length === 0
        ? 'gw idp setup: unchanged — the realm was already set up; the GwPolicy follows on standard output\n'
        : `gw idp setup: done, ${changed.length} change${changed.length === 1 ? '' : 's'}; the GwPolicy follows on standard output\n`,
    );
    io.stdout(result.policyYaml);
    return 0;
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    io.stderr(`gw idp setup: failed at ${error.message}\n`);
    if (error.halfMade) io.stderr(`gw idp setup: ${error.halfMade}\n`);
    io.stderr('gw idp setup: stopped there; the steps listed above were done\n');
    return 1;
  }
}

function idpOptions() {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    [USERS_FLAG]: { type: 'string', multiple: true },
    [CONFIG_FLAG]: { type: 'string' },
    'dry-run': { type: 'boolean' },
    'allow-anonymous-dcr': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  };
  for (const source of SETTING_SOURCES) options[source.flag] = { type: 'string' };
  return options;
}

function parse(args: string[]) {
  return parseArgs({ args, options: idpOptions(), allowPositionals: false, strict: true });
}
