import type { Deployment, DeploymentStrategy, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { HorizontalPodAutoscaler } from 'kubernetes-types/autoscaling/v2.js';
import type { Container, Namespace, PersistentVolumeClaim, PodSpec, PodTemplateSpec, Probe as KubeProbe, Secret, Service, Volume, VolumeMount } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import {
  ANNOTATION_CONFIG_HASH,
  ANNOTATION_RESTARTED_AT,
  contentHash,
  LABEL_ENVIRONMENT,
  LABEL_ORGANIZATION,
  LABEL_PROJECT,
  MANAGED_BY,
  namespaceOf,
  podSelector,
  serviceLabels,
  SLIPWAY,
  workloadNameOf,
  type ServiceIdentity,
} from './kubernetes-names.ts';
import type { Probe, WorkloadSettings } from './kubernetes-settings.ts';
import { renderIngress } from './kubernetes-ingress.ts';
import { advancedBoolean, advancedInteger, advancedLabels, advancedString, advancedStrings } from '../advanced-settings.ts';

/**
 * A long-running workload (CONTAINER, and an APPLICATION once built into an image) as Kubernetes objects, rendered
 * from its deployment alone (docs/kubernetes.md, "What each kind becomes"):
 *
 *   Secret <name>-env      its environment variables (secrets opened), as the container's envFrom
 *   Secret <name>-files    its file variables, each mounted at its mount path
 *   Deployment <name>      or a StatefulSet when it declares storage (one claim per volume and instance)
 *   Service <name>         its internal ports: `<name>.<namespace>.svc.cluster.local` is its hostname in the environment
 *   Ingress <name>         its public hostnames (its own, its verified custom domains) to its first public port
 *   HorizontalPodAutoscaler <name>   when min ≠ max instances; `spec.replicas` is then left to it
 *   PodDisruptionBudget <name>       when more than one instance runs
 *
 * The pod template carries a hash of the variables and files: changing one rolls the pods, nothing else does.
 * Every object, pod template and claim template included, carries the service's labels.
 */

export type KubeObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> } } & Record<string, unknown>;

export interface WorkloadVariable {
  key: string;
  value: string;
  /** A file variable: where its content is mounted; null for an environment variable. */
  mountPath: string | null;
}

export interface ImagePullCredentials {
  server: string;
  username: string;
  password: string;
}

/** The API versions the cluster serves for the kinds whose version moved (chosen by discovery at start). */
export interface ServedVersions {
  autoscaling: 'autoscaling/v2' | 'autoscaling/v2beta2';
  podDisruptionBudget: 'policy/v1' | 'policy/v1beta1';
}

export interface WorkloadRender {
  service: ServiceIdentity;
  deploymentId: string;
  settings: WorkloadSettings;
  image: string;
  pullCredentials: ImagePullCredentials | undefined;
  variables: readonly WorkloadVariable[];
  hostnames: readonly string[];
  versions: ServedVersions;
  /** The Ingress class to use (SLIPWAY_KUBERNETES_INGRESS_CLASS); the cluster's default class when undefined. */
  ingressClass: string | undefined;
  /** The cert-manager ClusterIssuer of the public hostnames' certificates (--cert-manager-issuer); none: plain HTTP. */
  clusterIssuer?: string | undefined;
  /** Set by a restart: rolls the pods without any other change. */
  restartedAt: string | undefined;
}

export function namespaceObject(service: ServiceIdentity): Namespace & KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: namespaceOf(service.environmentId),
      labels: {
        [MANAGED_BY]: SLIPWAY,
        [LABEL_ORGANIZATION]: service.organizationId,
        ...(service.projectId === undefined ? {} : { [LABEL_PROJECT]: service.projectId }),
        [LABEL_ENVIRONMENT]: service.environmentId,
      },
    },
  };
}

export function base64(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64');
}

/** A Kubernetes quantity of CPU from millicores, of memory from MiB. */
export function cpuQuantity(millicores: number): string {
  return `${millicores}m`;
}
export function memoryQuantity(mebibytes: number): string {
  return `${mebibytes}Mi`;
}

