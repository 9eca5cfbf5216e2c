// Spec document 1 (GwParameters) and document 2 ("Provisioning types"): how the managed data
// plane is provisioned. Container-level types (EnvVar, ResourceRequirements) follow Kubernetes
// core/v1 field for field, since their values are copied into the generated workload as-is.
import {
  array,
  boolean,
  enumOf,
  integer,
  intOrString,
  jsonObject,
  map,
  named,
  object,
  refine,
  required,
  string,
} from '../schema/build.ts';
import { onlyWhen } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { ObjectName, QUANTITY_PATTERN } from './common.ts';

export const Workload = named(
  { name: 'Workload', description: 'The kind of Kubernetes workload the data plane runs as.', source: '1' },
  object({
    kind: enumOf(['Deployment', 'DaemonSet'], {
      default: 'Deployment',
      description: 'The kind of workload that runs the data plane.',
    }),
  }),
);
export type Workload = Infer<typeof Workload>;

export const Logging = named(
  { name: 'Logging', description: 'Log level and format of the data plane.', source: '1' },
  object({
    level: string({
      minLength: 1,
      default: 'info',
      description:
        'Log filter in per-module syntax, e.g. `info` or `warn,dataplane=debug` (modules: docs/telemetry.md "Log level").',
    }),
    format: enumOf(['json', 'text'], { default: 'text', description: 'Log line format: json or text.' }),
  }),
);
export type Logging = Infer<typeof Logging>;

/** An OCI digest: algorithm, colon, hex-encoded hash (sha256:<64 hex> in practice). */
const IMAGE_DIGEST_PATTERN = '^[a-z0-9]+([+._-][a-z0-9]+)*:[a-f0-9]{32,}$';

export const Image = named(
  {
    name: 'Image',
    description: 'Container image of the data plane.',
    source: '1',
    notes:
      'registry, repository and tag default to the gw release image when omitted; pullPolicy defers to the cluster default.',
  },
  object({
    registry: string({
      minLength: 1,
      maxLength: 253,
      description: 'Image registry host, e.g. `ghcr.io`. Defaults to the release registry.',
    }),
    repository: string({
      minLength: 1,
      maxLength: 256,
      description: 'Repository within the registry. Defaults to the release repository.',
    }),
    tag: string({
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]*$',
      description: 'Image tag. Defaults to the release version.',
    }),
    digest: string({
      maxLength: 256,
      pattern: IMAGE_DIGEST_PATTERN,
      description: 'Image digest, e.g. `sha256:<hex>`; pins the image regardless of tag.',
    }),
    pullPolicy: enumOf(['Always', 'IfNotPresent', 'Never'], {
      description: 'When omitted the cluster default applies (Always for :latest, otherwise IfNotPresent).',
    }),
  }),
);
export type Image = Infer<typeof Image>;

// Kubernetes core/v1 EnvVar and its sources.

/** A Kubernetes quantity; a resource request may also carry a sign in Kubernetes, never meaningful here. */
const Quantity = intOrString({ pattern: QUANTITY_PATTERN });

export const ObjectFieldSelector = named(
  { name: 'ObjectFieldSelector', source: 'core' },
  object(
    {
      apiVersion: string({ description: 'Schema version the fieldPath is written against; defaults to v1.' }),
      fieldPath: required(
        string({ minLength: 1, description: 'Pod field to expose, e.g. `metadata.name`, `status.podIP`.' }),
      ),
    },
    { description: 'Selects a field of the pod.' },
  ),
);
export type ObjectFieldSelector = Infer<typeof ObjectFieldSelector>;

export const ResourceFieldSelector = named(
  {
    name: 'ResourceFieldSelector',
    description: "A resource limit or request of the container, as the variable's value.",
    source: 'core',
  },
  object({
    containerName: string({
      description: 'Container whose resources are read; required for volumes, optional for env.',
    }),
    resource: required(string({ minLength: 1, description: 'e.g. `limits.cpu`, `requests.memory`.' })),
    divisor: refine(Quantity, { description: 'Output unit; defaults to 1.' }),
  }),
);
export type ResourceFieldSelector = Infer<typeof ResourceFieldSelector>;

