// Core v1 Secret: gw reads certificates, keys and credentials from it. A Secret has no spec;
// SecretSpec describes its top-level fields (type, data, stringData, immutable), which the kind
// registry places beside apiVersion/kind/metadata.
import { boolean, map, named, object, string } from '../../schema/build.ts';
import type { Infer, ValidationRule } from '../../schema/schema.ts';
import { CONFIG_KEY_PATTERN } from '../../types/provisioning.ts';

/** Keys of Secret and ConfigMap data: `[-._a-zA-Z0-9]+`, at most 253 characters, not `.`/`..`-led. */
export function dataKeyRule(): ValidationRule {
  return {
    rule: `self.all(k, size(k) <= 253 && k.matches('${CONFIG_KEY_PATTERN}') && k != '.' && !k.startsWith('..'))`,
    message:
      "keys must consist of alphanumeric characters, '-', '_' or '.', at most 253 characters, and must not be '.' or start with '..'",
  };
}

/** Standard base64 (with padding), as Kubernetes writes []byte fields. */
export const BASE64_PATTERN = '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$';

/** `key` is present in data or stringData (stringData is merged into data on write). */
function hasKey(key: string): string {
  return `((has(self.data) && '${key}' in self.data) || (has(self.stringData) && '${key}' in self.stringData))`;
}

export const SecretSpec = named(
  {
    name: 'SecretSpec',
    description: 'The type and data of a Secret.',
    source: 'core',
    notes:
      'The top-level fields of a core v1 Secret (it has no spec). Values in data are base64; stringData takes plain strings and wins over data for the same key.',
  },
  object(
    {
      type: string({ default: 'Opaque', description: 'e.g. Opaque, kubernetes.io/tls, kubernetes.io/basic-auth.' }),
      data: map(string({ pattern: BASE64_PATTERN }), {
        description: 'Key to base64-encoded value.',
        rules: [dataKeyRule()],
      }),
      stringData: map(string(), { description: 'Key to plain-text value, merged into data.', rules: [dataKeyRule()] }),
      immutable: boolean({ description: 'When true, data can no longer change.' }),
    },
    {
      rules: [
        {
          rule: `self.type != 'kubernetes.io/tls' || (${hasKey('tls.crt')} && ${hasKey('tls.key')})`,
          message: 'a kubernetes.io/tls Secret must have the keys tls.crt and tls.key',
          fieldPath: '.data',
          reason: 'FieldValueRequired',
        },
        {
          rule: `self.type != 'kubernetes.io/basic-auth' || ${hasKey('username')} || ${hasKey('password')}`,
          message: 'a kubernetes.io/basic-auth Secret must have the key username or password',
          fieldPath: '.data',
          reason: 'FieldValueRequired',
        },
      ],
    },
  ),
);
export type SecretSpec = Infer<typeof SecretSpec>;
