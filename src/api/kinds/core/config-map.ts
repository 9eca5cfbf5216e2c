// Core v1 ConfigMap: gw reads CA bundles, model catalogs and API key hashes from it. A ConfigMap
// has no spec; ConfigMapSpec describes its top-level fields (data, binaryData, immutable).
import { boolean, map, named, object, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import { BASE64_PATTERN, dataKeyRule } from './secret.ts';

export const ConfigMapSpec = named(
  {
    name: 'ConfigMapSpec',
    description: 'The data of a ConfigMap.',
    source: 'core',
    notes: 'The top-level fields of a core v1 ConfigMap (it has no spec).',
  },
  object(
    {
      data: map(string(), { description: 'Key to UTF-8 text.', rules: [dataKeyRule()] }),
      binaryData: map(string({ pattern: BASE64_PATTERN }), {
        description: 'Key to base64-encoded bytes.',
        rules: [dataKeyRule()],
      }),
      immutable: boolean({ description: 'When true, data and binaryData can no longer change.' }),
    },
    {
      rules: [
        {
          rule: '!has(self.data) || !has(self.binaryData) || self.data.all(k, !(k in self.binaryData))',
          message: 'a key may not be in both data and binaryData',
          fieldPath: '.binaryData',
        },
      ],
    },
  ),
);
export type ConfigMapSpec = Infer<typeof ConfigMapSpec>;
