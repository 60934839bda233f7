import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Namespace, PersistentVolumeClaim, Secret, ServiceAccount } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import { createKubernetesCluster, loadKubeconfig } from '../src/engine/kubernetes/kubernetes-cluster.ts';
import { createKubernetesDriver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { installHelmValues, renderAgentInstall, type AgentInstallValues } from '../src/engine/kubernetes/kubernetes-install.ts';
import { namespaceOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { AGENT_PERMISSIONS, describePermission, missingPermissions, policyRulesOf, reviewPermissions, type NeededPermission } from '../src/engine/kubernetes/kubernetes-permissions.ts';
import type { KubeObject } from '../src/engine/kubernetes/kubernetes-workload.ts';
import { enrolledCluster, clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { runSlipway, spawnSlipway, waitForOutput } from './support/slipway-process.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/** A port nothing listens on now (the agent's health address). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The agent's install (docs/kubernetes.md, "Installing the agent"): the manifests rendered and validated; the Helm
 * chart (real helm) rendering the same objects from the values the API answers; the manifests applied to a real
 * apiserver (test/support/kube-world.ts, its node the fake kubelet, a TEST DOUBLE), where the installed
 * ServiceAccount's own permission review finds nothing missing, a reduced role is reported exactly, and the driver
 * deploys, restarts, stops and tears down a service as that ServiceAccount; the API operations on both databases;
 * the cluster facts an agent heartbeats.
 */

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const CHART = path.join(ROOT, 'charts/slipway-agent');
const HELM_LABELS = ['app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'helm.sh/chart'];

const MODELS: Record<string, new (object: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'apps/v1/Deployment': Deployment,
};

function validate(object: KubeObject): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (Model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object as never).validate();
}

function sampleValues(overrides: Partial<AgentInstallValues> = {}): AgentInstallValues {
  return { ...installHelmValues({ controlPlaneUrl: 'https://slipway.example.com', clusterId: randomUUID(), enrollmentToken: 'slw_enroll_sample', version: '0.1.0' }), ...overrides };
}

async function helmBinary(): Promise<string> {
  const { stdout } = await execFileAsync('bash', [path.join(ROOT, 'scripts/helm-binary.sh')]);
  return stdout.trim();
}

/** helm lint and helm template of the chart with these values (YAML), the rendered objects parsed. */
async function helmRender(valuesYaml: string, namespace: string): Promise<{ lint: string; objects: KubeObject[] }> {
  const helm = await helmBinary();
  const dir = await mkdtemp(path.join(tmpdir(), 'slipway-helm-values-'));
  try {
    const file = path.join(dir, 'values.yaml');
    await writeFile(file, valuesYaml);
    const env = { ...process.env, HELM_CACHE_HOME: path.join(dir, 'cache'), HELM_CONFIG_HOME: path.join(dir, 'config'), HELM_DATA_HOME: path.join(dir, 'data') };
    const lint = await execFileAsync(helm, ['lint', CHART, '-f', file], { env });
    const template = await execFileAsync(helm, ['template', 'slipway-agent', CHART, '--namespace', namespace, '-f', file], { env });
    const objects = parseAllDocuments(template.stdout)
      .map((document) => document.toJS() as KubeObject | null)
      .filter((object): object is KubeObject => object !== null);
    return { lint: lint.stdout, objects };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An object without Helm's own labels, wherever labels are (metadata and the pod template). */
function withoutHelmLabels(object: KubeObject): KubeObject {
  return JSON.parse(
    JSON.stringify(object, (key, value: unknown) => {
      if (key !== 'labels' || typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(Object.entries(value).filter(([label]) => !HELM_LABELS.includes(label)));
    }),
  ) as KubeObject;
}

const byKindAndName = (a: KubeObject, b: KubeObject) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`);

describe('the install manifests', () => {
  it('validate against the Kubernetes schemas and hold what the agent needs', () => {
    const values = sampleValues();
    const objects = renderAgentInstall(values);
    for (const object of objects) validate(object);
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
      'Namespace/slipway-system',
      'ServiceAccount/slipway-agent',
      'ClusterRole/slipway-agent',
      'ClusterRoleBinding/slipway-agent',
      'Secret/slipway-agent-enrollment',
      'PersistentVolumeClaim/slipway-agent-state',
      'Deployment/slipway-agent',
    ]);
    for (const object of objects) {
      expect(object.metadata.labels).toMatchObject({ 'app.kubernetes.io/name': 'slipway-agent', 'slipway.dev/cluster-id': values.clusterId });
      // The workloads' label: the agent's runtime follows the pods carrying it, and its own pod is none of them.
      expect(object.metadata.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
    }
    const deployment = objects.at(-1) as KubeObject & { spec: { strategy: unknown; replicas: number; template: { spec: Record<string, never> } } };
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const container = (deployment.spec.template.spec.containers as unknown as Array<Record<string, unknown>>)[0];
    expect(container).toMatchObject({
      image: 'ghcr.io/slipway/slipway:0.1.0',
      args: expect.arrayContaining(['agent', '--driver', 'kubernetes', '--enrollment-token-file', '/var/run/slipway/enrollment/token', '--health-address', '0.0.0.0:8081']) as unknown,
      livenessProbe: { httpGet: { path: '/healthz', port: 'health' } },
      readinessProbe: { httpGet: { path: '/readyz', port: 'health' } },
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
    });
    // The token is in the Secret only, never in the pod's arguments or environment.
    expect(JSON.stringify(container)).not.toContain(values.enrollmentToken);
    expect(deployment.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
  });

  it('grant exactly the table of needed permissions, which the chart holds too', async () => {
    const role = renderAgentInstall(sampleValues()).find((object) => object.kind === 'ClusterRole') as KubeObject & { rules: ReturnType<typeof policyRulesOf> };
    expect(missingPermissions(role.rules.map((rule) => ({ ...rule, resourceNames: [] })))).toEqual([]);
    const granted = role.rules.flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${verb} ${group}/${resource}`))));
    const needed = new Set(AGENT_PERMISSIONS.flatMap((permission) => permission.verbs.map((verb) => `${verb} ${permission.group}/${permission.resource}`)));
    expect(new Set(granted)).toEqual(needed);
    expect(granted.some((entry) => entry.includes('*'))).toBe(false);
    const chartRules = parse(await readFile(path.join(CHART, 'files/cluster-role-rules.yaml'), 'utf8')) as unknown;
    expect(chartRules, `charts/slipway-agent/files/cluster-role-rules.yaml must be:\n${stringify(policyRulesOf(), { lineWidth: 0 })}`).toEqual(policyRulesOf());
  });

  it('render through the Helm chart as the same objects (helm lint, helm template)', { timeout: 120_000 }, async () => {
    const values = sampleValues({ existingSecret: '' });
    const helmValues = { ...values, namespace: { name: 'slipway-system', create: true } };
    const { lint, objects } = await helmRender(stringify(helmValues), 'slipway-system');
    expect(lint).toContain('0 chart(s) failed');
    expect(objects.map(withoutHelmLabels).sort(byKindAndName)).toEqual(renderAgentInstall(helmValues).sort(byKindAndName));
    for (const object of objects) expect(object.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
  });

  it('leave the Secret to an existing one when told', async () => {
    const values = sampleValues({ existingSecret: 'my-agent-secret', enrollmentToken: '' });
    const objects = renderAgentInstall(values);
    expect(objects.some((object) => object.kind === 'Secret')).toBe(false);
    const { objects: charted } = await helmRender(stringify(values), 'slipway-system');
    expect(charted.map(withoutHelmLabels).sort(byKindAndName)).toEqual(objects.sort(byKindAndName));
  });
});

