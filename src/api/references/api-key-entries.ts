// API key entries of the Secrets and ConfigMaps an APIKeyAuthentication selects (spec document 1,
// "Authentication" rule 1). Their content is not part of any gw.dev object, so these are not
// admission errors: the controller reports them as conditions on the GwPolicy.

import { isPlainObject } from '../../util/values.ts';
import type { FieldError } from '../validate/errors.ts';

export type ApiKeySource = 'Secret' | 'ConfigMap';

export interface ApiKeyEntry {
  /** The data key the entry was read from (names the client in logs, never the key itself). */
  name: string;
  /** Either the raw key (Secrets only) or its SHA-256 digest. */
  key?: string;
  keyHash?: Buffer;
  metadata: Record<string, unknown>;
}

const KEY_HASH = /^sha256:([0-9a-f]{64})$/;

/**
 * Parses one entry: a plain string is the key itself; a JSON object has `key` or `keyHash`
 * (sha256:<64 lowercase hex>) and optional `metadata`. ConfigMaps are readable by more people
 * than Secrets, so a ConfigMap entry must hold a hash, never a raw key.
 */
export function parseApiKeyEntry(
  source: ApiKeySource,
  name: string,
  value: string,
  field: string,
): { entry: ApiKeyEntry } | { error: FieldError } {
  const invalid = (detail: string) => ({ error: { type: 'Invalid' as const, field, value: '"<redacted>"', detail } });
  const trimmed = value.trim();
  let parsed: unknown = trimmed;
  if (trimmed.startsWith('{')) {
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return invalid(
        'the entry starts with "{" but is not valid JSON; write {"keyHash": "sha256:<hex>", "metadata": {...}}',
      );
    }
  }
  if (typeof parsed === 'string') {
    if (source === 'ConfigMap') {
      return invalid('a ConfigMap entry must be {"keyHash": "sha256:<hex>"}; raw keys belong in a Secret');
    }
    if (parsed === '') return invalid('the key is empty');
    return { entry: { name, key: parsed, metadata: {} } };
  }
  if (!isPlainObject(parsed)) return invalid('an entry is a key string or a JSON object with key or keyHash');
  const { key, keyHash, metadata } = parsed;
  if ((key === undefined) === (keyHash === undefined)) return invalid('exactly one of key, keyHash must be set');
  if (metadata !== undefined && !isPlainObject(metadata)) return invalid('metadata must be a JSON object');
  if (key !== undefined) {
    if (source === 'ConfigMap') return invalid('a ConfigMap entry must use keyHash (sha256:<hex>), not key');
    if (typeof key !== 'string' || key === '') return invalid('key must be a non-empty string');
    return { entry: { name, key, metadata: (metadata as Record<string, unknown>) ?? {} } };
  }
  const match = typeof keyHash === 'string' ? KEY_HASH.exec(keyHash) : null;
  if (!match) return invalid('keyHash must be sha256: followed by 64 lowercase hex digits');
  return {
    entry: { name, keyHash: Buffer.from(match[1]!, 'hex'), metadata: (metadata as Record<string, unknown>) ?? {} },
  };
}

/** The entries of one Secret or ConfigMap, each parsed; errors name the field (`data[alice]`). */
export interface ParsedApiKeyObject {
  entries: ApiKeyEntry[];
  errors: FieldError[];
}

function decodeBase64Fields(fields: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(fields)) return out;
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') out[name] = Buffer.from(value, 'base64').toString('utf8');
  }
  return out;
}

function stringFields(fields: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(fields)) return out;
  for (const [name, value] of Object.entries(fields)) if (typeof value === 'string') out[name] = value;
  return out;
}

/**
 * Parses every entry of a Secret (base64 `data`, with `stringData` written over it as the API
 * server does) or a ConfigMap (`data`, and base64 `binaryData`). Entries are in name order.
 */
export function parseApiKeyObject(object: {
  kind: string;
  data?: unknown;
  stringData?: unknown;
  binaryData?: unknown;
}): ParsedApiKeyObject {
  const source: ApiKeySource = object.kind === 'Secret' ? 'Secret' : 'ConfigMap';
  const fields = new Map<string, { value: string; field: string }>();
  const put = (values: Record<string, string>, field: string) => {
    for (const [name, value] of Object.entries(values)) fields.set(name, { value, field: `${field}[${name}]` });
  };
  if (source === 'Secret') {
    put(decodeBase64Fields(object.data), 'data');
    put(stringFields(object.stringData), 'stringData');
  } else {
    put(stringFields(object.data), 'data');
    put(decodeBase64Fields(object.binaryData), 'binaryData');
  }
  const parsed: ParsedApiKeyObject = { entries: [], errors: [] };
  for (const name of [...fields.keys()].sort()) {
    const { value, field } = fields.get(name)!;
    const result = parseApiKeyEntry(source, name, value, field);
    if ('entry' in result) parsed.entries.push(result.entry);
    else parsed.errors.push(result.error);
  }
  return parsed;
}
