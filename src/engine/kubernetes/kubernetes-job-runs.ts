import { BatchV1Api, CoreV1Api, KubernetesObjectApi, PatchStrategy, type KubeConfig, type KubernetesObject, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { WorkloadLogBatcher, type WorkloadLogSink } from '../workload-log-batcher.ts';
import { kubernetesErrorMessage } from './kubernetes-cluster.ts';
import { FIELD_MANAGER, LABEL_SERVICE, MANAGED_BY, SLIPWAY } from './kubernetes-names.ts';
import { listAndWatch } from './kubernetes-watch.ts';

/**
 * The run history of cron jobs on Kubernetes (docs/kubernetes.md, "Logs and health"): each run of a CronJob is a Job
 * it owns, carrying the service's labels. Beside the runtime (kubernetes-runtime.ts), started with it by the agent,
 * one list+watch on Slipway's Jobs in every namespace (kubernetes-watch.ts) says, as `system` lines in the service's runtime log, with the Job as the instance, the way the local
 * driver's cron runner words them (local-driver.cron.ts):
 *
 *   run <job> started
 *   run <job> exited with code <n> after <s> s           (the exit code of the run's last pod's container)
 *   run <job> ran longer than <max> s: killed            (the Job hit activeDeadlineSeconds)
 *
 * The run's own output is its pods' log, which the runtime already follows. Lifecycle and build Jobs are not runs of
 * a schedule (they belong to their deployment's log) and are skipped: only Jobs a CronJob controls count.
 *
 * Each line is said once across agent restarts: once told, the Job is annotated (`slipway.dev/run-reported:
 * started|ended`, a merge patch under field manager `slipway`) and an agent that finds the annotation says nothing
 * again. Annotating the Job rather than remembering a start time makes a run that ended while no agent ran still
 * reported by the next one, and is not fooled by clocks. The line is queued before the annotation is written: an
 * agent killed between the two says it twice rather than never.
 */

export const ANNOTATION_RUN_REPORTED = 'slipway.dev/run-reported';

export interface JobRunReportsOptions {
  config: KubeConfig;
  workloadLogs: WorkloadLogSink;
  onTrouble(message: string): void;
  watchTimeoutSeconds?: number | undefined;
  /** Backoff bounds for a failed watch (default 500 ms doubling up to 30 s, as the runtime's). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** How long a service's lines wait to be sent with more (default 250 ms). */
  flushMs?: number;
}

export interface JobRunReports {
  stop(): Promise<void>;
}

type Reported = 'started' | 'ended';

function controlledByCronJob(job: V1Job): boolean {
  return (job.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'CronJob' && owner.controller === true);
}

function conditionOf(job: V1Job, type: 'Complete' | 'Failed') {
  return (job.status?.conditions ?? []).find((condition) => condition.type === type && condition.status === 'True');
}

function secondsBetween(from: Date | string | undefined, to: Date | string | undefined): string | undefined {
  if (from === undefined || to === undefined) return undefined;
  const elapsed = (new Date(to).getTime() - new Date(from).getTime()) / 1000;
  return Number.isFinite(elapsed) ? Math.max(0, elapsed).toFixed(1) : undefined;
}

/** The exit code of the run's last attempt: the latest-finished `main` container among the Job's pods. */
function lastExitCodeOf(pods: readonly V1Pod[]): number | undefined {
  let last: { at: number; exitCode: number } | undefined;
  for (const pod of pods) {
    for (const status of pod.status?.containerStatuses ?? []) {
      const terminated = status.state?.terminated ?? status.lastState?.terminated;
      if (terminated === undefined) continue;
      const at = terminated.finishedAt === undefined ? 0 : new Date(terminated.finishedAt).getTime();
      if (last === undefined || at >= last.at) last = { at, exitCode: terminated.exitCode };
    }
  }
  return last?.exitCode;
}

export function startJobRunReports(options: JobRunReportsOptions): JobRunReports {
  const core = options.config.makeApiClient(CoreV1Api);
  const batch = options.config.makeApiClient(BatchV1Api);
  const objects = KubernetesObjectApi.makeApiClient(options.config);
  /** What this agent said of each Job (by uid), so the watch's next event does not say it again before the annotation lands. */
  const told = new Map<string, Reported>();
  const working = new Set<Promise<void>>();
  const selector = `${MANAGED_BY}=${SLIPWAY}`;

  const trouble = (message: string): void => {
    try {
      options.onTrouble(message);
    } catch {
      // A complaint that cannot be told is not worth stopping for.
    }
  };
  const logs = new WorkloadLogBatcher(options.workloadLogs, trouble, { flushMs: options.flushMs ?? 250 });

  function say(serviceId: string, job: V1Job, line: string, at: Date | string | undefined): void {
    const when = at === undefined ? new Date() : new Date(at);
    logs.add(serviceId, { at: (Number.isNaN(when.getTime()) ? new Date() : when).toISOString(), stream: 'system', line, instance: job.metadata?.name ?? '' });
  }

  async function annotate(job: V1Job, reported: Reported): Promise<void> {
    await objects.patch(
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: job.metadata?.name ?? '', namespace: job.metadata?.namespace ?? '', annotations: { [ANNOTATION_RUN_REPORTED]: reported } } } as KubernetesObject,
      undefined,
      undefined,
      FIELD_MANAGER,
      undefined,
      PatchStrategy.MergePatch,
    );
  }

  async function endLineOf(job: V1Job): Promise<string> {
    const name = job.metadata?.name ?? '';
    const failed = conditionOf(job, 'Failed');
    const endedAt = job.status?.completionTime ?? (failed ?? conditionOf(job, 'Complete'))?.lastTransitionTime;
    if (failed?.reason === 'DeadlineExceeded') return `run ${name} ran longer than ${job.spec?.activeDeadlineSeconds ?? '?'} s: killed`;
    const pods = (await core.listNamespacedPod({ namespace: job.metadata?.namespace ?? '', labelSelector: `controller-uid=${job.metadata?.uid ?? ''}` })).items;
    const exitCode = lastExitCodeOf(pods);
    const seconds = secondsBetween(job.status?.startTime, endedAt);
    const how = exitCode === undefined ? (failed === undefined ? 'completed' : `failed (${failed.reason ?? 'no reason given'})`) : `exited with code ${exitCode}`;
    return `run ${name} ${how}${seconds === undefined ? '' : ` after ${seconds} s`}`;
  }

  async function report(job: V1Job): Promise<void> {
    const uid = job.metadata?.uid;
    const serviceId = job.metadata?.labels?.[LABEL_SERVICE];
    if (uid === undefined || serviceId === undefined || !controlledByCronJob(job)) return;
    const annotated = job.metadata?.annotations?.[ANNOTATION_RUN_REPORTED];
    const already = told.get(uid) ?? (annotated === 'started' || annotated === 'ended' ? annotated : undefined);
    if (already === 'ended') return;
    const ended = conditionOf(job, 'Complete') !== undefined || conditionOf(job, 'Failed') !== undefined;
    if (already === undefined) {
      told.set(uid, 'started');
      say(serviceId, job, `run ${job.metadata?.name ?? ''} started`, job.status?.startTime ?? job.metadata?.creationTimestamp);
      if (!ended) await annotate(job, 'started');
    }
    if (!ended) return;
    // Worded first (it reads the run's pods): a failure there leaves the end untold, for the next event to try again.
    const line = await endLineOf(job);
    told.set(uid, 'ended');
    const failed = conditionOf(job, 'Failed');
    say(serviceId, job, line, job.status?.completionTime ?? (failed ?? conditionOf(job, 'Complete'))?.lastTransitionTime);
    await annotate(job, 'ended');
  }

  /** One report at a time per Job, in the order its events came: the annotation must not go back from ended to started. */
  const chains = new Map<string, Promise<void>>();

  function seen(job: V1Job): void {
    const uid = job.metadata?.uid ?? '';
    const work = (chains.get(uid) ?? Promise.resolve())
      .then(() => report(job))
      .catch((error: unknown) => {
        // A Job removed meanwhile (its CronJob's history limit, its TTL) has nothing left to annotate.
        if ((error as { code?: number }).code === 404) return;
        trouble(`reporting the run of Job ${job.metadata?.namespace ?? ''}/${job.metadata?.name ?? ''} failed: ${kubernetesErrorMessage(error)}`);
      });
    chains.set(uid, work);
    working.add(work);
    void work.finally(() => {
      working.delete(work);
      if (chains.get(uid) === work) chains.delete(uid);
    });
  }

  const jobWatch = listAndWatch<V1Job>({
    config: options.config,
    what: 'jobs',
    path: '/apis/batch/v1/jobs',
    labelSelector: selector,
    list: () => batch.listJobForAllNamespaces({ labelSelector: selector }),
    timeoutSeconds: options.watchTimeoutSeconds,
    backoffMinMs: options.backoffMinMs ?? 500,
    backoffMaxMs: options.backoffMaxMs ?? 30_000,
    onTrouble: trouble,
    onList(items) {
      const present = new Set(items.map((job) => job.metadata?.uid ?? ''));
      for (const uid of [...told.keys()]) if (!present.has(uid)) told.delete(uid);
      for (const job of items) seen(job);
    },
    onEvent(type, job) {
      if (type === 'DELETED') told.delete(job.metadata?.uid ?? '');
      else seen(job);
    },
  });

  return {
    async stop() {
      jobWatch.stop();
      await jobWatch.ended;
      await Promise.all([...working]);
      await logs.close();
    },
  };
}