describe('the permission table read against rules', () => {
  it('counts wildcards and ignores rules limited to named objects', () => {
    expect(missingPermissions([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])).toEqual([]);
    const limited = missingPermissions([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'], resourceNames: ['one'] }]);
    expect(limited).toHaveLength(AGENT_PERMISSIONS.reduce((sum, permission) => sum + permission.verbs.length, 0));
    expect(limited[0]).toBe('get namespaces cluster-wide');
    expect(describePermission('patch', { scope: 'namespace', group: 'apps', resource: 'deployments/scale' })).toBe('patch deployments.apps/scale in namespaces');
  });
});

let world: KubeWorld | undefined;

beforeAll(async () => {
  world = await startKubeWorld();
}, 20 * 60_000);

afterAll(async () => {
  await world?.stop();
});

function requireWorld(): KubeWorld {
  if (world === undefined) throw new Error('the Kubernetes cluster did not start');
  return world;
}

/** A kubeconfig for a ServiceAccount, from the token its Secret holds (1.20's token controller writes it). */
async function serviceAccountConfig(namespace: string, name: string): Promise<KubeConfig> {
  const { core, config } = requireWorld();
  const token = await vi.waitFor(
    async () => {
      const account = await core.readNamespacedServiceAccount({ name, namespace });
      const secretName = account.secrets?.[0]?.name;
      expect(secretName, `no token Secret for ${namespace}/${name} yet`).toBeDefined();
      const secret = await core.readNamespacedSecret({ name: secretName ?? '', namespace });
      const value = secret.data?.token;
      expect(value).toBeDefined();
      return Buffer.from(value ?? '', 'base64').toString('utf8');
    },
    { timeout: 60_000, interval: 200 },
  );
  const admin = config.getCurrentCluster();
  if (admin === null) throw new Error('the admin kubeconfig has no cluster');
  const accountConfig = new KubeConfig();
  accountConfig.loadFromOptions({
    clusters: [admin],
    users: [{ name, token }],
    contexts: [{ name, cluster: admin.name, user: name }],
    currentContext: name,
  });
  return loadKubeconfig({ kind: 'yaml', yaml: accountConfig.exportConfig() });
}

/** What the reduced role below lacks, in the table's order. */
const REDUCED_MISSING = [
  'list nodes cluster-wide',
  ...['list', 'watch', 'patch'].map((verb) => `${verb} jobs.batch cluster-wide`),
  'delete secrets in namespaces',
  'get statefulsets.apps/scale in namespaces',
  'patch statefulsets.apps/scale in namespaces',
  ...['get', 'list', 'watch', 'create', 'patch', 'delete'].map((verb) => `${verb} jobs.batch in namespaces`),
];
let reducedAccount: Promise<KubeConfig> | undefined;

/** A ServiceAccount `reduced` bound to the agent's table less a few permissions (REDUCED_MISSING); made once. */
function reducedAccountConfig(): Promise<KubeConfig> {
  reducedAccount ??= (async () => {
    const { cluster } = requireWorld();
    const dropped = (permission: NeededPermission) =>
      permission.resource === 'nodes' || permission.resource === 'statefulsets/scale' || (permission.group === 'batch' && permission.resource === 'jobs');
    const reduced = AGENT_PERMISSIONS.map((permission) => (permission.resource === 'secrets' ? { ...permission, verbs: permission.verbs.filter((verb) => verb !== 'delete') } : permission)).filter(
      (permission) => !dropped(permission),
    );
    const namespace = 'slipway-reduced';
    const labels = { 'app.kubernetes.io/name': 'slipway-agent-reduced' };
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } });
    await cluster.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reduced', namespace, labels } });
    await cluster.apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'slipway-agent-reduced', labels }, rules: policyRulesOf(reduced) });
    await cluster.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'slipway-agent-reduced', labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'slipway-agent-reduced' },
      subjects: [{ kind: 'ServiceAccount', name: 'reduced', namespace }],
    });
    return serviceAccountConfig(namespace, 'reduced');
  })();
  return reducedAccount;
}