function probeOf(probe: Probe | null): KubeProbe | undefined {
  if (probe === null) return undefined;
  const timing = {
    initialDelaySeconds: probe.initial_delay_seconds,
    periodSeconds: probe.period_seconds,
    timeoutSeconds: probe.timeout_seconds,
    successThreshold: probe.success_threshold,
    failureThreshold: probe.failure_threshold,
  };
  switch (probe.type.kind) {
    case 'http':
      return { ...timing, httpGet: { path: probe.type.path, port: probe.type.port, scheme: probe.type.scheme } };
    case 'tcp':
      return { ...timing, tcpSocket: { port: probe.type.port, ...(probe.type.host === null || probe.type.host === undefined ? {} : { host: probe.type.host }) } };
    case 'exec':
      return { ...timing, exec: { command: probe.type.command } };
    case 'grpc':
      return { ...timing, grpc: { port: probe.type.port, ...(probe.type.service === null || probe.type.service === undefined ? {} : { service: probe.type.service }) } };
  }
}

/** What a workload's pods are given of their configuration: the Secrets, and how the pod template uses them. */
export interface WorkloadConfig {
  objects: KubeObject[];
  /** The hash of everything in them, for a pod-template annotation: a change rolls the pods. */
  configHash: string;
  volumes: Volume[];
  volumeMounts: VolumeMount[];
  /** The env Secret, for the container's envFrom. */
  envSecretName: string;
  pullSecretName: string | undefined;
}

/**
 * The Secrets of a workload's variables, files and registry login (a CONTAINER's, a JOB's): `<name>-env`, read whole
 * by envFrom; `<name>-files`, each file mounted alone at its path; `<name>-pull` when the registry has a login.
 */
export function renderConfig(render: Pick<WorkloadRender, 'service' | 'deploymentId' | 'pullCredentials' | 'variables'>): WorkloadConfig {
  const { service } = render;
  const name = workloadNameOf(service);
  const namespace = namespaceOf(service.environmentId);
  const labels = serviceLabels(service);
  const metadata = (objectName: string) => ({ name: objectName, namespace, labels });
  const objects: KubeObject[] = [];
  const environment = render.variables.filter((variable) => variable.mountPath === null);
  const files = render.variables.filter((variable) => variable.mountPath !== null);
  const envSecret: Secret & KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(`${name}-env`),
    type: 'Opaque',
    data: Object.fromEntries(environment.map((variable) => [variable.key, base64(variable.value)])),
  };
  objects.push(envSecret);
  // File keys must be Secret keys ([-._a-zA-Z0-9]+): numbered, each mounted alone at its path (subPath).
  const filesSecret: Secret & KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata(`${name}-files`),
    type: 'Opaque',
    data: Object.fromEntries(files.map((variable, index) => [`file-${index}`, base64(variable.value)])),
  };
  if (files.length > 0) objects.push(filesSecret);
  const pullSecretName = `${name}-pull`;
  if (render.pullCredentials !== undefined) {
    const { server, username, password } = render.pullCredentials;
    const auths = { [server]: { username, password, auth: base64(`${username}:${password}`) } };
    objects.push({ apiVersion: 'v1', kind: 'Secret', metadata: metadata(pullSecretName), type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': base64(JSON.stringify({ auths })) } });
  }
  return {
    objects,
    configHash: contentHash([...render.variables.map((variable) => `${variable.key}=${variable.mountPath ?? ''}=${variable.value}`), render.pullCredentials?.password ?? '']),
    volumes: files.length === 0 ? [] : [{ name: 'files', secret: { secretName: `${name}-files`, defaultMode: 0o400 } }],
    volumeMounts: files.map((variable, index) => ({ name: 'files', mountPath: variable.mountPath ?? '', subPath: `file-${index}`, readOnly: true })),
    envSecretName: `${name}-env`,
    pullSecretName: render.pullCredentials === undefined ? undefined : pullSecretName,
  };
}

/** deployment.update_strategy.*: rolling (with its surge and unavailability) or recreate. */
function updateStrategyOf(settings: WorkloadSettings): DeploymentStrategy {
  if (advancedString(settings, 'deployment.update_strategy.type') === 'Recreate') return { type: 'Recreate' };
  const percent = (key: string, fallback: number) => `${advancedInteger(settings, `deployment.update_strategy.rolling_update.${key}`) ?? fallback}%`;
  return { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: percent('max_unavailable_percent', 25), maxSurge: percent('max_surge_percent', 25) } };
}

