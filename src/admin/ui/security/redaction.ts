// What the web UI hides of the objects it shows, and how an edit gets the hidden values back. Hidden:
// a Secret's values (shown by its keys), the kubectl last-applied annotation (it repeats the whole
// object, credentials too), and every credential written inline in a spec — the fields
// src/api/credentials.ts names by schema type (an auth `key`, an htpasswd line's hash, the value of
// a credential header, variable or parameter). The walk follows the kind's schema, never guesses
// from a value. Every endpoint that sends objects or policy values redacts through here.
//
// An edit starts from the redacted view, so a replace may carry the marker where a credential was:
// restoreCredentials puts back the stored value at the same credential (a list item found by its
// map keys — a header by its name, a user by its user name — not by its index), and refuses a
// marker where the stored object has nothing, naming the field path.

import {
  INLINE_CREDENTIAL_FIELDS,
  isCredentialName,
  isNamedValuePair,
  NAMED_VALUE_MAP_FIELDS,
  PASSWORD_LINE_FIELDS,
} from '../../../api/credentials.ts';
import { GwPolicySpec } from '../../../api/kinds/gw-policy.ts';
import type { SchemaNode } from '../../../api/schema/schema.ts';
import { META } from '../../../api/schema/schema.ts';
import type { KubeObject } from '../../../api/validate/admission.ts';
import { childPath, indexPath } from '../../../api/validate/errors.ts';
import { resourceOfKind } from '../../../apiserver/resources.ts';
import type { KindKey } from '../../../store/store.ts';

/** What the browser sees instead of an inline credential (and of the last-applied annotation). */
export const HIDDEN_CREDENTIAL = '(hidden: inline credential; gw shows it only as set)';
/** What the browser sees instead of a Secret's value. */
export const HIDDEN_SECRET = '(hidden: gw shows a Secret by its keys only)';
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const LAST_APPLIED_PATH = `metadata.annotations[${LAST_APPLIED}]`;
const SECRET = '/Secret';

/** One credential found in a value. */
interface CredentialSlot {
  /** Its field path, as the API server names fields: spec.policies.auth.key, ...users[1]. */
  path: string;
  /** The same credential in another version of the object: list items by their keys, not their index. */
  identity: string;
  value: string;
  /** The value as the browser sees it: the marker (after the user name, for an htpasswd line). */
  hidden: string;
  set(value: string): void;
}

const named = (schema: SchemaNode) => schema[META]?.name ?? '';
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every inline credential in `value`, which `schema` describes; `path` and `identity` name `value`. */
function credentialSlots(schema: SchemaNode, value: unknown, path: string, identity = path): CredentialSlot[] {
  const slots: CredentialSlot[] = [];
  const slot = (path: string, identity: string, value: string, hidden: string, set: (v: string) => void) =>
    slots.push({ path, identity, value, hidden, set });
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    const keys = schema['x-kubernetes-list-map-keys'] ?? (isNamedValuePair(items) ? ['name'] : []);
    value.forEach((item, index) => {
      const keyed = isRecord(item) && keys.length > 0 && keys.every((k) => item[k] !== undefined);
      const segment = keyed ? keys.map((k) => `${k}=${String(item[k])}`).join(',') : index;
      slots.push(...credentialSlots(items, item, indexPath(path, index), indexPath(identity, segment)));
    });
    return slots;
  }
  if (!isRecord(value)) return slots;
  const type = named(schema);
  for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
    const fieldValue = value[field];
    if (fieldValue === undefined) continue;
    const fieldPath = childPath(path, field);
    const fieldIdentity = childPath(identity, field);
    const setField = (v: string) => {
      value[field] = v;
    };
    if (INLINE_CREDENTIAL_FIELDS[type]?.includes(field) && typeof fieldValue === 'string') {
      slot(fieldPath, fieldIdentity, fieldValue, HIDDEN_CREDENTIAL, setField);
    } else if (PASSWORD_LINE_FIELDS[type]?.includes(field) && Array.isArray(fieldValue)) {
      fieldValue.forEach((line, index) => {
        if (typeof line !== 'string') return;
        const user = line.split(':')[0]!;
        slot(
          indexPath(fieldPath, index),
          indexPath(fieldIdentity, `user=${user}`),
          line,
          `${user}:${HIDDEN_CREDENTIAL}`,
          (v) => {
            fieldValue[index] = v;
          },
        );
      });
    } else if (NAMED_VALUE_MAP_FIELDS[type]?.includes(field) && isRecord(fieldValue)) {
      for (const [name, entry] of Object.entries(fieldValue))
        if (isCredentialName(name) && typeof entry === 'string')
          slot(indexPath(fieldPath, name), indexPath(fieldIdentity, name), entry, HIDDEN_CREDENTIAL, (v) => {
            fieldValue[name] = v;
          });
    } else if (
      field === 'value' &&
      isNamedValuePair(schema) &&
      typeof fieldValue === 'string' &&
      typeof value.name === 'string' &&
      isCredentialName(value.name)
    ) {
      slot(fieldPath, fieldIdentity, fieldValue, HIDDEN_CREDENTIAL, setField);
    } else {
      slots.push(...credentialSlots(fieldSchema, fieldValue, fieldPath, fieldIdentity));
    }
  }
  const entries = schema.additionalProperties;
  if (entries && !schema.properties)
    for (const [key, entry] of Object.entries(value))
      slots.push(...credentialSlots(entries, entry, indexPath(path, key), indexPath(identity, key)));
  return slots;
}

