// google.protobuf.Struct as @grpc/proto-loader hands it over and takes it, to and from JSON: the
// metadata that ext_authz and ext_proc exchange (metadata_context, attributes, dynamic_metadata).
// protobufjs defines the well-known types itself, with camelCase field names (`stringValue`)
// whatever keepCase says, and names the set member of Value's oneof in `kind`.

/** A Value as decoded: `kind` names the member that is set. */
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

/** Nesting past this is cut (null): neither a hostile service nor a CEL value may exhaust the stack. */
const MAX_DEPTH = 64;

/** A decoded Struct as a JSON object. */
export function structToJson(struct: ProtoStruct | null | undefined, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = struct?.fields;
  if (!fields) return out;
  for (const name of Object.keys(fields)) out[name] = valueToJson(fields[name], depth + 1);
  return out;
}

function valueToJson(value: ProtoValue | undefined, depth: number): unknown {
  if (!value || depth > MAX_DEPTH) return null;
  switch (value.kind) {
    case 'numberValue':
      return value.numberValue;
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'structValue':
      return structToJson(value.structValue, depth);
    case 'listValue':
      return (value.listValue?.values ?? []).map((item) => valueToJson(item, depth + 1));
    default:
      return null;
  }
}

/**
 * A JSON object (CEL results after fromCelValue, JWT claims) as a Struct to encode. Keys whose
 * value is undefined are left out, as JSON leaves them out; ints (BigInt) become numbers.
 */
export function jsonToStruct(object: Record<string, unknown>, depth = 0): ProtoStruct {
  const fields: Record<string, ProtoValue> = {};
  for (const name of Object.keys(object)) {
    const value = object[name];
    if (value !== undefined) fields[name] = jsonToValue(value, depth + 1);
  }
  return { fields };
}

function jsonToValue(value: unknown, depth: number): ProtoValue {
  if (depth > MAX_DEPTH || value === null || value === undefined) return { nullValue: 'NULL_VALUE' };
  switch (typeof value) {
    case 'number':
      return { numberValue: value };
    case 'bigint':
      return { numberValue: Number(value) };
    case 'string':
      return { stringValue: value };
    case 'boolean':
      return { boolValue: value };
    case 'object':
      if (Array.isArray(value)) return { listValue: { values: value.map((item) => jsonToValue(item, depth + 1)) } };
      if (value instanceof Date) return { stringValue: value.toISOString() };
      return { structValue: jsonToStruct(value as Record<string, unknown>, depth) };
    default:
      return { nullValue: 'NULL_VALUE' };
  }
}
