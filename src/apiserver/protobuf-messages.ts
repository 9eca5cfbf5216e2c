// The protobuf messages of the built-in kinds gw stores (apps/v1 Deployment and DaemonSet, v1
// ServiceAccount, policy/v1 PodDisruptionBudget, autoscaling/v2 HorizontalPodAutoscaler, the RBAC
// kinds) and of everything they contain: the field numbers and types of k8s.io/api's
// generated.proto files, which kubectl's typed clients (kubectl create deployment, create role...)
// encode with. Data only; protobuf.ts reads it. One entry per message, its fields separated by
// spaces as `name=number:type`, where type is a scalar (string, int32, int64, bool, bytes), a
// special (time, intOrString, quantity), map<V> (string keys), or another message; a leading `*`
// marks a repeated field, `^` a message whose fields JSON inlines in the parent (Probe's handler,
// Volume's source), and `!` a pointer field whose zero value is a value (replicas: 0), where every
// other zero is Go's unset.
export const MESSAGE_FIELDS: Readonly<Record<string, string>> = {
  'apps.v1.DaemonSet': 'metadata=1:meta.v1.ObjectMeta spec=2:apps.v1.DaemonSetSpec status=3:apps.v1.DaemonSetStatus',
  'apps.v1.DaemonSetCondition':
    'type=1:string status=2:string lastTransitionTime=3:time reason=4:string message=5:string',
  'apps.v1.DaemonSetSpec':
    'selector=1:meta.v1.LabelSelector template=2:core.v1.PodTemplateSpec updateStrategy=3:apps.v1.DaemonSetUpdateStrategy minReadySeconds=4:int32 revisionHistoryLimit=6:int32',
  'apps.v1.DaemonSetStatus':
    'currentNumberScheduled=1:int32 numberMisscheduled=2:int32 desiredNumberScheduled=3:int32 numberReady=4:int32 observedGeneration=5:int64 updatedNumberScheduled=6:int32 numberAvailable=7:int32 numberUnavailable=8:int32 collisionCount=9:int32 *conditions=10:apps.v1.DaemonSetCondition',
  'apps.v1.DaemonSetUpdateStrategy': 'type=1:string rollingUpdate=2:apps.v1.RollingUpdateDaemonSet',
  'apps.v1.Deployment': 'metadata=1:meta.v1.ObjectMeta spec=2:apps.v1.DeploymentSpec status=3:apps.v1.DeploymentStatus',
  'apps.v1.DeploymentCondition':
    'type=1:string status=2:string lastUpdateTime=6:time lastTransitionTime=7:time reason=4:string message=5:string',
  'apps.v1.DeploymentSpec':
    '!replicas=1:int32 selector=2:meta.v1.LabelSelector template=3:core.v1.PodTemplateSpec strategy=4:apps.v1.DeploymentStrategy minReadySeconds=5:int32 revisionHistoryLimit=6:int32 paused=7:bool progressDeadlineSeconds=9:int32',
  'apps.v1.DeploymentStatus':
    'observedGeneration=1:int64 replicas=2:int32 updatedReplicas=3:int32 readyReplicas=7:int32 availableReplicas=4:int32 unavailableReplicas=5:int32 terminatingReplicas=9:int32 *conditions=6:apps.v1.DeploymentCondition collisionCount=8:int32',
  'apps.v1.DeploymentStrategy': 'type=1:string rollingUpdate=2:apps.v1.RollingUpdateDeployment',
  'apps.v1.RollingUpdateDaemonSet': 'maxUnavailable=1:intOrString maxSurge=2:intOrString',
  'apps.v1.RollingUpdateDeployment': 'maxUnavailable=1:intOrString maxSurge=2:intOrString',
  'autoscaling.v2.ContainerResourceMetricSource':
    'name=1:string target=2:autoscaling.v2.MetricTarget container=3:string',
  'autoscaling.v2.ContainerResourceMetricStatus':
    'name=1:string current=2:autoscaling.v2.MetricValueStatus container=3:string',
  'autoscaling.v2.CrossVersionObjectReference': 'kind=1:string name=2:string apiVersion=3:string',
  'autoscaling.v2.ExternalMetricSource':
    'metric=1:autoscaling.v2.MetricIdentifier target=2:autoscaling.v2.MetricTarget',
  'autoscaling.v2.ExternalMetricStatus':
    'metric=1:autoscaling.v2.MetricIdentifier current=2:autoscaling.v2.MetricValueStatus',
  'autoscaling.v2.HPAScalingPolicy': 'type=1:string value=2:int32 periodSeconds=3:int32',
  'autoscaling.v2.HPAScalingRules':
    'stabilizationWindowSeconds=3:int32 selectPolicy=1:string *policies=2:autoscaling.v2.HPAScalingPolicy tolerance=4:quantity',
  'autoscaling.v2.HorizontalPodAutoscaler':
    'metadata=1:meta.v1.ObjectMeta spec=2:autoscaling.v2.HorizontalPodAutoscalerSpec status=3:autoscaling.v2.HorizontalPodAutoscalerStatus',
  'autoscaling.v2.HorizontalPodAutoscalerBehavior':
    'scaleUp=1:autoscaling.v2.HPAScalingRules scaleDown=2:autoscaling.v2.HPAScalingRules',
  'autoscaling.v2.HorizontalPodAutoscalerCondition':
    'type=1:string status=2:string lastTransitionTime=3:time reason=4:string message=5:string observedGeneration=6:int64',
  'autoscaling.v2.HorizontalPodAutoscalerSpec':
    'scaleTargetRef=1:autoscaling.v2.CrossVersionObjectReference !minReplicas=2:int32 maxReplicas=3:int32 *metrics=4:autoscaling.v2.MetricSpec behavior=5:autoscaling.v2.HorizontalPodAutoscalerBehavior',
  'autoscaling.v2.HorizontalPodAutoscalerStatus':
    'observedGeneration=1:int64 lastScaleTime=2:time currentReplicas=3:int32 desiredReplicas=4:int32 *currentMetrics=5:autoscaling.v2.MetricStatus *conditions=6:autoscaling.v2.HorizontalPodAutoscalerCondition',
  'autoscaling.v2.MetricIdentifier': 'name=1:string selector=2:meta.v1.LabelSelector',
  'autoscaling.v2.MetricSpec':
    'type=1:string object=2:autoscaling.v2.ObjectMetricSource pods=3:autoscaling.v2.PodsMetricSource resource=4:autoscaling.v2.ResourceMetricSource containerResource=7:autoscaling.v2.ContainerResourceMetricSource external=5:autoscaling.v2.ExternalMetricSource',
  'autoscaling.v2.MetricStatus':
    'type=1:string object=2:autoscaling.v2.ObjectMetricStatus pods=3:autoscaling.v2.PodsMetricStatus resource=4:autoscaling.v2.ResourceMetricStatus containerResource=7:autoscaling.v2.ContainerResourceMetricStatus external=5:autoscaling.v2.ExternalMetricStatus',
  'autoscaling.v2.MetricTarget': 'type=1:string value=2:quantity averageValue=3:quantity averageUtilization=4:int32',
  'autoscaling.v2.MetricValueStatus': 'value=1:quantity averageValue=2:quantity averageUtilization=3:int32',
  'autoscaling.v2.ObjectMetricSource':
    'describedObject=1:autoscaling.v2.CrossVersionObjectReference target=2:autoscaling.v2.MetricTarget metric=3:autoscaling.v2.MetricIdentifier',
  'autoscaling.v2.ObjectMetricStatus':
    'metric=1:autoscaling.v2.MetricIdentifier current=2:autoscaling.v2.MetricValueStatus describedObject=3:autoscaling.v2.CrossVersionObjectReference',
  'autoscaling.v2.PodsMetricSource': 'metric=1:autoscaling.v2.MetricIdentifier target=2:autoscaling.v2.MetricTarget',
  'autoscaling.v2.PodsMetricStatus':
    'metric=1:autoscaling.v2.MetricIdentifier current=2:autoscaling.v2.MetricValueStatus',
  'autoscaling.v2.ResourceMetricSource': 'name=1:string target=2:autoscaling.v2.MetricTarget',
  'autoscaling.v2.ResourceMetricStatus': 'name=1:string current=2:autoscaling.v2.MetricValueStatus',
  'core.v1.AWSElasticBlockStoreVolumeSource': 'volumeID=1:string fsType=2:string partition=3:int32 readOnly=4:bool',
  'core.v1.Affinity':
    'nodeAffinity=1:core.v1.NodeAffinity podAffinity=2:core.v1.PodAffinity podAntiAffinity=3:core.v1.PodAntiAffinity',
  'core.v1.AppArmorProfile': 'type=1:string localhostProfile=2:string',
  'core.v1.AzureDiskVolumeSource':
    'diskName=1:string diskURI=2:string cachingMode=3:string fsType=4:string readOnly=5:bool kind=6:string',
  'core.v1.AzureFileVolumeSource': 'secretName=1:string shareName=2:string readOnly=3:bool',
  'core.v1.CSIVolumeSource':
    'driver=1:string readOnly=2:bool fsType=3:string volumeAttributes=4:map<string> nodePublishSecretRef=5:core.v1.LocalObjectReference',
  'core.v1.Capabilities': '*add=1:string *drop=2:string',
  'core.v1.CephFSVolumeSource':
    '*monitors=1:string path=2:string user=3:string secretFile=4:string secretRef=5:core.v1.LocalObjectReference readOnly=6:bool',
  'core.v1.CinderVolumeSource':
    'volumeID=1:string fsType=2:string readOnly=3:bool secretRef=4:core.v1.LocalObjectReference',
  'core.v1.ClusterTrustBundleProjection':
    'name=1:string signerName=2:string labelSelector=3:meta.v1.LabelSelector optional=5:bool path=4:string user=6:int64',
  'core.v1.ConfigMapEnvSource': 'localObjectReference=1:core.v1.LocalObjectReference optional=2:bool',
  'core.v1.ConfigMapKeySelector': 'localObjectReference=1:core.v1.LocalObjectReference key=2:string optional=3:bool',
  'core.v1.ConfigMapProjection':
    'localObjectReference=1:core.v1.LocalObjectReference *items=2:core.v1.KeyToPath optional=4:bool',
  'core.v1.ConfigMapVolumeSource':
    'localObjectReference=1:core.v1.LocalObjectReference *items=2:core.v1.KeyToPath defaultMode=3:int32 optional=4:bool defaultUser=5:int64',
  'core.v1.Container':
    'name=1:string image=2:string *command=3:string *args=4:string workingDir=5:string *ports=6:core.v1.ContainerPort *envFrom=19:core.v1.EnvFromSource *env=7:core.v1.EnvVar resources=8:core.v1.ResourceRequirements *resizePolicy=23:core.v1.ContainerResizePolicy restartPolicy=24:string *restartPolicyRules=25:core.v1.ContainerRestartRule *volumeMounts=9:core.v1.VolumeMount *volumeDevices=21:core.v1.VolumeDevice livenessProbe=10:core.v1.Probe readinessProbe=11:core.v1.Probe startupProbe=22:core.v1.Probe lifecycle=12:core.v1.Lifecycle terminationMessagePath=13:string terminationMessagePolicy=20:string imagePullPolicy=14:string securityContext=15:core.v1.SecurityContext stdin=16:bool stdinOnce=17:bool tty=18:bool',
  'core.v1.ContainerPort': 'name=1:string hostPort=2:int32 containerPort=3:int32 protocol=4:string hostIP=5:string',
  'core.v1.ContainerResizePolicy': 'resourceName=1:string restartPolicy=2:string',
  'core.v1.ContainerRestartRule': 'action=1:string exitCodes=2:core.v1.ContainerRestartRuleOnExitCodes',
  'core.v1.ContainerRestartRuleOnExitCodes': 'operator=1:string *values=2:int32',
  'core.v1.DownwardAPIProjection': '*items=1:core.v1.DownwardAPIVolumeFile',
  'core.v1.DownwardAPIVolumeFile':
    'path=1:string fieldRef=2:core.v1.ObjectFieldSelector resourceFieldRef=3:core.v1.ResourceFieldSelector mode=4:int32 user=5:int64',
  'core.v1.DownwardAPIVolumeSource': '*items=1:core.v1.DownwardAPIVolumeFile defaultMode=2:int32 defaultUser=3:int64',
  'core.v1.EmptyDirVolumeSource': 'medium=1:string sizeLimit=2:quantity mode=3:int32',
  'core.v1.EnvFromSource':
    'prefix=1:string configMapRef=2:core.v1.ConfigMapEnvSource secretRef=3:core.v1.SecretEnvSource',
  'core.v1.EnvVar': 'name=1:string value=2:string valueFrom=3:core.v1.EnvVarSource',
  'core.v1.EnvVarSource':
    'fieldRef=1:core.v1.ObjectFieldSelector resourceFieldRef=2:core.v1.ResourceFieldSelector configMapKeyRef=3:core.v1.ConfigMapKeySelector secretKeyRef=4:core.v1.SecretKeySelector fileKeyRef=5:core.v1.FileKeySelector',
  'core.v1.EphemeralContainer':
    '^ephemeralContainerCommon=1:core.v1.EphemeralContainerCommon targetContainerName=2:string',
  'core.v1.EphemeralContainerCommon':
    'name=1:string image=2:string *command=3:string *args=4:string workingDir=5:string *ports=6:core.v1.ContainerPort *envFrom=19:core.v1.EnvFromSource *env=7:core.v1.EnvVar resources=8:core.v1.ResourceRequirements *resizePolicy=23:core.v1.ContainerResizePolicy restartPolicy=24:string *restartPolicyRules=25:core.v1.ContainerRestartRule *volumeMounts=9:core.v1.VolumeMount *volumeDevices=21:core.v1.VolumeDevice livenessProbe=10:core.v1.Probe readinessProbe=11:core.v1.Probe startupProbe=22:core.v1.Probe lifecycle=12:core.v1.Lifecycle terminationMessagePath=13:string terminationMessagePolicy=20:string imagePullPolicy=14:string securityContext=15:core.v1.SecurityContext stdin=16:bool stdinOnce=17:bool tty=18:bool',
  'core.v1.EphemeralVolumeSource': 'volumeClaimTemplate=1:core.v1.PersistentVolumeClaimTemplate',
  'core.v1.EvictionResponder': 'name=1:string priority=2:int32',
  'core.v1.ExecAction': '*command=1:string',
  'core.v1.FCVolumeSource': '*targetWWNs=1:string lun=2:int32 fsType=3:string readOnly=4:bool *wwids=5:string',
  'core.v1.FileKeySelector': 'volumeName=1:string path=2:string key=3:string optional=4:bool',
  'core.v1.FlexVolumeSource':
    'driver=1:string fsType=2:string secretRef=3:core.v1.LocalObjectReference readOnly=4:bool options=5:map<string>',
  'core.v1.FlockerVolumeSource': 'datasetName=1:string datasetUUID=2:string',
  'core.v1.GCEPersistentDiskVolumeSource': 'pdName=1:string fsType=2:string partition=3:int32 readOnly=4:bool',
  'core.v1.GRPCAction': 'port=1:int32 service=2:string mode=3:string',
  'core.v1.GitRepoVolumeSource': 'repository=1:string revision=2:string directory=3:string',
  'core.v1.GlusterfsVolumeSource': 'endpoints=1:string path=2:string readOnly=3:bool',
  'core.v1.HTTPGetAction':
    'path=1:string port=2:intOrString host=3:string scheme=4:string *httpHeaders=5:core.v1.HTTPHeader protocol=6:string',
  'core.v1.HTTPHeader': 'name=1:string value=2:string',
  'core.v1.HostAlias': 'ip=1:string *hostnames=2:string',
  'core.v1.HostPathVolumeSource': 'path=1:string type=2:string',
  'core.v1.ISCSIVolumeSource':
    'targetPortal=1:string iqn=2:string lun=3:int32 iscsiInterface=4:string fsType=5:string readOnly=6:bool *portals=7:string chapAuthDiscovery=8:bool chapAuthSession=11:bool secretRef=10:core.v1.LocalObjectReference initiatorName=12:string',
  'core.v1.ImageVolumeSource': 'reference=1:string pullPolicy=2:string',
  'core.v1.KeyToPath': 'key=1:string path=2:string mode=3:int32 user=4:int64',
  'core.v1.Lifecycle': 'postStart=1:core.v1.LifecycleHandler preStop=2:core.v1.LifecycleHandler stopSignal=3:string',
  'core.v1.LifecycleHandler':
    'exec=1:core.v1.ExecAction httpGet=2:core.v1.HTTPGetAction tcpSocket=3:core.v1.TCPSocketAction sleep=4:core.v1.SleepAction',
  'core.v1.LocalObjectReference': 'name=1:string',
  'core.v1.NFSVolumeSource': 'server=1:string path=2:string readOnly=3:bool',
  'core.v1.NodeAffinity':
    'requiredDuringSchedulingIgnoredDuringExecution=1:core.v1.NodeSelector *preferredDuringSchedulingIgnoredDuringExecution=2:core.v1.PreferredSchedulingTerm',
  'core.v1.NodeSelector': '*nodeSelectorTerms=1:core.v1.NodeSelectorTerm',
  'core.v1.NodeSelectorRequirement': 'key=1:string operator=2:string *values=3:string',
  'core.v1.NodeSelectorTerm':
    '*matchExpressions=1:core.v1.NodeSelectorRequirement *matchFields=2:core.v1.NodeSelectorRequirement',
  'core.v1.ObjectFieldSelector': 'apiVersion=1:string fieldPath=2:string',
  'core.v1.ObjectReference':
    'kind=1:string namespace=2:string name=3:string uid=4:string apiVersion=5:string resourceVersion=6:string fieldPath=7:string',
  'core.v1.PersistentVolumeClaimSpec':
    '*accessModes=1:string selector=4:meta.v1.LabelSelector resources=2:core.v1.VolumeResourceRequirements volumeName=3:string storageClassName=5:string volumeMode=6:string dataSource=7:core.v1.TypedLocalObjectReference dataSourceRef=8:core.v1.TypedObjectReference volumeAttributesClassName=9:string',
  'core.v1.PersistentVolumeClaimTemplate': 'metadata=1:meta.v1.ObjectMeta spec=2:core.v1.PersistentVolumeClaimSpec',
  'core.v1.PersistentVolumeClaimVolumeSource': 'claimName=1:string readOnly=2:bool',
  'core.v1.PhotonPersistentDiskVolumeSource': 'pdID=1:string fsType=2:string',
  'core.v1.PodAffinity':
    '*requiredDuringSchedulingIgnoredDuringExecution=1:core.v1.PodAffinityTerm *preferredDuringSchedulingIgnoredDuringExecution=2:core.v1.WeightedPodAffinityTerm',
  'core.v1.PodAffinityTerm':
    'labelSelector=1:meta.v1.LabelSelector *namespaces=2:string topologyKey=3:string namespaceSelector=4:meta.v1.LabelSelector *matchLabelKeys=5:string *mismatchLabelKeys=6:string',
  'core.v1.PodAntiAffinity':
    '*requiredDuringSchedulingIgnoredDuringExecution=1:core.v1.PodAffinityTerm *preferredDuringSchedulingIgnoredDuringExecution=2:core.v1.WeightedPodAffinityTerm',
  'core.v1.PodCertificateProjection':
    'signerName=1:string keyType=2:string maxExpirationSeconds=3:int32 credentialBundlePath=4:string keyPath=5:string certificateChainPath=6:string userAnnotations=7:map<string> user=8:int64',
  'core.v1.PodDNSConfig': '*nameservers=1:string *searches=2:string *options=3:core.v1.PodDNSConfigOption',
  'core.v1.PodDNSConfigOption': 'name=1:string value=2:string',
  'core.v1.PodOS': 'name=1:string',
  'core.v1.PodReadinessGate': 'conditionType=1:string',
  'core.v1.PodResourceClaim': 'name=1:string resourceClaimName=3:string resourceClaimTemplateName=4:string',
  'core.v1.PodSchedulingGate': 'name=1:string',
  'core.v1.PodSchedulingGroup': 'podGroupName=1:string',
  'core.v1.PodSecurityContext':
    'seLinuxOptions=1:core.v1.SELinuxOptions windowsOptions=8:core.v1.WindowsSecurityContextOptions runAsUser=2:int64 runAsGroup=6:int64 runAsNonRoot=3:bool *supplementalGroups=4:int64 supplementalGroupsPolicy=12:string fsGroup=5:int64 *sysctls=7:core.v1.Sysctl fsGroupChangePolicy=9:string seccompProfile=10:core.v1.SeccompProfile appArmorProfile=11:core.v1.AppArmorProfile seLinuxChangePolicy=13:string',
  'core.v1.PodSpec':
    '*volumes=1:core.v1.Volume *initContainers=20:core.v1.Container *containers=2:core.v1.Container *ephemeralContainers=34:core.v1.EphemeralContainer restartPolicy=3:string !terminationGracePeriodSeconds=4:int64 activeDeadlineSeconds=5:int64 dnsPolicy=6:string nodeSelector=7:map<string> serviceAccountName=8:string serviceAccount=9:string !automountServiceAccountToken=21:bool nodeName=10:string hostNetwork=11:bool hostPID=12:bool hostIPC=13:bool shareProcessNamespace=27:bool securityContext=14:core.v1.PodSecurityContext *imagePullSecrets=15:core.v1.LocalObjectReference hostname=16:string subdomain=17:string affinity=18:core.v1.Affinity schedulerName=19:string *tolerations=22:core.v1.Toleration *hostAliases=23:core.v1.HostAlias priorityClassName=24:string priority=25:int32 dnsConfig=26:core.v1.PodDNSConfig *readinessGates=28:core.v1.PodReadinessGate runtimeClassName=29:string enableServiceLinks=30:bool preemptionPolicy=31:string overhead=32:map<quantity> *topologySpreadConstraints=33:core.v1.TopologySpreadConstraint setHostnameAsFQDN=35:bool os=36:core.v1.PodOS hostUsers=37:bool *schedulingGates=38:core.v1.PodSchedulingGate *resourceClaims=39:core.v1.PodResourceClaim resources=40:core.v1.ResourceRequirements hostnameOverride=41:string schedulingGroup=43:core.v1.PodSchedulingGroup *evictionResponders=44:core.v1.EvictionResponder',
  'core.v1.PodTemplateSpec': 'metadata=1:meta.v1.ObjectMeta spec=2:core.v1.PodSpec',
  'core.v1.PortworxVolumeSource': 'volumeID=1:string fsType=2:string readOnly=3:bool',
  'core.v1.PreferredSchedulingTerm': 'weight=1:int32 preference=2:core.v1.NodeSelectorTerm',
  'core.v1.Probe':
    '^handler=1:core.v1.ProbeHandler initialDelaySeconds=2:int32 timeoutSeconds=3:int32 periodSeconds=4:int32 successThreshold=5:int32 failureThreshold=6:int32 terminationGracePeriodSeconds=7:int64',
  'core.v1.ProbeHandler':
    'exec=1:core.v1.ExecAction httpGet=2:core.v1.HTTPGetAction tcpSocket=3:core.v1.TCPSocketAction grpc=4:core.v1.GRPCAction',
  'core.v1.ProjectedVolumeSource': '*sources=1:core.v1.VolumeProjection defaultMode=2:int32 defaultUser=3:int64',
  'core.v1.QuobyteVolumeSource':
    'registry=1:string volume=2:string readOnly=3:bool user=4:string group=5:string tenant=6:string',
  'core.v1.RBDVolumeSource':
    '*monitors=1:string image=2:string fsType=3:string pool=4:string user=5:string keyring=6:string secretRef=7:core.v1.LocalObjectReference readOnly=8:bool',
  'core.v1.ResourceClaim': 'name=1:string request=2:string',
  'core.v1.ResourceFieldSelector': 'containerName=1:string resource=2:string divisor=3:quantity',
  'core.v1.ResourceRequirements': 'limits=1:map<quantity> requests=2:map<quantity> *claims=3:core.v1.ResourceClaim',
  'core.v1.SELinuxOptions': 'user=1:string role=2:string type=3:string level=4:string',
  'core.v1.ScaleIOVolumeSource':
    'gateway=1:string system=2:string secretRef=3:core.v1.LocalObjectReference sslEnabled=4:bool protectionDomain=5:string storagePool=6:string storageMode=7:string volumeName=8:string fsType=9:string readOnly=10:bool',
  'core.v1.SeccompProfile': 'type=1:string localhostProfile=2:string',
  'core.v1.SecretEnvSource': 'localObjectReference=1:core.v1.LocalObjectReference optional=2:bool',
  'core.v1.SecretKeySelector': 'localObjectReference=1:core.v1.LocalObjectReference key=2:string optional=3:bool',
  'core.v1.SecretProjection':
    'localObjectReference=1:core.v1.LocalObjectReference *items=2:core.v1.KeyToPath optional=4:bool',
  'core.v1.SecretVolumeSource':
    'secretName=1:string *items=2:core.v1.KeyToPath defaultMode=3:int32 optional=4:bool defaultUser=5:int64',
  'core.v1.SecurityContext':
    'capabilities=1:core.v1.Capabilities privileged=2:bool seLinuxOptions=3:core.v1.SELinuxOptions windowsOptions=10:core.v1.WindowsSecurityContextOptions runAsUser=4:int64 runAsGroup=8:int64 runAsNonRoot=5:bool readOnlyRootFilesystem=6:bool allowPrivilegeEscalation=7:bool procMount=9:string seccompProfile=11:core.v1.SeccompProfile appArmorProfile=12:core.v1.AppArmorProfile',
  'core.v1.ServiceAccount':
    'metadata=1:meta.v1.ObjectMeta *secrets=2:core.v1.ObjectReference *imagePullSecrets=3:core.v1.LocalObjectReference !automountServiceAccountToken=4:bool',
  'core.v1.ServiceAccountTokenProjection': 'audience=1:string expirationSeconds=2:int64 path=3:string user=4:int64',
  'core.v1.SleepAction': 'seconds=1:int64',
  'core.v1.StorageOSVolumeSource':
    'volumeName=1:string volumeNamespace=2:string fsType=3:string readOnly=4:bool secretRef=5:core.v1.LocalObjectReference',
  'core.v1.Sysctl': 'name=1:string value=2:string',
  'core.v1.TCPSocketAction': 'port=1:intOrString host=2:string',
  'core.v1.Toleration': 'key=1:string operator=2:string value=3:string effect=4:string tolerationSeconds=5:int64',
  'core.v1.TopologySpreadConstraint':
    'maxSkew=1:int32 topologyKey=2:string whenUnsatisfiable=3:string labelSelector=4:meta.v1.LabelSelector minDomains=5:int32 nodeAffinityPolicy=6:string nodeTaintsPolicy=7:string *matchLabelKeys=8:string',
  'core.v1.TypedLocalObjectReference': 'apiGroup=1:string kind=2:string name=3:string',
  'core.v1.TypedObjectReference': 'apiGroup=1:string kind=2:string name=3:string namespace=4:string',
  'core.v1.Volume': 'name=1:string ^volumeSource=2:core.v1.VolumeSource',
  'core.v1.VolumeDevice': 'name=1:string devicePath=2:string',
  'core.v1.VolumeMount':
    'name=1:string readOnly=2:bool recursiveReadOnly=7:string mountPath=3:string subPath=4:string mountPropagation=5:string subPathExpr=6:string *bindMountOptions=8:string',
  'core.v1.VolumeProjection':
    'secret=1:core.v1.SecretProjection downwardAPI=2:core.v1.DownwardAPIProjection configMap=3:core.v1.ConfigMapProjection serviceAccountToken=4:core.v1.ServiceAccountTokenProjection clusterTrustBundle=5:core.v1.ClusterTrustBundleProjection podCertificate=6:core.v1.PodCertificateProjection',
  'core.v1.VolumeResourceRequirements': 'limits=1:map<quantity> requests=2:map<quantity>',
  'core.v1.VolumeSource':
    'hostPath=1:core.v1.HostPathVolumeSource emptyDir=2:core.v1.EmptyDirVolumeSource gcePersistentDisk=3:core.v1.GCEPersistentDiskVolumeSource awsElasticBlockStore=4:core.v1.AWSElasticBlockStoreVolumeSource gitRepo=5:core.v1.GitRepoVolumeSource secret=6:core.v1.SecretVolumeSource nfs=7:core.v1.NFSVolumeSource iscsi=8:core.v1.ISCSIVolumeSource glusterfs=9:core.v1.GlusterfsVolumeSource persistentVolumeClaim=10:core.v1.PersistentVolumeClaimVolumeSource rbd=11:core.v1.RBDVolumeSource flexVolume=12:core.v1.FlexVolumeSource cinder=13:core.v1.CinderVolumeSource cephfs=14:core.v1.CephFSVolumeSource flocker=15:core.v1.FlockerVolumeSource downwardAPI=16:core.v1.DownwardAPIVolumeSource fc=17:core.v1.FCVolumeSource azureFile=18:core.v1.AzureFileVolumeSource configMap=19:core.v1.ConfigMapVolumeSource vsphereVolume=20:core.v1.VsphereVirtualDiskVolumeSource quobyte=21:core.v1.QuobyteVolumeSource azureDisk=22:core.v1.AzureDiskVolumeSource photonPersistentDisk=23:core.v1.PhotonPersistentDiskVolumeSource projected=26:core.v1.ProjectedVolumeSource portworxVolume=24:core.v1.PortworxVolumeSource scaleIO=25:core.v1.ScaleIOVolumeSource storageos=27:core.v1.StorageOSVolumeSource csi=28:core.v1.CSIVolumeSource ephemeral=29:core.v1.EphemeralVolumeSource image=30:core.v1.ImageVolumeSource',
  'core.v1.VsphereVirtualDiskVolumeSource':
    'volumePath=1:string fsType=2:string storagePolicyName=3:string storagePolicyID=4:string',
  'core.v1.WeightedPodAffinityTerm': 'weight=1:int32 podAffinityTerm=2:core.v1.PodAffinityTerm',
  'core.v1.WindowsSecurityContextOptions':
    'gmsaCredentialSpecName=1:string gmsaCredentialSpec=2:string runAsUserName=3:string hostProcess=4:bool',
  'meta.v1.LabelSelector': 'matchLabels=1:map<string> *matchExpressions=2:meta.v1.LabelSelectorRequirement',
  'meta.v1.LabelSelectorRequirement': 'key=1:string operator=2:string *values=3:string',
  'policy.v1.PodDisruptionBudget':
    'metadata=1:meta.v1.ObjectMeta spec=2:policy.v1.PodDisruptionBudgetSpec status=3:policy.v1.PodDisruptionBudgetStatus',
  'policy.v1.PodDisruptionBudgetSpec':
    '!minAvailable=1:intOrString selector=2:meta.v1.LabelSelector !maxUnavailable=3:intOrString unhealthyPodEvictionPolicy=4:string',
  'policy.v1.PodDisruptionBudgetStatus':
    'observedGeneration=1:int64 disruptedPods=2:map<time> disruptionsAllowed=3:int32 currentHealthy=4:int32 desiredHealthy=5:int32 expectedPods=6:int32 *conditions=7:meta.v1.Condition',
  'rbac.v1.AggregationRule': '*clusterRoleSelectors=1:meta.v1.LabelSelector',
  'rbac.v1.ClusterRole':
    'metadata=1:meta.v1.ObjectMeta *rules=2:rbac.v1.PolicyRule aggregationRule=3:rbac.v1.AggregationRule',
  'rbac.v1.ClusterRoleBinding': 'metadata=1:meta.v1.ObjectMeta *subjects=2:rbac.v1.Subject roleRef=3:rbac.v1.RoleRef',
  'rbac.v1.PolicyRule':
    '*verbs=1:string *apiGroups=2:string *resources=3:string *resourceNames=4:string *nonResourceURLs=5:string',
  'rbac.v1.Role': 'metadata=1:meta.v1.ObjectMeta *rules=2:rbac.v1.PolicyRule',
  'rbac.v1.RoleBinding': 'metadata=1:meta.v1.ObjectMeta *subjects=2:rbac.v1.Subject roleRef=3:rbac.v1.RoleRef',
  'rbac.v1.RoleRef': 'apiGroup=1:string kind=2:string name=3:string',
  'rbac.v1.Subject': 'kind=1:string apiGroup=2:string name=3:string namespace=4:string',
};
