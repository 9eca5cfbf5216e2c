// The continue token of a paginated list: the revision the first page was read at (every page is
// served as of it, so the pages form one consistent list) and the key of the last item served.
// Opaque to clients; base64 of JSON, as kube-apiserver's.
import { badRequest } from './errors.ts';

export interface ContinueToken {
  revision: number;
  /** The key ("namespace/name") of the last item already served. */
  after: string;
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.revision, start: token.after })).toString(
    'base64url',
  );
}

export function decodeContinue(text: string): ContinueToken {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (value.v !== 'meta.k8s.io/v1' || !Number.isInteger(value.rv) || typeof value.start !== 'string')
      throw new Error('');
    return { revision: value.rv as number, after: value.start };
  } catch {
    throw badRequest('continue key is not valid: the token is malformed; start a new list without it');
  }
}

/** kube-apiserver's message when a continue token's revision has been compacted away (410). */
export const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';
