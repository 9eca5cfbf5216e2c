// Top-level body fields by name. A field is a key of the JSON body, never a path: "a.b" is the
// key "a.b" (agentgateway does the same). Written as own data properties, so that a configured
// field named "__proto__" is a key like any other and not the object's prototype.
import type { JsonObject } from '../formats/types.ts';

export function setField(body: JsonObject, field: string, value: unknown): void {
  if (field === '__proto__') {
    Object.defineProperty(body, field, { value, enumerable: true, writable: true, configurable: true });
  } else {
    body[field] = value;
  }
}

/** Whether the body gives the field a value (present and not null). */
export function hasValue(body: JsonObject, field: string): boolean {
  return Object.hasOwn(body, field) && body[field] !== undefined && body[field] !== null;
}
