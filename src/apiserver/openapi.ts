// OpenAPI v3, one document per group-version as kube-apiserver publishes it (/openapi/v3 lists
// them with a content hash; /openapi/v3/apis/<g>/<v>?hash=... is immutable). The schemas are the
// ones the CRDs carry (src/api/crd), each marked with x-kubernetes-group-version-kind, and every
// PATCH operation declares the fieldValidation parameter: that is how kubectl learns it may
// leave validation to the server (--validate=strict) and how `kubectl explain` finds its fields.
// Built-in kinds also carry their strategic-merge keys, which kubectl's apply reads.
import { createHash } from 'node:crypto';
import { toCrdSchema } from '../api/crd/generate.ts';
import { ObjectMeta } from '../api/kinds/object-meta.ts';
import { KINDS } from '../api/kinds/registry.ts';
import { META as SCHEMA_META, type SchemaNode } from '../api/schema/schema.ts';
import { KUBERNETES_VERSION } from './discovery.ts';
import { type ApiResource, groupVersions } from './resources.ts';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The groups of the built-in kinds ("" for core, apps, policy, ...). */
const BUILT_IN_GROUPS = new Set(KINDS.filter((definition) => definition.builtIn).map((definition) => definition.group));

/**
 * Schema names as kube-apiserver forms them: io.k8s.api.<package>.<version>.<Kind> for built-in
 * kinds (the package is the group's first label, core for ""), the group reversed for CRDs
 * (dev.gw.v1alpha1.GwBackend).
 */
export function schemaName(group: string, version: string, kind: string): string {
  if (BUILT_IN_GROUPS.has(group)) return `io.k8s.api.${group === '' ? 'core' : group.split('.')[0]}.${version}.${kind}`;
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function gvk(group: string, version: string, kind: string) {
  return { group, version, kind };
}

const queryParameter = (name: string, description: string, type: 'string' | 'boolean' | 'integer' = 'string') => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});

const PARAMETERS = {
  dryRun: queryParameter('dryRun', 'When present (All), the change is validated but not persisted.'),
  fieldManager: queryParameter('fieldManager', 'The name of the actor making the change (metadata.managedFields).'),
  fieldValidation: queryParameter(
    'fieldValidation',
    'How unknown fields are treated: Ignore (pruned silently), Warn (pruned with a warning, the default) or Strict (the request fails).',
  ),
  force: queryParameter('force', 'Server-side apply: take fields other managers own.', 'boolean'),
  pretty: queryParameter('pretty', 'Indent the output.'),
  labelSelector: queryParameter('labelSelector', 'Only objects whose labels match.'),
  fieldSelector: queryParameter('fieldSelector', 'Only objects whose metadata.name / metadata.namespace match.'),
  limit: queryParameter('limit', 'At most this many items; continue with the returned token.', 'integer'),
  continue: queryParameter('continue', 'The token of the previous page.'),
  resourceVersion: queryParameter('resourceVersion', 'Serve the list as of, or watch from, this resourceVersion.'),
  resourceVersionMatch: queryParameter('resourceVersionMatch', 'NotOlderThan or Exact.'),
  watch: queryParameter('watch', 'Stream changes instead of listing.', 'boolean'),
  allowWatchBookmarks: queryParameter('allowWatchBookmarks', 'Send BOOKMARK events.', 'boolean'),
  timeoutSeconds: queryParameter('timeoutSeconds', 'End the list or watch after this long.', 'integer'),
  sendInitialEvents: queryParameter('sendInitialEvents', 'Begin a watch with the current objects.', 'boolean'),
};

const pathParameter = (name: string) => ({
  name,
  in: 'path',
  required: true,
  description: `the ${name} of the object`,
  schema: { type: 'string', uniqueItems: true },
});

function jsonContent(schema: unknown) {
  return { 'application/json': { schema }, 'application/yaml': { schema } };
}