function schemaOfKind(kindKey: string): SchemaNode | undefined {
  return resourceOfKind(kindKey as KindKey)?.definition.schema;
}

/**
 * What the browser may see of a stored object of `kindKey`: no managedFields, no last-applied
 * annotation value, no inline credential; a Secret by its keys only.
 */
export function redactObject(object: KubeObject, kindKey: string): KubeObject {
  const { managedFields: _managed, ...metadata } = object.metadata as KubeObject['metadata'] & {
    managedFields?: unknown;
  };
  const view = structuredClone({ ...object, metadata }) as KubeObject & Record<string, unknown>;
  if (view.metadata.annotations?.[LAST_APPLIED] !== undefined)
    view.metadata.annotations[LAST_APPLIED] = HIDDEN_CREDENTIAL;
  if (kindKey === SECRET) {
    const keys = [
      ...Object.keys((view.data as Record<string, unknown>) ?? {}),
      ...Object.keys((view.stringData as Record<string, unknown>) ?? {}),
    ];
    delete view.stringData;
    view.data = Object.fromEntries(keys.map((key) => [key, HIDDEN_SECRET]));
    return view;
  }
  const schema = schemaOfKind(kindKey);
  if (schema) for (const slot of credentialSlots(schema, view, '')) slot.set(slot.hidden);
  return view;
}

/**
 * A field of an effective frontend, traffic or backend policy (gw explain's), its inline
 * credentials hidden: the field's schema is GwPolicy's section's, which GwBackends' inline
 * policies share.
 */
export function redactPolicyField(section: 'frontend' | 'traffic' | 'backend', field: string, value: unknown): unknown {
  const schema = GwPolicySpec.properties?.[section]?.properties?.[field];
  if (!schema) return value;
  const copy = structuredClone(value);
  const wrapper = { [field]: copy };
  const holder: SchemaNode = { type: 'object', properties: { [field]: schema } };
  for (const slot of credentialSlots(holder, wrapper, section)) slot.set(slot.hidden);
  return wrapper[field];
}

export interface Restored {
  /** The stored values put back, which an answer about this object must not repeat. */
  values: string[];
}

export interface RestoreRefusal {
  field: string;
  message: string;
}

/**
 * Puts the stored value back wherever `submitted` (an object of `kindKey` the user edited from the
 * redacted view) still holds the marker, and the stored last-applied annotation where the
 * submitted object holds its marker or left it out. `stored` is the object as the API server has
 * it (undefined for a create). A marker where `stored` has no such credential is refused.
 */
export function restoreCredentials(
  submitted: KubeObject,
  stored: KubeObject | undefined,
  kindKey: string,
): Restored | RestoreRefusal {
  const values: string[] = [];
  const storedApplied = stored?.metadata?.annotations?.[LAST_APPLIED];
  const applied = submitted.metadata?.annotations?.[LAST_APPLIED];
  if (applied === HIDDEN_CREDENTIAL || (applied === undefined && storedApplied !== undefined)) {
    if (storedApplied === undefined) return refusal(LAST_APPLIED_PATH);
    submitted.metadata.annotations = { ...submitted.metadata.annotations, [LAST_APPLIED]: storedApplied };
    values.push(storedApplied);
  }
  const schema = schemaOfKind(kindKey);
  if (!schema) return { values };
  const storedSlots = new Map(
    (stored ? credentialSlots(schema, structuredClone(stored), '') : []).map((slot) => [slot.identity, slot]),
  );
  for (const slot of credentialSlots(schema, submitted, '')) {
    if (slot.value !== slot.hidden) continue;
    const original = storedSlots.get(slot.identity);
    if (!original) return refusal(slot.path);
    slot.set(original.value);
    values.push(original.value);
  }
  return { values };
}

function refusal(field: string): RestoreRefusal {
  return {
    field,
    message: `${field} holds the marker of a hidden credential, but the stored object has no value there to keep: write the value (better: a secretRef), or remove the field`,
  };
}

/** `text` with every restored value (as written, and as JSON would quote it) replaced by the marker. */
export function withoutRestored(text: string, restored: Restored): string {
  let out = text;
  for (const value of restored.values)
    for (const form of [value, JSON.stringify(value).slice(1, -1)])
      if (form.length > 0) out = out.split(form).join(HIDDEN_CREDENTIAL);
  return out;
}
