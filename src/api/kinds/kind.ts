// What the API knows about one kind: its identity (group/version/kind, names for the REST API
// and kubectl), its schema, and how strictly it is validated.
import { object, string } from '../schema/build.ts';
import type { Properties, SchemaNode, ValidationRule } from '../schema/schema.ts';
import { type NameFormat, ObjectMeta } from './object-meta.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface KindDefinition {
  group: string;
  /** The version objects are stored in and read at from a cluster. */
  version: string;
  /** Every version the kind is served in, `version` among them; the schema is the same in each. */
  servedVersions: readonly string[];
  kind: string;
  plural: string;
  singular: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  printerColumns?: PrinterColumn[];
  /** The object schema: apiVersion, kind, metadata and the kind's own top-level fields. */
  schema: SchemaNode;
  /** Whether `status` is a subresource (then spec writes ignore it and files may omit it). */
  statusSubresource: boolean;
  /**
   * Whether gw reads the kind's status, which another component writes (a Pod's, by the kubelet:
   * an InferencePool's members are its Ready Pods). A change of the status alone is then a change
   * the controller acts on, and the status of such an object in gw's files is kept (and applied to
   * the status subresource when the files go into the API server): a file stands in for the
   * kubelet. Other kinds' status in files is dropped: gw writes it, or nothing reads it.
   */
  readsStatus: boolean;
  /**
   * Whether the kind has the scale subresource (autoscaling/v1 Scale over spec.replicas,
   * status.replicas and spec.selector), which kubectl scale and autoscalers use: Deployment.
   */
  scaleSubresource: boolean;
  /**
   * Top-level field paths ("spec.selector", "roleRef") an update may not change: kube-apiserver
   * refuses it ("field is immutable"); the object must be deleted and created again.
   */
  immutableFields: readonly string[];
  /** gw.dev kinds reject unknown fields; kinds gw only reads part of warn about them. */
  unknownFields: 'error' | 'warn';
  nameFormat: NameFormat;
  /** True for the kinds `gw crds` emits. */
  crd: boolean;
  /**
   * A kind Kubernetes itself serves (core v1, apps, policy, autoscaling, rbac): never a custom
   * resource, so it accepts strategic merge patch (its lists' patch strategies are in the schema)
   * and kube-apiserver's table columns apply.
   */
  builtIn: boolean;
  /**
   * Set for kinds gw stores and serves but never reads (the workloads and RBAC its provisioning
   * writes into a cluster): why, in a phrase. gw validate notes such objects; a gw run -f without
   * the API server does not keep them and says so.
   */
  notRead?: string;
  description: string;
}

export interface KindOptions {
  group: string;
  version: string;
  /**
   * Every version the kind is served in, when it is more than `version` (upstream serves some
   * kinds in two versions with one schema: ReferenceGrant in v1beta1 and v1).
   */
  servedVersions?: string[];
  kind: string;
  plural: string;
  namespaced: boolean;
  /** The kind's own top-level fields (spec and status, or data for ConfigMap and Secret). */
  fields: Properties;
  description: string;
  shortNames?: string[];
  categories?: string[];
  printerColumns?: PrinterColumn[];
  statusSubresource?: boolean;
  readsStatus?: boolean;
  scaleSubresource?: boolean;
  immutableFields?: string[];
  unknownFields?: 'error' | 'warn';
  nameFormat?: NameFormat;
  crd?: boolean;
  builtIn?: boolean;
  notRead?: string;
  /** Rules on the whole object, for kinds whose fields sit at the top level (Secret, ConfigMap). */
  rules?: ValidationRule[];
}

export function apiVersionOf(definition: { group: string; version: string }): string {
  return definition.group === '' ? definition.version : `${definition.group}/${definition.version}`;
}

/** The apiVersions a kind is served in: its stored version first. */
export function servedApiVersionsOf(definition: KindDefinition): string[] {
  const others = definition.servedVersions.filter((version) => version !== definition.version);
  return [definition.version, ...others].map((version) => apiVersionOf({ group: definition.group, version }));
}

/**
 * The options of a kind without a spec (Secret, ConfigMap, ServiceAccount, the RBAC kinds), whose
 * fields sit at the top level beside apiVersion, kind and metadata: the fields of `schema`, and its
 * rules as rules on the whole object.
 */
export function topLevelFields(schema: SchemaNode): Pick<KindOptions, 'fields' | 'rules'> {
  return { fields: schema.properties ?? {}, rules: schema['x-kubernetes-validations'] };
}

/**
 * What gw says about an object of a kind it does not read (gw validate, gw run -f): a Kubernetes
 * object it accepts as valid and stores in its API server, but does not act on. Undefined for
 * the kinds gw reads.
 */
export function notReadText(definition: KindDefinition): string | undefined {
  if (definition.notRead === undefined) return undefined;
  return `not read by gw (${definition.notRead}); valid, and stored as is by gw's API server or a cluster`;
}

export function defineKind(options: KindOptions): KindDefinition {
  const schema = object(
    {
      apiVersion: string({ description: 'The versioned schema of this representation of an object.' }),
      kind: string({ description: 'The REST resource this object represents.' }),
      metadata: ObjectMeta,
      ...options.fields,
    },
    { rules: options.rules },
  );
  schema.description = options.description;
  return {
    group: options.group,
    version: options.version,
    servedVersions: [...new Set([...(options.servedVersions ?? []), options.version])],
    kind: options.kind,
    plural: options.plural,
    singular: options.kind.toLowerCase(),
    listKind: `${options.kind}List`,
    namespaced: options.namespaced,
    shortNames: options.shortNames,
    categories: options.categories,
    printerColumns: options.printerColumns,
    schema,
    statusSubresource: options.statusSubresource ?? 'status' in options.fields,
    readsStatus: options.readsStatus ?? false,
    scaleSubresource: options.scaleSubresource ?? false,
    immutableFields: options.immutableFields ?? [],
    unknownFields: options.unknownFields ?? 'error',
    nameFormat: options.nameFormat ?? 'dns1123Subdomain',
    crd: options.crd ?? false,
    builtIn: options.builtIn ?? false,
    notRead: options.notRead,
    description: options.description,
  };
}
