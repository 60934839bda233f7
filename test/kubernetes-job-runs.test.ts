import { randomUUID } from 'node:crypto';
import type { BatchV1Api, KubeConfig, V1JobSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import type { KubernetesCluster, ServedKinds } from '../src/engine/kubernetes/kubernetes-cluster.ts';
import { createKubernetesDriver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { ANNOTATION_RUN_REPORTED, startJobRunReports, type JobRunReports } from '../src/engine/kubernetes/kubernetes-job-runs.ts';
import { lifecycleJobNameOf } from '../src/engine/kubernetes/kubernetes-job.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { startKubernetesRuntime, type KubernetesRuntime } from '../src/engine/kubernetes/kubernetes-runtime.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import type { AgentWorkloadLogLine } from '../src/protocol/agent-protocol.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * A JOB's runs on Kubernetes, against a real control plane (kube-apiserver, etcd, controller manager and scheduler
 * 1.20.2) whose only node is the fake kubelet, a TEST DOUBLE: it runs no container, it writes a Job pod's status as
 * Succeeded, or Failed with exit code 7 for a pod whose Job's name ends in `-bad` or whose arguments say `fail`, or
 * leaves it Pending when the Job's name ends in `-stuck`, and serves the log lines it is given for the pod.
 *
 *  - a cron job's runs (kubernetes-job-runs.ts, beside the runtime as the agent starts them): each run is triggered here as
 *    `kubectl create job --from=cronjob/…` does (a Job from the CronJob's jobTemplate, owned by it), since the 1.20
 *    CronJob controller fires at most once a minute; the runtime's log sink (a recording double of the control plane)
 *    receives the run's lines and its start and end with the exit code, once even across a new runtime;
 *  - a lifecycle job's on_delete, run by the driver's teardown before the service's objects go.
 */

const environmentId = randomUUID();
const projectId = randomUUID();
const organizationId = randomUUID();
const namespace = namespaceOf(environmentId);
const reportId = randomUUID();
const cleanupId = randomUUID();
const brokenId = randomUUID();

let world: KubeWorld | undefined;
let cluster: KubernetesCluster;
let batch: BatchV1Api;
let config: KubeConfig;
let served: ServedKinds;
let driver: AgentDriver;
const observers: Array<KubernetesRuntime | JobRunReports> = [];
const troubles: string[] = [];

function jobSpec(serviceId: string, name: string, schedule: Record<string, unknown>): Record<string, unknown> {
  const source = { kind: 'image', image_name: 'acme/tasks', tag: '1.0', registry_id: randomUUID() };
  const settings = { cpu: 250, memory: 256, gpu: 0, ephemeral_storage_in_gib: null, cpu_architecture: 'AMD64', max_nb_restart: 0, max_duration_seconds: 120, auto_preview: true, port: null, source, healthchecks: {}, schedule, auto_deploy: true, annotations_groups: [], labels_groups: [], icon_uri: 'app://slipway-console/job' };
  return {
    service: { id: serviceId, kind: 'JOB', name, organizationId, environmentId, clusterId: randomUUID(), settings },
    git_commit_id: null,
    image_tag: null,
    variables: [{ key: 'MODE', value: 'test', mount_path: null, scope: 'SERVICE', secret: false }],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: { reference: 'registry.example.com/acme/tasks:1.0', pull_credentials: null },
    git: null,
    database: null,
    routing: { hostnames: [], internal: null, peers: [] },
  };
}

const cron = { kind: 'CRON', cronjob: { arguments: ['report', '--daily'], entrypoint: null, timezone: 'UTC', scheduled_at: '0 6 * * *' } };
const withOnDelete = (command: Record<string, unknown>) => ({ kind: 'LIFECYCLE', lifecycle_type: 'GENERIC', on_start: null, on_stop: null, on_delete: command });

async function perform(action: string, spec: Record<string, unknown> | undefined, serviceId: string, subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE'): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask(environmentId, serviceId, action, 'JOB', subject), spec);
  await carryOutTask(driver, session, (event, message) => session.report(event, message));
  return session;
}

/** What the agent starts (kubernetes-agent.ts): the runtime and the cron runs' reports, into one recording log sink. */
function startRecordingAgentWatches(): { lines: Array<{ serviceId: string; line: AgentWorkloadLogLine }> } {
  const lines: Array<{ serviceId: string; line: AgentWorkloadLogLine }> = [];
  const workloadLogs = async (serviceId: string, batchOfLines: AgentWorkloadLogLine[]): Promise<void> => {
    for (const line of batchOfLines) lines.push({ serviceId, line });
  };
  const onTrouble = (message: string): void => {
    troubles.push(message);
  };
  observers.push(startKubernetesRuntime({ config, flushMs: 50, onTrouble, workloadLogs }), startJobRunReports({ config, flushMs: 50, onTrouble, workloadLogs }));
  return { lines };
}

/** A run of the cron job, as `kubectl create job --from=cronjob/<name>` makes it: the jobTemplate, owned by the CronJob. */
async function triggerRun(jobName: string, deadlineSeconds?: number): Promise<void> {
  const cronJob = await cluster.read(served.cronJob, 'CronJob', namespace, workloadNameOf({ id: reportId, name: 'report' }));
  if (cronJob === undefined) throw new Error('the CronJob is not there');
  const template = (cronJob.spec as { jobTemplate: { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> } }).jobTemplate;
  await batch.createNamespacedJob({
    namespace,
    body: {
      metadata: {
        name: jobName,
        namespace,
        labels: template.metadata?.labels,
        ownerReferences: [{ apiVersion: served.cronJob, kind: 'CronJob', name: cronJob.metadata.name, uid: (cronJob.metadata as { uid?: string }).uid ?? '', controller: true }],
      },
      spec: { ...(template.spec as unknown as V1JobSpec), ...(deadlineSeconds === undefined ? {} : { activeDeadlineSeconds: deadlineSeconds }) },
    },
  });
}

beforeAll(async () => {
  world = await startKubeWorld({
    kubelet: {
      bindPendingPods: true,
      outcome: (pod, kubelet) => {
        if (!(pod.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'Job')) return undefined;
        const jobName = pod.metadata?.labels?.['job-name'] ?? '';
        if (jobName.endsWith('-stuck')) return { state: 'Pending' };
        const fails = jobName.endsWith('-bad') || (pod.spec?.containers[0]?.args ?? []).includes('fail');
        kubelet.writeLog(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', 'main', `${jobName} says hello`, `${jobName} ${fails ? 'gives up' : 'is done'}`);
        return fails ? { state: 'Failed', exitCode: 7 } : { state: 'Succeeded' };
      },
    },
  });
  ({ cluster, batch, config } = world);
  served = await cluster.servedKinds();
  driver = createKubernetesDriver({ cluster, served, rolloutTimeoutMs: 90_000, onTrouble: (message) => troubles.push(message) });
}, 20 * 60_000);

afterAll(async () => {
  try {
    for (const observer of observers) await observer.stop();
  } finally {
    await world?.stop();
  }
});

describe('Kubernetes runtime: the runs of a cron job', () => {
  const good = `report-manual-${randomUUID().slice(0, 6)}`;
  const bad = `report-manual-${randomUUID().slice(0, 6)}-bad`;

  it('says when each run starts and how it ended, with its exit code, beside the run’s own lines', async () => {
    const deployed = await perform('deploy', jobSpec(reportId, 'report', cron), reportId);
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    const { lines } = startRecordingAgentWatches();
    await triggerRun(good);
    await triggerRun(bad);

    const textOf = (instancePrefix: string) =>
      lines.filter((entry) => entry.serviceId === reportId && (entry.line.instance ?? '').startsWith(instancePrefix)).map((entry) => `${entry.line.stream} ${entry.line.line}`);
    await vi.waitFor(
      () => {
        expect(textOf(good)).toEqual(
          expect.arrayContaining([`system run ${good} started`, `stdout ${good} says hello`, `stdout ${good} is done`, expect.stringMatching(new RegExp(`^system run ${good} exited with code 0 after [0-9.]+ s$`))]),
        );
        expect(textOf(bad)).toEqual(
          expect.arrayContaining([`system run ${bad} started`, `stdout ${bad} says hello`, `stdout ${bad} gives up`, expect.stringMatching(new RegExp(`^system run ${bad} exited with code 7 after [0-9.]+ s$`))]),
        );
      },
      { timeout: 90_000, interval: 200 },
    );
    // Each said once, the start before the end.
    const systemLines = lines.filter((entry) => entry.line.stream === 'system').map((entry) => entry.line.line);
    for (const job of [good, bad]) {
      const said = systemLines.filter((line) => line.startsWith(`run ${job} `));
      expect(said).toHaveLength(2);
      expect(said[0]).toBe(`run ${job} started`);
    }
    // Told runs are marked on the Job itself.
    await vi.waitFor(async () => {
      for (const job of [good, bad]) expect((await batch.readNamespacedJob({ name: job, namespace })).metadata?.annotations?.[ANNOTATION_RUN_REPORTED]).toBe('ended');
    }, { timeout: 30_000, interval: 200 });
  });

  it('says so when a run outlasts its deadline (activeDeadlineSeconds)', async () => {
    const { lines } = startRecordingAgentWatches();
    const stuck = `report-manual-${randomUUID().slice(0, 6)}-stuck`;
    await triggerRun(stuck, 1);
    await vi.waitFor(() => expect(lines.map((entry) => entry.line.line)).toContain(`run ${stuck} ran longer than 1 s: killed`), { timeout: 90_000, interval: 200 });
    expect(lines.filter((entry) => entry.line.line.startsWith(`run ${stuck} `)).map((entry) => entry.line.line)).toEqual([`run ${stuck} started`, `run ${stuck} ran longer than 1 s: killed`]);
  });

  it('does not report again the runs an earlier agent reported', async () => {
    const { lines } = startRecordingAgentWatches();
    const later = `report-manual-${randomUUID().slice(0, 6)}`;
    await triggerRun(later);
    await vi.waitFor(() => expect(lines.map((entry) => entry.line.line)).toContainEqual(expect.stringMatching(new RegExp(`^run ${later} exited with code 0`))), { timeout: 90_000, interval: 200 });
    const system = lines.filter((entry) => entry.line.stream === 'system').map((entry) => entry.line.line);
    expect(system.filter((line) => line.startsWith(`run ${good} `) || line.startsWith(`run ${bad} `))).toEqual([]);
    expect(system.filter((line) => line.startsWith(`run ${later} `))).toHaveLength(2);
  });
});

describe('Kubernetes driver: on_delete', () => {
  it('runs the on_delete Job, waited for, before the service’s objects go', async () => {
    const spec = jobSpec(cleanupId, 'cleanup', withOnDelete({ arguments: ['purge'], entrypoint: '/bin/tasks' }));
    const deployed = await perform('deploy', spec, cleanupId);
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    const torn = await perform('delete', spec, cleanupId, 'SERVICE_TEARDOWN');
    expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    const jobName = lifecycleJobNameOf({ id: cleanupId, name: 'cleanup' }, 'on_delete');
    expect(torn.text()).toContain(`Job ${jobName} started`);
    expect(torn.text()).toContain(`${jobName} is done`);
    expect(torn.text()).toContain(`Job ${jobName} completed`);
    expect(torn.text()).toContain('cleanup: on_delete succeeded');
    // The run came first: then everything of the service went, its Job included.
    expect(torn.text().indexOf('on_delete succeeded')).toBeLessThan(torn.text().indexOf('removed'));
    await vi.waitFor(async () => expect(await cluster.list('batch/v1', 'Job', namespace, `slipway.dev/service-id=${cleanupId}`)).toEqual([]), { timeout: 60_000, interval: 300 });
    expect(await cluster.list('v1', 'Secret', namespace, `slipway.dev/service-id=${cleanupId}`)).toEqual([]);
  });

  it('tells a failed on_delete and tears the service down all the same', async () => {
    const spec = jobSpec(brokenId, 'broken', withOnDelete({ arguments: ['fail'], entrypoint: null }));
    const deployed = await perform('deploy', spec, brokenId);
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    const torn = await perform('delete', spec, brokenId, 'SERVICE_TEARDOWN');
    expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    expect(torn.text()).toMatch(/broken: on_delete failed: Job .*-on-delete failed: exit code 7.*; the service is torn down all the same/);
    expect(troubles).toContainEqual(expect.stringMatching(/^broken: on_delete failed/));
    expect(torn.text()).toContain('removed');
    await vi.waitFor(async () => expect(await cluster.list('v1', 'Secret', namespace, `slipway.dev/service-id=${brokenId}`)).toEqual([]), { timeout: 60_000, interval: 300 });
  });

  it('tears down without running anything when no spec is served any more', async () => {
    const torn = await perform('delete', undefined, reportId, 'SERVICE_TEARDOWN');
    expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    expect(torn.text()).not.toContain('on_delete');
  });
});
