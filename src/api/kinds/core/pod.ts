// Core v1 PodTemplateSpec and what it holds (PodSpec, Container, Probe, Volume...): the part of a
// Deployment or DaemonSet that says what runs. gw stores workloads, it runs no pods, so the schema
// covers the structure and the checks kube-apiserver makes that a client relies on (names, ports,
// one handler per probe, one source per volume) and the strategic-merge keys kubectl's patches use;
// fields not modelled (rare volume sources, security details) are kept with a warning.
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
} from '../../schema/build.ts';
import { atMostOneOf, exactlyOneOf } from '../../schema/rules.ts';
import type { Infer, ValidationRule } from '../../schema/schema.ts';
import { DNS_SUBDOMAIN_PATTERN } from '../../types/common.ts';
import { EnvVar, ResourceRequirements } from '../../types/provisioning.ts';

/** RFC 1123 label: what container, port and volume names must be. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** IANA_SVC_NAME: a named port, at most 15 of [-a-z0-9] with a letter and no double or edge dash. */
const PORT_NAME_RULE = {
  rule: "size(self) <= 15 && self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]') && !self.contains('--')",
  message:
    'must be at most 15 lowercase letters, digits and dashes, with a letter, and no leading, trailing or double dash',
};

const LabelName = string({ minLength: 1, maxLength: 63, pattern: DNS_LABEL_PATTERN });

const Port = integer({ format: 'int32', minimum: 1, maximum: 65535 });

/** A port by number or IANA_SVC_NAME, as probes and Service targetPorts write it. */
const NumberOrNamedPort = intOrString({
  rules: [
    {
      rule: `type(self) == int ? (self >= 1 && self <= 65535) : (${PORT_NAME_RULE.rule})`,
      message: 'must be a port number from 1 to 65535 or a port name (at most 15 lowercase letters, digits and dashes)',
    },
  ],
});

export const ContainerPort = named(
  { name: 'ContainerPort', description: 'A network port a container listens on.', source: 'core' },
  object({
    name: string({ rules: [PORT_NAME_RULE], description: 'Name a Service targetPort or probe can use.' }),
    containerPort: required(refine(Port, { description: "Port number on the pod's IP address." })),
    protocol: enumOf(['TCP', 'UDP', 'SCTP'], { default: 'TCP', description: 'TCP (default), UDP or SCTP.' }),
    hostPort: integer({ format: 'int32', minimum: 0, maximum: 65535, description: "Port on the node's address." }),
    hostIP: string({ description: 'Node IP the hostPort binds to.' }),
  }),
);
export type ContainerPort = Infer<typeof ContainerPort>;

const HTTPHeader = object({
  name: required(string({ minLength: 1, description: 'Header field name.' })),
  value: required(string({ description: 'Header field value.' })),
});

const handlerFields = {
  exec: object(
    {
      command: array(string(), { listType: 'atomic', description: 'Command run in the container; 0 exit is success.' }),
    },
    { description: 'Runs a command in the container.' },
  ),
  httpGet: object(
    {
      path: string({ description: 'Path of the HTTP GET request.' }),
      port: required(refine(NumberOrNamedPort, { description: 'Container port, by number or name.' })),
      host: string({ description: "Host to connect to; the pod's IP when empty." }),
      scheme: enumOf(['HTTP', 'HTTPS'], { default: 'HTTP', description: 'HTTP (default) or HTTPS.' }),
      httpHeaders: array(HTTPHeader, { listType: 'atomic', description: 'Extra request headers.' }),
    },
    { description: 'Sends an HTTP GET request; 2xx and 3xx are success.' },
  ),
  tcpSocket: object(
    {
      port: required(refine(NumberOrNamedPort, { description: 'Container port, by number or name.' })),
      host: string({ description: "Host to connect to; the pod's IP when empty." }),
    },
    { description: 'Opens a TCP connection; connecting is success.' },
  ),
  grpc: object(
    {
      port: required(refine(Port, { description: 'Port of the gRPC health service.' })),
      service: string({ description: 'Service name sent in the health check request.' }),
    },
    { description: 'Calls the gRPC health checking protocol.' },
  ),
};

const probeHandlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;

export const Probe = named(
  {
    name: 'Probe',
    description: 'A health check the kubelet runs against a container.',
    source: 'core',
    notes: 'Exactly one handler (exec, httpGet, tcpSocket or grpc), as kube-apiserver requires.',
  },
  object(
    {
      ...handlerFields,
      initialDelaySeconds: integer({ format: 'int32', minimum: 0, description: 'Seconds before the first probe.' }),
      timeoutSeconds: integer({ format: 'int32', minimum: 1, default: 1, description: 'Seconds a probe may take.' }),
      periodSeconds: integer({ format: 'int32', minimum: 1, default: 10, description: 'Seconds between probes.' }),
      successThreshold: integer({
        format: 'int32',
        minimum: 1,
        default: 1,
        description: 'Consecutive successes that count as healthy after a failure.',
      }),
      failureThreshold: integer({
        format: 'int32',
        minimum: 1,
        default: 3,
        description: 'Consecutive failures that count as unhealthy.',
      }),
      terminationGracePeriodSeconds: integer({
        format: 'int64',
        minimum: 1,
        description: 'Grace period when a failed liveness or startup probe stops the container.',
      }),
    },
    { rules: [exactlyOneOf(probeHandlers)] },
  ),
);
export type Probe = Infer<typeof Probe>;

const lifecycleHandlers = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;

const LifecycleHandler = named(
  { name: 'LifecycleHandler', description: 'An action run at a point of the container lifecycle.', source: 'core' },
  object(
    {
      exec: handlerFields.exec,
      httpGet: handlerFields.httpGet,
      tcpSocket: handlerFields.tcpSocket,
      sleep: object(
        { seconds: required(integer({ format: 'int64', minimum: 0, description: 'Seconds to sleep.' })) },
        { description: 'Sleeps before the container continues.' },
      ),
    },
    { rules: [exactlyOneOf(lifecycleHandlers)] },
  ),
);

export const Lifecycle = named(
  { name: 'Lifecycle', description: 'Actions run after a container starts and before it stops.', source: 'core' },
  object({
    postStart: LifecycleHandler,
    preStop: LifecycleHandler,
    stopSignal: string({ description: 'Signal that stops the container, e.g. SIGTERM.' }),
  }),
);
export type Lifecycle = Infer<typeof Lifecycle>;

export const VolumeMount = named(
  { name: 'VolumeMount', description: 'Where a volume is mounted in a container.', source: 'core' },
  object({
    name: required(string({ minLength: 1, description: 'Name of a volume of the pod.' })),
    mountPath: required(string({ minLength: 1, description: 'Path in the container; may not contain `:`.' })),
    subPath: string({ description: "Path within the volume to mount instead of the volume's root." }),
    subPathExpr: string({ description: 'subPath with $(VAR) expansion from the environment.' }),
    readOnly: boolean({ description: 'Mount read-only.' }),
    recursiveReadOnly: enumOf(['Disabled', 'IfPossible', 'Enabled'], {
      description: 'Whether read-only applies to sub-mounts too.',
    }),
    mountPropagation: enumOf(['None', 'HostToContainer', 'Bidirectional'], {
      description: 'How mounts propagate between host and container.',
    }),
  }),
);
export type VolumeMount = Infer<typeof VolumeMount>;

