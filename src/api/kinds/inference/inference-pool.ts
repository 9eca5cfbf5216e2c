// Gateway API Inference Extension InferencePool (inference.networking.k8s.io/v1): a set of model
// server Pods picked by labels, the ports they serve on, and the endpoint picker (EPP) a gateway
// asks, per request, which of them to use. gw reads it where a custom LLM provider's backendRef
// names one (docs/decisions/0049-inference-pool.md); its status says, per Gateway, whether gw
// accepted it and resolved its endpoint picker. Bounds, defaults and messages follow the upstream
// CRD (v1); the CEL expressions are our own.
import { array, enumOf, integer, map, named, object, refine, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import { Group, Kind, ObjectName } from '../../types/common.ts';
import { Condition, GatewayController, Namespace } from '../gateway-api/shared.ts';

export const INFERENCE_GROUP = 'inference.networking.k8s.io';

const PoolPortNumber = integer({ format: 'int32', minimum: 1, maximum: 65535 });

export const InferencePoolPort = named(
  { name: 'InferencePoolPort', description: 'A port of the pool.', source: 'inference-extension' },
  object({ number: required(refine(PoolPortNumber, { description: 'The port number, 1 to 65535.' })) }),
);
export type InferencePoolPort = Infer<typeof InferencePoolPort>;

export const InferencePoolSelector = named(
  {
    name: 'InferencePoolSelector',
    description: "Labels a Pod of the pool's namespace must all carry to be a member.",
    source: 'inference-extension',
    notes: 'matchLabels only, like a Service selector.',
  },
  object({
    matchLabels: required(
      map(string({ maxLength: 63 }), {
        minProperties: 1,
        maxProperties: 64,
        description: 'Label key to value; a Pod with every one of them is in the pool.',
      }),
    ),
  }),
);
export type InferencePoolSelector = Infer<typeof InferencePoolSelector>;

export const EndpointPickerRef = named(
  {
    name: 'EndpointPickerRef',
    description: 'The endpoint picker (EPP) of the pool: a Service of its namespace serving Envoy ext_proc.',
    source: 'inference-extension',
    notes:
      'gw serves kind Service (core group) only, not of type ExternalName; failureMode FailOpen sends to a random ready Pod when the picker fails, FailClose answers 503.',
  },
  object(
    {
      group: refine(Group, { description: 'Group of the referent; "" (core) for a Service.', default: '' }),
      kind: refine(Kind, { description: 'Kind of the referent.', default: 'Service' }),
      name: required(refine(ObjectName, { description: 'Name of the referent, in the pool namespace.' })),
      port: refine(InferencePoolPort, {
        description: 'The Service port (not the target port); required for a Service.',
      }),
      failureMode: enumOf(['FailOpen', 'FailClose'], {
        default: 'FailClose',
        description: 'What happens when the picker fails: FailOpen picks a ready Pod itself, FailClose answers 503.',
      }),
    },
    {
      rules: [
        {
          rule: "self.kind != 'Service' || has(self.port)",
          message: "port is required when kind is 'Service' or unspecified (defaults to 'Service')",
        },
      ],
    },
  ),
);
export type EndpointPickerRef = Infer<typeof EndpointPickerRef>;

export const InferencePoolSpec = named(
  {
    name: 'InferencePoolSpec',
    description: 'Which Pods serve the pool, on which ports, and who picks among them.',
    source: 'inference-extension',
  },
  object({
    selector: required(InferencePoolSelector),
    targetPorts: required(
      array(InferencePoolPort, {
        minItems: 1,
        maxItems: 8,
        listType: 'atomic',
        description: "Ports of the Pods; each Pod IP and port is one endpoint ('podIP:port').",
        rules: [
          { rule: 'self.all(p1, self.exists_one(p2, p1.number == p2.number))', message: 'port number must be unique' },
        ],
      }),
    ),
    appProtocol: enumOf(['http', 'kubernetes.io/h2c'], {
      default: 'http',
      description: 'The protocol of every target port: http (HTTP/1.1) or kubernetes.io/h2c (HTTP/2 cleartext).',
    }),
    endpointPickerRef: refine(EndpointPickerRef, {
      description: 'The endpoint picker; without one gw picks a ready Pod at random for each request.',
    }),
  }),
);
export type InferencePoolSpec = Infer<typeof InferencePoolSpec>;

/** The name of the pool's endpoint picker Service, when endpointPickerRef names one (core group, kind Service). */
export function pickerServiceName(spec: InferencePoolSpec): string | undefined {
  const ref = spec.endpointPickerRef;
  if (ref === undefined || (ref.group ?? '') !== '' || (ref.kind ?? 'Service') !== 'Service') return undefined;
  return ref.name;
}

/** Why an endpoint picker Service of this type cannot be used: the extension forbids ExternalName (a CNAME may lead anywhere). */
export function pickerServiceTypeProblem(type: string | undefined): string | undefined {
  return type === 'ExternalName' ? 'is of type ExternalName, which an endpoint picker may not be' : undefined;
}

export const InferencePoolParentReference = named(
  {
    name: 'InferencePoolParentReference',
    description: 'The parent (a Gateway) an InferencePool status entry is about.',
    source: 'inference-extension',
  },
  object({
    group: refine(Group, { description: 'Group of the parent.', default: 'gateway.networking.k8s.io' }),
    kind: refine(Kind, { description: 'Kind of the parent.', default: 'Gateway' }),
    name: required(refine(ObjectName, { description: 'Name of the parent.' })),
    namespace: refine(Namespace, { description: "Namespace of the parent; the pool's when unset." }),
  }),
);
export type InferencePoolParentReference = Infer<typeof InferencePoolParentReference>;

export const InferencePoolParentStatus = named(
  {
    name: 'InferencePoolParentStatus',
    description: 'The state of the pool for one parent.',
    source: 'inference-extension',
    notes: 'Condition types: Accepted, ResolvedRefs.',
  },
  object({
    parentRef: required(InferencePoolParentReference),
    controllerName: refine(GatewayController, { description: 'The controller that wrote this entry.' }),
    conditions: array(Condition, {
      maxItems: 8,
      listType: 'map',
      listMapKeys: ['type'],
      description: 'Accepted and ResolvedRefs, as this parent sees the pool.',
    }),
  }),
);
export type InferencePoolParentStatus = Infer<typeof InferencePoolParentStatus>;

export const InferencePoolStatus = named(
  {
    name: 'InferencePoolStatus',
    description: 'The state of the pool on each parent that uses it.',
    source: 'inference-extension',
  },
  object({
    parents: array(InferencePoolParentStatus, {
      maxItems: 32,
      listType: 'atomic',
      description: 'One entry per parent (Gateway) the pool is used by.',
    }),
  }),
);
export type InferencePoolStatus = Infer<typeof InferencePoolStatus>;
