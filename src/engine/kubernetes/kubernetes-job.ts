import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { CronJob, Job, JobSpec } from 'kubernetes-types/batch/v1.js';
import type { Container, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import type { KubernetesCluster, ServedKinds } from './kubernetes-cluster.ts';
import { ANNOTATION_CONFIG_HASH, ANNOTATION_DEPLOYMENT, namespaceOf, serviceLabels, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import type { JobCommand, JobSettings } from './kubernetes-settings.ts';
import { cpuQuantity, memoryQuantity, type KubeObject, type WorkloadConfig } from './kubernetes-workload.ts';

/**
 * A JOB as Kubernetes objects (docs/kubernetes.md, "What each kind becomes"), from an image (a job from git runs the
 * image built of its commit: kubernetes-build.ts):
 *
 *   Secret <name>-env, -files, -pull   its variables, files and registry login, as a CONTAINER's (renderConfig)
 *   CronJob <name>                     a cron job: `concurrencyPolicy: Forbid` (a run that outlasts its period is not
 *                                      doubled), suspended while the service is stopped
 *   Job <name>-on-start|-on-stop       one run of a lifecycle event: deleted and created again for each run, since
 *                                      a Job's template cannot change; the run is waited for, its exit code and logs
 *                                      go to the deployment's log, and a failed run fails the deployment
 *
 * Each run may be retried `max_nb_restart` times (backoffLimit) and lasts at most `max_duration_seconds`
 * (activeDeadlineSeconds); a finished Job stays a day for inspection (ttlSecondsAfterFinished) unless the next run
 * replaces it first.
 */

export const GIT_JOB_MESSAGE =
  'JOB services from git are built into an image in the cluster, and this agent has no registry to push it to: start it with --build-registry <host/path>';

export type LifecycleEvent = 'on_start' | 'on_stop' | 'on_delete';

/** A finished Job stays this long (a day) for `kubectl` inspection, where the server honours it. */
const FINISHED_JOB_TTL_SECONDS = 86_400;

/** The Job of one lifecycle event's run. */
export function lifecycleJobNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>, event: LifecycleEvent): string {
  return `${workloadNameOf(service)}-${event.replace('_', '-')}`;
}

export interface JobRender {
  service: ServiceIdentity;
  deploymentId: string;
  settings: JobSettings;
  image: string;
  config: WorkloadConfig;
}

function podTemplateOf(render: JobRender, command: JobCommand): PodTemplateSpec {
  const { settings, config } = render;
  const container: Container = {
    name: 'main',
    image: render.image,
    // The image's own entrypoint runs unless the job names one; its arguments replace the image's CMD.
    ...(command.entrypoint === null || command.entrypoint === '' ? {} : { command: [command.entrypoint] }),
    ...(command.arguments.length === 0 ? {} : { args: command.arguments }),
    envFrom: [{ secretRef: { name: config.envSecretName } }],
    resources: {
      requests: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
      limits: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
    },
    ...(config.volumeMounts.length === 0 ? {} : { volumeMounts: config.volumeMounts }),
  };
  return {
    metadata: { labels: serviceLabels(render.service), annotations: { [ANNOTATION_CONFIG_HASH]: config.configHash } },
    spec: {
      containers: [container],
      // A failed run is retried as a new pod (backoffLimit), not restarted in place: each attempt keeps its exit code.
      restartPolicy: 'Never',
      ...(config.volumes.length === 0 ? {} : { volumes: config.volumes }),
      ...(config.pullSecretName === undefined ? {} : { imagePullSecrets: [{ name: config.pullSecretName }] }),
      enableServiceLinks: false,
      automountServiceAccountToken: false,
    },
  };
}

function jobSpecOf(render: JobRender, command: JobCommand): JobSpec {
  return {
    backoffLimit: render.settings.max_nb_restart,
    activeDeadlineSeconds: render.settings.max_duration_seconds,
    ttlSecondsAfterFinished: FINISHED_JOB_TTL_SECONDS,
    template: podTemplateOf(render, command),
  };
}

function metadataOf(render: JobRender, name: string) {
  return { name, namespace: namespaceOf(render.service.environmentId), labels: serviceLabels(render.service), annotations: { [ANNOTATION_DEPLOYMENT]: render.deploymentId } };
}

/** Zones that are the controller's own on any server: no timeZone field is needed for them. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/UCT', 'UCT', 'Etc/Universal', 'Universal', 'Etc/Zulu', 'Zulu']);

/**
 * The CronJob of a cron job, in the version the server serves (batch/v1beta1 has the same shape for these fields).
 * `timeZone` exists in batch/v1 only (beta in 1.25, on by default; GA in 1.27): it is set there for a zone other than
 * UTC, and on a batch/v1beta1 server the schedule runs in the controller's zone (UTC on every managed cluster) —
 * `timeZoneIgnored` says so, for the deployment's log.
 */
export function renderCronJob(render: JobRender, cronJobVersion: ServedKinds['cronJob'], suspend: boolean): { cronJob: KubeObject; timeZoneIgnored: boolean } {
  const { schedule } = render.settings;
  if (schedule.kind !== 'CRON') throw new Error('a lifecycle job has no CronJob');
  const zone = schedule.cronjob.timezone;
  const needsZone = !UTC_ZONES.has(zone);
  const withZone = needsZone && cronJobVersion === 'batch/v1';
  const cronJob: Omit<CronJob, 'apiVersion'> & KubeObject = {
    apiVersion: cronJobVersion,
    kind: 'CronJob',
    metadata: metadataOf(render, workloadNameOf(render.service)),
    spec: {
      schedule: schedule.cronjob.scheduled_at,
      ...(withZone ? { timeZone: zone } : {}),
      concurrencyPolicy: 'Forbid',
      suspend,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      // The Jobs it makes carry the service's labels too: found by them, and deleted with the service.
      jobTemplate: { metadata: { labels: serviceLabels(render.service) }, spec: jobSpecOf(render, schedule.cronjob) },
    },
  };
  return { cronJob, timeZoneIgnored: needsZone && !withZone };
}

/** The Job of one run of a lifecycle event. */
export function renderLifecycleJob(render: JobRender, event: LifecycleEvent, command: JobCommand): KubeObject {
  const job: Job & KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadataOf(render, lifecycleJobNameOf(render.service, event)),
    spec: jobSpecOf(render, command),
  };
  return job;
}