function containerSpec(environmentId: string, serviceId: string): Record<string, unknown> {
  return {
    service: {
      id: serviceId,
      kind: 'CONTAINER',
      name: 'web',
      organizationId: randomUUID(),
      environmentId,
      clusterId: randomUUID(),
      settings: {
        registry_id: randomUUID(),
        image_name: 'acme/web',
        tag: '1.0',
        cpu: 250,
        memory: 256,
        min_running_instances: 1,
        max_running_instances: 2,
        ports: [{ id: randomUUID(), name: 'p8080', internal_port: 8080, external_port: 443, publicly_accessible: true, is_default: true, protocol: 'HTTP', public_path: null, public_path_rewrite: null }],
        healthchecks: { readiness_probe: null, liveness_probe: null },
        storage: [],
        arguments: [],
      },
    },
    git_commit_id: null,
    image_tag: null,
    variables: [{ key: 'GREETING', value: 'hello', mount_path: null, scope: 'SERVICE', secret: true }],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: randomUUID() },
    image: { reference: 'registry.example.com/acme/web:1.0', pull_credentials: null },
    git: null,
    database: null,
    routing: { hostnames: ['web.apps.example.com'], internal: { hostname: `web.${environmentId}.slipway.internal`, ports: [8080] }, peers: [] },
  };
}

