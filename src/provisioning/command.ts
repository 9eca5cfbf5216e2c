// The command the data-plane container runs: `gw run` reading the cluster, serving one Gateway,
// leaving statuses to `gw controller` (--read-only), its settings (logging, workers, limits) read
// from the generated settings file (run-settings-file.ts). --gateway NAMESPACE/NAME makes it serve
// that Gateway alone, waiting for it while it does not exist (its readiness probe failing meanwhile).
// The addresses and the admin port are on the command line: the probes, the container ports and
// the Service depend on them, so rawConfig may not change them.
import { LogFilter } from '../util/log-filter.ts';
import type { ProvisionedGateway, ProvisioningProblem } from './gateway.ts';
import { RUN_SETTINGS_PATH } from './run-settings-file.ts';
import type { EffectiveTypedFields } from './typed-fields.ts';

/** The admin endpoints' port (gw run's default): /healthz/ready for the probes, /metrics. */
export const ADMIN_PORT = 15000;

/** logging.level becomes gw run's log filter: one it cannot read would crash-loop the pods. */
export function logLevelProblem(fields: EffectiveTypedFields): ProvisioningProblem | undefined {
  if (fields.logging.level === undefined) return undefined;
  const filter = LogFilter.parse(fields.logging.level);
  if (filter instanceof LogFilter) return undefined;
  return { field: 'spec.logging.level', message: filter };
}

export function containerCommand(gateway: ProvisionedGateway): string[] {
  return [
    'gw',
    'run',
    '--cluster',
    '--read-only',
    '--gateway',
    `${gateway.namespace}/${gateway.name}`,
    '--config',
    RUN_SETTINGS_PATH,
    '--address',
    '0.0.0.0',
    '--admin-address',
    '0.0.0.0',
    '--admin-port',
    String(ADMIN_PORT),
  ];
}
