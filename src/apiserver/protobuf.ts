// Kubernetes' protobuf encoding, read only: kubectl's typed clients (`kubectl create namespace`,
// `create secret`, `create deployment`, `create role`...) send built-in objects as
// application/vnd.kubernetes.protobuf. Such a body is the magic "k8s\0" and a runtime.Unknown
// message (TypeMeta, raw bytes); the raw bytes are the object's message. Field numbers are those
// of k8s.io/api and apimachinery meta/v1 generated.proto (the provisioned kinds' messages are in
// protobuf-messages.ts). Responses are always JSON (clients list application/json as an
// alternative).
import { badRequest } from './errors.ts';
import { MESSAGE_FIELDS } from './protobuf-messages.ts';

type Scalar = 'string' | 'bytes' | 'bool' | 'int32' | 'int64';
type Special = 'time' | 'intOrString' | 'fieldsV1' | 'quantity';
type MapValue = 'string' | 'bytes' | 'quantity' | 'time';

interface Field {
  name: string;
  type: Scalar | Special | 'message' | 'map';
  repeated?: boolean;
  message?: Message;
  /** The value type of a map<string, V>. */
  mapValue?: MapValue;
  /** A message whose fields JSON places in the parent (Go's embedded struct, json:",inline"). */
  inline?: boolean;
  /** A pointer field in Go: written only when set, so its zero value is a value. */
  keepZero?: boolean;
}

type Message = Record<number, Field>;

const f = (name: string, type: Field['type'], extra: Partial<Field> = {}): Field => ({ name, type, ...extra });

const OwnerReference: Message = {
  1: f('kind', 'string'),
  3: f('name', 'string'),
  4: f('uid', 'string'),
  5: f('apiVersion', 'string'),
  6: f('controller', 'bool'),
  7: f('blockOwnerDeletion', 'bool'),
};

const ManagedFieldsEntry: Message = {
  1: f('manager', 'string'),
  2: f('operation', 'string'),
  3: f('apiVersion', 'string'),
  4: f('time', 'time'),
  6: f('fieldsType', 'string'),
  7: f('fieldsV1', 'fieldsV1'),
  8: f('subresource', 'string'),
};

const ObjectMeta: Message = {
  1: f('name', 'string'),
  2: f('generateName', 'string'),
  3: f('namespace', 'string'),
  4: f('selfLink', 'string'),
  5: f('uid', 'string'),
  6: f('resourceVersion', 'string'),
  7: f('generation', 'int64'),
  8: f('creationTimestamp', 'time'),
  9: f('deletionTimestamp', 'time'),
  10: f('deletionGracePeriodSeconds', 'int64'),
  11: f('labels', 'map', { mapValue: 'string' }),
  12: f('annotations', 'map', { mapValue: 'string' }),
  13: f('ownerReferences', 'message', { repeated: true, message: OwnerReference }),
  14: f('finalizers', 'string', { repeated: true }),
  17: f('managedFields', 'message', { repeated: true, message: ManagedFieldsEntry }),
};

const Condition: Message = {
  1: f('type', 'string'),
  2: f('status', 'string'),
  3: f('observedGeneration', 'int64'),
  4: f('lastTransitionTime', 'time'),
  5: f('reason', 'string'),
  6: f('message', 'string'),
};

const ServicePort: Message = {
  1: f('name', 'string'),
  2: f('protocol', 'string'),
  3: f('port', 'int32'),
  4: f('targetPort', 'intOrString'),
  5: f('nodePort', 'int32'),
  6: f('appProtocol', 'string'),
};

