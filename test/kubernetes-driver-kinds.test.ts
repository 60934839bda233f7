import { randomUUID } from 'node:crypto';
import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import type { KubernetesCluster } from '../src/engine/kubernetes/kubernetes-cluster.ts';
import { MANAGED_DATABASE_MESSAGE } from '../src/engine/kubernetes/kubernetes-database.ts';
import { createKubernetesDriver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { GIT_JOB_MESSAGE, lifecycleJobNameOf } from '../src/engine/kubernetes/kubernetes-job.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * The Kubernetes driver's DATABASE and JOB kinds against a real control plane (kube-apiserver, etcd, controller
 * manager and scheduler 1.20.2: test/support/kube-cluster.ts) whose only node is the fake kubelet, a TEST DOUBLE: it
 * runs no container, it writes the pod status a kubelet would (Ready for a database's pod, Succeeded for a job's, or
 * Failed with an exit code for an image tagged `fail`), and serves the log lines the test gives it. Nothing provisions
 * volumes here, so the double binds the database's pod itself (a scheduler leaves a pod with an unbound claim alone).
 */

const environmentId = randomUUID();
const projectId = randomUUID();
const organizationId = randomUUID();
const namespace = namespaceOf(environmentId);
const ordersId = randomUUID();
const migrateId = randomUUID();
const reportId = randomUUID();
const ordersName = workloadNameOf({ id: ordersId, name: 'orders' });
const labels = (serviceId: string) => ({
  'app.kubernetes.io/managed-by': 'slipway',
  'slipway.dev/organization-id': organizationId,
  'slipway.dev/project-id': projectId,
  'slipway.dev/environment-id': environmentId,
  'slipway.dev/service-id': serviceId,
});

let world: KubeWorld | undefined;
let cluster: KubernetesCluster;
let driver: AgentDriver;
let apps: AppsV1Api;
let core: CoreV1Api;

function baseSpec(serviceId: string, kind: string, name: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    service: { id: serviceId, kind, name, organizationId, environmentId, clusterId: randomUUID(), settings },
    git_commit_id: null,
    image_tag: null,
    variables: [],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: null,
    git: null,
    database: null,
    routing: { hostnames: [], internal: null, peers: [{ service_id: ordersId, hostname: `orders.${environmentId}.slipway.internal` }] },
    ...extra,
  };
}

function databaseSpec(mode: 'CONTAINER' | 'MANAGED' = 'CONTAINER'): Record<string, unknown> {
  const settings = { type: 'POSTGRESQL', version: '16', mode, accessibility: 'PRIVATE', cpu: 250, memory: 256, storage: 10, instance_type: mode === 'MANAGED' ? 'db.t3.micro' : null, annotations_groups: [], labels_groups: [], icon_uri: 'app://slipway-console/database' };
  return baseSpec(ordersId, 'DATABASE', 'orders', settings, {
    database: { type: 'POSTGRESQL', version: '16', username: 'u0123456789abcdef', password: 'db-password-1', database_name: 'orders', shared: false },
    routing: { hostnames: [], internal: { hostname: `orders.${environmentId}.slipway.internal`, ports: [5432] }, peers: [{ service_id: ordersId, hostname: `orders.${environmentId}.slipway.internal` }] },
  });
}

function jobSpec(serviceId: string, name: string, schedule: Record<string, unknown>, options: { tag?: string; git?: boolean } = {}): Record<string, unknown> {
  const registryId = randomUUID();
  const source = options.git === true
    ? { kind: 'docker', git_repository: { url: 'https://git.example.com/acme/jobs.git', branch: 'main', root_path: '/', git_token_id: null, provider: 'GITHUB' }, dockerfile_path: 'Dockerfile', dockerfile_raw: null, docker_target_build_stage: null }
    : { kind: 'image', image_name: 'acme/tasks', tag: options.tag ?? '1.0', registry_id: registryId };
  const settings = { cpu: 250, memory: 256, gpu: 0, ephemeral_storage_in_gib: null, cpu_architecture: 'AMD64', max_nb_restart: 0, max_duration_seconds: 120, auto_preview: true, port: null, source, healthchecks: {}, schedule, auto_deploy: true, annotations_groups: [], labels_groups: [], icon_uri: 'app://slipway-console/job' };
  return baseSpec(serviceId, 'JOB', name, settings, {
    variables: [{ key: 'DATABASE_URL', value: `postgresql://u:p@orders.${environmentId}.slipway.internal:5432/orders`, mount_path: null, scope: 'SERVICE', secret: true }],
    image: options.git === true ? null : { reference: `registry.example.com/acme/tasks:${options.tag ?? '1.0'}`, pull_credentials: null },
  });
}

