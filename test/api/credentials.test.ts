// The inline credential fields src/api/credentials.ts names, checked against every kind's schema:
// each listed field exists; every field whose name says it may hold a credential, and every map
// of names to values, is either listed there or named here as not a credential, with why. So a new
// inline credential field fails this test until it is listed (and then the web UI hides it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INLINE_CREDENTIAL_FIELDS,
  isCredentialName,
  isNamedValuePair,
  NAMED_VALUE_MAP_FIELDS,
  PASSWORD_LINE_FIELDS,
} from '../../src/api/credentials.ts';
import { KINDS } from '../../src/api/kinds/registry.ts';
import { META, type SchemaNode } from '../../src/api/schema/schema.ts';

/** Fields that look like credentials and are not, by `Type.field` (an unnamed type by its path). */
const NOT_CREDENTIALS: Record<string, string> = {
  'BackendTLS.keyExchangeGroups': 'TLS group names',
  'FrontendTLS.keyExchangeGroups': 'TLS group names',
  'CloudoneSessionTag.key': 'the name of an AWS session tag',
  'ConfigMapKeySelector.key': 'the name of a ConfigMap key',
  'ModelCatalogConfigMapRef.key': 'the name of a ConfigMap key',
  'SecretKeySelector.key': 'the name of a Secret key (the value stays in the Secret)',
  'LocalSecretKeyRef.key': 'the name of a Secret key (the value stays in the Secret)',
  'Volume.secret.secretName': "a Secret's name",
  'Volume.configMap.items[].key': 'the name of a ConfigMap key',
  'LabelSelectorRequirement.key': 'a label name',
  'Toleration.key': 'a taint name',
  'ExtAuthCache.key': 'CEL naming the cache entry',
  'CrossAppAccessSubjectToken.tokenType': 'a token type URN',
  'OAuthActorToken.tokenType': 'a token type URN',
  'OAuthTokenSpec.tokenType': 'a token type URN',
  'OAuthTokenExchange.requestedTokenType': 'a token type',
};

/** Maps of names to strings that hold no credential. */
const NOT_CREDENTIAL_MAPS: Record<string, string> = {
  'ObjectMeta.labels': 'labels',
  'ObjectMeta.annotations': 'annotations (the last-applied one is hidden on its own)',
  'ObjectMetadata.labels': 'labels',
  'ObjectMetadata.annotations': 'annotations of provisioned objects',
  'PodTemplateSpec.metadata.labels': 'labels',
  'PodTemplateSpec.metadata.annotations': 'annotations of provisioned pods',
  'GatewayInfrastructure.labels': 'labels',
  'GatewayInfrastructure.annotations': 'annotations of provisioned objects',
  'LabelSelector.matchLabels': 'a selector',
  'ConfigMapSelector.matchLabels': 'a selector',
  'SecretSelector.matchLabels': 'a selector',
  'InferencePoolSelector.matchLabels': 'a selector',
  'LocalPolicyTargetSelectorWithSectionName.matchLabels': 'a selector',
  'ServiceSpec.selector': 'a selector',
  'PodSpec.nodeSelector': 'a selector',
  'ConfigMap.data': 'a ConfigMap holds no secrets (Secrets do)',
  'ConfigMap.binaryData': 'a ConfigMap holds no secrets (Secrets do)',
  'Secret.data': 'a Secret is shown by its keys only, whole',
  'Secret.stringData': 'a Secret is shown by its keys only, whole',
  'BackendAI.modelAliases': 'model names',
  'BackendAI.routes': 'paths to formats',
  'ListenerTLSConfig.options': 'TLS implementation options',
  'MCPGuardrailsProcessor.methods': 'MCP method names',
  'Endpoint.deprecatedTopology': 'topology labels',
  'PodDisruptionBudgetStatus.disruptedPods': 'pod names and times',
};

interface Field {
  /** `Type.field`, or the path from the nearest named type for an unnamed one. */
  name: string;
  type: string;
  field: string;
  schema: SchemaNode;
  /** The node that declares it. */
  owner: SchemaNode;
}

