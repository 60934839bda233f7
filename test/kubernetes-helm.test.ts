import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import { createKubernetesDriver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { HELM_MISSING_MESSAGE, prepareChart } from '../src/engine/kubernetes/kubernetes-helm-chart.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import { clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { spawnSlipway, waitForOutput } from './support/slipway-process.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * The HELM kind on the Kubernetes driver against a real control plane (test/support/kube-world.ts, the fake kubelet
 * a TEST DOUBLE that marks pods Ready and a Job's pods Succeeded), with the real helm binary (scripts/helm-binary.sh)
 * rendering a chart served by a real chart repository: index.yaml and the packaged chart made by `helm package` and
 * `helm repo index`, served over HTTP with a basic-auth login from this process.
 */

const helm = execFileSync('bash', ['scripts/helm-binary.sh'], { encoding: 'utf8' }).trim();
const environmentId = randomUUID();
const projectId = randomUUID();
const organizationId = randomUUID();
const namespace = namespaceOf(environmentId);
const shopId = randomUUID();
const release = workloadNameOf({ id: shopId, name: 'shop' });
const login = { username: 'charts', password: 'chart-repo-secret-42' };
const labels = (serviceId: string) => ({
  'app.kubernetes.io/managed-by': 'slipway',
  'slipway.dev/organization-id': organizationId,
  'slipway.dev/project-id': projectId,
  'slipway.dev/environment-id': environmentId,
  'slipway.dev/service-id': serviceId,
});

const CHART_FILES: Record<string, string> = {
  'Chart.yaml': 'apiVersion: v2\nname: webapp\nversion: 0.1.0\n',
  'values.yaml': 'replicaCount: 1\ngreeting: hello\nextraConfig: true\nclusterWide: false\n',
  'templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    app.kubernetes.io/instance: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicaCount }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: {{ .Release.Name }}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          env:
            - name: GREETING
              value: {{ .Values.greeting | quote }}
          ports:
            - containerPort: 80
              protocol: TCP
`,
  'templates/service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector:
    app.kubernetes.io/instance: {{ .Release.Name }}
  ports:
    - port: 80
      targetPort: 80
      protocol: TCP
`,
  'templates/configmap.yaml': `{{- if .Values.extraConfig }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
{{- end }}
`,
  'templates/clusterrole.yaml': `{{- if .Values.clusterWide }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-reader
rules:
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get"]
{{- end }}
`,
  'templates/migrate-job.yaml': `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "0"
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox:1.36
          args: ["migrate"]
`,
  'templates/tests/test-connection.yaml': `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
  containers:
    - name: wget
      image: busybox:1.36
`,
};

let world: KubeWorld | undefined;
let driver: AgentDriver;
let work: string;
let server: Server | undefined;
let repositoryUrl: string;
let gitServer: TestGitServer | undefined;
const gitToken = 'git-token-for-charts-7';

/** A bare repository `charts.git` holding the chart under charts/webapp, made with real git commands. */
function createChartGitRepository(chartDir: string, root: string): void {
  const env = { ...process.env, HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Fixture', GIT_AUTHOR_EMAIL: 'fixture@example.com', GIT_COMMITTER_NAME: 'Fixture', GIT_COMMITTER_EMAIL: 'fixture@example.com' };
  const checkout = path.join(root, 'checkout');
  execFileSync('git', ['init', '--quiet', '--initial-branch=main', checkout], { env });
  execFileSync('cp', ['-r', chartDir, path.join(checkout, 'charts')], { env });
  execFileSync('git', ['add', '.'], { cwd: checkout, env });
  execFileSync('git', ['commit', '--quiet', '-m', 'chart'], { cwd: checkout, env });
  execFileSync('git', ['clone', '--quiet', '--bare', checkout, path.join(root, 'charts.git')], { env });
}

/** A chart repository as helm serves one (`helm repo index`): index.yaml and the .tgz, behind a basic-auth login. */
async function startChartRepository(directory: string): Promise<Server> {
  const expected = `Basic ${Buffer.from(`${login.username}:${login.password}`).toString('base64')}`;
  const repository = createServer((request, response) => {
    if (request.headers.authorization !== expected) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    const file = path.join(directory, path.basename(new URL(request.url ?? '/', 'http://localhost').pathname));
    stat(file).then(
      () => createReadStream(file).pipe(response.writeHead(200)),
      () => response.writeHead(404).end('not found'),
    );
  });
  await new Promise<void>((resolve) => repository.listen(0, '127.0.0.1', resolve));
  return repository;
}

function helmSettings(overrides: Record<string, unknown> = {}, version = '0.1.0'): Record<string, unknown> {
  return {
    timeout_sec: 120,
    auto_preview: true,
    auto_deploy: true,
    source: { kind: 'repository', repository_id: randomUUID(), chart_name: 'webapp', chart_version: version },
    allow_cluster_wide_resources: false,
    arguments: [],
    values_override: { set: [], set_string: [], set_json: [], files: [] },
    ports: [{ id: randomUUID(), name: 'web', internal_port: 80, external_port: 443, service_name: `${release}-web`, namespace: null, protocol: 'HTTP', is_default: true }],
    annotations_groups: [],
    labels_groups: [],
    icon_uri: 'app://slipway-console/helm',
    ...overrides,
  };
}

function helmSpec(settings: Record<string, unknown>, version = '0.1.0'): Record<string, unknown> {
  return {
    service: { id: shopId, kind: 'HELM', name: 'shop', organizationId, environmentId, clusterId: randomUUID(), settings },
    git_commit_id: null,
    image_tag: null,
    variables: [],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: null,
    git: null,
    database: null,
    helm_chart: { repository_url: repositoryUrl, kind: 'HTTPS', credentials: login, skip_tls_verification: false, chart_name: 'webapp', chart_version: version },
    routing: { hostnames: ['shop.example.com'], internal: null, peers: [] },
  };
}

async function perform(action: string, spec: Record<string, unknown> | undefined, subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE', serviceId = shopId, by = driver, environment = environmentId): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask(environment, serviceId, action, 'HELM', subject), spec);
  await carryOutTask(by, session, (event, message) => session.report(event, message));
  return session;
}

function managers(object: { metadata?: { managedFields?: Array<{ manager?: string }> } }): string[] {
  return (object.metadata?.managedFields ?? []).map((field) => field.manager ?? '');
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'slipway-helm-test-'));
  const chartDir = path.join(work, 'webapp');
  for (const [file, content] of Object.entries(CHART_FILES)) {
    await mkdir(path.dirname(path.join(chartDir, file)), { recursive: true });
    await writeFile(path.join(chartDir, file), content);
  }
  const repositoryDir = path.join(work, 'repository');
  await mkdir(repositoryDir);
  const env = { ...process.env, HELM_CACHE_HOME: path.join(work, 'home'), HELM_CONFIG_HOME: path.join(work, 'home'), HELM_DATA_HOME: path.join(work, 'home') };
  execFileSync(helm, ['package', chartDir, '--destination', repositoryDir], { env, stdio: 'pipe' });
  execFileSync(helm, ['repo', 'index', repositoryDir], { env, stdio: 'pipe' });
  server = await startChartRepository(repositoryDir);
  const gitRoot = path.join(work, 'git');
  await mkdir(path.join(gitRoot, 'repo'), { recursive: true });
  await mkdir(path.join(work, 'charts-tree'));
  execFileSync('cp', ['-r', chartDir, path.join(work, 'charts-tree', 'webapp')]);
  createChartGitRepository(path.join(work, 'charts-tree'), path.join(gitRoot, 'repo'));
  gitServer = await startGitServer({ root: path.join(gitRoot, 'repo'), privateRepositories: { charts: gitToken } });
  repositoryUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  world = await startKubeWorld();
  driver = createKubernetesDriver({
    cluster: world.cluster,
    served: await world.cluster.servedKinds(),
    helmBinary: helm,
    git: createSystemGitAccess({ allowPrivateHosts: true }),
    rolloutTimeoutMs: 90_000,
  });
}, 20 * 60_000);