const EnvFromSource = named(
  { name: 'EnvFromSource', description: 'Every key of a ConfigMap or Secret as environment.', source: 'core' },
  object(
    {
      prefix: string({ description: 'Prepended to each key to form the variable name.' }),
      configMapRef: object(
        {
          name: string({ description: 'Name of the ConfigMap.' }),
          optional: boolean({ description: 'Whether the ConfigMap may be missing.' }),
        },
        { description: 'The ConfigMap to read.' },
      ),
      secretRef: object(
        {
          name: string({ description: 'Name of the Secret.' }),
          optional: boolean({ description: 'Whether the Secret may be missing.' }),
        },
        { description: 'The Secret to read.' },
      ),
    },
    { rules: [exactlyOneOf(['configMapRef', 'secretRef'])] },
  ),
);

export const Container = named(
  {
    name: 'Container',
    description: 'A container of a pod.',
    source: 'core',
    notes:
      'Strategic merge patch merges ports by containerPort, env by name, volumeMounts by mountPath and volumeDevices by devicePath, as Kubernetes does.',
  },
  object(
    {
      name: required(refine(LabelName, { description: 'Name of the container, unique in the pod (RFC 1123 label).' })),
      image: string({ description: 'Container image reference.' }),
      imagePullPolicy: enumOf(['Always', 'IfNotPresent', 'Never'], {
        description: 'When the image is pulled; Always for :latest, otherwise IfNotPresent, when omitted.',
      }),
      command: array(string(), { listType: 'atomic', description: "Entrypoint; the image's when omitted." }),
      args: array(string(), { listType: 'atomic', description: "Arguments; the image's when omitted." }),
      workingDir: string({ description: 'Working directory.' }),
      ports: array(ContainerPort, {
        listType: 'map',
        listMapKeys: ['containerPort', 'protocol'],
        patchMergeKey: 'containerPort',
        description: 'Ports the container listens on.',
      }),
      env: array(EnvVar, {
        listType: 'map',
        listMapKeys: ['name'],
        patchMergeKey: 'name',
        description: 'Environment variables.',
      }),
      envFrom: array(EnvFromSource, {
        listType: 'atomic',
        description: 'Environment from whole ConfigMaps or Secrets.',
      }),
      resources: ResourceRequirements,
      resizePolicy: array(
        object({
          resourceName: required(string({ minLength: 1, description: 'cpu or memory.' })),
          restartPolicy: required(
            enumOf(['NotRequired', 'RestartContainer'], { description: 'Whether resizing restarts the container.' }),
          ),
        }),
        { listType: 'atomic', description: 'How each resource is resized in place.' },
      ),
      restartPolicy: enumOf(['Always'], { description: 'Always makes an init container a sidecar.' }),
      volumeMounts: array(VolumeMount, {
        listType: 'map',
        listMapKeys: ['mountPath'],
        patchMergeKey: 'mountPath',
        description: 'Volumes mounted into the container.',
      }),
      volumeDevices: array(
        object({
          name: required(string({ minLength: 1, description: 'Name of a persistentVolumeClaim volume of the pod.' })),
          devicePath: required(string({ minLength: 1, description: 'Path of the device in the container.' })),
        }),
        {
          listType: 'map',
          listMapKeys: ['devicePath'],
          patchMergeKey: 'devicePath',
          description: 'Block devices the container uses.',
        },
      ),
      livenessProbe: refine(Probe, { description: 'Restarts the container when it fails.' }),
      readinessProbe: refine(Probe, { description: 'Takes the pod out of Service endpoints while it fails.' }),
      startupProbe: refine(Probe, { description: 'Holds the other probes until it succeeds.' }),
      lifecycle: Lifecycle,
      terminationMessagePath: string({ description: 'File whose content is the termination message.' }),
      terminationMessagePolicy: enumOf(['File', 'FallbackToLogsOnError'], {
        description: 'Where the termination message is read from.',
      }),
      securityContext: jsonObject({
        description: 'Security options of the container (user, capabilities, privilege); kept as written.',
      }),
      stdin: boolean({ description: 'Allocate a stdin buffer.' }),
      stdinOnce: boolean({ description: 'Close stdin after the first attach ends.' }),
      tty: boolean({ description: 'Allocate a TTY.' }),
    },
    {
      rules: [
        {
          rule: '!has(self.ports) || self.ports.all(p, !has(p.name) || self.ports.exists_one(q, has(q.name) && q.name == p.name))',
          message: 'port names must be unique in the container',
          fieldPath: '.ports',
          reason: 'FieldValueDuplicate',
        },
      ],
    },
  ),
);
export type Container = Infer<typeof Container>;