function operation(
  resource: ApiResource,
  action: string,
  verb: string,
  responseSchema: unknown,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const kind = resource.kind;
  return {
    tags: [resource.group === '' ? 'core_v1' : `${resource.group}_${resource.version}`],
    description: `${verb} ${kind}`,
    operationId: `${verb}${resource.namespaced ? 'Namespaced' : ''}${kind}`,
    ...extra,
    responses: { '200': { description: 'OK', content: jsonContent(responseSchema) } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(resource.group, resource.version, kind),
  };
}

function patchBody(resource: ApiResource) {
  const schema = ref(`${META}.Patch`);
  const content: Record<string, unknown> = {
    'application/apply-patch+yaml': { schema },
    'application/json-patch+json': { schema },
    'application/merge-patch+json': { schema },
  };
  if (resource.listStrategies) content['application/strategic-merge-patch+json'] = { schema };
  return { content, required: true };
}

function resourcePaths(resource: ApiResource): Record<string, unknown> {
  const prefix = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  const scope = resource.namespaced
    ? `${prefix}/namespaces/{namespace}/${resource.plural}`
    : `${prefix}/${resource.plural}`;
  const object = ref(schemaName(resource.group, resource.version, resource.kind));
  const list = ref(schemaName(resource.group, resource.version, resource.listKind));
  const status = ref(`${META}.Status`);
  const listParameters = [
    PARAMETERS.labelSelector,
    PARAMETERS.fieldSelector,
    PARAMETERS.limit,
    PARAMETERS.continue,
    PARAMETERS.resourceVersion,
    PARAMETERS.resourceVersionMatch,
    PARAMETERS.watch,
    PARAMETERS.allowWatchBookmarks,
    PARAMETERS.timeoutSeconds,
    PARAMETERS.sendInitialEvents,
  ];
  const writeParameters = [PARAMETERS.dryRun, PARAMETERS.fieldManager, PARAMETERS.fieldValidation];
  const scopeParameters = resource.namespaced ? [pathParameter('namespace'), PARAMETERS.pretty] : [PARAMETERS.pretty];
  const itemParameters = [pathParameter('name'), ...scopeParameters];
  const paths: Record<string, unknown> = {
    [scope]: {
      get: operation(resource, 'list', 'list', list, { parameters: listParameters }),
      post: operation(resource, 'post', 'create', object, {
        parameters: writeParameters,
        requestBody: { content: jsonContent(object), required: true },
      }),
      delete: operation(resource, 'deletecollection', 'deletecollection', status, {
        parameters: [...listParameters, PARAMETERS.dryRun],
      }),
      parameters: scopeParameters,
    },
    [`${scope}/{name}`]: {
      get: operation(resource, 'get', 'read', object),
      put: operation(resource, 'put', 'replace', object, {
        parameters: writeParameters,
        requestBody: { content: jsonContent(object), required: true },
      }),
      patch: operation(resource, 'patch', 'patch', object, {
        parameters: [...writeParameters, PARAMETERS.force],
        requestBody: patchBody(resource),
      }),
      delete: operation(resource, 'delete', 'delete', status, {
        parameters: [PARAMETERS.dryRun],
        requestBody: { content: jsonContent(ref(`${META}.DeleteOptions`)) },
      }),
      parameters: itemParameters,
    },
  };
  if (resource.statusSubresource) {
    paths[`${scope}/{name}/status`] = {
      get: operation(resource, 'get', 'read', object),
      put: operation(resource, 'put', 'replace', object, {
        parameters: writeParameters,
        requestBody: { content: jsonContent(object), required: true },
      }),
      patch: operation(resource, 'patch', 'patch', object, {
        parameters: [...writeParameters, PARAMETERS.force],
        requestBody: patchBody(resource),
      }),
      parameters: itemParameters,
    };
  }
  if (resource.namespaced) {
    paths[`${prefix}/${resource.plural}`] = {
      get: operation(resource, 'list', 'list', list, { parameters: listParameters }),
      parameters: [PARAMETERS.pretty],
    };
  }
  return paths;
}

/**
 * Schemas for one document. The CRDs inline every named type wherever it is used, which makes
 * the gw.dev document three times larger than it needs to be — and kubectl parses the document
 * of a group-version for every object it applies. Named types of gw.dev and the Gateway API are
 * therefore published once, under components, and referenced (`allOf: [$ref]` with the field's
 * own description and default, the form kube-apiserver uses for built-in types). The built-in
 * kinds stay inline, so that their strategic-merge tags sit on the lists themselves.
 */
class SchemaWriter {
  readonly components: Record<string, unknown> = {};
  private readonly prefix: string;
  private readonly factor: boolean;
  /** Per type name, each distinct shape (refined copies may differ) and its component name. */
  private readonly shapes = new Map<string, { text: string; component: string }[]>();

  constructor(prefix: string, factor: boolean) {
    this.prefix = prefix;
    this.factor = factor;
  }

  write(node: SchemaNode, top = false): Record<string, unknown> {
    const meta = node[SCHEMA_META];
    if (this.factor && meta && !top) {
      const { description, default: defaultValue, ...rest } = node;
      const component = this.register(meta.name, { ...rest, [SCHEMA_META]: meta });
      const reference: Record<string, unknown> = {};
      if (description !== undefined) reference.description = description;
      if (defaultValue !== undefined) reference.default = structuredClone(defaultValue);
      reference.allOf = [ref(component)];
      return reference;
    }
    const out = toCrdSchema({
      ...node,
      properties: undefined,
      additionalProperties: undefined,
      items: undefined,
      anyOf: undefined,
    });
    // The strategic-merge tags kubectl's apply reads (built-in kinds; CRDs may not carry them).
    for (const key of ['x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key'] as const) {
      if (node[key] !== undefined) out[key] = node[key];
    }
    if (node.anyOf) out.anyOf = node.anyOf.map((child) => this.write(child));
    if (node.properties) {
      out.properties = Object.fromEntries(
        Object.entries(node.properties).map(([name, child]) => [name, this.write(child)]),
      );
    }
    if (node.additionalProperties) out.additionalProperties = this.write(node.additionalProperties);
    if (node.items) out.items = this.write(node.items);
    return out;
  }

  private register(typeName: string, shape: SchemaNode): string {
    const text = JSON.stringify(toCrdSchema(shape));
    const known = this.shapes.get(typeName) ?? [];
    const found = known.find((entry) => entry.text === text);
    if (found) return found.component;
    const component = `${this.prefix}.${typeName}${known.length === 0 ? '' : `${known.length + 1}`}`;
    known.push({ text, component });
    this.shapes.set(typeName, known);
    this.components[component] = this.write(shape, true);
    return component;
  }
}

function objectSchema(resource: ApiResource, writer: SchemaWriter): Record<string, unknown> {
  const schema = writer.write(resource.definition.schema, true);
  const properties = schema.properties as Record<string, unknown>;
  properties.apiVersion = {
    type: 'string',
    description: 'APIVersion defines the versioned schema of this representation of an object.',
  };
  properties.kind = {
    type: 'string',
    description: 'Kind is a string value representing the REST resource this object represents.',
  };
  properties.metadata = { description: "Standard object's metadata.", allOf: [ref(`${META}.ObjectMeta`)] };
  schema['x-kubernetes-group-version-kind'] = [gvk(resource.group, resource.version, resource.kind)];
  return schema;
}

function listSchema(resource: ApiResource): Record<string, unknown> {
  return {
    description: `${resource.listKind} is a list of ${resource.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion of the list.' },
      items: {
        description: `List of ${resource.plural}.`,
        type: 'array',
        items: ref(schemaName(resource.group, resource.version, resource.kind)),
      },
      kind: { type: 'string', description: 'Kind of the list.' },
      metadata: { description: 'Standard list metadata.', allOf: [ref(`${META}.ListMeta`)] },
    },
    'x-kubernetes-group-version-kind': [gvk(resource.group, resource.version, resource.listKind)],
  };
}

function metaSchemas(): Record<string, unknown> {
  const objectMeta = new SchemaWriter('', false).write(ObjectMeta, true);
  objectMeta.description =
    'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.';
  return {
    [`${META}.ObjectMeta`]: objectMeta,
    [`${META}.ListMeta`]: {
      description: 'ListMeta describes metadata that synthetic resources must have.',
      type: 'object',
      properties: {
        continue: { type: 'string', description: 'The token of the next page, when there is one.' },
        remainingItemCount: { type: 'integer', format: 'int64' },
        resourceVersion: { type: 'string' },
      },
    },
    [`${META}.Status`]: {
      description: 'Status is a return value for calls that do not return other objects.',
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        code: { type: 'integer', format: 'int32' },
        details: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        kind: { type: 'string' },
        message: { type: 'string' },
        metadata: { allOf: [ref(`${META}.ListMeta`)] },
        reason: { type: 'string' },
        status: { type: 'string' },
      },
      'x-kubernetes-group-version-kind': [gvk('', 'v1', 'Status')],
    },
    [`${META}.Patch`]: {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
    [`${META}.DeleteOptions`]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        dryRun: { type: 'array', items: { type: 'string' } },
        gracePeriodSeconds: { type: 'integer', format: 'int64' },
        kind: { type: 'string' },
        preconditions: {
          type: 'object',
          properties: { resourceVersion: { type: 'string' }, uid: { type: 'string' } },
        },
        propagationPolicy: { type: 'string' },
      },
    },
  };
}

/** The document of one group-version ("" for core). */
function groupVersionDocument(group: string, version: string, resources: readonly ApiResource[]) {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = metaSchemas();
  const writer = new SchemaWriter(schemaName(group, version, '').slice(0, -1), !BUILT_IN_GROUPS.has(group));
  for (const resource of resources) {
    Object.assign(paths, resourcePaths(resource));
    schemas[schemaName(group, version, resource.kind)] = objectSchema(resource, writer);
    schemas[schemaName(group, version, resource.listKind)] = listSchema(resource);
  }
  Object.assign(schemas, writer.components);
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION.gitVersion },
    paths,
    components: { schemas },
  };
}

export interface OpenApiDocument {
  /** "api/v1", "apis/gw.dev/v1alpha1". */
  path: string;
  text: string;
  hash: string;
}

let documents: Map<string, OpenApiDocument> | undefined;

/** Every group-version document, built once (the schemas do not change while gw runs). */
export function openApiDocuments(): Map<string, OpenApiDocument> {
  if (!documents) {
    documents = new Map();
    for (const { group, version, resources } of groupVersions()) {
      const path = group === '' ? `api/${version}` : `apis/${group}/${version}`;
      const text = JSON.stringify(groupVersionDocument(group, version, resources));
      const hash = createHash('sha512').update(text).digest('hex').toUpperCase();
      documents.set(path, { path, text, hash });
    }
  }
  return documents;
}

/** /openapi/v3: where each group-version document is, with its hash. */
export function openApiRoot(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const document of openApiDocuments().values()) {
    paths[document.path] = { serverRelativeURL: `/openapi/v3/${document.path}?hash=${document.hash}` };
  }
  return { paths };
}
