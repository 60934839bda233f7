import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeConfig, KubernetesObjectApi, PatchStrategy, setHeaderOptions, type CoreV1Api, type KubernetesObject, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthOf, parseTimestamped, startKubernetesRuntime, type KubernetesRuntime } from '../src/engine/kubernetes/kubernetes-runtime.ts';
import type { AgentWorkloadHealth, AgentWorkloadLogLine } from '../src/protocol/agent-protocol.ts';
import { namespaceOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { OUTCOME_ANNOTATION } from './support/fake-kubelet.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { spawnSlipway, waitForOutput } from './support/slipway-process.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * The Kubernetes driver's runtime (kubernetes-runtime.ts) against a real control plane (test/support/kube-cluster.ts)
 * whose only node is the fake kubelet (a TEST DOUBLE: it marks pods running, or crash-looping for an image tagged
 * `crash`, and serves the log lines the test writes). Deployments are applied directly with client-node, labelled as
 * the driver labels them; the runtime's sinks are recording test doubles in place of the control plane. The last
 * suite goes end to end: `slipway agent --driver kubernetes` against a control plane, a line written by the kubelet
 * read back through the service's logs endpoint (issue 19's measured goal: under a second).
 */

const namespace = `rt-${randomUUID().slice(0, 8)}`;
const webId = randomUUID();
const brokenId = randomUUID();

let world: KubeWorld | undefined;
let config: KubeConfig;
let core: CoreV1Api;
let objects: KubernetesObjectApi;
let runtime: KubernetesRuntime | undefined;
const troubles: string[] = [];
/** What reached the sinks, each with when it arrived. */
const logged: { serviceId: string; line: AgentWorkloadLogLine; arrivedAt: number }[] = [];
const reports: { serviceId: string; report: AgentWorkloadHealth }[] = [];

function deployment(name: string, serviceId: string, image: string): V1Deployment {
  const labels = { 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': serviceId };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'slipway.dev/service-id': serviceId } },
      template: { metadata: { labels }, spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image }] } },
    },
  };
}

async function apply(object: KubernetesObject): Promise<void> {
  await objects.patch(object, undefined, undefined, 'slipway', true, PatchStrategy.ServerSideApply);
}

async function runningPod(serviceId: string): Promise<V1Pod> {
  let found: V1Pod | undefined;
  await expect
    .poll(
      async () => {
        const pods = await core.listNamespacedPod({ namespace, labelSelector: `slipway.dev/service-id=${serviceId}` });
        found = pods.items.find((pod) => pod.metadata?.deletionTimestamp === undefined && pod.status?.containerStatuses?.[0]?.state?.running !== undefined);
        return found !== undefined;
      },
      { timeout: 60_000, interval: 100 },
    )
    .toBe(true);
  if (found === undefined) throw new Error('no running pod');
  return found;
}

function linesOf(serviceId: string): string[] {
  return logged.filter((entry) => entry.serviceId === serviceId).map((entry) => entry.line.line);
}

beforeAll(async () => {
  world = await startKubeWorld({
    kubelet: { outcome: (pod) => (pod.spec?.containers[0]?.image?.endsWith(':crash') === true ? { state: 'CrashLoopBackOff', exitCode: 3, restartCount: 4 } : undefined) },
  });
  ({ config, core } = world);
  objects = KubernetesObjectApi.makeApiClient(config);
  await core.createNamespace({ body: { metadata: { name: namespace, labels: { 'app.kubernetes.io/managed-by': 'slipway' } } } });
  runtime = startKubernetesRuntime({
    config,
    recoveryMs: 300,
    onTrouble: (message) => troubles.push(message),
    workloadLogs: async (serviceId, lines) => {
      const arrivedAt = performance.now();
      for (const line of lines) logged.push({ serviceId, line, arrivedAt });
    },
    workloadHealth: async (serviceId, report) => {
      reports.push({ serviceId, report });
    },
  });
}, 20 * 60_000);

afterAll(async () => {
  try {
    await runtime?.stop();
  } finally {
    await world?.stop();
  }
});