describe('the install on a cluster', () => {
  const values = sampleValues();
  let agentConfig: KubeConfig;

  beforeAll(async () => {
    const { cluster } = requireWorld();
    for (const object of renderAgentInstall(values)) await cluster.apply(object);
    agentConfig = await serviceAccountConfig(values.namespace.name, 'slipway-agent');
  }, 120_000);

  it('gives the installed ServiceAccount every permission the agent needs', async () => {
    expect(await reviewPermissions(agentConfig)).toEqual({ missing: [], incomplete: false });
    expect(await createKubernetesCluster(agentConfig).nodeCount()).toBe(1);
  });

  it('reports exactly what a reduced role leaves out', async () => {
    const reducedConfig = await reducedAccountConfig();
    expect(await reviewPermissions(reducedConfig)).toEqual({ missing: REDUCED_MISSING, incomplete: false });
    await expect(createKubernetesCluster(reducedConfig).nodeCount()).rejects.toThrow();
  });

  it('is enough for the driver: deploy, restart, stop and teardown as the installed ServiceAccount', { timeout: 180_000 }, async () => {
    const cluster = createKubernetesCluster(agentConfig);
    const driver = createKubernetesDriver({ cluster, served: await cluster.servedKinds(), rolloutTimeoutMs: 90_000 });
    const environmentId = randomUUID();
    const serviceId = randomUUID();
    const spec = containerSpec(environmentId, serviceId);
    const perform = async (action: string, subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE') => {
      const session = new TaskSessionHarness(agentTask(environmentId, serviceId, action, 'CONTAINER', subject), action === 'stop' || subject === 'SERVICE_TEARDOWN' ? undefined : spec);
      await carryOutTask(driver, session, (event, message) => session.report(event, message));
      return session;
    };
    const deployed = await perform('deploy');
    expect(deployed.events(), `${deployed.text()}\n${JSON.stringify(deployed.reports)}`).toEqual(['take', 'built', 'succeed']);
    const restarted = await perform('restart');
    expect(restarted.events(), restarted.text()).toEqual(['take', 'succeed']);
    const stopped = await perform('stop');
    expect(stopped.events(), stopped.text()).toEqual(['take', 'succeed']);
    const removed = await perform('delete', 'SERVICE_TEARDOWN');
    expect(removed.events(), removed.text()).toEqual(['take', 'succeed']);
    const { core } = requireWorld();
    await vi.waitFor(async () => expect((await core.listNamespace()).items.map((item) => item.metadata?.name)).not.toContain(namespaceOf(environmentId)), { timeout: 60_000, interval: 250 });
  });

  it("lets the agent grant a TERRAFORM run's Role on Secrets and Leases (RBAC grants only what the granter holds)", async () => {
    const cluster = createKubernetesCluster(agentConfig);
    const namespace = namespaceOf(randomUUID());
    const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    const metadata = { name: 'run-terraform', namespace, labels: { 'app.kubernetes.io/managed-by': 'slipway' } };
    await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: metadata.labels } });
    await cluster.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata });
    await cluster.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata,
      rules: [
        { apiGroups: [''], resources: ['secrets'], verbs },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs },
      ],
    });
    await cluster.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: metadata.name },
      subjects: [{ kind: 'ServiceAccount', name: metadata.name, namespace }],
    });
    expect(await cluster.list('rbac.authorization.k8s.io/v1', 'RoleBinding', namespace, 'app.kubernetes.io/managed-by=slipway')).toHaveLength(1);
    await cluster.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  });
});

/** Everything both apps log, at level info: an enrollment token must never be in it. */
const logStream = new PassThrough();
const logs: string[] = [];
logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));

