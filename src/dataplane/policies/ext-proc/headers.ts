// Headers to and from the processor: gw's header objects as Envoy HeaderMaps (lower-case names,
// values in raw_value, pseudo-headers first), and a processor's HeaderMutation applied to them.
import { INVALID_FIELD_VALUE } from '../../../util/http-field-syntax.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import type { HeaderMap, HeaderMutation, HeaderValue, HeaderValueOption } from './messages.ts';

/**
 * Names a processor may not set or remove: the message framing is gw's (it sets content-length
 * for the body it sends), hop-by-hop fields belong to one connection, and `host` is the
 * authority Envoy also refuses to change. Pseudo-headers (":path", ":status") go to the caller.
 */
const PROTECTED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
]);

/** Lower-case tokens only: Envoy's HeaderMaps carry lower-case names. (Field values: INVALID_FIELD_VALUE.) */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/**
 * Header values as Envoy sends them: bytes in raw_value (latin1, as Node keeps header strings).
 * `host` is left out: the request's authority travels as the `:authority` pseudo-header.
 */
export function headerMap(pseudo: readonly (readonly [string, string])[], headers: HeaderBag): HeaderMap {
  const list: HeaderValue[] = [];
  for (const [key, value] of pseudo) list.push({ key, raw_value: Buffer.from(value, 'latin1') });
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    const key = name.toLowerCase();
    if (value === undefined || key === 'host') continue;
    if (Array.isArray(value)) for (const item of value) list.push({ key, raw_value: Buffer.from(item, 'latin1') });
    else list.push({ key, raw_value: Buffer.from(String(value), 'latin1') });
  }
  return { headers: list };
}

/** A header's value as a processor sent it: raw_value when set, else value. */
export function headerValueOf(header: HeaderValue): string {
  return header.raw_value && header.raw_value.length > 0 ? header.raw_value.toString('latin1') : (header.value ?? '');
}

/**
 * Applies `mutation` to `headers` in place. Invalid names or values, protected names and
 * unknown pseudo-headers are skipped (as Envoy ignores disallowed mutations); the pseudo-headers
 * the caller can honour (`allowedPseudo`) are returned by name instead of being set.
 */
export function applyHeaderMutation(
  headers: HeaderBag,
  mutation: HeaderMutation | null | undefined,
  allowedPseudo: ReadonlySet<string>,
): Map<string, string> | undefined {
  if (!mutation) return undefined;
  let pseudo: Map<string, string> | undefined;
  for (const name of mutation.remove_headers ?? []) {
    const key = name.toLowerCase();
    if (key.startsWith(':') || PROTECTED.has(key)) continue;
    deleteHeader(headers, key);
  }
  for (const option of mutation.set_headers ?? []) {
    const header = option.header;
    if (!header?.key) continue;
    const key = header.key.toLowerCase();
    const value = headerValueOf(header);
    if (INVALID_FIELD_VALUE.test(value)) continue;
    if (key.startsWith(':')) {
      if (allowedPseudo.has(key) && value !== '') {
        pseudo ??= new Map();
        pseudo.set(key, value);
      }
      continue;
    }
    if (!TOKEN.test(key) || PROTECTED.has(key)) continue;
    if (value === '' && !option.keep_empty_value) continue;
    setHeader(headers, key, value, appendActionOf(option));
  }
  return pseudo;
}

/** The headers of an immediate response (every set_headers entry adds). */
export function immediateHeaders(mutation: HeaderMutation | null | undefined): Record<string, string | string[]> {
  const headers: HeaderBag = {};
  for (const option of mutation?.set_headers ?? []) {
    const header = option.header;
    if (!header?.key) continue;
    const key = header.key.toLowerCase();
    const value = headerValueOf(header);
    if (!TOKEN.test(key) || PROTECTED.has(key) || INVALID_FIELD_VALUE.test(value)) continue;
    setHeader(headers, key, value, 'APPEND_IF_EXISTS_OR_ADD');
  }
  return headers as Record<string, string | string[]>;
}

type Action = 'APPEND_IF_EXISTS_OR_ADD' | 'ADD_IF_ABSENT' | 'OVERWRITE_IF_EXISTS_OR_ADD' | 'OVERWRITE_IF_EXISTS';

function appendActionOf(option: HeaderValueOption): Action {
  if (option.append && option.append.value !== undefined)
    return option.append.value ? 'APPEND_IF_EXISTS_OR_ADD' : 'OVERWRITE_IF_EXISTS_OR_ADD';
  switch (option.append_action) {
    case 'ADD_IF_ABSENT':
    case 1:
      return 'ADD_IF_ABSENT';
    case 'OVERWRITE_IF_EXISTS_OR_ADD':
    case 2:
      return 'OVERWRITE_IF_EXISTS_OR_ADD';
    case 'OVERWRITE_IF_EXISTS':
    case 3:
      return 'OVERWRITE_IF_EXISTS';
    default:
      return 'APPEND_IF_EXISTS_OR_ADD';
  }
}

/** The key under which `headers` holds `name` (bags built by gw are lower-case, but be sure). */
function keyOf(headers: HeaderBag, name: string): string | undefined {
  if (headers[name] !== undefined) return name;
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name && headers[key] !== undefined) return key;
  return undefined;
}

function deleteHeader(headers: HeaderBag, name: string): void {
  const key = keyOf(headers, name);
  if (key !== undefined) delete headers[key];
}

function setHeader(headers: HeaderBag, name: string, value: string, action: Action): void {
  const key = keyOf(headers, name);
  if (key === undefined) {
    if (action !== 'OVERWRITE_IF_EXISTS') headers[name] = value;
    return;
  }
  if (action === 'ADD_IF_ABSENT') return;
  if (action === 'OVERWRITE_IF_EXISTS' || action === 'OVERWRITE_IF_EXISTS_OR_ADD') {
    delete headers[key];
    headers[name] = value;
    return;
  }
  const existing = headers[key]!;
  delete headers[key];
  headers[name] = Array.isArray(existing) ? [...existing, value] : [String(existing), value];
}
