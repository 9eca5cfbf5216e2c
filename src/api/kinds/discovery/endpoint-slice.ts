// discovery.k8s.io/v1 EndpointSlice: the addresses behind a Service (label kubernetes.io/service-name)
// with their readiness and the pod each one is, and the ports they serve. gw reads them to reach a
// Service's pods over the mesh (decision 0035 part 3). An EndpointSlice has no spec: its fields sit
// at the top level.
import { array, boolean, enumOf, integer, map, named, object, refine, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';

/** The label naming the Service an EndpointSlice belongs to. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export const EndpointConditions = named(
  { name: 'EndpointConditions', description: 'The state of an endpoint.', source: 'core' },
  object({
    ready: boolean({ description: 'Whether the endpoint takes new traffic (unset: ready).' }),
    serving: boolean({ description: 'Whether the endpoint serves, terminating or not.' }),
    terminating: boolean({ description: 'Whether the endpoint is terminating.' }),
  }),
);
export type EndpointConditions = Infer<typeof EndpointConditions>;

const ObjectReference = object({
  kind: string({ description: 'Kind of the object (Pod).' }),
  namespace: string({ description: 'Namespace of the object.' }),
  name: string({ description: 'Name of the object.' }),
  uid: string({ description: 'UID of the object.' }),
  apiVersion: string({ description: 'API version of the object.' }),
  resourceVersion: string({ description: 'Version of the object seen.' }),
  fieldPath: string({ description: 'A part of the object.' }),
});

export const Endpoint = named(
  { name: 'Endpoint', description: 'One backend of a Service: its addresses and the pod it is.', source: 'core' },
  object({
    addresses: required(
      array(string({ minLength: 1 }), {
        minItems: 1,
        maxItems: 100,
        listType: 'set',
        description: 'The addresses of the endpoint (of the slice’s address type); consumers use the first.',
      }),
    ),
    conditions: EndpointConditions,
    hostname: string({ description: 'Hostname of the endpoint.' }),
    targetRef: refine(ObjectReference, {
      description: 'The object the endpoint is: a Pod, for the pods of a Service.',
    }),
    nodeName: string({ description: 'The node the endpoint is on.' }),
    zone: string({ description: 'The zone the endpoint is in.' }),
    deprecatedTopology: map(string(), { description: 'Deprecated topology labels.' }),
    hints: object(
      {
        forZones: array(object({ name: required(string({ description: 'A zone.' })) }), {
          listType: 'atomic',
          description: 'Zones that should consume the endpoint.',
        }),
        forNodes: array(object({ name: required(string({ description: 'A node.' })) }), {
          listType: 'atomic',
          description: 'Nodes that should consume the endpoint.',
        }),
      },
      { description: 'Topology hints.' },
    ),
  }),
);
export type Endpoint = Infer<typeof Endpoint>;

export const EndpointPort = named(
  { name: 'EndpointPort', description: "A port the slice's endpoints serve.", source: 'core' },
  object({
    name: string({ description: 'The name of the Service port it serves (empty for an unnamed port).' }),
    protocol: enumOf(['TCP', 'UDP', 'SCTP'], { default: 'TCP', description: 'TCP (default), UDP or SCTP.' }),
    port: integer({ format: 'int32', minimum: 1, maximum: 65535, description: 'The port on the endpoints.' }),
    appProtocol: string({ description: 'The application protocol of the port.' }),
  }),
);
export type EndpointPort = Infer<typeof EndpointPort>;

export const EndpointSliceFields = named(
  {
    name: 'EndpointSliceFields',
    description: 'The top-level fields of an EndpointSlice.',
    source: 'core',
    notes: 'An EndpointSlice has no spec; these fields sit beside apiVersion, kind and metadata.',
  },
  object({
    addressType: required(enumOf(['IPv4', 'IPv6', 'FQDN'], { description: 'The type of every address.' })),
    endpoints: required(
      array(Endpoint, { maxItems: 1000, listType: 'atomic', description: 'The endpoints of the slice.' }),
    ),
    ports: array(EndpointPort, { maxItems: 100, listType: 'atomic', description: 'The ports every endpoint serves.' }),
  }),
);
export type EndpointSliceFields = Infer<typeof EndpointSliceFields>;
