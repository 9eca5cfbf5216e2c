// The command the data-plane container runs: `gw run` reading the cluster, serving one Gateway,
// leaving statuses to `gw controller` (--read-only), logging as GwParameters' logging says.
// --gateway NAMESPACE/NAME makes it serve that Gateway alone, waiting for it while it does not
// exist (its readiness probe failing meanwhile).
import { LogFilter } from '../util/log-filter.ts';
import type { ProvisionedGateway, ProvisioningProblem } from './gateway.ts';
import type { EffectiveTypedFields } from './typed-fields.ts';

/** The admin endpoints' port (gw run's default): /healthz/ready for the probes, /metrics. */
export const ADMIN_PORT = 15000;

/** logging.level is gw run's --log-level: a filter it cannot read would crash-loop the pods. */
export function logLevelProblem(fields: EffectiveTypedFields): ProvisioningProblem | undefined {
  const filter = LogFilter.parse(fields.logging.level);
  if (filter instanceof LogFilter) return undefined;
  return { field: 'spec.logging.level', message: filter };
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
    '--log-level',
    fields.logging.level,
  ];
}
