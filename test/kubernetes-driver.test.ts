import { randomUUID } from 'node:crypto';
import type { AppsV1Api, CoreV1Api, V1Deployment } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import type { KubernetesCluster } from '../src/engine/kubernetes/kubernetes-cluster.ts';
import { createKubernetesDriver, unsupportedKubernetesKindMessage } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { ANNOTATION_CONFIG_HASH, namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * The Kubernetes driver against a real control plane (kube-apiserver, etcd, controller manager and scheduler 1.20.2:
 * test/support/kube-cluster.ts) whose only node is the fake kubelet (a TEST DOUBLE that marks pods Ready, or crashing
 * for an image tagged `crash`). The driver is given tasks as the agent runtime gives them (carryOutTask).
 */

const environmentId = randomUUID();
const projectId = randomUUID();
const organizationId = randomUUID();
const webId = randomUUID();
const ordersId = randomUUID();
const namespace = namespaceOf(environmentId);
const webName = workloadNameOf({ id: webId, name: 'web' });

let world: KubeWorld | undefined;
let cluster: KubernetesCluster;
let driver: AgentDriver;
let apps: AppsV1Api;
let core: CoreV1Api;

function webSpec(overrides: { tag?: string; greeting?: string; hostnames?: string[]; publicPort?: boolean } = {}): Record<string, unknown> {
  const probe = { type: { kind: 'http', port: 8080, path: '/health', scheme: 'HTTP' }, initial_delay_seconds: 0, period_seconds: 10, timeout_seconds: 5, success_threshold: 1, failure_threshold: 3 };
  return {
    service: {
      id: webId,
      kind: 'CONTAINER',
      name: 'web',
      organizationId,
      environmentId,
      clusterId: randomUUID(),
      settings: {
        registry_id: randomUUID(),
        image_name: 'acme/web',
        tag: overrides.tag ?? '1.0',
        cpu: 250,
        memory: 256,
        min_running_instances: 1,
        max_running_instances: 3,
        ports: [{ id: randomUUID(), name: 'p8080', internal_port: 8080, external_port: 443, publicly_accessible: overrides.publicPort ?? true, is_default: true, protocol: 'HTTP', public_path: null, public_path_rewrite: null }],
        healthchecks: { readiness_probe: probe, liveness_probe: null },
        storage: [],
        arguments: ['--serve'],
      },
    },
    git_commit_id: null,
    image_tag: null,
    variables: [
      { key: 'GREETING', value: overrides.greeting ?? 'hello', mount_path: null, scope: 'SERVICE', secret: true },
      { key: 'DATABASE_URL', value: `postgresql://u:p@orders.${environmentId}.slipway.internal:5432/orders`, mount_path: null, scope: 'SERVICE', secret: true },
      { key: 'APP_CONFIG', value: '{"answer":42}', mount_path: '/etc/app/config.json', scope: 'SERVICE', secret: false },
    ],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: { reference: `registry.example.com/acme/web:${overrides.tag ?? '1.0'}`, pull_credentials: { server: 'registry.example.com', username: 'robot', password: 'pull-secret-1' } },
    git: null,
    database: null,
    routing: {
      hostnames: overrides.hostnames ?? ['web-prod.apps.example.com', 'shop.example.com'],
      internal: { hostname: `web.${environmentId}.slipway.internal`, ports: [8080] },
      peers: [
        { service_id: webId, hostname: `web.${environmentId}.slipway.internal` },
        { service_id: ordersId, hostname: `orders.${environmentId}.slipway.internal` },
      ],
    },
  };
}

async function perform(action: string, spec: Record<string, unknown> | undefined, kind = 'CONTAINER', subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE', serviceId = webId): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask(environmentId, serviceId, action, kind, subject), spec);
  await carryOutTask(driver, session, (event, message) => session.report(event, message));
  return session;
}

async function readDeployment(): Promise<V1Deployment> {
  return apps.readNamespacedDeployment({ name: webName, namespace });
}

function secretValue(data: Record<string, string> | undefined, key: string): string | undefined {
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

beforeAll(async () => {
  world = await startKubeWorld({
    kubelet: { outcome: (pod) => (pod.spec?.containers[0]?.image?.endsWith(':crash') === true ? { state: 'CrashLoopBackOff', exitCode: 3, restartCount: 4 } : undefined) },
  });
  ({ cluster, apps, core } = world);
  driver = createKubernetesDriver({ cluster, served: await cluster.servedKinds(), rolloutTimeoutMs: 90_000 });
}, 20 * 60_000);

afterAll(async () => {
  await world?.stop();
});

describe('Kubernetes driver: a container', () => {
  it('reads which versions of the moved kinds the server serves', async () => {
    expect(await cluster.servedKinds()).toEqual({ autoscaling: 'autoscaling/v2beta2', podDisruptionBudget: 'policy/v1beta1', cronJob: 'batch/v1beta1' });
    expect(await cluster.serverVersion()).toMatch(/^v1\.20\./);
  });

  it('deploys into its environment namespace: labelled objects applied by slipway, rolled out, names resolved to cluster DNS', async () => {
    const session = await perform('deploy', webSpec());
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain(`web rolled out in namespace ${namespace}`);

    const ns = await core.readNamespace({ name: namespace });
    expect(ns.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/environment-id': environmentId, 'slipway.dev/project-id': projectId });

    const deployment = await readDeployment();
    const labels = { 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/organization-id': organizationId, 'slipway.dev/project-id': projectId, 'slipway.dev/environment-id': environmentId, 'slipway.dev/service-id': webId };
    expect(deployment.metadata?.labels).toEqual(labels);
    expect(deployment.spec?.template.metadata?.labels).toEqual(labels);
    expect(deployment.spec?.selector.matchLabels).toEqual({ 'slipway.dev/service-id': webId });
    expect(deployment.metadata?.managedFields?.some((entry) => entry.manager === 'slipway' && entry.operation === 'Apply')).toBe(true);
    const container = deployment.spec?.template.spec?.containers[0];
    expect(container).toMatchObject({ image: 'registry.example.com/acme/web:1.0', args: ['--serve'], ports: [{ containerPort: 8080, protocol: 'TCP' }] });
    expect(container?.resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '250m', memory: '256Mi' } });
    expect(container?.readinessProbe?.httpGet).toMatchObject({ path: '/health', port: 8080 });
    expect(container?.volumeMounts).toEqual([{ name: 'files', mountPath: '/etc/app/config.json', subPath: 'file-0', readOnly: true }]);
    expect(deployment.spec?.template.spec?.imagePullSecrets).toEqual([{ name: `${webName}-pull` }]);
    expect(deployment.status?.availableReplicas).toBe(1);

    // Variables: a Secret the container reads whole; the peer's internal hostname became its Service's DNS name.
    const env = await core.readNamespacedSecret({ name: `${webName}-env`, namespace });
    expect(secretValue(env.data, 'GREETING')).toBe('hello');
    const ordersName = workloadNameOf({ id: ordersId, name: 'orders' });
    expect(secretValue(env.data, 'DATABASE_URL')).toBe(`postgresql://u:p@${ordersName}.${namespace}.svc.cluster.local:5432/orders`);
    const files = await core.readNamespacedSecret({ name: `${webName}-files`, namespace });
    expect(secretValue(files.data, 'file-0')).toBe('{"answer":42}');
    const pull = await core.readNamespacedSecret({ name: `${webName}-pull`, namespace });
    expect(pull.type).toBe('kubernetes.io/dockerconfigjson');
    expect(JSON.parse(secretValue(pull.data, '.dockerconfigjson') ?? '{}')).toMatchObject({ auths: { 'registry.example.com': { username: 'robot', password: 'pull-secret-1' } } });

    const service = await core.readNamespacedService({ name: webName, namespace });
    expect(service.spec?.ports?.map((port) => [port.port, port.protocol])).toEqual([[8080, 'TCP']]);
    const ingress = await cluster.read('networking.k8s.io/v1', 'Ingress', namespace, webName);
    expect((ingress?.spec as { rules: Array<{ host: string }> }).rules.map((rule) => rule.host)).toEqual(['web-prod.apps.example.com', 'shop.example.com']);
    const autoscaler = await cluster.read('autoscaling/v2beta2', 'HorizontalPodAutoscaler', namespace, webName);
    expect(autoscaler?.spec).toMatchObject({ minReplicas: 1, maxReplicas: 3, scaleTargetRef: { kind: 'Deployment', name: webName } });
    expect(await cluster.read('policy/v1beta1', 'PodDisruptionBudget', namespace, webName)).toBeDefined();
    // The release that rolled out is kept, for a failed rollout to go back to.
    expect(await cluster.read('v1', 'Secret', namespace, `${webName}-release`)).toBeDefined();
  });

  it('rolls the pods when a variable changes, and prunes what the intent no longer holds', async () => {
    const before = await readDeployment();
    const session = await perform('redeploy', webSpec({ greeting: 'hello again', publicPort: false }));
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    const after = await readDeployment();
    expect(after.spec?.template.metadata?.annotations?.[ANNOTATION_CONFIG_HASH]).not.toBe(before.spec?.template.metadata?.annotations?.[ANNOTATION_CONFIG_HASH]);
    expect(after.metadata?.generation).toBeGreaterThan(before.metadata?.generation ?? 0);
    expect(secretValue((await core.readNamespacedSecret({ name: `${webName}-env`, namespace })).data, 'GREETING')).toBe('hello again');
    // No public port any more: its Ingress is gone.
    expect(await cluster.read('networking.k8s.io/v1', 'Ingress', namespace, webName)).toBeUndefined();
  });

  it('fails a rollout whose pods crash, with the kubelet reason, and goes back to the release before', async () => {
    const session = await perform('deploy', webSpec({ tag: 'crash', greeting: 'hello again', publicPort: false }));
    expect(session.events()).toEqual(['take', 'built', 'fail']);
    expect(session.reports.at(-1)?.message).toMatch(/cannot run: CrashLoopBackOff/);
    expect(session.text()).toContain('going back to the release that ran before');
    await vi.waitFor(async () => expect((await readDeployment()).spec?.template.spec?.containers[0]?.image).toBe('registry.example.com/acme/web:1.0'), { timeout: 30_000, interval: 200 });
  });

  it('restarts with new pods of the same template, and stops by scaling to zero', async () => {
    const before = await readDeployment();
    const restarted = await perform('restart', webSpec({ greeting: 'hello again', publicPort: false }));
    expect(restarted.events(), restarted.text()).toEqual(['take', 'succeed']);
    const after = await readDeployment();
    expect(after.spec?.template.metadata?.annotations?.['slipway.dev/restarted-at']).toBeDefined();
    expect(after.spec?.template.spec?.containers[0]?.image).toBe(before.spec?.template.spec?.containers[0]?.image);

    const stopped = await perform('stop', undefined);
    expect(stopped.events()).toEqual(['take', 'succeed']);
    expect((await readDeployment()).spec?.replicas).toBe(0);
  });

  it('fails a kind it does not run, saying why', async () => {
    const spec = webSpec();
    Object.assign(spec.service as Record<string, unknown>, { kind: 'APPLICATION' });
    const session = await perform('deploy', spec, 'APPLICATION');
    expect(session.reports.at(-1)).toEqual({ event: 'fail', message: unsupportedKubernetesKindMessage('APPLICATION') });
  });

  it('tears the service down by its labels, and the namespace with the last service of its environment', async () => {
    const session = await perform('delete', undefined, 'CONTAINER', 'SERVICE_TEARDOWN');
    expect(session.events(), session.text()).toEqual(['take', 'succeed']);
    expect(session.text()).toContain(`namespace ${namespace} removed`);
    // Deleted in the foreground: each object goes once its dependents (ReplicaSets, pods) are gone.
    await vi.waitFor(
      async () => {
        expect(await cluster.list('apps/v1', 'Deployment', namespace, `slipway.dev/service-id=${webId}`)).toEqual([]);
        expect(await cluster.list('v1', 'Secret', namespace, `slipway.dev/service-id=${webId}`)).toEqual([]);
      },
      { timeout: 60_000, interval: 200 },
    );
    await vi.waitFor(async () => expect(await cluster.read('v1', 'Namespace', undefined, namespace)).toBeUndefined(), { timeout: 60_000, interval: 500 });
  });
});