describe('Kubernetes runtime: logs and health of Slipway pods', () => {
  it('streams a running pod’s log into the service’s logs with the pod as instance, then a later line without repeats', async () => {
    await apply(deployment('web', webId, 'registry.invalid/web:1'));
    const pod = await runningPod(webId);
    const podName = pod.metadata?.name ?? '';
    world?.kubelet.writeLog(namespace, podName, 'app', 'listening on 8080', 'GET / 200');
    await expect.poll(() => linesOf(webId), { timeout: 10_000, interval: 20 }).toEqual(['listening on 8080', 'GET / 200']);
    for (const entry of logged) {
      expect(entry.line).toMatchObject({ stream: 'stdout', instance: podName });
      expect(Number.isNaN(Date.parse(entry.line.at))).toBe(false);
    }

    // A line written while the stream is open follows the others (how fast: npm run bench:k8s).
    const marker = `a later line ${randomUUID()}`;
    world?.kubelet.writeLog(namespace, podName, 'app', marker);
    await expect.poll(() => logged.some((entry) => entry.line.line === marker), { timeout: 10_000, interval: 5 }).toBe(true);
    expect(linesOf(webId)).toEqual(['listening on 8080', 'GET / 200', marker]);
  });

  it('reports a crash-looping service RESTARTING with the kubelet’s reason and restarts, once', async () => {
    await apply(deployment('broken', brokenId, 'registry.invalid/broken:crash'));
    await expect.poll(() => reports.filter((entry) => entry.serviceId === brokenId).length, { timeout: 60_000, interval: 50 }).toBe(1);
    const [first] = reports.filter((entry) => entry.serviceId === brokenId);
    expect(first?.report).toMatchObject({ health: 'RESTARTING', restarts: 4 });
    expect(first?.report.message).toMatch(/^CrashLoopBackOff: pod broken-[a-z0-9-]+, container app: last exit code 3 \(Error\), 4 restart\(s\)/);
    // A healthy service says nothing: RUNNING is its starting point.
    expect(reports.filter((entry) => entry.serviceId === webId)).toEqual([]);
    expect(runtime?.openStreams()).toBe(1);
  });

  it('follows a pod through a crash loop and back: RESTARTING, then RUNNING, and its log resumes where it left off', async () => {
    const pod = await runningPod(webId);
    const podName = pod.metadata?.name ?? '';
    const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const outcome = (value: string | null) => core.patchNamespacedPod({ name: podName, namespace, body: { metadata: { annotations: { [OUTCOME_ANNOTATION]: value } } } }, mergePatch);

    // The container stops running: its stream is let go, and the service is RESTARTING.
    await outcome('CrashLoopBackOff');
    await expect.poll(() => reports.filter((entry) => entry.serviceId === webId).map((entry) => entry.report.health), { timeout: 30_000, interval: 20 }).toEqual(['RESTARTING']);
    await expect.poll(() => runtime?.openStreams(), { timeout: 10_000, interval: 20 }).toBe(0);
    // Written while nobody follows: read when the container runs again, after the lines already sent and only once.
    world?.kubelet.writeLog(namespace, podName, 'app', 'written during the crash loop');

    await outcome('Running');
    await expect.poll(() => reports.filter((entry) => entry.serviceId === webId).map((entry) => entry.report.health), { timeout: 30_000, interval: 20 }).toEqual(['RESTARTING', 'RUNNING']);
    await expect.poll(() => linesOf(webId).at(-1), { timeout: 10_000, interval: 20 }).toBe('written during the crash loop');
    world?.kubelet.writeLog(namespace, podName, 'app', 'after recovery');
    await expect.poll(() => linesOf(webId).at(-1), { timeout: 10_000, interval: 20 }).toBe('after recovery');
    const lines = linesOf(webId);
    expect(lines.slice(0, 2)).toEqual(['listening on 8080', 'GET / 200']);
    expect(lines.slice(3)).toEqual(['written during the crash loop', 'after recovery']);
    expect(new Set(lines).size).toBe(lines.length);
  });

  it('reports a failed pod of a long-running workload FAILED', async () => {
    const failedId = randomUUID();
    const labels = { 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': failedId };
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'lone', labels, annotations: { [OUTCOME_ANNOTATION]: 'Failed', 'fake-kubelet.slipway.dev/exit-code': '2' } },
        spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'app', image: 'registry.invalid/lone:1' }] },
      },
    });
    await expect.poll(() => reports.filter((entry) => entry.serviceId === failedId).map((entry) => entry.report), { timeout: 30_000, interval: 20 }).toEqual([
      { health: 'FAILED', restarts: 0, message: 'pod lone failed: Error (exit code 2)' },
    ]);
    await core.deleteNamespacedPod({ name: 'lone', namespace });
  });

  it('stops its pods’ streams with a deleted pod, and every stream when stopped', async () => {
    // A deleted pod's stream goes with it (the Deployment's next pod gets one of its own).
    const old = await runningPod(webId);
    await core.deleteNamespacedPod({ name: old.metadata?.name ?? '', namespace });
    await expect
      .poll(async () => (await runningPod(webId)).metadata?.name !== old.metadata?.name, { timeout: 60_000, interval: 100 })
      .toBe(true);
    const next = await runningPod(webId);
    world?.kubelet.writeLog(namespace, next.metadata?.name ?? '', 'app', 'from the new pod');
    await expect.poll(() => logged.find((entry) => entry.line.line === 'from the new pod')?.line.instance, { timeout: 10_000, interval: 20 }).toBe(next.metadata?.name);
    await expect.poll(() => runtime?.openStreams(), { timeout: 10_000, interval: 20 }).toBe(1);

    const stopping = runtime;
    await stopping?.stop();
    expect(stopping?.openStreams()).toBe(0);
    // Nothing more arrives once stopped, and a second stop is harmless.
    const count = logged.length;
    world?.kubelet.writeLog(namespace, next.metadata?.name ?? '', 'app', 'after stop');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(logged.length).toBe(count);
    await stopping?.stop();
    // Not one stream or watch failed along the way (aborts at stop and pod deletion are not failures).
    expect(troubles.filter((message) => !message.includes('cannot be followed'))).toEqual([]);
    expect(world?.kubelet.errors).toEqual([]);
  });
});