const lifecycle = (onStart: Record<string, unknown> | null) => ({ kind: 'LIFECYCLE', lifecycle_type: 'GENERIC', on_start: onStart, on_stop: null, on_delete: null });
const cron = { kind: 'CRON', cronjob: { arguments: ['report', '--daily'], entrypoint: null, timezone: 'Europe/Paris', scheduled_at: '0 6 * * *' } };

async function perform(action: string, spec: Record<string, unknown> | undefined, serviceId: string, kind: string, subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE'): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask(environmentId, serviceId, action, kind, subject), spec);
  await carryOutTask(driver, session, (event, message) => session.report(event, message));
  return session;
}

function secretValue(data: Record<string, string> | undefined, key: string): string | undefined {
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

beforeAll(async () => {
  world = await startKubeWorld({
    kubelet: {
      bindPendingPods: true,
      outcome: (pod, kubelet) => {
        const image = pod.spec?.containers[0]?.image ?? '';
        if (!(pod.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'Job')) return undefined;
        kubelet.writeLog(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', 'main', `running ${pod.spec?.containers[0]?.args?.join(' ') ?? ''}`);
        return image.endsWith(':fail') ? { state: 'Failed', exitCode: 7 } : { state: 'Succeeded' };
      },
    },
  });
  ({ cluster, apps, core } = world);
  driver = createKubernetesDriver({ cluster, served: await cluster.servedKinds(), rolloutTimeoutMs: 90_000 });
}, 20 * 60_000);

afterAll(async () => {
  await world?.stop();
});

describe('Kubernetes driver: a database', () => {
  it('runs PostgreSQL as a labelled StatefulSet with its claim, credentials Secret and Service, rolled out', async () => {
    const session = await perform('deploy', databaseSpec(), ordersId, 'DATABASE');
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain(`orders rolled out in namespace ${namespace}`);

    const statefulSet = await apps.readNamespacedStatefulSet({ name: ordersName, namespace });
    expect(statefulSet.metadata?.labels).toEqual(labels(ordersId));
    expect(statefulSet.spec?.template.metadata?.labels).toEqual(labels(ordersId));
    expect(statefulSet.spec?.replicas).toBe(1);
    const container = statefulSet.spec?.template.spec?.containers[0];
    expect(container?.image).toBe('postgres:16');
    expect(container?.readinessProbe?.tcpSocket?.port).toBe(5432);
    expect(container?.env?.map((variable) => [variable.name, variable.valueFrom?.secretKeyRef?.name])).toEqual([
      ['POSTGRES_USER', `${ordersName}-credentials`],
      ['POSTGRES_PASSWORD', `${ordersName}-credentials`],
      ['POSTGRES_DB', `${ordersName}-credentials`],
      ['PGDATA', `${ordersName}-credentials`],
    ]);
    expect(statefulSet.spec?.volumeClaimTemplates?.[0]?.metadata?.labels).toEqual(labels(ordersId));
    expect(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).toEqual({ storage: '10Gi' });
    expect(statefulSet.status?.readyReplicas).toBe(1);

    const credentials = await core.readNamespacedSecret({ name: `${ordersName}-credentials`, namespace });
    expect(secretValue(credentials.data, 'POSTGRES_USER')).toBe('u0123456789abcdef');
    expect(secretValue(credentials.data, 'POSTGRES_PASSWORD')).toBe('db-password-1');
    expect(secretValue(credentials.data, 'POSTGRES_DB')).toBe('orders');
    // The intent hostname resolves to this Service (clusterResolver names it by workloadNameOf).
    const service = await core.readNamespacedService({ name: ordersName, namespace });
    expect(service.spec?.ports?.map((port) => [port.port, port.protocol])).toEqual([[5432, 'TCP']]);
    expect(service.metadata?.labels).toEqual(labels(ordersId));
    const headless = await core.readNamespacedService({ name: `${ordersName}-headless`, namespace });
    expect(headless.spec?.clusterIP).toBe('None');
    // The claim the StatefulSet made carries the service's labels: teardown finds it by them.
    const claims = await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: `slipway.dev/service-id=${ordersId}` });
    expect(claims.items.map((claim) => claim.metadata?.name)).toEqual([`data-${ordersName}-0`]);
  });

  it('stops by scaling to zero, and comes back at one instance on the next deployment', async () => {
    const stopped = await perform('stop', undefined, ordersId, 'DATABASE');
    expect(stopped.events(), stopped.text()).toEqual(['take', 'succeed']);
    expect((await apps.readNamespacedStatefulSet({ name: ordersName, namespace })).spec?.replicas).toBe(0);
    const again = await perform('deploy', databaseSpec(), ordersId, 'DATABASE');
    expect(again.events(), again.text()).toEqual(['take', 'built', 'succeed']);
    expect((await apps.readNamespacedStatefulSet({ name: ordersName, namespace })).spec?.replicas).toBe(1);
  });

  it('fails a managed database: no cloud provisioner here', async () => {
    const managedId = randomUUID();
    const spec = databaseSpec('MANAGED');
    Object.assign(spec.service as Record<string, unknown>, { id: managedId });
    const session = await perform('deploy', spec, managedId, 'DATABASE');
    expect(session.reports.at(-1)).toEqual({ event: 'fail', message: MANAGED_DATABASE_MESSAGE });
    expect(await cluster.list('apps/v1', 'StatefulSet', undefined, `slipway.dev/service-id=${managedId}`)).toEqual([]);
  });
});