/** Container states of a run's pod that waiting does not heal (restartPolicy Never: the pod would sit until its deadline). */
const HOPELESS = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

export class JobRunFailed extends Error {}

export interface JobRunOptions {
  /** How long past its own deadline (activeDeadlineSeconds) the run is waited for: scheduling, image pulls. */
  graceMs?: number;
  pollMs?: number;
}

function terminationOf(pod: V1Pod): { exitCode: number; reason: string | undefined; message: string | undefined } | undefined {
  const status = (pod.status?.containerStatuses ?? []).find((container) => container.name === 'main');
  const terminated = status?.state?.terminated ?? status?.lastState?.terminated;
  return terminated === undefined ? undefined : { exitCode: terminated.exitCode, reason: terminated.reason, message: terminated.message };
}

/**
 * Runs one lifecycle Job to its end: the previous run's Job is deleted (and waited for) and the new one applied;
 * then its `Complete` or `Failed` condition is waited for, each attempt's exit code and logs going to the log.
 * A failed run throws JobRunFailed with the last exit code and reason; a canceled deployment deletes the run.
 */
export async function runLifecycleJob(cluster: KubernetesCluster, session: TaskSession, job: KubeObject, options: JobRunOptions = {}): Promise<void> {
  const namespace = job.metadata.namespace ?? '';
  const name = job.metadata.name;
  const core = cluster.config.makeApiClient(CoreV1Api);
  const pollMs = options.pollMs ?? 500;
  await cluster.delete(job);
  const goneBy = Date.now() + 120_000;
  while ((await cluster.read('batch/v1', 'Job', namespace, name)) !== undefined) {
    if (Date.now() > goneBy) throw new JobRunFailed(`the previous run's Job ${name} was not deleted within 120 s`);
    await sleep(pollMs);
  }
  const applied = await cluster.apply(job);
  const uid = (applied.metadata as { uid?: string }).uid ?? '';
  session.log('system', `Job ${name} started`);
  const deadlineSeconds = ((job.spec as JobSpec | undefined)?.activeDeadlineSeconds ?? 300) + Math.round((options.graceMs ?? 300_000) / 1000);
  const deadline = Date.now() + deadlineSeconds * 1000;
  const reported = new Set<string>();
  // The Job controller labels its pods with the Job's uid: only this run's pods, not a previous run's still leaving.
  const podsOfRun = async (): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace, labelSelector: `controller-uid=${uid}` })).items;
  const reportFinished = async (pods: readonly V1Pod[]): Promise<void> => {
    for (const pod of pods) {
      const podName = pod.metadata?.name ?? '';
      const ended = terminationOf(pod);
      if (ended === undefined || reported.has(podName)) continue;
      reported.add(podName);
      try {
        const text = await core.readNamespacedPodLog({ name: podName, namespace, container: 'main' });
        for (const line of String(text).split('\n')) if (line !== '') session.log('stdout', line);
      } catch {
        session.log('system', `the logs of pod ${podName} could not be read`);
      }
      session.log('system', `pod ${podName} exited with code ${ended.exitCode}${ended.reason === undefined ? '' : ` (${ended.reason})`}`);
    }
  };
  let lastCancelCheck = Date.now();
  for (;;) {
    const current = await cluster.read('batch/v1', 'Job', namespace, name);
    if (current === undefined) throw new JobRunFailed(`Job ${name} disappeared during its run`);
    const conditions = ((current.status as { conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }> } | undefined)?.conditions ?? []).filter(
      (condition) => condition.status === 'True',
    );
    const pods = await podsOfRun();
    await reportFinished(pods);
    if (conditions.some((condition) => condition.type === 'Complete')) {
      session.log('system', `Job ${name} completed`);
      return;
    }
    const failed = conditions.find((condition) => condition.type === 'Failed');
    if (failed !== undefined) {
      const last = pods
        .map(terminationOf)
        .filter((ended) => ended !== undefined)
        .find((ended) => ended.exitCode !== 0);
      const exit = last === undefined ? '' : `: exit code ${last.exitCode}${last.reason === undefined ? '' : ` (${last.reason})`}`;
      throw new JobRunFailed(`Job ${name} failed${exit}${failed.reason === undefined ? '' : ` — ${failed.reason}${failed.message === undefined ? '' : `: ${failed.message}`}`}`);
    }
    const stuck = pods
      .flatMap((pod) => (pod.status?.containerStatuses ?? []).map((status) => ({ pod: pod.metadata?.name ?? '', reason: status.state?.waiting?.reason })))
      .find((status) => status.reason !== undefined && HOPELESS.has(status.reason));
    if (stuck !== undefined) {
      await cluster.delete(job);
      throw new JobRunFailed(`Job ${name} cannot run: pod ${stuck.pod} is in ${stuck.reason ?? ''}`);
    }
    if (Date.now() > deadline) {
      await cluster.delete(job);
      throw new JobRunFailed(`Job ${name} did not finish within ${deadlineSeconds} s`);
    }
    if (Date.now() - lastCancelCheck >= 1_000) {
      lastCancelCheck = Date.now();
      if (await session.cancelRequested()) {
        await cluster.delete(job);
        throw new TaskCanceled();
      }
    }
    await sleep(pollMs);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
