// The statuses provisioning adds to the translation's (controller.ts writes them all together):
// a Gateway whose data plane cannot be provisioned is Accepted False with reason InvalidParameters
// (Gateway API) naming each GwParameters and field, and Programmed False; a GatewayClass whose
// parametersRef does not resolve is Accepted False, InvalidParameters; every GwParameters says who
// uses it and whether its fields can be provisioned (docs/decisions/0038-gw-parameters-status.md).
// A write the API server refused shows on the Gateway's Programmed condition.
import type { GatewayStatus } from '../../api/kinds/gateway-api/gateway.ts';
import type { GatewayClassStatus } from '../../api/kinds/gateway-api/gateway-class.ts';
import type { Condition } from '../../api/kinds/gateway-api/shared.ts';
import { type GwParametersStatus, MAX_LISTED_USERS } from '../../api/kinds/gw-parameters.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import type { Snapshot, SnapshotKind } from '../snapshot.ts';
import type { Translation } from '../translate.ts';
import { describeRefProblem } from './parameters.ts';
import type { ParametersUse, ProvisioningPlan } from './plan.ts';

/** Gateway API's reason for parameters that cannot be used (Gateway and GatewayClass Accepted). */
export const INVALID_PARAMETERS = 'InvalidParameters';

/** A condition message is at most 32768 characters; problems beyond this many are counted, not listed. */
const MAX_MESSAGE = 8192;

function joined(lines: string[]): string {
  let message = '';
  for (const [index, line] of lines.entries()) {
    const next = message === '' ? line : `${message}; ${line}`;
    if (next.length > MAX_MESSAGE) return `${message}; and ${lines.length - index} more`;
    message = next;
  }
  return message;
}

/** `conditions` with those of the given types replaced. */
function replaced(conditions: readonly Condition[] | undefined, ...next: Condition[]): Condition[] {
  const types = new Set(next.map((entry) => entry.type));
  return sortConditions([...(conditions ?? []).filter((entry) => !types.has(entry.type)), ...next]);
}

export interface ProvisioningStatuses {
  gateways: Map<string, GatewayStatus>;
  gatewayClasses: Map<string, GatewayClassStatus>;
  parameters: Map<string, GwParametersStatus>;
}

/**
 * The translated Gateway and GatewayClass statuses with provisioning's conditions, and the
 * GwParameters statuses. `refused`: per Gateway, the writes of its objects the API server refused.
 */
export function provisioningStatuses(
  snapshot: Snapshot,
  plan: ProvisioningPlan,
  translated: { gateways: ReadonlyMap<string, GatewayStatus>; gatewayClasses: ReadonlyMap<string, GatewayClassStatus> },
  refused: ReadonlyMap<string, string>,
  now: string,
): ProvisioningStatuses {
  const gateways = new Map(translated.gateways);
  for (const [key, provisioning] of plan.gateways) {
    const status = gateways.get(key);
    const object = snapshot.gateways.get(key);
    if (!status || !object) continue;
    const context = contextOf(object, now);
    if (!provisioning.ok) {
      const message = joined(provisioning.problems);
      gateways.set(key, {
        ...status,
        conditions: replaced(
          status.conditions,
          condition(context, 'Accepted', false, INVALID_PARAMETERS, message),
          condition(
            context,
            'Programmed',
            false,
            'Invalid',
            'The data plane is not provisioned with these parameters (see Accepted); objects provisioned before are kept',
          ),
        ),
      });
    } else if (refused.has(key)) {
      const message = `The API server refused the data plane's objects: ${refused.get(key)}`;
      gateways.set(key, {
        ...status,
        conditions: replaced(status.conditions, condition(context, 'Programmed', false, 'Invalid', message)),
      });
    }
  }
  const gatewayClasses = new Map(translated.gatewayClasses);
  for (const [name, problem] of plan.classProblems) {
    const status = gatewayClasses.get(name);
    const object = snapshot.gatewayClasses.get(name);
    if (!status || !object) continue;
    const accepted = condition(
      contextOf(object, now),
      'Accepted',
      false,
      INVALID_PARAMETERS,
      describeRefProblem(problem),
    );
    gatewayClasses.set(name, { ...status, conditions: replaced(status.conditions, accepted) });
  }
  const parameters = new Map<string, GwParametersStatus>();
  for (const [key, use] of plan.parameters) {
    const object = snapshot.parameters.get(key);
    if (object) parameters.set(key, parametersStatus(object, use, now));
  }
  return { gateways, gatewayClasses, parameters };
}

function parametersStatus(object: KubeObject, use: ParametersUse, now: string): GwParametersStatus {
  const context = contextOf(object, now);
  const gateways = [...use.gateways].sort();
  let accepted: Condition;
  if (use.problems.size > 0) {
    const lines = [...use.problems].map(([line, stopped]) => {
      const names = [...stopped].sort();
      return `${line} (Gateway${names.length > 1 ? 's' : ''} ${names.join(', ')})`;
    });
    accepted = condition(context, 'Accepted', false, INVALID_PARAMETERS, joined(lines.sort()));
  } else {
    const users =
      gateways.length === 0 && use.gatewayClasses.size === 0
        ? 'Not used by any Gateway or GatewayClass of gw'
        : `Every field can be provisioned; used by ${gateways.length} Gateway${gateways.length === 1 ? '' : 's'}`;
    accepted = condition(context, 'Accepted', true, 'Accepted', users);
  }
  const status: GwParametersStatus = { conditions: [accepted], attachedGateways: gateways.length };
  const classes = [...use.gatewayClasses].sort().slice(0, MAX_LISTED_USERS);
  if (classes.length > 0) status.gatewayClasses = classes.map((name) => ({ name }));
  if (gateways.length > 0)
    status.gateways = gateways.slice(0, MAX_LISTED_USERS).map((key) => {
      const [namespace, name] = key.split('/') as [string, string];
      return { namespace, name };
    });
  return status;
}

/**
 * Puts provisioning's statuses into a translation's (Gateways and GatewayClasses replaced,
 * GwParameters added): what the controller writes when it provisions.
 */
export function addProvisioningStatuses(
  translation: Pick<Translation, 'gatewayApi' | 'statuses'>,
  snapshot: Snapshot,
  plan: ProvisioningPlan,
  refused: ReadonlyMap<string, string>,
  now: string,
): void {
  const { gatewayApi, statuses } = translation;
  const translated = { gateways: gatewayApi.gatewayStatuses, gatewayClasses: gatewayApi.gatewayClassStatuses };
  const provisioned = provisioningStatuses(snapshot, plan, translated, refused, now);
  const kinds: [SnapshotKind, ReadonlyMap<string, unknown>][] = [
    ['gateways', provisioned.gateways],
    ['gatewayClasses', provisioned.gatewayClasses],
  ];
  // The translation's own GwParameters conditions (the model catalog's) are kept beside
  // provisioning's: each writes condition types of its own.
  const parameters = new Map(provisioned.parameters);
  const translatedParameters = (statuses.get('parameters') ?? new Map()) as ReadonlyMap<string, GwParametersStatus>;
  for (const [key, status] of translatedParameters) {
    const ours = parameters.get(key);
    parameters.set(
      key,
      ours === undefined ? status : { ...ours, conditions: replaced(ours.conditions, ...(status.conditions ?? [])) },
    );
  }
  // With no GwParameters there is no such status at all (as for kinds the translation omits).
  if (parameters.size > 0) kinds.push(['parameters', parameters]);
  for (const [kind, byKey] of kinds) statuses.set(kind, byKey);
}