/** Every object property of every kind's schema, once per declaring node. */
function everyField(): Field[] {
  const seen = new Set<SchemaNode>();
  const fields: Field[] = [];
  const walk = (node: SchemaNode | undefined, owner: string) => {
    if (!node || seen.has(node)) return;
    seen.add(node);
    const type = node[META]?.name ?? owner;
    for (const [field, schema] of Object.entries(node.properties ?? {})) {
      fields.push({ name: `${type}.${field}`, type, field, schema, owner: node });
      walk(schema, `${type}.${field}`);
    }
    walk(node.items, `${owner}[]`);
    walk(node.additionalProperties, `${owner}{}`);
    for (const branch of node.anyOf ?? []) walk(branch, owner);
  };
  for (const kind of KINDS) walk(kind.schema, kind.kind);
  return fields;
}

const isString = (node: SchemaNode | undefined) => node?.type === 'string';
const listed = (lists: Record<string, readonly string[]>[], { type, field }: Field) =>
  lists.some((list) => list[type]?.includes(field));

describe('inline credential fields (src/api/credentials.ts)', () => {
  const fields = everyField();

  it('names fields that exist in the schemas, of the shape the redaction expects', () => {
    const byName = new Map(fields.map((f) => [f.name, f.schema]));
    for (const [type, names] of Object.entries(INLINE_CREDENTIAL_FIELDS))
      for (const field of names) assert.ok(isString(byName.get(`${type}.${field}`)), `${type}.${field}: a string`);
    for (const [type, names] of Object.entries(PASSWORD_LINE_FIELDS))
      for (const field of names)
        assert.ok(isString(byName.get(`${type}.${field}`)?.items), `${type}.${field}: a list of strings`);
    for (const [type, names] of Object.entries(NAMED_VALUE_MAP_FIELDS))
      for (const field of names)
        assert.ok(isString(byName.get(`${type}.${field}`)?.additionalProperties), `${type}.${field}: a map of strings`);
  });

  it('lists every field that may hold a credential, or says why it does not', () => {
    const unlisted = fields
      .filter(
        (f) =>
          /key|token|secret|password|passwd|credential|users|htpasswd|cookie/i.test(f.field) &&
          (isString(f.schema) || isString(f.schema.items) || isString(f.schema.additionalProperties)),
      )
      .filter((f) => !listed([INLINE_CREDENTIAL_FIELDS, PASSWORD_LINE_FIELDS, NAMED_VALUE_MAP_FIELDS], f))
      .map((f) => f.name)
      .filter((name) => NOT_CREDENTIALS[name] === undefined);
    assert.deepEqual(unlisted, [], 'list them in src/api/credentials.ts, or in NOT_CREDENTIALS here with why');
    const maps = fields
      .filter((f) => isString(f.schema.additionalProperties) && !f.schema.properties)
      .filter((f) => !listed([NAMED_VALUE_MAP_FIELDS], f))
      .map((f) => f.name)
      .filter((name) => NOT_CREDENTIAL_MAPS[name] === undefined);
    assert.deepEqual(maps, [], 'list them in NAMED_VALUE_MAP_FIELDS, or in NOT_CREDENTIAL_MAPS here with why');
  });

  it('treats every header, parameter and variable type as a name-value pair', () => {
    const pairs = new Set(fields.filter((f) => f.field === 'value' && isNamedValuePair(f.owner)).map((f) => f.type));
    for (const type of [
      'HTTPHeader',
      'HeaderTransformation',
      'DirectResponseHeader',
      'HTTPHeaderMatch',
      'HTTPQueryParamMatch',
      'EnvVar',
    ])
      assert.ok(pairs.has(type), type);
  });

  it('takes credential header names as the CEL playground does', () => {
    for (const name of ['Authorization', 'proxy-authorization', 'Cookie', 'X-Api-Key', 'api-key', 'X-Goog-Api-Key'])
      assert.ok(isCredentialName(name), name);
    for (const name of ['OPENAI_API_KEY', 'x-auth-token', 'client_secret']) assert.ok(isCredentialName(name), name);
    for (const name of ['content-type', 'x-request-id', 'accept', 'LOG_LEVEL'])
      assert.ok(!isCredentialName(name), name);
  });
});
