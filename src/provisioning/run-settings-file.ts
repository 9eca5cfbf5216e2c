// The settings file of a Gateway's data plane (`gw run --config`, src/run/run-settings.ts), as a
// ConfigMap mounted into the pods: GwParameters rawConfig (GatewayClass's, then the Gateway's,
// merged) with the typed fields on top (spec document 1: "typed fields take precedence"). rawConfig
// is checked by the code gw run reads the file with, so a key or value gw run would refuse is a
// problem naming spec.rawConfig.<path> rather than pods that crash-loop. The keys the provisioning
// itself sets on the command line (the addresses and the admin port the probes and the Service
// use) are refused in rawConfig: the command line would override them, silently.
// docs/decisions/0043-run-settings-file.md.
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { checkRunSettings, RUN_SETTINGS } from '../run/run-settings.ts';
import type { ProvisionedGateway, ProvisioningProblem } from './gateway.ts';
import { objectLabels, ownerReference } from './labels.ts';
import type { EffectiveTypedFields } from './typed-fields.ts';

/** Where the ConfigMap is mounted, and the file in it that gw run --config reads. */
export const RUN_SETTINGS_DIR = '/etc/gw';
export const RUN_SETTINGS_KEY = 'run.yaml';
export const RUN_SETTINGS_PATH = `${RUN_SETTINGS_DIR}/${RUN_SETTINGS_KEY}`;
/** The volume of the pod holding it. */
export const RUN_SETTINGS_VOLUME = 'run-settings';
/** The pod template's annotation with the file's hash: a new file rolls the pods (they read it at start). */
export const RUN_SETTINGS_HASH_ANNOTATION = 'gw.dev/run-settings-sha256';

/** Keys the container's command sets (command.ts), which rawConfig may not set. */
const COMMAND_LINE_KEYS: Readonly<Record<string, string>> = {
  address: 'the listeners bind 0.0.0.0 in a pod, for the Service to reach them',
  'admin.address': 'the admin endpoints bind 0.0.0.0 in a pod, for the kubelet probes',
  'admin.port': 'the probes and the container port name 15000',
};

/** The spec defaults of logging (spec document 1) where neither typed fields nor rawConfig set it. */
const DEFAULT_LOGGING = { level: 'info', format: 'text' } as const;

/** What rawConfig holds that the data plane would not take, each naming spec.rawConfig.<path>. */
export function rawConfigProblems(rawConfig: unknown): ProvisioningProblem[] {
  if (rawConfig === undefined) return [];
  const checked = checkRunSettings(rawConfig);
  const problems = checked.problems.map((problem) => ({
    field: problem.path === '' ? 'spec.rawConfig' : `spec.rawConfig.${problem.path}`,
    message: problem.message,
  }));
  for (const [path, why] of Object.entries(COMMAND_LINE_KEYS)) {
    const flag = RUN_SETTINGS.find((setting) => setting.path === path)?.flag;
    if (flag !== undefined && checked.flags[flag] !== undefined)
      problems.push({
        field: `spec.rawConfig.${path}`,
        message: `set by the provisioning on gw run's command line (${why}); remove it`,
      });
  }
  return problems;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The settings document: rawConfig, then logging from the typed fields (else rawConfig's, else the defaults). */
export function runSettingsDocument(fields: EffectiveTypedFields): Record<string, unknown> {
  const raw = isObject(fields.rawConfig) ? structuredClone(fields.rawConfig) : {};
  const rawLogging = isObject(raw.logging) ? raw.logging : {};
  return {
    ...raw,
    logging: {
      ...rawLogging,
      level: fields.logging.level ?? rawLogging.level ?? DEFAULT_LOGGING.level,
      format: fields.logging.format ?? rawLogging.format ?? DEFAULT_LOGGING.format,
    },
  };
}

/** The file's text: YAML, with a header saying where it comes from. */
export function runSettingsText(fields: EffectiveTypedFields): string {
  return `# gw run --config: generated from GwParameters (rawConfig, then the typed fields); docs/cli.md\n${stringify(runSettingsDocument(fields))}`;
}

export function runSettingsHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function runSettingsConfigMap(gateway: ProvisionedGateway, version: string, text: string) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: gateway.name,
      namespace: gateway.namespace,
      labels: objectLabels(gateway, version),
      ownerReferences: [ownerReference(gateway)],
    },
    data: { [RUN_SETTINGS_KEY]: text },
  };
}