describe('Kubernetes driver: a job', () => {
  it('creates a cron job in the version the server serves, suspends it on stop and resumes it on deploy', async () => {
    const session = await perform('deploy', jobSpec(reportId, 'report', cron), reportId, 'JOB');
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    // 1.20 serves CronJob in batch/v1beta1 only, which has no time zone: the log says the zone is not honoured.
    expect(session.text()).toContain("the schedule runs in the controller's zone (UTC), not Europe/Paris");
    const name = workloadNameOf({ id: reportId, name: 'report' });
    const cronJob = await cluster.read('batch/v1beta1', 'CronJob', namespace, name);
    const spec = cronJob?.spec as { schedule: string; concurrencyPolicy: string; suspend: boolean; jobTemplate: { metadata: { labels: Record<string, string> }; spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ image: string; args: string[] }> } } } } };
    expect(cronJob?.metadata.labels).toEqual(labels(reportId));
    expect(spec).toMatchObject({ schedule: '0 6 * * *', concurrencyPolicy: 'Forbid', suspend: false });
    expect(spec.jobTemplate.metadata.labels).toEqual(labels(reportId));
    expect(spec.jobTemplate.spec.template.metadata.labels).toEqual(labels(reportId));
    expect(spec.jobTemplate.spec.template.spec.containers[0]).toMatchObject({ image: 'registry.example.com/acme/tasks:1.0', args: ['report', '--daily'] });
    // The job's variables: the peer's internal hostname became its Service's cluster DNS name.
    const env = await core.readNamespacedSecret({ name: `${name}-env`, namespace });
    expect(secretValue(env.data, 'DATABASE_URL')).toBe(`postgresql://u:p@${ordersName}.${namespace}.svc.cluster.local:5432/orders`);

    const stopped = await perform('stop', undefined, reportId, 'JOB');
    expect(stopped.events(), stopped.text()).toEqual(['take', 'succeed']);
    expect(((await cluster.read('batch/v1beta1', 'CronJob', namespace, name))?.spec as { suspend: boolean }).suspend).toBe(true);
    const resumed = await perform('deploy', jobSpec(reportId, 'report', cron), reportId, 'JOB');
    expect(resumed.events(), resumed.text()).toEqual(['take', 'built', 'succeed']);
    expect(((await cluster.read('batch/v1beta1', 'CronJob', namespace, name))?.spec as { suspend: boolean }).suspend).toBe(false);
  });

  it('runs a lifecycle job on start: its pod succeeds, its logs and exit code are in the log, the deployment succeeds', async () => {
    const session = await perform('deploy', jobSpec(migrateId, 'migrate', lifecycle({ arguments: ['migrate', 'up'], entrypoint: null })), migrateId, 'JOB');
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain('running migrate up');
    expect(session.text()).toMatch(/exited with code 0/);
    expect(session.text()).toContain(`Job ${lifecycleJobNameOf({ id: migrateId, name: 'migrate' }, 'on_start')} completed`);
    const job = await cluster.read('batch/v1', 'Job', namespace, lifecycleJobNameOf({ id: migrateId, name: 'migrate' }, 'on_start'));
    expect(job?.metadata.labels).toEqual(labels(migrateId));
    expect(job?.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 120 });
  });

  it('runs it again on the next deployment (a new Job): a pod that fails fails the deployment with its exit code', async () => {
    const session = await perform('deploy', jobSpec(migrateId, 'migrate', lifecycle({ arguments: ['migrate', 'up'], entrypoint: null }), { tag: 'fail' }), migrateId, 'JOB');
    expect(session.events(), session.text()).toEqual(['take', 'built', 'fail']);
    expect(session.reports.at(-1)?.message).toMatch(/^on_start failed: Job .* failed: exit code 7 \(Error\)/);
    expect(session.text()).toMatch(/exited with code 7/);
  });

  it('runs on_stop as a Job of its own when the service is stopped', async () => {
    const schedule = { ...lifecycle({ arguments: ['migrate', 'up'], entrypoint: null }), on_stop: { arguments: ['drain'], entrypoint: '/bin/tasks' } };
    const deployed = await perform('deploy', jobSpec(migrateId, 'migrate', schedule), migrateId, 'JOB');
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    const stopped = await perform('stop', jobSpec(migrateId, 'migrate', schedule), migrateId, 'JOB');
    expect(stopped.events(), stopped.text()).toEqual(['take', 'succeed']);
    expect(stopped.text()).toContain('running drain');
    const job = await cluster.read('batch/v1', 'Job', namespace, lifecycleJobNameOf({ id: migrateId, name: 'migrate' }, 'on_stop'));
    expect((job?.spec as { template: { spec: { containers: Array<{ command: string[] }> } } }).template.spec.containers[0]?.command).toEqual(['/bin/tasks']);
  });

  it('refuses a job built from git, saying why', async () => {
    const gitId = randomUUID();
    const session = await perform('deploy', jobSpec(gitId, 'built', lifecycle({ arguments: [], entrypoint: null }), { git: true }), gitId, 'JOB');
    expect(session.reports.at(-1)).toEqual({ event: 'fail', message: GIT_JOB_MESSAGE });
  });

});