afterAll(async () => {
  try {
    await world?.stop();
  } finally {
    if (server !== undefined) await new Promise((resolve) => server?.close(resolve));
    await gitServer?.close();
    await rm(work, { recursive: true, force: true });
  }
});

describe('Kubernetes driver: a HELM service', () => {
  it('renders the chart with helm, applies it labelled in the environment namespace and waits for its rollout', async () => {
    const settings = helmSettings({
      values_override: { set: [], set_string: [['greeting', '007']], set_json: [], files: [{ name: 'prod.yaml', content: 'replicaCount: 2\n' }] },
    });
    const session = await perform('deploy', helmSpec(settings));
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain('left out: Pod/');
    expect(session.text()).toContain(`running the pre-install hook Job/${release}-migrate`);
    expect(session.text()).toContain(`shop rolled out in namespace ${namespace}`);
    expect(session.text()).not.toContain(login.password);

    const deployment = await world!.apps.readNamespacedDeployment({ name: `${release}-web`, namespace });
    expect(deployment.metadata?.labels).toEqual({ ...labels(shopId), 'app.kubernetes.io/instance': release });
    expect(deployment.spec?.template.metadata?.labels).toEqual({ ...labels(shopId), 'app.kubernetes.io/instance': release });
    expect(managers(deployment)).toContain('slipway');
    expect(deployment.spec?.replicas).toBe(2);
    expect(deployment.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'GREETING', value: '007' }]);
    expect(deployment.status?.readyReplicas).toBe(2);

    const configMap = await world!.core.readNamespacedConfigMap({ name: `${release}-extra`, namespace });
    expect(configMap.metadata?.labels).toEqual(labels(shopId));
    expect(managers(configMap)).toContain('slipway');
    const kubeService = await world!.core.readNamespacedService({ name: `${release}-web`, namespace });
    expect(kubeService.metadata?.labels).toEqual(labels(shopId));
    const hook = await world!.batch.readNamespacedJob({ name: `${release}-migrate`, namespace });
    expect(hook.spec?.template.metadata?.labels).toMatchObject(labels(shopId));
    expect(hook.status?.succeeded).toBe(1);
    const ingress = await world!.networking.readNamespacedIngress({ name: release, namespace });
    expect(ingress.spec?.rules?.[0]?.host).toBe('shop.example.com');
    expect(ingress.spec?.rules?.[0]?.http?.paths[0]?.backend.service).toEqual({ name: `${release}-web`, port: { number: 80 } });
    const pods = await world!.core.listNamespacedPod({ namespace, labelSelector: `slipway.dev/service-id=${shopId}` });
    expect(pods.items.some((pod) => pod.metadata?.name?.endsWith('-test'))).toBe(false);
  });

  it('updates what a changed value changes and prunes what the chart no longer renders', async () => {
    const settings = helmSettings({ values_override: { set: [['extraConfig', 'false'], ['replicaCount', '1']], set_string: [['greeting', 'bonjour']], set_json: [], files: [] } });
    const session = await perform('deploy', helmSpec(settings));
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain(`running the pre-upgrade hook Job/${release}-migrate`);
    const deployment = await world!.apps.readNamespacedDeployment({ name: `${release}-web`, namespace });
    expect(deployment.spec?.replicas).toBe(1);
    expect(deployment.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'GREETING', value: 'bonjour' }]);
    const configMaps = await world!.core.listNamespacedConfigMap({ namespace, labelSelector: `slipway.dev/service-id=${shopId}` });
    expect(configMaps.items).toEqual([]);
  });

  it('refuses a chart with a cluster-wide object unless the service allows them', async () => {
    const values = { set: [['clusterWide', 'true']], set_string: [], set_json: [], files: [] };
    const refused = await perform('deploy', helmSpec(helmSettings({ values_override: values })));
    expect(refused.events()).toEqual(['take', 'fail']);
    expect(refused.reports.at(-1)?.message).toContain(`ClusterRole/${release}-reader is cluster-wide`);
    expect(refused.reports.at(-1)?.message).toContain('allow_cluster_wide_resources');

    const allowed = await perform('deploy', helmSpec(helmSettings({ values_override: values, allow_cluster_wide_resources: true })));
    expect(allowed.events(), allowed.text()).toEqual(['take', 'built', 'succeed']);
    const roles = await world!.cluster.list('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, `slipway.dev/service-id=${shopId}`);
    expect(roles.map((role) => role.metadata.name)).toEqual([`${release}-reader`]);
    expect(roles[0]?.metadata.labels).toEqual(labels(shopId));
  });

  it("fails a deployment helm cannot render with helm's message, never the repository's password", async () => {
    const session = await perform('deploy', helmSpec(helmSettings({}, '9.9.9'), '9.9.9'));
    expect(session.events()).toEqual(['take', 'fail']);
    const message = session.reports.at(-1)?.message ?? '';
    expect(message).toContain('helm template of chart webapp 9.9.9 failed');
    expect(message).toMatch(/9\.9\.9/);
    expect(message).not.toContain(login.password);
    expect(session.text()).not.toContain(login.password);
    // The release that ran before is untouched.
    const deployment = await world!.apps.readNamespacedDeployment({ name: `${release}-web`, namespace });
    expect(deployment.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'GREETING', value: 'hello' }]);
  });

  it('stops by scaling the chart workloads to 0, and tears everything down by label', async () => {
    const stopped = await perform('stop', undefined);
    expect(stopped.events(), stopped.text()).toEqual(['take', 'succeed']);
    const deployment = await world!.apps.readNamespacedDeployment({ name: `${release}-web`, namespace });
    expect(deployment.spec?.replicas).toBe(0);

    const session = await perform('delete', undefined, 'SERVICE_TEARDOWN');
    expect(session.events(), session.text()).toEqual(['take', 'succeed']);
    const selector = `slipway.dev/service-id=${shopId}`;
    for (const [apiVersion, kind] of [
      ['apps/v1', 'Deployment'],
      ['v1', 'Service'],
      ['v1', 'ConfigMap'],
      ['v1', 'Secret'],
      ['batch/v1', 'Job'],
      ['networking.k8s.io/v1', 'Ingress'],
      ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
    ] as const) {
      const left = (await world!.cluster.list(apiVersion, kind, kind === 'ClusterRole' ? undefined : namespace, selector)).filter(
        (object) => (object.metadata as { deletionTimestamp?: unknown }).deletionTimestamp === undefined,
      );
      expect(left, `${kind} left`).toEqual([]);
    }
  });
});

