import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  Log,
  PatchStrategy,
  Watch,
  type KubernetesObject,
  type V1Deployment,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKubelet, OUTCOME_ANNOTATION, type FakeKubelet } from './support/fake-kubelet.ts';
import { startKubeCluster, type KubeCluster } from './support/kube-cluster.ts';

/**
 * The Kubernetes test fixture itself (docs/kubernetes-testing.md), against the real kube-apiserver, etcd,
 * kube-controller-manager and kube-scheduler 1.20.2, with the fake kubelet (a test double) as the only node.
 * It shows what a Kubernetes driver can rely on: server-side apply and its conflicts, the controllers turning a
 * Deployment into ready pods, a rollout judged complete from a watch, a Job completing, namespace deletion, and pod
 * logs streamed through the apiserver.
 */

let cluster: KubeCluster | undefined;
let kubelet: FakeKubelet | undefined;
let kc: KubeConfig;
let core: CoreV1Api;
let apps: AppsV1Api;
let batch: BatchV1Api;
let objects: KubernetesObjectApi;

beforeAll(async () => {
  // The first run on a machine builds the binaries (several minutes); afterwards the cluster starts in seconds.
  cluster = await startKubeCluster();
  kubelet = await startFakeKubelet({ kubeconfig: cluster.kubeconfig });
  kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
  batch = kc.makeApiClient(BatchV1Api);
  objects = KubernetesObjectApi.makeApiClient(kc);
}, 20 * 60_000);

afterAll(async () => {
  const stopped = cluster;
  try {
    await kubelet?.stop();
  } finally {
    await cluster?.stop();
  }
  if (stopped === undefined) return;
  // Nothing of the cluster is left: no process, no temp dir, no listening port.
  for (const { name, pid } of stopped.processes) {
    expect(() => process.kill(pid, 0), `${name} (pid ${pid}) still runs`).toThrow();
  }
  expect(existsSync(stopped.dir)).toBe(false);
  const port = Number(new URL(stopped.server).port);
  const refused = await new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
  expect(refused, `port ${port} still accepts connections`).toBe(true);
}, 60_000);

async function createNamespace(name: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'slipway' } } } });
}

function apply<T extends KubernetesObject>(object: T, fieldManager = 'slipway', force = false): Promise<T> {
  return objects.patch(object, undefined, undefined, fieldManager, force, PatchStrategy.ServerSideApply);
}

function deployment(namespace: string, name: string, replicas: number, annotations: Record<string, string> = {}): V1Deployment {
  const labels = { 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: { 'slipway.dev/service-id': name } },
      progressDeadlineSeconds: 60,
      template: {
        metadata: { labels, annotations },
        spec: { containers: [{ name: 'web', image: 'registry.invalid/web:1', ports: [{ containerPort: 8080, protocol: 'TCP' }] }] },
      },
    },
  };
}

/**
 * Watches one object until `verdict` says done (true) or failed (an Error): the list-then-watch a driver does, with
 * the re-watch on a dropped connection that client-node's Watch does not do by itself.
 */
async function watchUntil<T extends KubernetesObject>(
  path: string,
  name: string,
  verdict: (object: T) => boolean | Error,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const watch = new Watch(kc);
  while (Date.now() < deadline) {
    const result = await new Promise<T | Error | undefined>((resolve) => {
      let controller: AbortController | undefined;
      let settled = false;
      const settle = (value: T | Error | undefined): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        controller?.abort();
        resolve(value);
      };
      const timer = setTimeout(() => settle(undefined), Math.max(0, deadline - Date.now()));
      watch
        .watch(
          path,
          { fieldSelector: `metadata.name=${name}` },
          (type, object: T) => {
            if (type !== 'ADDED' && type !== 'MODIFIED') return;
            const judged = verdict(object);
            if (judged instanceof Error) settle(judged);
            else if (judged) settle(object);
          },
          () => settle(undefined),
        )
        .then(
          (abort) => {
            controller = abort;
            if (settled) abort.abort();
          },
          () => settle(undefined),
        );
    });
    if (result instanceof Error) throw result;
    if (result !== undefined) return result;
  }
  throw new Error(`${path} ${name}: not done after ${timeoutMs} ms`);
}

