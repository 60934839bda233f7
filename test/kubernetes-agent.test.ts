import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AppsV1Api, CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { namespaceOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { spawnSlipway, waitForOutput } from './support/slipway-process.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * A SELF_MANAGED cluster whose agent is `slipway agent --driver kubernetes`, its own process, deploying onto a real
 * Kubernetes control plane (test/support/kube-cluster.ts) whose node is the fake kubelet (a TEST DOUBLE): a container
 * with a public port, a secret and a file variable, and autoscaling is deployed through the API; its objects are on
 * the apiserver; a variable change makes it OUT_OF_DATE and a redeploy rolls its pods; stop scales it to 0; deleting
 * the environment removes its namespace.
 */
const DEPLOY_TIMEOUT_MS = 120_000;

let world: KubeWorld | undefined;
let apps: AppsV1Api;
let core: CoreV1Api;
let networking: NetworkingV1Api;

beforeAll(async () => {
  world = await startKubeWorld();
  ({ apps, core, networking } = world);
}, 20 * 60_000);

afterAll(async () => {
  await world?.stop();
});

describeEachDatabase('slipway agent --driver kubernetes', (ctx) => {
  let baseUrl = '';
  const stateDirs: string[] = [];

  beforeAll(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const dir of stateDirs) {
      await killProcessesUnder(dir);
      await rm(dir, { recursive: true, force: true });
    }
  });

  function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    return vi.waitFor(
      async () => {
        const value = await read();
        expect(done(value), `timed out waiting for ${what}: last ${JSON.stringify(value)}`).toBe(true);
        return value;
      },
      { timeout: DEPLOY_TIMEOUT_MS, interval: 200 },
    );
  }

  it('deploys a container onto Kubernetes through the API, redeploys a variable change, stops it and removes its namespace with its environment', { timeout: 4 * DEPLOY_TIMEOUT_MS }, async () => {
    if (world === undefined) throw new Error('the Kubernetes cluster did not start');
    const { kube } = world;
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
    const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-kube-agent-'));
    stateDirs.push(stateDir);
    const agent = spawnSlipway(['agent', '--control-plane', baseUrl, '--state-dir', stateDir, '--enrollment-token', enrollmentToken, '--driver', 'kubernetes', '--kubeconfig', kube.kubeconfigPath], {
      HOME: stateDir,
      SLIPWAY_DATA_DIR: stateDir,
    });
    try {
      await waitForOutput(agent, /deploying onto Kubernetes v1\.20\.\d+ at https:\/\/127\.0\.0\.1:\d+/);
      expect(agent.printed()).toContain(`agent for cluster ${clusterId} (driver kubernetes)`);

      const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
        ctx().call(owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });
      const projectId = (await call('POST', `/organization/${organizationId}/project`, { name: uniqueName('p') })).json<{ id: string }>().id;
      const environment = await call('POST', `/project/${projectId}/environment`, { name: uniqueName('kube'), cluster: clusterId, mode: 'STAGING' });
      expect(environment.statusCode, environment.body).toBe(201);
      const environmentId = environment.json<{ id: string }>().id;
      const namespace = namespaceOf(environmentId);
      const registry = await call('POST', `/organization/${organizationId}/containerRegistry`, {
        name: uniqueName('registry'),
        kind: 'GENERIC_CR',
        url: 'https://registry.slipway-kube.invalid',
        config: { username: 'robot', password: 'pull-password-1' },
      });
      expect(registry.statusCode, registry.body).toBe(201);
      const created = await call('POST', `/environment/${environmentId}/container`, {
        name: 'shop',
        registry_id: registry.json<{ id: string }>().id,
        image_name: 'acme/shop',
        tag: '1.4.2',
        ports: [{ internal_port: 8080, publicly_accessible: true }],
        min_running_instances: 1,
        max_running_instances: 3,
        healthchecks: { readiness_probe: { type: { http: { path: '/health', port: 8080 } } } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const containerId = created.json<{ id: string }>().id;
      const greeting = await call('POST', `/container/${containerId}/secret`, { key: 'GREETING', value: 'hello from the cluster' });
      expect(greeting.statusCode, greeting.body).toBe(201);
      expect((await call('POST', `/container/${containerId}/environmentVariable`, { key: 'APP_CONFIG', value: 'answer: 42', mount_path: '/etc/shop/config.yaml' })).statusCode).toBe(201);

      const status = () => call('GET', `/container/${containerId}/status`).then((response) => response.json<{ state: string; message: string | null; service_deployment_status?: string }>());
      expect((await call('POST', `/container/${containerId}/deploy`, {})).statusCode).toBe(202);
      const deployed = await eventually(status, (s) => s.state === 'DEPLOYED' || s.state.endsWith('_ERROR'), 'DEPLOYED');
      expect(deployed.state, deployed.message ?? '').toBe('DEPLOYED');

      // On the apiserver: labelled, applied by slipway, the image from the registry with its login, the variables.
      const deployments = await apps.listNamespacedDeployment({ namespace, labelSelector: `slipway.dev/service-id=${containerId}` });
      expect(deployments.items).toHaveLength(1);
      const deployment = deployments.items[0];
      expect(deployment?.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/organization-id': organizationId, 'slipway.dev/project-id': projectId, 'slipway.dev/environment-id': environmentId });
      expect(deployment?.metadata?.managedFields?.some((entry) => entry.manager === 'slipway')).toBe(true);
      expect(deployment?.spec?.template.spec?.containers[0]?.image).toBe('registry.slipway-kube.invalid/acme/shop:1.4.2');
      const name = deployment?.metadata?.name ?? '';
      const env = await core.readNamespacedSecret({ name: `${name}-env`, namespace });
      expect(Buffer.from(env.data?.GREETING ?? '', 'base64').toString()).toBe('hello from the cluster');
      const pull = await core.readNamespacedSecret({ name: `${name}-pull`, namespace });
      expect(Buffer.from(pull.data?.['.dockerconfigjson'] ?? '', 'base64').toString()).toContain('pull-password-1');
      const link = (await call('GET', `/container/${containerId}/link`)).json<{ results: Array<{ url: string }> }>().results[0];
      const ingress = await networking.readNamespacedIngress({ name, namespace });
      expect(ingress.spec?.rules?.map((rule) => rule.host)).toEqual([new URL(link?.url ?? 'http://missing').hostname]);
      expect((await apps.readNamespacedDeployment({ name, namespace })).spec?.replicas).toBe(1);
      const logs = (await call('GET', `/container/${containerId}/log`)).json<{ results: Array<{ message: string }> }>().results.map((line) => line.message);
      expect(logs.some((line) => line.includes(`rolled out in namespace ${namespace}`))).toBe(true);

      // A variable change: OUT_OF_DATE, and a redeploy rolls the pod template.
      const generation = deployment?.metadata?.generation ?? 0;
      const greetingId = greeting.json<{ id: string }>().id;
      expect((await call('PUT', `/container/${containerId}/secret/${greetingId}`, { key: 'GREETING', value: 'hello again' })).statusCode).toBe(200);
      expect((await status()).service_deployment_status).toBe('OUT_OF_DATE');
      expect((await call('POST', `/container/${containerId}/redeploy`)).statusCode).toBe(202);
      await eventually(status, (s) => s.state === 'DEPLOYED' && s.service_deployment_status === 'UP_TO_DATE', 'the redeployment');
      const rolled = await apps.readNamespacedDeployment({ name, namespace });
      expect(rolled.metadata?.generation).toBeGreaterThan(generation);
      expect(Buffer.from((await core.readNamespacedSecret({ name: `${name}-env`, namespace })).data?.GREETING ?? '', 'base64').toString()).toBe('hello again');

      // Stop: scaled to zero.
      expect((await call('POST', `/container/${containerId}/stop`)).statusCode).toBe(202);
      await eventually(status, (s) => s.state === 'STOPPED' || s.state.endsWith('_ERROR'), 'STOPPED');
      expect((await apps.readNamespacedDeployment({ name, namespace })).spec?.replicas).toBe(0);

      // Deleting the environment tears its service down, and its namespace goes with it.
      expect((await call('DELETE', `/environment/${environmentId}`)).statusCode).toBe(204);
      await eventually(
        () => core.listNamespace({ labelSelector: `slipway.dev/environment-id=${environmentId}` }).then((list) => list.items.length),
        (count) => count === 0,
        'the namespace gone',
      );
    } finally {
      agent.kill('SIGTERM');
      await agent.result;
    }
  });
});