const ServiceSpec: Message = {
  1: f('ports', 'message', { repeated: true, message: ServicePort }),
  2: f('selector', 'map', { mapValue: 'string' }),
  3: f('clusterIP', 'string'),
  4: f('type', 'string'),
  5: f('externalIPs', 'string', { repeated: true }),
  7: f('sessionAffinity', 'string'),
  8: f('loadBalancerIP', 'string'),
  9: f('loadBalancerSourceRanges', 'string', { repeated: true }),
  10: f('externalName', 'string'),
  11: f('externalTrafficPolicy', 'string'),
  12: f('healthCheckNodePort', 'int32'),
  13: f('publishNotReadyAddresses', 'bool'),
  14: f('sessionAffinityConfig', 'message', {
    message: { 1: f('clientIP', 'message', { message: { 1: f('timeoutSeconds', 'int32') } }) },
  }),
  17: f('ipFamilyPolicy', 'string'),
  18: f('clusterIPs', 'string', { repeated: true }),
  19: f('ipFamilies', 'string', { repeated: true }),
  20: f('allocateLoadBalancerNodePorts', 'bool'),
  21: f('loadBalancerClass', 'string'),
  22: f('internalTrafficPolicy', 'string'),
  23: f('trafficDistribution', 'string'),
};

const LoadBalancerIngress: Message = {
  1: f('ip', 'string'),
  2: f('hostname', 'string'),
  3: f('ipMode', 'string'),
  4: f('ports', 'message', {
    repeated: true,
    message: { 1: f('port', 'int32'), 2: f('protocol', 'string'), 3: f('error', 'string') },
  }),
};

const SCALARS = new Set<string>(['string', 'bytes', 'bool', 'int32', 'int64', 'time', 'intOrString', 'quantity']);

/** Messages defined above that the table of protobuf-messages.ts names. */
const KNOWN_MESSAGES: Record<string, Message> = { 'meta.v1.ObjectMeta': ObjectMeta, 'meta.v1.Condition': Condition };

const tableMessages = new Map<string, Message>();

/** The message of protobuf-messages.ts named `name`, its fields parsed (each message once, so cycles resolve). */
function tableMessage(name: string): Message {
  const known = KNOWN_MESSAGES[name] ?? tableMessages.get(name);
  if (known) return known;
  const text = MESSAGE_FIELDS[name];
  if (text === undefined) throw new Error(`protobuf message ${name} is not known`);
  const message: Message = {};
  tableMessages.set(name, message);
  for (const entry of text.split(' ')) {
    const match = /^([!^*]?)(\w+)=(\d+):(.+)$/.exec(entry);
    if (!match) throw new Error(`protobuf message ${name}: cannot read field "${entry}"`);
    const [, mark, fieldName, number, type] = match as unknown as [string, string, string, string, string];
    const extra: Partial<Field> = { repeated: mark === '*', inline: mark === '^', keepZero: mark === '!' };
    if (type.startsWith('map<'))
      message[Number(number)] = f(fieldName, 'map', { ...extra, mapValue: type.slice(4, -1) as MapValue });
    else if (SCALARS.has(type)) message[Number(number)] = f(fieldName, type as Field['type'], extra);
    else message[Number(number)] = f(fieldName, 'message', { ...extra, message: tableMessage(type) });
  }
  return message;
}

