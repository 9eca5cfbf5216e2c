// JSON patch (RFC 6902): add, remove, replace, move, copy and test operations addressed by JSON
// pointers (RFC 6901). A patch applies whole or not at all.
import { isPlainObject } from '../../util/values.ts';
import { sameValue } from '../managed-fields/field-set.ts';

/** A patch that is malformed or cannot be applied to the object (HTTP 422 or 400). */
export class PatchError extends Error {
  /** Malformed patches are the client's syntax error (400); patches that do not fit are 422. */
  readonly malformed: boolean;
  constructor(message: string, malformed = false) {
    super(message);
    this.malformed = malformed;
  }
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`JSON pointer "${pointer}" must start with "/"`, true);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function arrayIndex(token: string, length: number, forInsert: boolean): number {
  if (forInsert && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new PatchError(`"${token}" is not an array index`);
  const index = Number(token);
  if (index > length || (!forInsert && index === length)) throw new PatchError(`array index ${index} is out of bounds`);
  return index;
}

/** The container holding the pointer's last token, and that token. */
function locate(document: unknown, pointer: string): { parent: unknown; token: string } {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchError('the operation cannot address the whole document');
  let current = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false)];
    else if (isPlainObject(current) && token in current) current = current[token];
    else throw new PatchError(`path "${pointer}" does not exist`);
  }
  return { parent: current, token: tokens.at(-1)! };
}

function read(document: unknown, pointer: string): unknown {
  let current = document;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false)];
    else if (isPlainObject(current) && token in current) current = current[token];
    else throw new PatchError(`path "${pointer}" does not exist`);
  }
  return current;
}

function add(document: unknown, pointer: string, value: unknown): void {
  const { parent, token } = locate(document, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(token, parent.length, true), 0, value);
  else if (isPlainObject(parent)) parent[token] = value;
  else throw new PatchError(`path "${pointer}" does not exist`);
}

function remove(document: unknown, pointer: string): unknown {
  const { parent, token } = locate(document, pointer);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(token, parent.length, false), 1)[0];
  if (isPlainObject(parent) && token in parent) {
    const value = parent[token];
    delete parent[token];
    return value;
  }
  throw new PatchError(`path "${pointer}" does not exist`);
}

function parseOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new PatchError('a JSON patch must be an array of operations', true);
  return patch.map((operation, index) => {
    if (!isPlainObject(operation) || typeof operation.op !== 'string' || typeof operation.path !== 'string') {
      throw new PatchError(`operation ${index} must be an object with "op" and "path"`, true);
    }
    if (['move', 'copy'].includes(operation.op) && typeof operation.from !== 'string') {
      throw new PatchError(`operation ${index} (${operation.op}) needs "from"`, true);
    }
    if (['add', 'replace', 'test'].includes(operation.op) && !('value' in operation)) {
      throw new PatchError(`operation ${index} (${operation.op}) needs "value"`, true);
    }
    return operation as unknown as Operation;
  });
}

/** Returns the patched document; `document` is not modified. */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  const operations = parseOperations(patch);
  const root = { value: structuredClone(document) };
  const pointer = (path: string) => `/value${path}`;
  for (const operation of operations) {
    switch (operation.op) {
      case 'add':
        add(root, pointer(operation.path), structuredClone(operation.value));
        break;
      case 'remove':
        remove(root, pointer(operation.path));
        break;
      case 'replace':
        remove(root, pointer(operation.path));
        add(root, pointer(operation.path), structuredClone(operation.value));
        break;
      case 'move': {
        if (operation.path.startsWith(`${operation.from}/`)) {
          throw new PatchError(`cannot move "${operation.from}" into its own child "${operation.path}"`);
        }
        const value = remove(root, pointer(operation.from!));
        add(root, pointer(operation.path), value);
        break;
      }
      case 'copy':
        add(root, pointer(operation.path), structuredClone(read(root, pointer(operation.from!))));
        break;
      case 'test':
        if (!sameValue(read(root, pointer(operation.path)), operation.value)) {
          throw new PatchError(`testing value ${operation.path} failed: the value differs`);
        }
        break;
      default:
        throw new PatchError(`unknown JSON patch operation "${operation.op}"`, true);
    }
  }
  return root.value;
}