/** Kubernetes ConfigMap/Secret keys: `[-._a-zA-Z0-9]+`, at most 253 characters. */
export const CONFIG_KEY_PATTERN = '^[-._a-zA-Z0-9]+$';
const ConfigKey = string({ minLength: 1, maxLength: 253, pattern: CONFIG_KEY_PATTERN });

export const ConfigMapKeySelector = named(
  { name: 'ConfigMapKeySelector', description: 'A key of a ConfigMap in the same namespace.', source: 'core' },
  object({
    name: string({ description: "Name of the ConfigMap in the pod's namespace." }),
    key: required(refine(ConfigKey, { description: 'Key whose value is used.' })),
    optional: boolean({ description: 'Whether the ConfigMap or its key may be missing.' }),
  }),
);
export type ConfigMapKeySelector = Infer<typeof ConfigMapKeySelector>;

export const SecretKeySelector = named(
  { name: 'SecretKeySelector', description: 'A key of a Secret in the same namespace.', source: 'core' },
  object({
    name: string({ description: "Name of the Secret in the pod's namespace." }),
    key: required(refine(ConfigKey, { description: 'Key whose value is used.' })),
    optional: boolean({ description: 'Whether the Secret or its key may be missing.' }),
  }),
);
export type SecretKeySelector = Infer<typeof SecretKeySelector>;

const envSources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'] as const;

export const EnvVarSource = named(
  { name: 'EnvVarSource', description: 'Where an environment variable takes its value from.', source: 'core' },
  object(
    {
      fieldRef: ObjectFieldSelector,
      resourceFieldRef: ResourceFieldSelector,
      configMapKeyRef: ConfigMapKeySelector,
      secretKeyRef: SecretKeySelector,
    },
    {
      rules: [
        // Kubernetes rejects both "none" and "several" sources.
        {
          rule: `[${envSources.map((f) => `has(self.${f})`).join(', ')}].exists_one(x, x)`,
          message: `exactly one of ${envSources.join(', ')} must be set`,
        },
      ],
    },
  ),
);
export type EnvVarSource = Infer<typeof EnvVarSource>;

export const EnvVar = named(
  {
    name: 'EnvVar',
    description: 'An environment variable of the data plane container.',
    source: 'core',
    notes:
      'Kubernetes core/v1 EnvVar. `$(VAR_NAME)` expands a previously defined variable (discouraged); `$$(VAR_NAME)` yields the literal text.',
  },
  object(
    {
      // Kubernetes accepts any printable ASCII except '=' in names (since 1.34).
      name: required(
        string({ minLength: 1, pattern: '^[ -<>-~]+$', description: 'Variable name; printable ASCII without `=`.' }),
      ),
      value: string({ description: 'Literal value; may reference earlier variables as `$(NAME)`.' }),
      valueFrom: EnvVarSource,
    },
    {
      rules: [
        {
          rule: "!has(self.valueFrom) || !has(self.value) || self.value == ''",
          message: 'valueFrom may not be set when value is not empty',
          fieldPath: '.valueFrom',
          reason: 'FieldValueForbidden',
        },
      ],
    },
  ),
);
export type EnvVar = Infer<typeof EnvVar>;

export const ResourceClaim = named(
  { name: 'ResourceClaim', description: 'A dynamic resource claim the container uses.', source: 'core' },
  object({
    name: required(string({ minLength: 1, description: "Name of an entry in the pod's resourceClaims." })),
    request: string({ description: 'A single request of the claim; the whole claim when omitted.' }),
  }),
);
export type ResourceClaim = Infer<typeof ResourceClaim>;

const ResourceList = map(Quantity, {
  description: 'Resource name (cpu, memory, ephemeral-storage, ...) to quantity.',
});