const KINDS: Record<string, Message> = {
  Deployment: tableMessage('apps.v1.Deployment'),
  DaemonSet: tableMessage('apps.v1.DaemonSet'),
  ServiceAccount: tableMessage('core.v1.ServiceAccount'),
  PodDisruptionBudget: tableMessage('policy.v1.PodDisruptionBudget'),
  HorizontalPodAutoscaler: tableMessage('autoscaling.v2.HorizontalPodAutoscaler'),
  Role: tableMessage('rbac.v1.Role'),
  ClusterRole: tableMessage('rbac.v1.ClusterRole'),
  RoleBinding: tableMessage('rbac.v1.RoleBinding'),
  ClusterRoleBinding: tableMessage('rbac.v1.ClusterRoleBinding'),
  ConfigMap: {
    1: f('metadata', 'message', { message: ObjectMeta }),
    2: f('data', 'map', { mapValue: 'string' }),
    3: f('binaryData', 'map', { mapValue: 'bytes' }),
    4: f('immutable', 'bool'),
  },
  Secret: {
    1: f('metadata', 'message', { message: ObjectMeta }),
    2: f('data', 'map', { mapValue: 'bytes' }),
    3: f('type', 'string'),
    4: f('stringData', 'map', { mapValue: 'string' }),
    5: f('immutable', 'bool'),
  },
  Namespace: {
    1: f('metadata', 'message', { message: ObjectMeta }),
    2: f('spec', 'message', { message: { 1: f('finalizers', 'string', { repeated: true }) } }),
    3: f('status', 'message', {
      message: {
        1: f('phase', 'string'),
        2: f('conditions', 'message', {
          repeated: true,
          message: {
            1: f('type', 'string'),
            2: f('status', 'string'),
            4: f('lastTransitionTime', 'time'),
            5: f('reason', 'string'),
            6: f('message', 'string'),
          },
        }),
      },
    }),
  },
  Service: {
    1: f('metadata', 'message', { message: ObjectMeta }),
    2: f('spec', 'message', { message: ServiceSpec }),
    3: f('status', 'message', {
      message: {
        1: f('loadBalancer', 'message', {
          message: { 1: f('ingress', 'message', { repeated: true, message: LoadBalancerIngress }) },
        }),
        2: f('conditions', 'message', { repeated: true, message: Condition }),
      },
    }),
  },
  DeleteOptions: {
    1: f('gracePeriodSeconds', 'int64'),
    2: f('preconditions', 'message', { message: { 1: f('uid', 'string'), 2: f('resourceVersion', 'string') } }),
    3: f('orphanDependents', 'bool'),
    4: f('propagationPolicy', 'string'),
    5: f('dryRun', 'string', { repeated: true }),
  },
};

const MAGIC = Buffer.from('k8s\u0000', 'latin1');

class Reader {
  private offset = 0;
  private readonly buffer: Buffer;
  private readonly end: number;

  constructor(buffer: Buffer, start = 0, end = buffer.length) {
    this.buffer = buffer;
    this.offset = start;
    this.end = end;
  }

  get done(): boolean {
    return this.offset >= this.end;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.end) throw new Error('truncated varint');
      const byte = this.buffer[this.offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
    throw new Error('varint longer than 10 bytes');
  }

  bytes(): Buffer {
    const length = Number(this.varint());
    if (length < 0 || this.offset + length > this.end) throw new Error('truncated field');
    const value = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.offset += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.offset += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
    if (this.offset > this.end) throw new Error('truncated field');
  }
}

function signed(value: bigint, bits: 32 | 64): number {
  return Number(BigInt.asIntN(bits, value));
}

