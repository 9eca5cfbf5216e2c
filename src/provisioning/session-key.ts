// The per-Gateway session-key Secret: the key every replica of a Gateway seals MCP sessions with
// (src/dataplane/mcp/session-seal.ts reads it from SESSION_KEY as 64 hex digits), so a session
// opened on one replica resumes on another. Not created when GwParameters' env sets SESSION_KEY
// (spec document 1: that value takes precedence). The random source is a parameter so tests are
// deterministic; in gw it is crypto.randomBytes.
import { SESSION_KEY_ENV } from '../dataplane/mcp/session-seal.ts';
import type { ProvisionedGateway } from './gateway.ts';
import { objectLabels, ownerReference } from './labels.ts';

/** Key of the Secret's data holding the hex key. */
export const SESSION_KEY_SECRET_KEY = 'key';

export type RandomBytes = (size: number) => Uint8Array;

export function sessionKeySecretName(gateway: ProvisionedGateway): string {
  return `${gateway.name}-session-key`;
}

/**
 * A new Secret with a fresh 32-byte key. The controller must keep an existing one rather than
 * replace it on every reconcile, or sessions would not survive a reconcile.
 */
export function sessionKeySecret(gateway: ProvisionedGateway, version: string, randomBytes: RandomBytes) {
  const key = randomBytes(32);
  if (key.length !== 32) throw new Error('the random source gave a session key of the wrong size');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: sessionKeySecretName(gateway),
      namespace: gateway.namespace,
      labels: objectLabels(gateway, version),
      ownerReferences: [ownerReference(gateway)],
    },
    type: 'Opaque',
    data: { [SESSION_KEY_SECRET_KEY]: Buffer.from(Buffer.from(key).toString('hex')).toString('base64') },
  };
}

/** The container variable that reads the Secret. */
export function sessionKeyEnv(gateway: ProvisionedGateway) {
  return {
    name: SESSION_KEY_ENV,
    valueFrom: { secretKeyRef: { name: sessionKeySecretName(gateway), key: SESSION_KEY_SECRET_KEY } },
  };
}