describe('Kubernetes driver: teardown of databases and jobs', () => {
  it('tears each down by its labels — the database with its claim — and the namespace with the last service', async () => {
    for (const [serviceId, kind] of [[ordersId, 'DATABASE'], [reportId, 'JOB'], [migrateId, 'JOB']] as const) {
      const session = await perform('delete', undefined, serviceId, kind, 'SERVICE_TEARDOWN');
      expect(session.events(), session.text()).toEqual(['take', 'succeed']);
    }
    await vi.waitFor(
      async () => {
        expect(await cluster.list('apps/v1', 'StatefulSet', namespace, `slipway.dev/service-id=${ordersId}`)).toEqual([]);
        expect(await cluster.list('v1', 'PersistentVolumeClaim', namespace, `slipway.dev/service-id=${ordersId}`)).toEqual([]);
        expect(await cluster.list('batch/v1beta1', 'CronJob', namespace, 'app.kubernetes.io/managed-by=slipway')).toEqual([]);
        expect(await cluster.list('batch/v1', 'Job', namespace, 'app.kubernetes.io/managed-by=slipway')).toEqual([]);
      },
      { timeout: 60_000, interval: 300 },
    );
    await vi.waitFor(async () => expect(await cluster.read('v1', 'Namespace', undefined, namespace)).toBeUndefined(), { timeout: 60_000, interval: 500 });
  });
});