export const ResourceRequirements = named(
  {
    name: 'ResourceRequirements',
    description: 'CPU, memory and other compute resources of a container.',
    source: 'core',
    notes:
      'Kubernetes core/v1 ResourceRequirements. That requests do not exceed limits is checked by Kubernetes when the workload is created.',
  },
  object({
    limits: ResourceList,
    requests: ResourceList,
    claims: array(ResourceClaim, {
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Dynamic resource claims of the pod the container uses.',
    }),
  }),
);
export type ResourceRequirements = Infer<typeof ResourceRequirements>;

/** One year: the longest drain either bound accepts. */
const MAX_SHUTDOWN_SECONDS = 31536000;

export const ShutdownSpec = named(
  {
    name: 'ShutdownSpec',
    description: 'Graceful shutdown of the data plane, in seconds.',
    source: 'gw',
    notes:
      'Fields not shown in the spec; gw follows agentgateway: `min` is how long a draining proxy keeps accepting connections at least, `max` is the pod termination grace period; both in seconds.',
  },
  object(
    {
      min: required(
        integer({
          format: 'int64',
          minimum: 0,
          maximum: MAX_SHUTDOWN_SECONDS,
          description: 'Seconds the proxy keeps serving after shutdown begins, at least.',
        }),
      ),
      max: required(
        integer({
          format: 'int64',
          minimum: 0,
          maximum: MAX_SHUTDOWN_SECONDS,
          description:
            'Seconds after which the pod is stopped regardless of open connections (termination grace period).',
        }),
      ),
    },
    { rules: [{ rule: 'self.min <= self.max', message: 'min must be less than or equal to max' }] },
  ),
);
export type ShutdownSpec = Infer<typeof ShutdownSpec>;

export const MeshSpec = named(
  { name: 'MeshSpec', description: 'Service mesh integration of the data plane.', source: '2' },
  object({
    enabled: boolean({ description: 'Join the service mesh (mesh-issued workload certificates).' }),
    caAddress: string({
      minLength: 1,
      description:
        "Address of the mesh certificate authority; defaults to the mesh control plane's in-cluster address.",
    }),
    trustDomain: string({
      minLength: 1,
      description: "Mesh trust domain; defaults to cluster.local or the mesh revision's default.",
    }),
    additionalTrustDomains: array(string({ minLength: 1 }), {
      description: 'Other trust domains whose identities are accepted.',
    }),
    clusterId: string({
      minLength: 1,
      description: 'Cluster identifier in the mesh; defaults to a cluster-type identifier.',
    }),
    network: string({ description: 'Mesh network name; empty by default.' }),
  }),
);
export type MeshSpec = Infer<typeof MeshSpec>;

export const ObjectMetadata = named(
  { name: 'ObjectMetadata', description: 'Labels and annotations added to a generated resource.', source: '2' },
  object({
    labels: map(string(), { description: 'Labels added to (or overriding those of) the generated resource.' }),
    annotations: map(string(), {
      description: 'Annotations added to (or overriding those of) the generated resource.',
    }),
  }),
);
export type ObjectMetadata = Infer<typeof ObjectMetadata>;

export const KubernetesResourceOverlay = named(
  {
    name: 'KubernetesResourceOverlay',
    description: 'Labels, annotations and spec fields merged into a resource the controller generates.',
    source: '2',
    notes:
      'Applied in order: GatewayClass typed fields, Gateway typed fields, GatewayClass overlays, Gateway overlays (later wins). Lists with merge keys merge; `$patch: delete` removes an item or field; `$patch: replace` replaces a whole map or list.',
  },
  object({
    metadata: ObjectMetadata,
    spec: jsonObject({ description: 'Partial spec of the generated resource, merged by strategic merge patch.' }),
  }),
);
export type KubernetesResourceOverlay = Infer<typeof KubernetesResourceOverlay>;