const keyToPath = object({
  key: required(string({ minLength: 1, description: 'Key to project.' })),
  path: required(string({ minLength: 1, description: 'Relative path of the file.' })),
  mode: integer({ format: 'int32', minimum: 0, maximum: 511, description: 'Permission bits of the file.' }),
});

const keyItems = array(keyToPath, { listType: 'atomic', description: 'Only these keys, at these paths.' });
const defaultMode = integer({
  format: 'int32',
  minimum: 0,
  maximum: 511,
  description: 'Permission bits of the files; 0644 when omitted.',
});

const volumeSources = {
  emptyDir: object(
    {
      medium: enumOf(['', 'Memory', 'HugePages'], { description: 'Storage medium; the node default when empty.' }),
      sizeLimit: intOrString({ description: 'Most local storage the volume may use.' }),
    },
    { description: 'A directory that lives as long as the pod.' },
  ),
  configMap: object(
    {
      name: string({ description: 'Name of the ConfigMap.' }),
      items: keyItems,
      defaultMode,
      optional: boolean({ description: 'Whether the ConfigMap may be missing.' }),
    },
    { description: 'The keys of a ConfigMap as files.' },
  ),
  secret: object(
    {
      secretName: string({ description: 'Name of the Secret.' }),
      items: keyItems,
      defaultMode,
      optional: boolean({ description: 'Whether the Secret may be missing.' }),
    },
    { description: 'The keys of a Secret as files.' },
  ),
  projected: jsonObject({ description: 'Several sources (Secrets, ConfigMaps, tokens) in one directory.' }),
  downwardAPI: jsonObject({ description: 'Pod fields as files.' }),
  persistentVolumeClaim: object(
    {
      claimName: required(string({ minLength: 1, description: 'Name of the claim.' })),
      readOnly: boolean({ description: 'Mount read-only.' }),
    },
    { description: 'A PersistentVolumeClaim in the same namespace.' },
  ),
  hostPath: object(
    {
      path: required(string({ minLength: 1, description: 'Path on the node.' })),
      type: string({ description: 'What must be at the path, e.g. Directory or FileOrCreate.' }),
    },
    { description: "A file or directory of the node's filesystem." },
  ),
  csi: jsonObject({ description: 'An ephemeral volume of a CSI driver.' }),
  ephemeral: jsonObject({ description: 'A volume claimed for the pod alone.' }),
  image: jsonObject({ description: 'The content of an OCI image.' }),
  nfs: jsonObject({ description: 'An NFS export.' }),
};

export const Volume = named(
  {
    name: 'Volume',
    description: 'A named volume containers of the pod can mount.',
    source: 'core',
    notes:
      'At most one source: emptyDir, configMap, secret, projected, downwardAPI, persistentVolumeClaim, hostPath, csi, ephemeral, image or nfs (other, rarer sources are kept with a warning).',
  },
  object(
    {
      name: required(refine(LabelName, { description: 'Name the volumeMounts use (RFC 1123 label).' })),
      ...volumeSources,
    },
    { rules: [atMostOneOf(Object.keys(volumeSources))] },
  ),
);
export type Volume = Infer<typeof Volume>;