/** kubectl rollout status's rules (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go) for a Deployment. */
function deploymentRolledOut(d: V1Deployment): boolean | Error {
  const status = d.status ?? {};
  if ((d.metadata?.generation ?? 0) > (status.observedGeneration ?? 0)) return false;
  const progressing = status.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return new Error(`deployment ${d.metadata?.name ?? ''} exceeded its progress deadline`);
  const wanted = d.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  if (updated < wanted) return false;
  if ((status.replicas ?? 0) > updated) return false;
  if ((status.availableReplicas ?? 0) < updated) return false;
  return true;
}

function podsOf(namespace: string, serviceId: string): Promise<V1Pod[]> {
  return core.listNamespacedPod({ namespace, labelSelector: `slipway.dev/service-id=${serviceId}` }).then((list) => list.items);
}

describe('the real Kubernetes control plane with the fake kubelet', () => {
  it('applies a Deployment server-side as slipway, refuses a second manager without force, and rolls it out', async () => {
    const namespace = 'ssa-rollout';
    await createNamespace(namespace);

    const applied = await apply(deployment(namespace, 'web', 2));
    const managers = (applied.metadata?.managedFields ?? []).map((entry) => `${entry.manager ?? ''}:${entry.operation ?? ''}`);
    expect(managers).toContain('slipway:Apply');
    const generation = applied.metadata?.generation;
    // An identical re-apply is a no-op: no new generation, so no new rollout.
    const again = await apply(deployment(namespace, 'web', 2));
    expect(again.metadata?.generation).toBe(generation);

    // Another manager changing a field slipway owns is refused with 409 unless it forces.
    const replicasOnly = (replicas: number): V1Deployment => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace }, spec: { replicas } as V1Deployment['spec'] });
    const conflict = await apply(replicasOnly(3), 'someone-else').then(
      () => undefined,
      (error: unknown) => error as { code?: number; body?: string },
    );
    expect(conflict?.code).toBe(409);
    const status = JSON.parse(String(conflict?.body)) as { reason?: string; message?: string };
    expect(status.reason).toBe('Conflict');
    expect(status.message).toContain('conflict with "slipway": .spec.replicas');

    const rolledOut = await watchUntil<V1Deployment>(`/apis/apps/v1/namespaces/${namespace}/deployments`, 'web', deploymentRolledOut);
    expect(rolledOut.status?.availableReplicas).toBe(2);

    // kube-controller-manager made the ReplicaSet and its pods; kube-scheduler bound them to the fake node, which made them Ready.
    const replicaSets = await apps.listNamespacedReplicaSet({ namespace, labelSelector: 'slipway.dev/service-id=web' });
    expect(replicaSets.items).toHaveLength(1);
    expect(replicaSets.items[0]?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name: 'web' });
    const pods = await podsOf(namespace, 'web');
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(pod.spec?.nodeName).toBe(kubelet?.nodeName);
      expect(pod.status?.phase).toBe('Running');
      expect(pod.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');
    }

    // With force, the other manager takes the field over; slipway's next apply, forced as a driver applies its full
    // intent, takes it back.
    const forced = await apply(replicasOnly(3), 'someone-else', true);
    expect(forced.spec?.replicas).toBe(3);
    const back = await apply(deployment(namespace, 'web', 2), 'slipway', true);
    expect(back.spec?.replicas).toBe(2);
    expect(back.metadata?.managedFields?.find((entry) => entry.manager === 'someone-else')).toBeUndefined();

    // A changed pod template rolls out a new ReplicaSet; the old pods are deleted (their deletion finished by the fake kubelet).
    await apply(deployment(namespace, 'web', 2, { 'slipway.dev/config-hash': 'b' }));
    await watchUntil<V1Deployment>(`/apis/apps/v1/namespaces/${namespace}/deployments`, 'web', deploymentRolledOut);
    await expect.poll(async () => (await podsOf(namespace, 'web')).length, { timeout: 20_000 }).toBe(2);
  });

  it('reports a crash-looping rollout as not available, with the reason on the pod', async () => {
    const namespace = 'crashloop';
    await createNamespace(namespace);
    await apply(deployment(namespace, 'broken', 1, { [OUTCOME_ANNOTATION]: 'CrashLoopBackOff' }));
    await expect
      .poll(
        async () => (await podsOf(namespace, 'broken'))[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason,
        { timeout: 30_000 },
      )
      .toBe('CrashLoopBackOff');
    const current = await apps.readNamespacedDeployment({ name: 'broken', namespace });
    expect(deploymentRolledOut(current)).toBe(false);
    expect(current.status?.availableReplicas ?? 0).toBe(0);
  });

  it('runs a Job to Complete', async () => {
    const namespace = 'jobs';
    await createNamespace(namespace);
    const job: V1Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', namespace, labels: { 'app.kubernetes.io/managed-by': 'slipway' } },
      spec: {
        backoffLimit: 0,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'registry.invalid/migrate:1' }] } },
      },
    };
    await apply(job);
    const done = await watchUntil<V1Job>(`/apis/batch/v1/namespaces/${namespace}/jobs`, 'migrate', (current) => {
      const conditions = current.status?.conditions ?? [];
      if (conditions.some((condition) => condition.type === 'Failed' && condition.status === 'True')) return new Error('job failed');
      return conditions.some((condition) => condition.type === 'Complete' && condition.status === 'True');
    });
    expect(done.status?.succeeded).toBe(1);
    const read = await batch.readNamespacedJob({ name: 'migrate', namespace });
    expect(read.status?.completionTime).toBeDefined();
  });

  it('streams a pod log through the apiserver from the fake kubelet', async () => {
    const namespace = 'logs';
    await createNamespace(namespace);
    await apply(deployment(namespace, 'talker', 1));
    await watchUntil<V1Deployment>(`/apis/apps/v1/namespaces/${namespace}/deployments`, 'talker', deploymentRolledOut);
    const pod = (await podsOf(namespace, 'talker'))[0]?.metadata?.name ?? '';
    kubelet?.writeLog(namespace, pod, 'web', 'listening on 8080', 'GET / 200', 'GET /health 200');

    // tailLines without follow: the last lines, and the request ends.
    let tail = '';
    const tailSink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        tail += chunk.toString();
        callback();
      },
    });
    // client-node 2.0.1's Log.log never calls its `done` callback: the end of the log is the end of the stream it writes.
    await new Log(kc).log(namespace, pod, 'web', tailSink, { tailLines: 2 });
    await finished(tailSink);
    expect(tail).toBe('GET / 200\nGET /health 200\n');

    // follow: what is there, then lines as the container writes them.
    let followed = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        followed += chunk.toString();
        callback();
      },
    });
    // Aborting a follow makes client-node 2.0.1's internal response stream emit an AbortError that nothing listens
    // to (it pipes without forwarding errors): catch it on the source the sink is piped from, or the process dies.
    let streamError: Error | undefined;
    sink.on('pipe', (source) => {
      source.on('error', (error: Error) => {
        if (error.name !== 'AbortError') streamError = error;
      });
    });
    const controller = await new Log(kc).log(namespace, pod, 'web', sink, { follow: true, tailLines: 10 });
    try {
      await expect.poll(() => followed, { timeout: 10_000 }).toBe('listening on 8080\nGET / 200\nGET /health 200\n');
      kubelet?.writeLog(namespace, pod, 'web', 'a line written while following');
      await expect.poll(() => followed.endsWith('a line written while following\n'), { timeout: 10_000, interval: 20 }).toBe(true);
    } finally {
      controller.abort();
    }
    expect(streamError).toBeUndefined();
  });

  it('deletes a namespace with everything in it', async () => {
    const namespace = 'doomed';
    await createNamespace(namespace);
    await apply(deployment(namespace, 'web', 2));
    await watchUntil<V1Deployment>(`/apis/apps/v1/namespaces/${namespace}/deployments`, 'web', deploymentRolledOut);
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'settings' }, data: { a: '1' } } });

    await core.deleteNamespace({ name: namespace, propagationPolicy: 'Foreground' });
    // The namespace controller deletes the content (the fake kubelet finishes the pods' graceful deletion), then the namespace.
    await expect
      .poll(
        async () =>
          core.readNamespace({ name: namespace }).then(
            (current) => current.status?.phase ?? 'present',
            (error: unknown) => ((error as { code?: number }).code === 404 ? 'gone' : 'error'),
          ),
        { timeout: 60_000, interval: 250 },
      )
      .toBe('gone');
    const pods = await core.listPodForAllNamespaces({ labelSelector: 'slipway.dev/service-id=web' });
    expect(pods.items.filter((pod) => pod.metadata?.namespace === namespace)).toEqual([]);
    expect(kubelet?.errors).toEqual([]);
  });
});
