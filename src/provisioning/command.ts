// The command the data-plane container runs: `gw run` reading the cluster, serving one Gateway,
// leaving statuses to `gw controller` (--read-only), with the log format of GwParameters' logging.
// --gateway NAMESPACE/NAME makes it serve that Gateway alone, waiting for it while it does not
// exist (its readiness probe failing meanwhile).
// Nor has `gw run` a log level setting: only the default level (info) is provisioned.
import type { ProvisionedGateway, ProvisioningProblem } from './gateway.ts';
import type { EffectiveTypedFields } from './typed-fields.ts';

/** The admin endpoints' port (gw run's default): /healthz/ready for the probes, /metrics. */
export const ADMIN_PORT = 15000;

/** The level `gw run` logs at; the only one provisioned until it takes a level. */
const RUN_LOG_LEVEL = 'info';

export function logLevelProblem(fields: EffectiveTypedFields): ProvisioningProblem | undefined {
  if (fields.logging.level === RUN_LOG_LEVEL) return undefined;
  return {
    field: 'spec.logging.level',
    message: `not provisioned yet: gw run has no log level setting, it logs at ${RUN_LOG_LEVEL}; remove logging.level or set it to ${RUN_LOG_LEVEL}`,
  };
}

export function containerCommand(gateway: ProvisionedGateway, fields: EffectiveTypedFields): string[] {
  return [
    'gw',
    'run',
    '--cluster',
    '--read-only',
    '--gateway',
    `${gateway.namespace}/${gateway.name}`,
    '--address',
    '0.0.0.0',
    '--admin-address',
    '0.0.0.0',
    '--admin-port',
    String(ADMIN_PORT),
    '--log-format',
    fields.logging.format,
  ];
}