describe('the rules a rendered chart is held to', () => {
  const service = { id: shopId, name: 'shop', organizationId, projectId, environmentId };
  const object = (kind: string, name: string, annotations?: Record<string, string>, objectNamespace?: string) => ({
    apiVersion: 'v1',
    kind,
    metadata: { name, ...(annotations === undefined ? {} : { annotations }), ...(objectNamespace === undefined ? {} : { namespace: objectNamespace }) },
  });
  const rules = (allowClusterWide: boolean, upgrade = false) => ({ service, namespace, allowClusterWide, upgrade, namespaced: (_: string, kind: string) => (kind === 'Namespace' ? false : true) });

  it('refuses an object naming another namespace unless cluster-wide resources are allowed, then keeps its namespace', () => {
    const rendered = [object('ConfigMap', 'elsewhere', undefined, 'kube-system'), object('ConfigMap', 'here')];
    expect(() => prepareChart(rendered, rules(false))).toThrow('ConfigMap/elsewhere names namespace kube-system');
    const allowed = prepareChart(rendered, rules(true));
    expect(allowed.objects.map((item) => item.metadata.namespace)).toEqual(['kube-system', namespace]);
  });

  it('sorts hooks by weight into before and after the release for an install or an upgrade, and leaves out tests and other events', () => {
    const rendered = [
      object('ConfigMap', 'late', { 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-weight': '5' }),
      object('ConfigMap', 'early', { 'helm.sh/hook': 'pre-install', 'helm.sh/hook-weight': '-1', 'helm.sh/hook-delete-policy': 'hook-succeeded' }),
      object('ConfigMap', 'after', { 'helm.sh/hook': 'post-upgrade' }),
      object('Pod', 'check', { 'helm.sh/hook': 'test-success' }),
      object('ConfigMap', 'cleanup', { 'helm.sh/hook': 'pre-delete' }),
      object('ConfigMap', 'plain'),
    ];
    const install = prepareChart(rendered, rules(false));
    expect(install.before.map((hook) => [hook.object.metadata.name, hook.deleteWhenSucceeded])).toEqual([['early', true], ['late', false]]);
    expect(install.after).toEqual([]);
    expect(install.objects.map((item) => item.metadata.name)).toEqual(['plain']);
    expect(install.skipped).toEqual(['ConfigMap/after (a post-upgrade hook)', 'Pod/check (a test hook)', 'ConfigMap/cleanup (a pre-delete hook)']);
    const upgrade = prepareChart(rendered, rules(false, true));
    expect(upgrade.before.map((hook) => hook.object.metadata.name)).toEqual(['late']);
    expect(upgrade.after.map((hook) => hook.object.metadata.name)).toEqual(['after']);
  });
});

describe('Kubernetes driver: a HELM chart from git, and no helm', () => {
  const catalogId = randomUUID();
  const catalog = workloadNameOf({ id: catalogId, name: 'catalog' });
  // An environment of its own: the one above loses its namespace with its last service.
  const gitEnvironmentId = randomUUID();
  const gitNamespace = namespaceOf(gitEnvironmentId);

  function gitSpec(): Record<string, unknown> {
    const spec = helmSpec(
      helmSettings({
        source: { kind: 'git', git_repository: { url: gitServer?.urlOf('charts'), branch: 'main', root_path: '/charts/webapp', git_token_id: randomUUID(), provider: 'GITHUB' } },
        values_override: { set: [], set_string: [['greeting', 'from git']], set_json: [], files: [] },
        ports: [],
      }),
    );
    return {
      ...spec,
      service: { ...(spec.service as Record<string, unknown>), id: catalogId, name: 'catalog', environmentId: gitEnvironmentId },
      environment: { id: gitEnvironmentId, name: 'git', mode: 'PRODUCTION', project_id: projectId },
      helm_chart: null,
      git: { url: gitServer?.urlOf('charts'), branch: 'main', commit_id: null, root_path: '/charts/webapp', credentials: { provider: 'GITHUB', token: gitToken } },
      routing: { hostnames: [], internal: null, peers: [] },
    };
  }

  it('checks the chart out of git with the git token and installs it', async () => {
    const session = await perform('deploy', gitSpec(), 'SERVICE', catalogId, driver, gitEnvironmentId);
    expect(session.events(), `${session.text()}\n${session.reports.at(-1)?.message ?? ''}`).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toMatch(/rendering the chart at charts\/webapp of .*charts\.git \(commit [0-9a-f]{12}\)/);
    expect(session.text()).not.toContain(gitToken);
    const deployment = await world!.apps.readNamespacedDeployment({ name: `${catalog}-web`, namespace: gitNamespace });
    expect(deployment.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': catalogId, 'slipway.dev/environment-id': gitEnvironmentId });
    expect(deployment.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'GREETING', value: 'from git' }]);
    const teardown = await perform('delete', undefined, 'SERVICE_TEARDOWN', catalogId, driver, gitEnvironmentId);
    expect(teardown.events(), teardown.text()).toEqual(['take', 'succeed']);
    const left = await world!.cluster.list('apps/v1', 'Deployment', gitNamespace, `slipway.dev/service-id=${catalogId}`);
    expect(left.filter((object) => (object.metadata as { deletionTimestamp?: unknown }).deletionTimestamp === undefined)).toEqual([]);
  });

  it('fails with one clear sentence when the agent has no helm binary', async () => {
    const withoutHelm = createKubernetesDriver({ cluster: world!.cluster, served: await world!.cluster.servedKinds(), helmBinary: path.join(work, 'no-such-helm') });
    const session = await perform('deploy', gitSpec(), 'SERVICE', catalogId, withoutHelm, gitEnvironmentId);
    expect(session.events()).toEqual(['take', 'fail']);
    expect(session.reports.at(-1)?.message).toBe(HELM_MISSING_MESSAGE);
  });
});

/**
 * End to end: a Helm repository of the organization pointing at the test chart repository, a HELM service from it
 * created and deployed through the API, carried out by `slipway agent --driver kubernetes` (its own process, the
 * real helm binary named by SLIPWAY_HELM_BINARY) onto the test control plane.
 */
describeEachDatabase(
  'a HELM service through the API and the Kubernetes agent',
  (ctx) => {
    const DEPLOY_TIMEOUT_MS = 120_000;
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

    it('deploys a chart of the organization\'s Helm repository onto Kubernetes: DEPLOYED, its objects labelled', { timeout: 3 * DEPLOY_TIMEOUT_MS }, async () => {
      if (world === undefined) throw new Error('the Kubernetes cluster did not start');
      const { owner, organizationId: organization } = await ctx().signUpWithOrganization();
      const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(ctx(), organization, owner);
      const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-helm-agent-'));
      stateDirs.push(stateDir);
      const agent = spawnSlipway(['agent', '--control-plane', baseUrl, '--state-dir', stateDir, '--enrollment-token', enrollmentToken, '--driver', 'kubernetes', '--kubeconfig', world.kube.kubeconfigPath], {
        HOME: stateDir,
        SLIPWAY_DATA_DIR: stateDir,
        SLIPWAY_HELM_BINARY: helm,
      });
      try {
        await waitForOutput(agent, /deploying onto Kubernetes v1\.20\.\d+/);
        const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) => ctx().call(owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });
        const project = (await call('POST', `/organization/${organization}/project`, { name: uniqueName('p') })).json<{ id: string }>().id;
        const environment = await call('POST', `/project/${project}/environment`, { name: uniqueName('helm'), cluster: clusterId, mode: 'STAGING' });
        expect(environment.statusCode, environment.body).toBe(201);
        const environmentOfService = environment.json<{ id: string }>().id;
        const repository = await call('POST', `/organization/${organization}/helmRepository`, { name: uniqueName('charts'), kind: 'HTTPS', url: repositoryUrl, config: login });
        expect(repository.statusCode, repository.body).toBe(201);
        const created = await call('POST', `/environment/${environmentOfService}/helm`, {
          name: 'catalog',
          source: { helm_repository: { repository: repository.json<{ id: string }>().id, chart_name: 'webapp', chart_version: '0.1.0' } },
          values_override: { set: [['replicaCount', '2']], set_string: [['greeting', 'from the API']] },
        });
        expect(created.statusCode, created.body).toBe(201);
        const helmId = created.json<{ id: string }>().id;
        expect((await call('POST', `/helm/${helmId}/deploy`, {})).statusCode).toBe(202);
        const status = () => call('GET', `/helm/${helmId}/status`).then((response) => response.json<{ state: string; message: string | null }>());
        const deployed = await vi.waitFor(
          async () => {
            const current = await status();
            expect(current.state === 'DEPLOYED' || current.state.endsWith('_ERROR'), JSON.stringify(current)).toBe(true);
            return current;
          },
          { timeout: DEPLOY_TIMEOUT_MS, interval: 200 },
        );
        expect(deployed.state, deployed.message ?? '').toBe('DEPLOYED');

        const name = `${workloadNameOf({ id: helmId, name: 'catalog' })}-web`;
        const deployment = await world.apps.readNamespacedDeployment({ name, namespace: namespaceOf(environmentOfService) });
        expect(deployment.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': helmId, 'slipway.dev/organization-id': organization });
        expect(deployment.metadata?.managedFields?.some((entry) => entry.manager === 'slipway')).toBe(true);
        expect(deployment.spec?.replicas).toBe(2);
        expect(deployment.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'GREETING', value: 'from the API' }]);
      } finally {
        agent.kill('SIGTERM');
        await agent.result;
      }
    });
  },
  { gitAllowPrivateHosts: true },
);
