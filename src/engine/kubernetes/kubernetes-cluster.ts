import { ApiException, ApisApi, AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, PatchStrategy, setHeaderOptions, VersionApi, type KubernetesObject } from '@kubernetes/client-node';
import { FIELD_MANAGER } from './kubernetes-names.ts';
import type { KubeObject, ServedVersions } from './kubernetes-workload.ts';

/**
 * The Kubernetes driver's one way to the apiserver (@kubernetes/client-node): server-side apply under field manager
 * `slipway`, lists by label, deletes that treat "already gone" as done, the scale subresource, and discovery of the
 * API versions whose kinds moved between the versions Slipway supports. Everything else in the driver works on plain
 * objects (kubernetes-workload.ts) and this port.
 */

export interface ServedKinds extends ServedVersions {
  cronJob: 'batch/v1' | 'batch/v1beta1';
}

export interface PodSummary {
  name: string;
  phase: string;
  ready: boolean;
  /** Why a container does not run, as the kubelet says it (CrashLoopBackOff, ImagePullBackOff, OOMKilled, …). */
  problem: string | undefined;
  restarts: number;
  containers: string[];
}

export interface WarningEvent {
  uid: string;
  object: string;
  reason: string;
  message: string;
}

/** Where the driver finds its cluster: a kubeconfig file (and context), or the pod's service account. */
export type KubeconfigSource = { kind: 'file'; path: string; context?: string | undefined } | { kind: 'in-cluster' } | { kind: 'yaml'; yaml: string; context?: string | undefined };

export function loadKubeconfig(source: KubeconfigSource): KubeConfig {
  const config = new KubeConfig();
  if (source.kind === 'in-cluster') config.loadFromCluster();
  else if (source.kind === 'file') config.loadFromFile(source.path);
  else config.loadFromString(source.yaml);
  if (source.kind !== 'in-cluster' && source.context !== undefined) {
    if (!config.getContexts().some((context) => context.name === source.context)) throw new Error(`the kubeconfig has no context "${source.context}"`);
    config.setCurrentContext(source.context);
  }
  return config;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

/** What the apiserver said, in one line: its Status message when it gave one. */
export function kubernetesErrorMessage(error: unknown): string {
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? safeJson(error.body) : error.body;
    const message = typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string' ? body.message : undefined;
    return `the Kubernetes API answered ${error.code}${message === undefined ? '' : `: ${message}`}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function createKubernetesCluster(config: KubeConfig) {
  const objects = KubernetesObjectApi.makeApiClient(config);
  const core = config.makeApiClient(CoreV1Api);
  const apps = config.makeApiClient(AppsV1Api);
  const apis = config.makeApiClient(ApisApi);
  const batch = config.makeApiClient(BatchV1Api);
  const version = config.makeApiClient(VersionApi);

  return {
    config,

    /** Server-side apply of the whole intent of one object (fields Slipway owned and left out are removed). */
    async apply(object: KubeObject): Promise<KubeObject> {
      return (await objects.patch(object as KubernetesObject, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply)) as KubeObject;
    },

    async read(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
      try {
        return (await objects.read({ apiVersion, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }) } })) as KubeObject;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },

    async list(apiVersion: string, kind: string, namespace: string | undefined, labelSelector: string): Promise<KubeObject[]> {
      const list = await objects.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, labelSelector);
      return list.items.map((item) => ({ ...item, apiVersion, kind }) as KubeObject);
    },

    /** Deletes an object; one already gone counts as deleted. Foreground: its dependents go first. */
    async delete(object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<void> {
      try {
        await objects.delete(object as KubernetesObject, undefined, undefined, undefined, undefined, 'Foreground');
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },

    /** Sets the replicas of a Deployment or StatefulSet through its scale subresource (no field ownership taken). */
    async scale(kind: 'Deployment' | 'StatefulSet', namespace: string, name: string, replicas: number): Promise<void> {
      const body = [{ op: 'replace', path: '/spec/replicas', value: replicas }];
      const asJsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
      if (kind === 'Deployment') await apps.patchNamespacedDeploymentScale({ name, namespace, body }, asJsonPatch);
      else await apps.patchNamespacedStatefulSetScale({ name, namespace, body }, asJsonPatch);
    },

    async pods(namespace: string, labelSelector: string): Promise<PodSummary[]> {
      const list = await core.listNamespacedPod({ namespace, labelSelector });
      return list.items.map((pod) => {
        const statuses = pod.status?.containerStatuses ?? [];
        const waiting = statuses.map((status) => status.state?.waiting?.reason).find((reason) => reason !== undefined && reason !== 'ContainerCreating' && reason !== 'PodInitializing');
        const killed = statuses.map((status) => status.lastState?.terminated?.reason ?? status.state?.terminated?.reason).find((reason) => reason === 'OOMKilled' || reason === 'Error');
        return {
          name: pod.metadata?.name ?? '',
          phase: pod.status?.phase ?? 'Unknown',
          ready: pod.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false,
          problem: waiting ?? killed,
          restarts: statuses.reduce((sum, status) => sum + status.restartCount, 0),
          containers: (pod.spec?.containers ?? []).map((container) => container.name),
        };
      });
    },

    /** The namespace's Warning events, oldest first. */
    async warnings(namespace: string): Promise<WarningEvent[]> {
      const list = await core.listNamespacedEvent({ namespace, fieldSelector: 'type=Warning' });
      return list.items.map((event) => ({
        uid: event.metadata.uid ?? '',
        object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
        reason: event.reason ?? '',
        message: event.message ?? '',
      }));
    },

    /** Which versions of the moved kinds this server serves (newest first), read once at start. */
    async servedKinds(): Promise<ServedKinds> {
      const groups = await apis.getAPIVersions();
      const served = new Set(groups.groups.flatMap((group) => group.versions.map((version) => version.groupVersion)));
      return {
        autoscaling: served.has('autoscaling/v2') ? 'autoscaling/v2' : 'autoscaling/v2beta2',
        podDisruptionBudget: served.has('policy/v1') ? 'policy/v1' : 'policy/v1beta1',
        // batch/v1 is served from 1.8 on, but CronJob joined it only in 1.21: the group's resources say.
        cronJob: (await batch.getAPIResources()).resources.some((resource) => resource.kind === 'CronJob') ? 'batch/v1' : 'batch/v1beta1',
      };
    },

    async serverVersion(): Promise<string> {
      return (await version.getCode()).gitVersion;
    },

    async nodeCount(): Promise<number> {
      return (await core.listNode()).items.length;
    },
  };
}

export type KubernetesCluster = ReturnType<typeof createKubernetesCluster>;