/** hpa.*: the CPU target (60 % unless set), and a memory target when one is set. */
function autoscalingMetricsOf(settings: WorkloadSettings): NonNullable<NonNullable<HorizontalPodAutoscaler['spec']>['metrics']> {
  const target = (name: 'cpu' | 'memory', utilization: number) => ({ type: 'Resource', resource: { name, target: { type: 'Utilization', averageUtilization: utilization } } });
  const memory = advancedInteger(settings, 'hpa.memory.average_utilization_percent');
  return [target('cpu', advancedInteger(settings, 'hpa.cpu.average_utilization_percent') ?? 60), ...(memory === undefined ? [] : [target('memory', memory)])];
}

/**
 * Where and as whom the pods run, from the advanced settings: the termination grace period, the service account
 * (its token mounted only when asked), required node labels, spreading replicas over nodes (anti-affinity) and zones.
 */
function podPlacementOf(settings: WorkloadSettings, serviceId: string): Partial<PodSpec> {
  const spec: Partial<PodSpec> = { automountServiceAccountToken: advancedBoolean(settings, 'security.automount_service_account_token') ?? false };
  const grace = advancedInteger(settings, 'deployment.termination_grace_period_seconds');
  if (grace !== undefined) spec.terminationGracePeriodSeconds = grace;
  const account = advancedString(settings, 'security.service_account_name');
  if (account !== undefined && account !== '') spec.serviceAccountName = account;
  const required = advancedLabels(settings, 'deployment.affinity.node.required');
  if (required !== undefined && Object.keys(required).length > 0) spec.nodeSelector = required;
  const selector = { matchLabels: podSelector(serviceId) };
  const antiAffinity = advancedString(settings, 'deployment.antiaffinity.pod');
  if (antiAffinity === 'Requirred') {
    spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: selector, topologyKey: 'kubernetes.io/hostname' }] } };
  } else if (antiAffinity === 'Preferred') {
    spec.affinity = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: selector, topologyKey: 'kubernetes.io/hostname' } }] } };
  }
  const zone = advancedString(settings, 'deployment.topology_spread.zone');
  if (zone === 'ScheduleAnyway' || zone === 'DoNotSchedule') {
    spec.topologySpreadConstraints = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: zone, labelSelector: selector }];
  }
  return spec;
}