export const ModelCatalogConfigMapRef = named(
  { name: 'ModelCatalogConfigMapRef', description: 'A ConfigMap holding a model catalog.', source: '2' },
  object({
    name: required(refine(ObjectName, { description: "ConfigMap in the Gateway's namespace." })),
    key: refine(ConfigKey, { default: 'catalog.json', description: 'Key of the ConfigMap holding the catalog.' }),
  }),
);
export type ModelCatalogConfigMapRef = Infer<typeof ModelCatalogConfigMapRef>;

export const ModelCatalogSource = named(
  {
    name: 'ModelCatalogSource',
    description: 'Where one model cost catalog is read from.',
    source: '2',
    notes: 'configMap is the only source kind, so gw requires it.',
  },
  object({ configMap: required(ModelCatalogConfigMapRef) }),
);
export type ModelCatalogSource = Infer<typeof ModelCatalogSource>;

export const ModelCatalogSpec = named(
  {
    name: 'ModelCatalogSpec',
    description: 'Where the model cost catalog (per-model prices) is read from.',
    source: '2',
    notes:
      'Effective only on Gateway-level parameters (Gateway.spec.infrastructure.parametersRef); ignored on GatewayClass parameters, which the GwParameters condition ModelCatalogResolved (reason Ignored) says. Each source is a JSON catalog in agentgateway\'s format (providers by gen_ai.provider.name, models, rates in USD per million tokens); later sources win. An unusable source is named in ModelCatalogResolved and prices nothing; requests are still served (docs/telemetry.md, "LLM request cost").',
  },
  object({ sources: array(ModelCatalogSource, { description: 'Where model cost catalogs are read from.' }) }),
);
export type ModelCatalogSpec = Infer<typeof ModelCatalogSpec>;

/** workload.kind after defaulting; an absent workload means Deployment. */
const isDeployment = "!has(self.workload) || !has(self.workload.kind) || self.workload.kind == 'Deployment'";
const isDaemonSet = "has(self.workload) && has(self.workload.kind) && self.workload.kind == 'DaemonSet'";

export const GwParametersSpec = named(
  {
    name: 'GwParametersSpec',
    description: 'How the controller deploys and runs the data plane of the Gateways that use these parameters.',
    source: '1',
  },
  object(
    {
      workload: Workload,
      logging: Logging,
      rawConfig: jsonObject({
        description:
          'Raw data-plane configuration merged into the generated file; typed fields such as logging.format take precedence.',
      }),
      image: Image,
      env: array(EnvVar, {
        description:
          'Container environment, overriding variables of the same name. Remove one with an overlay `$patch: delete`. SESSION_KEY, when set, replaces the controller-managed per-Gateway session key.',
      }),
      resources: refine(ResourceRequirements, { description: 'Compute resources of the proxy container.' }),
      shutdown: ShutdownSpec,
      mesh: MeshSpec,
      modelCatalog: ModelCatalogSpec,
      deployment: refine(KubernetesResourceOverlay, { description: 'Overlay on the generated Deployment.' }),
      daemonSet: refine(KubernetesResourceOverlay, { description: 'Overlay on the generated DaemonSet.' }),
      service: refine(KubernetesResourceOverlay, { description: 'Overlay on the generated Service.' }),
      serviceAccount: refine(KubernetesResourceOverlay, { description: 'Overlay on the generated ServiceAccount.' }),
      podDisruptionBudget: refine(KubernetesResourceOverlay, {
        description: 'When present a PodDisruptionBudget selecting the proxy pods is created; none otherwise.',
      }),
      horizontalPodAutoscaler: refine(KubernetesResourceOverlay, {
        description: 'When present a HorizontalPodAutoscaler scaling the proxy Deployment is created; none otherwise.',
      }),
    },
    {
      rules: [
        onlyWhen('deployment', isDeployment, 'when workload.kind is Deployment'),
        onlyWhen('daemonSet', isDaemonSet, 'when workload.kind is DaemonSet'),
        onlyWhen('horizontalPodAutoscaler', isDeployment, 'when workload.kind is Deployment'),
      ],
    },
  ),
);
export type GwParametersSpec = Infer<typeof GwParametersSpec>;