describe('Kubernetes runtime: watches that end, and an apiserver that refuses', () => {
  it('keeps watching across watches the apiserver ends, reading pods that ran before it from their last lines', async () => {
    const seen: { serviceId: string; report: AgentWorkloadHealth }[] = [];
    const lines: AgentWorkloadLogLine[] = [];
    const told: string[] = [];
    const second = startKubernetesRuntime({
      config,
      // The apiserver ends every watch after a second: several ends before the new pod below.
      watchTimeoutSeconds: 1,
      initialTailLines: 2,
      onTrouble: (message) => told.push(message),
      workloadLogs: async (_serviceId, batch) => void lines.push(...batch),
      workloadHealth: async (serviceId, report) => void seen.push({ serviceId, report }),
    });
    try {
      // A service already crash-looping when the runtime starts is reported at once; a running pod's log is read
      // from its last lines (its earlier ones were the previous agent's to send).
      await expect.poll(() => seen.map((entry) => `${entry.serviceId === brokenId ? 'broken' : entry.serviceId}:${entry.report.health}`), { timeout: 20_000, interval: 20 }).toEqual(['broken:RESTARTING']);
      const web = await runningPod(webId);
      await expect.poll(() => lines.map((line) => line.line), { timeout: 10_000, interval: 20 }).toEqual(['from the new pod', 'after stop']);
      expect(lines.every((line) => line.instance === web.metadata?.name)).toBe(true);

      await new Promise((resolve) => setTimeout(resolve, 3_500));
      const laterId = randomUUID();
      await apply(deployment('later', laterId, 'registry.invalid/later:crash'));
      await expect.poll(() => seen.filter((entry) => entry.serviceId === laterId).map((entry) => entry.report.health), { timeout: 30_000, interval: 20 }).toEqual(['RESTARTING']);
      expect(told.filter((message) => !message.includes('cannot be followed'))).toEqual([]);
    } finally {
      await second.stop();
    }
    expect(second.openStreams()).toBe(0);
  });

  it('tells a refused list as trouble, tries again, and stops at once', async () => {
    const refused = new KubeConfig();
    refused.loadFromString(world?.kube.kubeconfig ?? '');
    const user = refused.getCurrentUser();
    if (user === null) throw new Error('the kubeconfig has no user');
    refused.users = refused.users.map((entry) => (entry.name === user.name ? { ...entry, token: 'not-a-token' } : entry));
    const told: string[] = [];
    const third = startKubernetesRuntime({ config: refused, backoffMinMs: 50, onTrouble: (message) => told.push(message), workloadLogs: async () => undefined });
    await expect.poll(() => told.length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(2);
    expect(told[0]).toMatch(/^listing the Kubernetes pods failed \(again in 50 ms\): the Kubernetes API answered 401/);
    expect(told[1]).toContain('again in 100 ms');
    // Stopping during a back-off ends the runtime (a hung stop would fail the test at its timeout).
    await third.stop();
  });
});

describe('Kubernetes runtime: reading pods and log lines', () => {
  it('reads the kubelet’s timestamps into sortable keys', () => {
    const a = parseTimestamped('2026-01-02T03:04:05.5Z hello world');
    const b = parseTimestamped('2026-01-02T03:04:05.123456789Z later');
    expect(a).toEqual({ key: expect.any(String), at: '2026-01-02T03:04:05.500Z', line: 'hello world' });
    expect(b.line).toBe('later');
    expect((b.key ?? '') < (a.key ?? '')).toBe(true);
    expect(parseTimestamped('no stamp').key).toBeUndefined();
  });

  it('judges a service from its pods: OOMKilled, image pulls, a failed pod, a Job’s failed run', () => {
    const pod = (name: string, status: V1Pod['status'], owner = 'ReplicaSet'): V1Pod => ({ metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: owner, name: 'o', uid: 'u' }] }, status });
    const oom = healthOf([
      pod('a', { phase: 'Running', containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] }),
    ]);
    expect(oom).toMatchObject({ health: 'RESTARTING', restarts: 2, signature: 'RESTARTING:OOMKilled' });
    expect(oom.message).toBe('OOMKilled: pod a, container app: last exit code 137 (OOMKilled), 2 restart(s)');
    const pull = (reason: string) => healthOf([pod('b', { phase: 'Pending', containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message: 'Back-off pulling image' } } }] })]);
    expect(pull('ErrImagePull').signature).toBe(pull('ImagePullBackOff').signature);
    expect(pull('CreateContainerConfigError')).toMatchObject({ health: 'RESTARTING', message: 'CreateContainerConfigError: pod b, container app: Back-off pulling image' });
    const failed = pod('c', { phase: 'Failed', reason: 'Evicted', message: 'The node was low on memory.' });
    expect(healthOf([failed])).toMatchObject({ health: 'FAILED', message: 'pod c failed: Evicted (The node was low on memory.)' });
    // Replaced by a running pod, an evicted one is no failed service; a Job's failed run is the Job's to record.
    expect(healthOf([failed, pod('d', { phase: 'Running', containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] })]).health).toBe('RUNNING');
    expect(healthOf([pod('e', { phase: 'Failed' }, 'Job')]).health).toBe('RUNNING');
  });
});