export const Toleration = named(
  { name: 'Toleration', description: 'Lets the pod run on nodes with a matching taint.', source: 'core' },
  object(
    {
      key: string({ description: 'Taint key; empty with Exists matches every taint.' }),
      operator: enumOf(['Exists', 'Equal'], { default: 'Equal', description: 'Equal (default) or Exists.' }),
      value: string({ description: 'Taint value, with Equal.' }),
      effect: enumOf(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'], {
        description: 'Taint effect matched; every effect when empty.',
      }),
      tolerationSeconds: integer({ format: 'int64', description: 'How long a NoExecute taint is tolerated.' }),
    },
    {
      rules: [
        {
          rule: "!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''",
          message: "value must be empty when operator is 'Exists'",
          fieldPath: '.value',
        },
      ],
    },
  ),
);
export type Toleration = Infer<typeof Toleration>;

const LocalObjectReference = object({ name: string({ description: 'Name of the object.' }) });

export const PodSpec = named(
  {
    name: 'PodSpec',
    description: 'The containers of a pod and how it is scheduled and run.',
    source: 'core',
    notes:
      'Strategic merge patch merges containers, initContainers, ephemeralContainers, volumes, imagePullSecrets, resourceClaims and schedulingGates by name, hostAliases by ip and topologySpreadConstraints by topologyKey; tolerations are replaced whole, as in Kubernetes.',
  },
  object(
    {
      containers: required(
        array(Container, {
          minItems: 1,
          listType: 'map',
          listMapKeys: ['name'],
          patchMergeKey: 'name',
          description: 'The containers of the pod; at least one.',
        }),
      ),
      initContainers: array(Container, {
        listType: 'map',
        listMapKeys: ['name'],
        patchMergeKey: 'name',
        description: 'Containers run in order before the others start.',
      }),
      ephemeralContainers: array(jsonObject(), {
        patchMergeKey: 'name',
        description: 'Debugging containers added to a running pod.',
      }),
      volumes: array(Volume, {
        listType: 'map',
        listMapKeys: ['name'],
        patchMergeKey: 'name',
        description: 'Volumes the containers can mount.',
      }),
      serviceAccountName: string({
        maxLength: 253,
        pattern: DNS_SUBDOMAIN_PATTERN,
        description: 'ServiceAccount the pod runs as.',
      }),
      automountServiceAccountToken: boolean({ description: 'Mount the ServiceAccount token.' }),
      restartPolicy: enumOf(['Always', 'OnFailure', 'Never'], {
        description: 'Always for Deployments and DaemonSets.',
      }),
      terminationGracePeriodSeconds: integer({
        format: 'int64',
        minimum: 0,
        description: 'Seconds the pod has to stop after SIGTERM before it is killed.',
      }),
      activeDeadlineSeconds: integer({ format: 'int64', minimum: 1, description: 'Most seconds the pod may run.' }),
      dnsPolicy: enumOf(['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'], {
        description: 'How DNS is configured.',
      }),
      dnsConfig: jsonObject({ description: 'DNS options merged with those of dnsPolicy.' }),
      nodeSelector: map(string(), { description: 'Labels a node must have for the pod to run there.' }),
      nodeName: string({ description: 'The node the pod is bound to.' }),
      affinity: jsonObject({ description: 'Node and pod (anti-)affinity rules; kept as written.' }),
      tolerations: array(Toleration, { listType: 'atomic', description: 'Taints the pod tolerates.' }),
      topologySpreadConstraints: array(jsonObject(), {
        patchMergeKey: 'topologyKey',
        description: 'How pods spread across topology domains.',
      }),
      hostNetwork: boolean({ description: "Use the node's network namespace." }),
      hostPID: boolean({ description: "Use the node's PID namespace." }),
      hostIPC: boolean({ description: "Use the node's IPC namespace." }),
      shareProcessNamespace: boolean({ description: 'One PID namespace for all containers.' }),
      securityContext: jsonObject({ description: 'Pod-level security options; kept as written.' }),
      imagePullSecrets: array(LocalObjectReference, {
        patchMergeKey: 'name',
        description: 'Secrets holding registry credentials.',
      }),
      hostname: string({ description: "The pod's hostname; the pod name when empty." }),
      subdomain: string({ description: 'Subdomain of a headless Service for the FQDN.' }),
      hostAliases: array(
        object({
          ip: required(string({ description: 'IP address of the entry.' })),
          hostnames: array(string(), { listType: 'atomic', description: 'Hostnames of the IP address.' }),
        }),
        {
          patchMergeKey: 'ip',
          description: 'Extra /etc/hosts entries.',
        },
      ),
      priorityClassName: string({ description: 'PriorityClass of the pod.' }),
      priority: integer({ format: 'int32', description: 'Priority, from priorityClassName.' }),
      preemptionPolicy: enumOf(['Never', 'PreemptLowerPriority'], { description: 'Whether the pod may preempt.' }),
      schedulerName: string({ description: 'Scheduler that places the pod.' }),
      runtimeClassName: string({ description: 'RuntimeClass the pod runs with.' }),
      enableServiceLinks: boolean({ description: 'Inject Service environment variables.' }),
      overhead: map(intOrString(), { description: 'Resources the pod sandbox consumes.' }),
      readinessGates: array(object({ conditionType: required(string({ description: 'A pod condition type.' })) }), {
        listType: 'atomic',
        description: 'Extra conditions for pod readiness.',
      }),
      os: object(
        { name: required(string({ description: 'linux or windows.' })) },
        { description: 'Operating system of the containers.' },
      ),
      hostUsers: boolean({ description: "Use the host's user namespace." }),
      schedulingGates: array(object({ name: required(string({ description: 'Name of the gate.' })) }), {
        listType: 'map',
        listMapKeys: ['name'],
        patchMergeKey: 'name',
        description: 'Gates that hold the pod out of scheduling.',
      }),
      resourceClaims: array(jsonObject(), {
        patchMergeKey: 'name',
        description: 'Dynamic resource claims of the pod.',
      }),
      resources: refine(ResourceRequirements, { description: 'Pod-level resources.' }),
    },
    {
      rules: [
        {
          rule: '!has(self.initContainers) || self.initContainers.all(i, !self.containers.exists(c, c.name == i.name))',
          message: 'container names must be unique across containers and initContainers',
          fieldPath: '.initContainers',
          reason: 'FieldValueDuplicate',
        },
      ],
    },
  ),
);
export type PodSpec = Infer<typeof PodSpec>;