describeEachDatabase(
  'the install operations',
  (ctx) => {
    /** The app on a port of 127.0.0.1 (for the CLI and the agent, processes of their own); listens once. */
    async function listening(): Promise<string> {
      if (ctx().app.server.address() === null) await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      return `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    }

    async function yamlOf(auth: string, url: string) {
      const response = await ctx().call(auth, { method: 'GET', url, headers: { accept: 'application/x-yaml' } });
      return response;
    }

    it('answer the chart values and the manifests, each with a new one-time enrollment token that is never logged', { timeout: 120_000 }, async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);

      const valuesAnswer = await yamlOf(owner.auth, `/organization/${organizationId}/cluster/${clusterId}/installationHelmValues`);
      expect(valuesAnswer.statusCode, valuesAnswer.body).toBe(200);
      expect(valuesAnswer.headers['content-type']).toMatch(/^application\/x-yaml/);
      expect(valuesAnswer.headers['cache-control']).toBe('no-store');
      const values = parse(valuesAnswer.body) as AgentInstallValues;
      expect(new URL(values.controlPlaneUrl).protocol).toMatch(/^https?:$/);
      expect(values).toMatchObject({ clusterId, namespace: { name: 'slipway-system', create: false }, existingSecret: '' });
      expect(values.enrollmentToken).toMatch(/\S{20,}/);

      const manifestsAnswer = await yamlOf(owner.auth, `/organization/${organizationId}/cluster/${clusterId}/installationManifests`);
      expect(manifestsAnswer.statusCode, manifestsAnswer.body).toBe(200);
      expect(manifestsAnswer.headers['content-type']).toMatch(/^application\/x-yaml/);
      const manifests = parseAllDocuments(manifestsAnswer.body).map((document) => document.toJS() as KubeObject);
      const secret = manifests.find((object) => object.kind === 'Secret') as KubeObject & { stringData: Record<string, string> };
      const manifestToken = secret.stringData['enrollment-token'] ?? '';
      expect(manifestToken).not.toBe(values.enrollmentToken);
      // Same cluster, same objects (the token aside): the chart with the answered values renders the manifests.
      expect(manifests).toEqual(renderAgentInstall({ ...values, enrollmentToken: manifestToken, namespace: { ...values.namespace, create: true } }));
      const { lint, objects } = await helmRender(valuesAnswer.body, values.namespace.name);
      expect(lint).toContain('0 chart(s) failed');
      expect(objects.map(withoutHelmLabels).sort(byKindAndName)).toEqual(
        manifests
          .filter((object) => object.kind !== 'Namespace')
          .map((object) => (object.kind === 'Secret' ? { ...object, stringData: { ...(object.stringData as object), 'enrollment-token': values.enrollmentToken } } : object))
          .sort(byKindAndName),
      );

      // Minting the manifests' token retired the values' one; the newest enrolls.
      const stale = await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: values.enrollmentToken } });
      expect(stale.statusCode).toBe(401);
      const enrolled = await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: manifestToken } });
      expect(enrolled.statusCode, enrolled.body).toBe(200);

      const everything = logs.join('');
      expect(everything).toContain('installationManifests');
      expect(everything).not.toContain(values.enrollmentToken);
      expect(everything).not.toContain(manifestToken);
    });

    it('are printed by `slipway cluster install-manifests`, plain or as Helm values', { timeout: 60_000 }, async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
      const baseUrl = await listening();
      const token = await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('token'), scope: 'ADMIN' });
      const home = await mkdtemp(path.join(tmpdir(), 'slipway-install-cli-'));
      try {
        const env = { HOME: home, XDG_CONFIG_HOME: home, SLIPWAY_URL: baseUrl, SLIPWAY_TOKEN: token, SLIPWAY_ORGANIZATION: organizationId };
        const manifests = await runSlipway(['cluster', 'install-manifests', clusterId], env);
        expect(manifests.code, manifests.stderr).toBe(0);
        const objects = parseAllDocuments(manifests.stdout).map((document) => document.toJS() as KubeObject);
        expect(objects.map((object) => object.kind)).toEqual(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Secret', 'PersistentVolumeClaim', 'Deployment']);
        const values = await runSlipway(['cluster', 'install-manifests', clusterId, '--helm-values'], env);
        expect(values.code, values.stderr).toBe(0);
        expect(parse(values.stdout)).toMatchObject({ clusterId, namespace: { name: 'slipway-system', create: false } });
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    });

    it('answer 404 for a cluster the organization does not have, 400 for a LOCAL cluster, 403 to a viewer', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const unknown = await yamlOf(owner.auth, `/organization/${organizationId}/cluster/${randomUUID()}/installationHelmValues`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json<{ message: string }>().message).toMatch(/cluster .* not found/);
      expect((await yamlOf(owner.auth, `/organization/${organizationId}/cluster/${randomUUID()}/installationManifests`)).statusCode).toBe(404);

      await ctx().allowLocalClusters(organizationId);
      const local = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/cluster`,
        payload: { name: uniqueName('local'), kubernetes: 'LOCAL', cloud_provider: 'ON_PREMISE', region: 'local' },
      });
      expect(local.statusCode, local.body).toBe(201);
      const localId = local.json<{ id: string }>().id;
      for (const operation of ['installationHelmValues', 'installationManifests']) {
        const refused = await yamlOf(owner.auth, `/organization/${organizationId}/cluster/${localId}/${operation}`);
        expect(refused.statusCode).toBe(400);
        expect(refused.json<{ message: string }>().message).toBe('only self-managed clusters run the Slipway agent; this cluster is LOCAL');
      }

      const { clusterId } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      expect((await yamlOf(viewer.auth, `/organization/${organizationId}/cluster/${clusterId}/installationManifests`)).statusCode).toBe(403);
    });

    it('keep what an agent heartbeats of its cluster, and show missing permissions as the cluster status message', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
      const beat = (cluster?: Record<string, unknown>) =>
        ctx().call(undefined, {
          method: 'POST',
          url: '/operator/v1/heartbeat',
          headers: { authorization: `Bearer ${credential}` },
          payload: { agent_version: '0.1.0', driver: 'kubernetes', started_at: new Date().toISOString(), ...(cluster === undefined ? {} : { cluster }) },
        });
      const agentStatus = async () => (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/agent` })).json<Record<string, unknown>>();
      const clusterStatus = async () => (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/status` })).json<{ message: string | null }>();

      const missing = ['list nodes cluster-wide', 'delete secrets in namespaces'];
      expect((await beat({ kubernetes_version: 'v1.20.2', node_count: null, missing_permissions: missing })).statusCode).toBe(200);
      expect((await agentStatus()).cluster).toEqual({ kubernetes_version: 'v1.20.2', node_count: null, missing_permissions: missing });
      const expected = 'the agent lacks Kubernetes permissions: list nodes cluster-wide, delete secrets in namespaces';
      expect((await clusterStatus()).message).toBe(expected);

      expect((await beat({ kubernetes_version: 'v1.20.2', node_count: 3, missing_permissions: [] })).statusCode).toBe(200);
      expect((await agentStatus()).cluster).toEqual({ kubernetes_version: 'v1.20.2', node_count: 3, missing_permissions: [] });
      expect((await clusterStatus()).message).toBeNull();

      // An agent that reports no facts (the local driver's) shows none.
      expect((await beat()).statusCode).toBe(200);
      expect((await agentStatus()).cluster).toBeUndefined();
    });

    it('runs the real agent with its token from a file: probes answer, and what it lacks reaches the cluster status', { timeout: 180_000 }, async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
      const baseUrl = await listening();
      const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-install-agent-'));
      try {
        const kubeconfigPath = path.join(stateDir, 'kubeconfig');
        await writeFile(kubeconfigPath, (await reducedAccountConfig()).exportConfig(), { mode: 0o600 });
        const tokenPath = path.join(stateDir, 'token');
        await writeFile(tokenPath, `${enrollmentToken}\n`, { mode: 0o600 });
        const healthPort = await freePort();
        const agent = spawnSlipway(
          ['agent', '--control-plane', baseUrl, '--state-dir', path.join(stateDir, 'agent'), '--enrollment-token-file', tokenPath, '--driver', 'kubernetes', '--kubeconfig', kubeconfigPath, '--health-address', `127.0.0.1:${healthPort}`],
          { HOME: stateDir, SLIPWAY_DATA_DIR: stateDir },
        );
        try {
          await waitForOutput(agent, /agent for cluster .* deploying onto Kubernetes v1\.20\.\d+/);
          expect(agent.printed()).toContain('the agent lacks permissions: list nodes cluster-wide');
          expect(agent.printed()).not.toContain(enrollmentToken);
          expect((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);
          await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200), { timeout: 30_000, interval: 200 });
          const status = await vi.waitFor(
            async () => {
              const answer = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/agent` })).json<{ cluster?: unknown }>();
              expect(answer.cluster).toBeDefined();
              return answer;
            },
            { timeout: 30_000, interval: 200 },
          );
          expect(status.cluster).toEqual({ kubernetes_version: expect.stringMatching(/^v1\.20\.\d+$/) as unknown, node_count: null, missing_permissions: REDUCED_MISSING });
          const clusterStatus = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/status` })).json<{ message: string | null }>();
          expect(clusterStatus.message).toBe(`the agent lacks Kubernetes permissions: ${REDUCED_MISSING.join(', ')}`);
        } finally {
          agent.kill('SIGTERM');
          await agent.result;
        }
        // Enrolled once: the credential is kept in the state directory, and the token file is not needed again.
        expect(JSON.parse(await readFile(path.join(stateDir, 'agent', 'agent-credential.json'), 'utf8'))).toMatchObject({ cluster_id: clusterId });
      } finally {
        await killProcessesUnder(stateDir);
        await rm(stateDir, { recursive: true, force: true });
      }
    });
  },
  { logStream },
);
