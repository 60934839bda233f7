import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import { buildJobNameOf } from '../src/engine/kubernetes/kubernetes-build.ts';
import { createKubernetesDriver, unsupportedKubernetesKindMessage } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import type { FakeKubelet, PodOutcome } from './support/fake-kubelet.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * APPLICATION and JOB-from-git deployments on the Kubernetes driver: an image build Job in the environment's
 * namespace, then the workload on the built image. The control plane is real (kube-apiserver, etcd, controller
 * manager, scheduler 1.20.2); the node is the fake kubelet, a TEST DOUBLE that runs no image: it completes a build
 * pod (writing the builder's log lines), fails it with an exit code, or leaves it Pending, as each test's commit asks.
 * No registry is reached: the image reference the Deployment runs is what is checked.
 */

const environmentId = randomUUID();
const projectId = randomUUID();
const organizationId = randomUUID();
const namespace = namespaceOf(environmentId);
const webId = randomUUID();
const reportId = randomUUID();
const webName = workloadNameOf({ id: webId, name: 'web' });
const registry = 'registry.internal:5000/slipway';
const gitToken = 'ghp-build-token-5f2c9a';
const pushPassword = 'push-secret-9d41';
const registryAuth = JSON.stringify({ auths: { 'registry.internal:5000': { auth: Buffer.from(`builder:${pushPassword}`).toString('base64') } } });

const commitOf = (digit: string): string => digit.repeat(40);
const builtCommit = commitOf('a');
const failingCommit = commitOf('b');
const pendingCommit = commitOf('c');
const jobCommit = commitOf('d');

let world: KubeWorld | undefined;
let gitRoot: string | undefined;
let gitServer: TestGitServer | undefined;
let driver: AgentDriver;
const logged = new Set<string>();

/** The fake kubelet's answer for a build pod, by the commit its Job builds (the Job name's short commit). */
function buildOutcome(pod: V1Pod, kubelet: FakeKubelet): PodOutcome | undefined {
  if (pod.metadata?.labels?.['slipway.dev/role'] !== 'build') return undefined;
  const jobName = pod.metadata.labels['job-name'] ?? '';
  const podName = pod.metadata.name ?? '';
  const writeOnce = (...lines: string[]): void => {
    if (logged.has(podName)) return;
    logged.add(podName);
    kubelet.writeLog(namespace, podName, 'main', ...lines);
  };
  if (jobName.endsWith(pendingCommit.slice(0, 7))) return { state: 'Pending' };
  if (jobName.endsWith(failingCommit.slice(0, 7))) {
    writeOnce('INFO[0000] Retrieving image manifest node:24', 'error building image: error building stage: RUN npm ci: exit status 2');
    return { state: 'Failed', exitCode: 2 };
  }
  writeOnce('INFO[0000] Retrieving image manifest node:24', 'INFO[0004] Pushing image');
  return { state: 'Succeeded' };
}

function applicationSpec(commit: string): Record<string, unknown> {
  return {
    service: {
      id: webId,
      kind: 'APPLICATION',
      name: 'web',
      organizationId,
      environmentId,
      clusterId: randomUUID(),
      settings: {
        git_repository: { url: 'https://git.example.com/acme/shop.git', branch: 'main', root_path: '/web', git_token_id: randomUUID(), provider: 'GITHUB' },
        build_mode: 'DOCKER',
        dockerfile_path: 'docker/Dockerfile',
        docker_target_build_stage: 'runtime',
        cpu: 250,
        memory: 256,
        min_running_instances: 1,
        max_running_instances: 1,
        ports: [{ id: randomUUID(), name: 'p8080', internal_port: 8080, external_port: 443, publicly_accessible: true, is_default: true, protocol: 'HTTP', public_path: null, public_path_rewrite: null }],
        healthchecks: { readiness_probe: null, liveness_probe: null },
        storage: [],
      },
    },
    git_commit_id: commit,
    image_tag: null,
    variables: [{ key: 'GREETING', value: 'hello', mount_path: null, scope: 'SERVICE', secret: false }],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: null,
    git: { url: 'https://git.example.com/acme/shop.git', branch: 'main', commit_id: commit, root_path: '/web', credentials: { provider: 'GITHUB', token: gitToken } },
    database: null,
    routing: { hostnames: ['web-prod.apps.example.com'], internal: null, peers: [] },
  };
}

function gitJobSpec(commit: string): Record<string, unknown> {
  const git = { url: 'https://git.example.com/acme/jobs.git', branch: 'main', root_path: '/', git_token_id: null, provider: 'GITHUB' };
  const source = { kind: 'docker', git_repository: git, dockerfile_path: null, dockerfile_raw: 'FROM alpine:3.20\nCMD ["echo", "report"]\n', docker_target_build_stage: null };
  const schedule = { kind: 'CRON', cronjob: { arguments: ['report'], entrypoint: null, timezone: 'UTC', scheduled_at: '0 3 * * *' } };
  const settings = { cpu: 250, memory: 256, gpu: 0, ephemeral_storage_in_gib: null, cpu_architecture: 'AMD64', max_nb_restart: 0, max_duration_seconds: 120, auto_preview: true, port: null, source, healthchecks: {}, schedule, auto_deploy: true };
  return {
    service: { id: reportId, kind: 'JOB', name: 'report', organizationId, environmentId, clusterId: randomUUID(), settings },
    git_commit_id: commit,
    image_tag: null,
    variables: [],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: null,
    git: { url: git.url, branch: 'main', commit_id: commit, root_path: '/', credentials: null },
    database: null,
    routing: { hostnames: [], internal: null, peers: [] },
  };
}

function session(spec: Record<string, unknown> | undefined, serviceId = webId, kind = 'APPLICATION', action = 'deploy', subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE'): TaskSessionHarness {
  return new TaskSessionHarness(agentTask(environmentId, serviceId, action, kind, subject), spec);
}

async function perform(harness: TaskSessionHarness, using = driver): Promise<TaskSessionHarness> {
  await carryOutTask(using, harness, (event, message) => harness.report(event, message));
  return harness;
}

async function runningImage(): Promise<string | undefined> {
  const deployment = await world?.apps.readNamespacedDeployment({ name: webName, namespace });
  return deployment?.spec?.template.spec?.containers[0]?.image;
}

async function readBuildJob(commit: string, serviceName = 'web', serviceId = webId): Promise<V1Job> {
  const batch = world?.batch;
  if (batch === undefined) throw new Error('no world');
  return batch.readNamespacedJob({ name: buildJobNameOf({ id: serviceId, name: serviceName }, commit), namespace });
}

beforeAll(async () => {
  // A real git server, for a deployment that names no commit: the agent reads the head of its branch.
  gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-build-git-'));
  await createBareRepository(gitRoot, 'shop', { main: ['web/docker/Dockerfile'] });
  gitServer = await startGitServer({ root: gitRoot, privateRepositories: { shop: gitToken } });
  world = await startKubeWorld({ kubelet: { outcome: buildOutcome } });
  driver = createKubernetesDriver({
    cluster: world.cluster,
    served: await world.cluster.servedKinds(),
    rolloutTimeoutMs: 90_000,
    build: { builder: 'kaniko', registry, registryAuth },
    git: createSystemGitAccess({ allowPrivateHosts: true }),
  });
}, 20 * 60_000);

afterAll(async () => {
  try {
    await world?.stop();
  } finally {
    await gitServer?.close();
    if (gitRoot !== undefined) await rm(gitRoot, { recursive: true, force: true });
  }
});

describe('Kubernetes driver: an APPLICATION built in the cluster', () => {
  it('builds the commit in a Job — the login in a Secret, never in its args or env — then rolls out the built image', async () => {
    const deployed = await perform(session(applicationSpec(builtCommit)));
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    const image = `${registry}/${webName}:${builtCommit}`;
    expect(deployed.text()).toContain(`building ${image} from commit ${builtCommit} with kaniko`);
    // The builder's own lines, as the kubelet serves them, are in the deployment's log.
    expect(deployed.text()).toContain('INFO[0004] Pushing image');

    const job = await readBuildJob(builtCommit);
    expect(job.metadata?.name).toBe(`${webName}-build-aaaaaaa`);
    expect(job.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': webId, 'slipway.dev/environment-id': environmentId, 'slipway.dev/role': 'build' });
    expect(job.spec?.template.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'slipway', 'slipway.dev/service-id': webId });
    expect(job.status?.conditions?.find((condition) => condition.type === 'Complete')?.status).toBe('True');
    const pod = job.spec?.template.spec;
    const clone = pod?.initContainers?.[0];
    expect(clone?.env).toEqual(
      expect.arrayContaining([
        { name: 'GIT_URL', value: 'https://git.example.com/acme/shop.git' },
        { name: 'GIT_COMMIT', value: builtCommit },
        { name: 'GIT_ASKPASS', value: '/slipway/git/askpass' },
      ]),
    );
    expect(pod?.containers[0]).toMatchObject({
      name: 'main',
      image: expect.stringMatching(/^gcr\.io\/kaniko-project\/executor:v\d+\.\d+\.\d+$/),
      args: ['--context=dir:///workspace/web', '--dockerfile=/workspace/web/docker/Dockerfile', `--destination=${image}`, '--target=runtime'],
    });
    // Neither the git token nor the registry's password is anywhere in the Job: only the Secret's name is.
    const rendered = JSON.stringify(job);
    expect(rendered).not.toContain(gitToken);
    expect(rendered).not.toContain(pushPassword);
    expect(rendered).not.toContain(Buffer.from(`builder:${pushPassword}`).toString('base64'));
    expect(deployed.text()).not.toContain(gitToken);
    // The build's Secret goes once the build has ended.
    expect(await world?.cluster.read('v1', 'Secret', namespace, `${webName}-build`)).toBeUndefined();

    expect(await runningImage()).toBe(image);
    const deployment = await world?.apps.readNamespacedDeployment({ name: webName, namespace });
    expect(deployment?.spec?.template.spec?.imagePullSecrets).toEqual([{ name: `${webName}-pull` }]);
    const pull = await world?.core.readNamespacedSecret({ name: `${webName}-pull`, namespace });
    const auths = JSON.parse(Buffer.from(pull?.data?.['.dockerconfigjson'] ?? '', 'base64').toString('utf8')) as { auths: Record<string, { username: string }> };
    expect(auths.auths['registry.internal:5000']?.username).toBe('builder');
  });

  it('builds nothing for a commit whose build Job is there, Complete: it says so and rolls out', async () => {
    const before = await readBuildJob(builtCommit);
    const again = await perform(session(applicationSpec(builtCommit)));
    expect(again.events(), again.text()).toEqual(['take', 'built', 'succeed']);
    expect(again.text()).toContain(`was built by Job ${webName}-build-aaaaaaa already: not building commit ${builtCommit} again`);
    expect((await readBuildJob(builtCommit)).metadata?.uid).toBe(before.metadata?.uid);
  });

  it('fails on a failed build with the exit code and the last lines, the running release untouched', async () => {
    const failed = await perform(session(applicationSpec(failingCommit)));
    expect(failed.events(), failed.text()).toEqual(['take', 'fail']);
    const message = failed.reports.at(-1)?.message ?? '';
    expect(message).toMatch(/^the image build failed: Job .*-build-bbbbbbb failed: exit code 2/);
    expect(message).toContain('error building image: error building stage: RUN npm ci: exit status 2');
    expect(await runningImage()).toBe(`${registry}/${webName}:${builtCommit}`);
    // The last good build stays for the next deployment of its commit.
    expect((await readBuildJob(builtCommit)).metadata?.name).toBe(`${webName}-build-aaaaaaa`);
  });

  it('deletes the build Job when the deployment is canceled during the build', async () => {
    const harness = session(applicationSpec(pendingCommit));
    const running = perform(harness);
    await vi.waitFor(async () => expect((await readBuildJob(pendingCommit)).metadata?.name).toBe(`${webName}-build-ccccccc`), { timeout: 60_000, interval: 200 });
    harness.cancel = true;
    await running;
    expect(harness.events(), harness.text()).toEqual(['take', 'cancel_done']);
    await vi.waitFor(async () => expect(await world?.cluster.read('batch/v1', 'Job', namespace, `${webName}-build-ccccccc`)).toBeUndefined(), { timeout: 60_000, interval: 300 });
    expect(await runningImage()).toBe(`${registry}/${webName}:${builtCommit}`);
  });

  it('builds the head of the branch when the deployment names no commit; a restart builds nothing and keeps the image', async () => {
    const head = (await promisify(execFile)('git', ['rev-parse', 'refs/heads/main'], { cwd: path.join(gitRoot ?? '', 'shop.git') })).stdout.trim();
    const spec = applicationSpec(builtCommit);
    const url = gitServer?.urlOf('shop') ?? '';
    Object.assign(spec, { git_commit_id: null, git: { ...(spec.git as Record<string, unknown>), url, commit_id: null } });
    const deployed = await perform(session(spec));
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    expect(deployed.text()).toContain(`the head of main is commit ${head}`);
    expect((await readBuildJob(head)).spec?.template.spec?.initContainers?.[0]?.env).toContainEqual({ name: 'GIT_URL', value: url });
    expect(await runningImage()).toBe(`${registry}/${webName}:${head}`);
    // The builds of other commits are done with: only the last successful build's Job stays.
    expect(await world?.cluster.read('batch/v1', 'Job', namespace, `${webName}-build-aaaaaaa`)).toBeUndefined();

    const jobsBefore = (await world?.cluster.list('batch/v1', 'Job', namespace, 'slipway.dev/role=build'))?.map((job) => job.metadata.name);
    const restarted = await perform(session(spec, webId, 'APPLICATION', 'restart'));
    expect(restarted.events(), restarted.text()).toEqual(['take', 'succeed']);
    expect(restarted.text()).toContain(`a restart builds nothing: ${registry}/${webName}:${head} runs again`);
    expect(await runningImage()).toBe(`${registry}/${webName}:${head}`);
    expect((await world?.cluster.list('batch/v1', 'Job', namespace, 'slipway.dev/role=build'))?.map((job) => job.metadata.name)).toEqual(jobsBefore);
  });

  it('fails an APPLICATION at once, naming the flag, on an agent with no build registry', async () => {
    const cluster = world?.cluster;
    if (cluster === undefined) throw new Error('no world');
    const withoutRegistry = createKubernetesDriver({ cluster, served: await cluster.servedKinds() });
    const refused = await perform(session(applicationSpec(commitOf('e'))), withoutRegistry);
    expect(refused.reports.at(-1)).toEqual({ event: 'fail', message: unsupportedKubernetesKindMessage('APPLICATION') });
    expect(unsupportedKubernetesKindMessage('APPLICATION')).toContain('--build-registry');
    expect(await world?.cluster.read('batch/v1', 'Job', namespace, `${webName}-build-eeeeeee`)).toBeUndefined();
  });
});

describe('Kubernetes driver: a JOB from git', () => {
  it('builds its Dockerfile (given inline) and schedules its CronJob on the built image', async () => {
    const deployed = await perform(session(gitJobSpec(jobCommit), reportId, 'JOB'));
    expect(deployed.events(), deployed.text()).toEqual(['take', 'built', 'succeed']);
    const reportName = workloadNameOf({ id: reportId, name: 'report' });
    const job = await readBuildJob(jobCommit, 'report', reportId);
    expect(job.spec?.template.spec?.containers[0]?.args).toEqual(['--context=dir:///workspace', '--dockerfile=/slipway/dockerfile/Dockerfile', `--destination=${registry}/${reportName}:${jobCommit}`]);
    // No git login for a public repository: no askpass, nothing of it mounted.
    expect(job.spec?.template.spec?.initContainers?.[0]?.env?.some((variable) => variable.name === 'GIT_ASKPASS')).toBe(false);
    const served = await world?.cluster.servedKinds();
    const cronJob = await world?.cluster.read(served?.cronJob ?? 'batch/v1', 'CronJob', namespace, reportName);
    const template = (cronJob?.spec as { jobTemplate: { spec: { template: { spec: { containers: Array<{ image: string; args: string[] }> } } } } }).jobTemplate.spec.template.spec;
    expect(template.containers[0]).toMatchObject({ image: `${registry}/${reportName}:${jobCommit}`, args: ['report'] });
  });

  it('tears down the build Jobs with the service', async () => {
    for (const [serviceId, kind] of [[webId, 'APPLICATION'], [reportId, 'JOB']] as const) {
      const torn = await perform(session(undefined, serviceId, kind, 'delete', 'SERVICE_TEARDOWN'));
      expect(torn.events(), torn.text()).toEqual(['take', 'succeed']);
    }
    await vi.waitFor(async () => expect(await world?.cluster.list('batch/v1', 'Job', namespace, 'slipway.dev/role=build')).toEqual([]), { timeout: 60_000, interval: 300 });
  });
});