/** The metadata a pod template may carry: labels and annotations (the rest is the API server's). */
const TemplateMeta = object(
  {
    name: string({ description: 'Ignored by workloads: pods get generated names.' }),
    labels: map(string(), { description: 'Labels of the pods; the selector must match them.' }),
    annotations: map(string(), { description: 'Annotations of the pods.' }),
  },
  { description: 'Labels and annotations of the pods.' },
);

export const PodTemplateSpec = named(
  { name: 'PodTemplateSpec', description: 'The pods a workload creates.', source: 'core' },
  object({ metadata: TemplateMeta, spec: required(PodSpec) }),
);
export type PodTemplateSpec = Infer<typeof PodTemplateSpec>;

/**
 * The checks kube-apiserver makes on a workload's selector and template: the selector is not empty
 * and selects the template's pods, whose restartPolicy is Always.
 */
export const workloadTemplateRules: ValidationRule[] = [
  {
    rule: '(has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions) && size(self.selector.matchExpressions) > 0)',
    message: 'empty selector is invalid for a workload',
    fieldPath: '.selector',
  },
  {
    rule: '!has(self.selector.matchLabels) || self.selector.matchLabels.all(k, has(self.template.metadata) && has(self.template.metadata.labels) && k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector.matchLabels[k])',
    message: '`selector` does not match template `labels`',
    fieldPath: '.template.metadata.labels',
  },
  {
    rule: "!has(self.template.spec.restartPolicy) || self.template.spec.restartPolicy == 'Always'",
    message: "restartPolicy must be 'Always' in a workload's pod template",
    fieldPath: '.template.spec.restartPolicy',
  },
];