function decodeTime(bytes: Buffer): string {
  const message = decodeMessage(bytes, { 1: f('seconds', 'int64'), 2: f('nanos', 'int32') });
  const seconds = (message.seconds as number | undefined) ?? 0;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A resource.Quantity: its canonical string ("500m", "1Gi"). */
function decodeQuantity(bytes: Buffer): string {
  return (decodeMessage(bytes, { 1: f('string', 'string') }).string as string | undefined) ?? '0';
}

function decodeIntOrString(bytes: Buffer): number | string {
  const message = decodeMessage(bytes, { 1: f('type', 'int64'), 2: f('intVal', 'int32'), 3: f('strVal', 'string') });
  return message.type === 1
    ? ((message.strVal as string | undefined) ?? '')
    : ((message.intVal as number | undefined) ?? 0);
}

function decodeValue(field: Field, wireType: number, reader: Reader): unknown {
  switch (field.type) {
    case 'string':
      return reader.bytes().toString('utf8');
    case 'bytes':
      return reader.bytes().toString('base64');
    case 'bool':
      return reader.varint() !== 0n;
    case 'int32':
      return signed(reader.varint(), 32);
    case 'int64':
      return signed(reader.varint(), 64);
    case 'time':
      return decodeTime(reader.bytes());
    case 'intOrString':
      return decodeIntOrString(reader.bytes());
    case 'quantity':
      return decodeQuantity(reader.bytes());
    case 'fieldsV1': {
      const raw = decodeMessage(reader.bytes(), { 1: f('raw', 'bytes') }).raw as string | undefined;
      return raw === undefined ? {} : JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
    }
    case 'message':
      return decodeMessage(reader.bytes(), field.message!);
    case 'map':
      if (wireType !== 2) throw new Error(`map field ${field.name} is not length-delimited`);
      return decodeMessage(reader.bytes(), { 1: f('key', 'string'), 2: f('value', field.mapValue ?? 'string') });
  }
}

const EPOCH = '1970-01-01T00:00:00Z';

/**
 * Go's protobuf encoding writes every non-pointer scalar, set or not, where JSON leaves empty
 * values out (omitempty): an empty string, a zero, false or the zero time is read as unset.
 */
function isZero(value: unknown, field: Field): boolean {
  if (field.type === 'time') return value === EPOCH;
  return value === '' || value === 0 || value === false;
}

function decodeMessage(bytes: Buffer, schema: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const reader = new Reader(bytes);
  while (!reader.done) {
    const tag = Number(reader.varint());
    const number = tag >>> 3;
    const wireType = tag & 7;
    const field = schema[number];
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    if (field.repeated && wireType === 2 && ['int32', 'int64', 'bool'].includes(field.type)) {
      // A packed repeated scalar.
      const packed = new Reader(reader.bytes());
      const values = (out[field.name] as unknown[] | undefined) ?? [];
      while (!packed.done) values.push(decodeValue(field, 0, packed));
      out[field.name] = values;
      continue;
    }
    const value = decodeValue(field, wireType, reader);
    if (field.type === 'map') {
      const entry = value as { key?: string; value?: unknown };
      const map = (out[field.name] as Record<string, unknown> | undefined) ?? {};
      map[entry.key ?? ''] = entry.value ?? (field.mapValue === 'bytes' ? '' : '');
      out[field.name] = map;
    } else if (field.repeated) {
      out[field.name] = [...((out[field.name] as unknown[] | undefined) ?? []), value];
    } else if (field.inline) {
      Object.assign(out, value);
    } else if (field.keepZero || !isZero(value, field)) {
      out[field.name] = value;
    }
  }
  return out;
}

/** Decodes a protobuf request body into the JSON form of the object it carries. */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest('a protobuf body must start with the Kubernetes magic number "k8s\\0"');
  }
  try {
    const unknown = decodeMessage(body.subarray(MAGIC.length), {
      1: f('typeMeta', 'message', { message: { 1: f('apiVersion', 'string'), 2: f('kind', 'string') } }),
      2: f('raw', 'bytes'),
      3: f('contentEncoding', 'string'),
      4: f('contentType', 'string'),
    });
    const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
    if (unknown.contentEncoding) throw new Error(`content encoding "${unknown.contentEncoding}" is not supported`);
    const schema = typeMeta.kind === undefined ? undefined : KINDS[typeMeta.kind];
    if (!schema) {
      throw new Error(
        `kind "${typeMeta.kind ?? ''}" is not accepted as protobuf (only ${Object.keys(KINDS).join(', ')}); send JSON`,
      );
    }
    const raw = Buffer.from((unknown.raw as string | undefined) ?? '', 'base64');
    const object = decodeMessage(raw, schema);
    const apiVersion = typeMeta.apiVersion || 'v1';
    return { apiVersion, kind: typeMeta.kind, ...object };
  } catch (error) {
    if ((error as { code?: number }).code === 400) throw error;
    throw badRequest(`the protobuf body cannot be decoded: ${(error as Error).message}`);
  }
}
