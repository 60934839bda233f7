import { Watch } from '@kubernetes/client-node';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import type { KubernetesCluster, PodSummary } from './kubernetes-cluster.ts';
import type { KubeObject } from './kubernetes-workload.ts';

/**
 * Waiting for a workload's rollout, judged by kubectl's rules (`kubectl rollout status`):
 *
 *   Deployment   observedGeneration ≥ generation, updatedReplicas = replicas, no replicas of the old template left,
 *                availableReplicas = replicas; a `Progressing` condition with reason ProgressDeadlineExceeded fails it
 *   StatefulSet  observedGeneration ≥ generation, updateRevision = currentRevision, readyReplicas = replicas
 *
 * A watch on the object wakes the judgment as soon as its status moves; the object is read again on every wake-up
 * and at least every second, so a watch that ends (they do: javascript#1496) or a 410 costs nothing but a re-watch.
 * Pods whose containers cannot run (CrashLoopBackOff, ImagePullBackOff, OOMKilled, a bad config) fail the rollout
 * at once with the kubelet's reason instead of waiting for the deadline; progress and Warning events go to the
 * deployment's log as they change.
 */

export class RolloutFailed extends Error {}

/** Container states that do not heal by waiting. */
const HOPELESS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'OOMKilled', 'RunContainerError']);

interface RolloutVerdict {
  done: boolean;
  progress: string;
  failure: string | undefined;
}

function numberAt(object: Record<string, unknown> | undefined, key: string): number {
  const value = object?.[key];
  return typeof value === 'number' ? value : 0;
}

export function judgeRollout(object: KubeObject): RolloutVerdict {
  const spec = object.spec as Record<string, unknown> | undefined;
  const status = object.status as Record<string, unknown> | undefined;
  const generation = (object.metadata as { generation?: number }).generation ?? 0;
  const observed = numberAt(status, 'observedGeneration');
  const wanted = typeof spec?.replicas === 'number' ? spec.replicas : 1;
  if (observed < generation) return { done: false, progress: 'waiting for the controller to see the new template', failure: undefined };
  if (object.kind === 'StatefulSet') {
    const ready = numberAt(status, 'readyReplicas');
    const current = status?.currentRevision;
    const update = status?.updateRevision;
    const done = ready >= wanted && (update === undefined || current === update);
    return { done, progress: `${ready} of ${wanted} instance(s) ready`, failure: undefined };
  }
  const conditions = (status?.conditions as Array<{ type?: string; reason?: string; message?: string }> | undefined) ?? [];
  const stuck = conditions.find((condition) => condition.type === 'Progressing' && condition.reason === 'ProgressDeadlineExceeded');
  if (stuck !== undefined) return { done: false, progress: '', failure: `the rollout made no progress within its deadline: ${stuck.message ?? 'ProgressDeadlineExceeded'}` };
  const updated = numberAt(status, 'updatedReplicas');
  const replicas = numberAt(status, 'replicas');
  const available = numberAt(status, 'availableReplicas');
  const done = updated >= wanted && replicas <= updated && available >= wanted;
  return { done, progress: `${updated} of ${wanted} instance(s) updated, ${available} available`, failure: undefined };
}

function pathOf(object: KubeObject): string {
  const plural = object.kind === 'StatefulSet' ? 'statefulsets' : 'deployments';
  return `/apis/apps/v1/namespaces/${object.metadata.namespace ?? ''}/${plural}`;
}

export interface RolloutOptions {
  /** The whole rollout may take this long (the probes' budget, at least 10 min as the original does). */
  timeoutMs: number;
  /** The selector of the service's pods, to see why they do not start. */
  podSelector: string;
  cancelPollMs?: number;
}

export async function waitForRollout(cluster: KubernetesCluster, session: TaskSession, applied: KubeObject, options: RolloutOptions): Promise<void> {
  const namespace = applied.metadata.namespace ?? '';
  const deadline = Date.now() + options.timeoutMs;
  let wake: () => void = () => undefined;
  let watching: AbortController | undefined;
  let watchEnded = true;
  const startWatch = async () => {
    watchEnded = false;
    try {
      watching = await new Watch(cluster.config).watch(
        pathOf(applied),
        { fieldSelector: `metadata.name=${applied.metadata.name}` },
        () => wake(),
        () => {
          watchEnded = true;
          wake();
        },
      );
    } catch {
      watchEnded = true;
    }
  };
  const seenWarnings = new Set((await cluster.warnings(namespace).catch(() => [])).map((event) => event.uid));
  let lastProgress = '';
  let lastPods = '';
  let lastCancelCheck = Date.now();
  try {
    for (;;) {
      if (watchEnded) await startWatch();
      const current = await cluster.read(applied.apiVersion, applied.kind, namespace, applied.metadata.name);
      if (current === undefined) throw new RolloutFailed(`${applied.kind} ${applied.metadata.name} disappeared during its rollout`);
      const verdict = judgeRollout(current);
      if (verdict.failure !== undefined) throw new RolloutFailed(verdict.failure);
      if (verdict.progress !== lastProgress && verdict.progress !== '') session.log('system', (lastProgress = verdict.progress));
      if (verdict.done) return;
      const pods = await cluster.pods(namespace, options.podSelector);
      const podLine = describePods(pods);
      if (podLine !== lastPods && podLine !== '') session.log('system', (lastPods = podLine));
      const hopeless = pods.find((pod) => pod.problem !== undefined && HOPELESS.has(pod.problem));
      for (const event of await cluster.warnings(namespace).catch(() => [])) {
        if (seenWarnings.has(event.uid)) continue;
        seenWarnings.add(event.uid);
        session.log('system', `warning on ${event.object}: ${event.reason}: ${event.message}`);
      }
      if (hopeless !== undefined) throw new RolloutFailed(`pod ${hopeless.name} cannot run: ${hopeless.problem ?? ''}`);
      if (Date.now() > deadline) throw new RolloutFailed(`the rollout did not complete within ${Math.round(options.timeoutMs / 1000)} s (${lastProgress})`);
      if (Date.now() - lastCancelCheck >= (options.cancelPollMs ?? 1_000)) {
        lastCancelCheck = Date.now();
        if (await session.cancelRequested()) throw new TaskCanceled();
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1_000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    watching?.abort();
  }
}

function describePods(pods: readonly PodSummary[]): string {
  if (pods.length === 0) return '';
  return `pods: ${pods.map((pod) => `${pod.name} ${pod.problem ?? (pod.ready ? 'ready' : pod.phase)}${pod.restarts > 0 ? ` (${pod.restarts} restart(s))` : ''}`).join(', ')}`;
}