describeEachDatabase('slipway agent --driver kubernetes: a pod’s log in the service’s logs', (ctx) => {
  const stateDirs: string[] = [];

  afterAll(async () => {
    for (const dir of stateDirs) {
      await killProcessesUnder(dir);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads a line the kubelet wrote through the service logs endpoint in under a second', { timeout: 240_000 }, async () => {
    if (world === undefined) throw new Error('the Kubernetes cluster did not start');
    const { kube, kubelet } = world;
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
    const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-kube-runtime-'));
    stateDirs.push(stateDir);
    const agent = spawnSlipway(['agent', '--control-plane', baseUrl, '--state-dir', stateDir, '--enrollment-token', enrollmentToken, '--driver', 'kubernetes', '--kubeconfig', kube.kubeconfigPath], {
      HOME: stateDir,
      SLIPWAY_DATA_DIR: stateDir,
    });
    try {
      await waitForOutput(agent, /deploying onto Kubernetes v1\.20\.\d+/);
      const call = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) => ctx().call(owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });
      const projectId = (await call('POST', `/organization/${organizationId}/project`, { name: uniqueName('p') })).json<{ id: string }>().id;
      const environmentId = (await call('POST', `/project/${projectId}/environment`, { name: uniqueName('kube'), cluster: clusterId, mode: 'STAGING' })).json<{ id: string }>().id;
      const registry = await call('POST', `/organization/${organizationId}/containerRegistry`, { name: uniqueName('registry'), kind: 'GENERIC_CR', url: 'https://registry.slipway-kube.invalid', config: {} });
      expect(registry.statusCode, registry.body).toBe(201);
      const created = await call('POST', `/environment/${environmentId}/container`, { name: 'talker', registry_id: registry.json<{ id: string }>().id, image_name: 'acme/talker', tag: '1', ports: [], healthchecks: {} });
      expect(created.statusCode, created.body).toBe(201);
      const containerId = created.json<{ id: string }>().id;
      expect((await call('POST', `/container/${containerId}/deploy`, {})).statusCode).toBe(202);
      await expect
        .poll(async () => (await call('GET', `/container/${containerId}/status`)).json<{ state: string }>().state, { timeout: 120_000, interval: 200 })
        .toBe('DEPLOYED');
      const pods = await core.listNamespacedPod({ namespace: namespaceOf(environmentId), labelSelector: `slipway.dev/service-id=${containerId}` });
      const pod = pods.items.find((item) => item.metadata?.deletionTimestamp === undefined);
      const podName = pod?.metadata?.name ?? '';
      const container = pod?.spec?.containers[0]?.name ?? '';

      // How fast it is readable is npm run bench:k8s's to measure.
      const marker = `end to end ${randomUUID()}`;
      kubelet.writeLog(namespaceOf(environmentId), podName, container, marker);
      await expect
        .poll(
          async () => {
            const lines = (await call('GET', `/container/${containerId}/log`)).json<{ results: Array<{ message: string; pod_name?: string }> }>().results;
            // The endpoint names the line's instance `pod_name`, as the original API does.
            return lines.find((line) => line.message === marker)?.pod_name;
          },
          { timeout: 10_000, interval: 10 },
        )
        .toBe(podName);
    } finally {
      agent.kill('SIGTERM');
      await agent.result;
    }
  });
});
