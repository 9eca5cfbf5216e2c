// google.protobuf.Struct for ext_proc's metadata_context, attributes and dynamic_metadata. The
// well-known types come from protobufjs, which names their fields in camelCase (`stringValue`)
// whatever keepCase says, and names the member of Value's `kind` oneof that is set.

export interface ProtoValue {
  kind?: string;
  nullValue?: unknown;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct;
  listValue?: { values?: ProtoValue[] };
}

export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}

/** Deeper nesting becomes null: neither a processor nor a CEL value may exhaust the stack. */
const MAX_DEPTH = 32;

/** A JSON value (CEL results after fromCelValue) as a protobuf Value. */
export function toProtoValue(value: unknown, depth = 0): ProtoValue {
  if (depth > MAX_DEPTH || value === null || value === undefined) return { nullValue: 'NULL_VALUE' };
  switch (typeof value) {
    case 'string':
      return { stringValue: value };
    case 'number':
      return { numberValue: value };
    case 'bigint':
      return { numberValue: Number(value) };
    case 'boolean':
      return { boolValue: value };
    case 'object':
      if (Array.isArray(value)) return { listValue: { values: value.map((item) => toProtoValue(item, depth + 1)) } };
      if (value instanceof Date) return { stringValue: value.toISOString() };
      return { structValue: toProtoStruct(value as Record<string, unknown>, depth + 1) };
    default:
      return { stringValue: String(value) };
  }
}

export function toProtoStruct(object: Record<string, unknown>, depth = 0): ProtoStruct {
  const fields: Record<string, ProtoValue> = {};
  for (const name of Object.keys(object)) fields[name] = toProtoValue(object[name], depth);
  return { fields };
}

/** A decoded Struct as a plain JSON object. */
export function fromProtoStruct(struct: ProtoStruct | null | undefined, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = struct?.fields;
  if (!fields) return out;
  for (const name of Object.keys(fields)) out[name] = fromProtoValue(fields[name], depth + 1);
  return out;
}

function fromProtoValue(value: ProtoValue | undefined, depth: number): unknown {
  if (!value || depth > MAX_DEPTH) return null;
  switch (value.kind) {
    case 'stringValue':
      return value.stringValue;
    case 'numberValue':
      return value.numberValue;
    case 'boolValue':
      return value.boolValue;
    case 'structValue':
      return fromProtoStruct(value.structValue, depth);
    case 'listValue':
      return (value.listValue?.values ?? []).map((item) => fromProtoValue(item, depth + 1));
    default:
      return null;
  }
}