export function renderWorkload(render: WorkloadRender): KubeObject[] {
  const { service, settings } = render;
  const name = workloadNameOf(service);
  const namespace = namespaceOf(service.environmentId);
  const labels = serviceLabels(service);
  const metadata = (objectName: string) => ({ name: objectName, namespace, labels });
  const config = renderConfig(render);
  const objects: KubeObject[] = [...config.objects];
  const { configHash, volumes } = config;
  const volumeMounts: VolumeMount[] = [...config.volumeMounts];
  const claimTemplates: PersistentVolumeClaim[] = settings.storage.map((volume) => ({
    metadata: { name: `data-${volume.id.replaceAll('-', '').slice(0, 12).toLowerCase()}`, labels },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: `${volume.size}Gi` } } },
  }));
  for (const [index, volume] of settings.storage.entries()) volumeMounts.push({ name: claimTemplates[index]?.metadata?.name ?? '', mountPath: volume.mount_point });

  const container: Container = {
    name: 'main',
    image: render.image,
    ...(settings.entrypoint === undefined || settings.entrypoint === null || settings.entrypoint === '' ? {} : { command: [settings.entrypoint] }),
    ...(settings.arguments === undefined || settings.arguments.length === 0 ? {} : { args: settings.arguments }),
    // Always with its protocol: a Service or container port without it is refused by older servers' apply.
    ports: settings.ports.map((port) => ({ containerPort: port.internal_port, protocol: 'TCP' })),
    envFrom: [{ secretRef: { name: config.envSecretName } }],
    resources: {
      requests: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
      limits: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
    },
    ...(volumeMounts.length === 0 ? {} : { volumeMounts }),
  };
  const readiness = probeOf(settings.healthchecks.readiness_probe);
  const liveness = probeOf(settings.healthchecks.liveness_probe);
  if (readiness !== undefined) container.readinessProbe = readiness;
  if (liveness !== undefined) container.livenessProbe = liveness;
  const postStart = advancedStrings(settings, 'deployment.lifecycle.post_start_exec_command') ?? [];
  const preStop = advancedStrings(settings, 'deployment.lifecycle.pre_stop_exec_command') ?? [];
  if (postStart.length > 0 || preStop.length > 0) {
    container.lifecycle = {
      ...(postStart.length === 0 ? {} : { postStart: { exec: { command: postStart } } }),
      ...(preStop.length === 0 ? {} : { preStop: { exec: { command: preStop } } }),
    };
  }
  if (advancedBoolean(settings, 'security.read_only_root_filesystem') === true) container.securityContext = { readOnlyRootFilesystem: true };
  const template: PodTemplateSpec = {
    metadata: {
      labels,
      annotations: { [ANNOTATION_CONFIG_HASH]: configHash, ...(render.restartedAt === undefined ? {} : { [ANNOTATION_RESTARTED_AT]: render.restartedAt }) },
    },
    spec: {
      containers: [container],
      ...(volumes.length === 0 ? {} : { volumes }),
      ...(config.pullSecretName === undefined ? {} : { imagePullSecrets: [{ name: config.pullSecretName }] }),
      // Variables go through envFrom only: no service links of every Service in the namespace into its environment.
      enableServiceLinks: false,
      ...podPlacementOf(settings, service.id),
    },
  };
  const autoscaled = settings.min_running_instances !== settings.max_running_instances;
  // Left out when autoscaled: the HorizontalPodAutoscaler owns it, and applying it would fight it.
  const replicas = autoscaled ? {} : { replicas: settings.min_running_instances };
  if (settings.storage.length > 0) {
    const statefulSet: StatefulSet & KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: metadata(name),
      spec: { ...replicas, serviceName: name, selector: { matchLabels: podSelector(service.id) }, template, volumeClaimTemplates: claimTemplates },
    };
    objects.push(statefulSet);
  } else {
    const deployment: Deployment & KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: metadata(name),
      spec: { ...replicas, progressDeadlineSeconds: 600, strategy: updateStrategyOf(settings), selector: { matchLabels: podSelector(service.id) }, template },
    };
    objects.push(deployment);
  }
  if (settings.ports.length > 0) {
    const kubeService: Service & KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata(name),
      spec: {
        selector: podSelector(service.id),
        ports: settings.ports.map((port) => ({ name: `p${port.internal_port}`, port: port.internal_port, targetPort: port.internal_port, protocol: 'TCP' })),
      },
    };
    objects.push(kubeService);
  }
  const publicPort = settings.ports.find((port) => port.publicly_accessible);
  if (publicPort !== undefined && render.hostnames.length > 0) {
    objects.push(
      renderIngress({
        service,
        hostnames: render.hostnames,
        backend: { serviceName: name, port: publicPort.internal_port },
        options: { className: render.ingressClass, clusterIssuer: render.clusterIssuer },
        settings,
      }),
    );
  }
  if (autoscaled) {
    // v2beta2 has the same shape as v2 for resource metrics: one type serves both.
    const autoscaler: Omit<HorizontalPodAutoscaler, 'apiVersion'> & KubeObject = {
      apiVersion: render.versions.autoscaling,
      kind: 'HorizontalPodAutoscaler',
      metadata: metadata(name),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: settings.storage.length > 0 ? 'StatefulSet' : 'Deployment', name },
        minReplicas: Math.max(1, settings.min_running_instances),
        maxReplicas: Math.max(1, settings.max_running_instances),
        metrics: autoscalingMetricsOf(settings),
      },
    };
    objects.push(autoscaler);
  }
  if (Math.max(settings.min_running_instances, settings.max_running_instances) > 1) {
    // policy/v1beta1 has the same shape as policy/v1 for these fields.
    const budget: Omit<PodDisruptionBudget, 'apiVersion'> & KubeObject = {
      apiVersion: render.versions.podDisruptionBudget,
      kind: 'PodDisruptionBudget',
      metadata: metadata(name),
      spec: { maxUnavailable: '20%', selector: { matchLabels: podSelector(service.id) } },
    };
    objects.push(budget);
  }
  return objects;
}
