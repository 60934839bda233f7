import { randomUUID } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import { MODEL_API_KEY_ENV, WORKFLOW_RUNNER_MESSAGE, workflowRunJobNameOf } from '../src/engine/kubernetes/kubernetes-agentic-workflow.ts';
import { createKubernetesDriver } from '../src/engine/kubernetes/kubernetes-driver.ts';
import { namespaceOf, workloadNameOf } from '../src/engine/kubernetes/kubernetes-names.ts';
import { DEFAULT_TERRAFORM_VERSION, terraformAccountNameOf, terraformJobNameOf } from '../src/engine/kubernetes/kubernetes-terraform.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import { startKubeWorld, type KubeWorld } from './support/kube-world.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * The Kubernetes driver's TERRAFORM and AGENTIC_WORKFLOW kinds against a real control plane whose only node is the
 * fake kubelet, a TEST DOUBLE: it runs no container; for a pod of a Job it writes the log lines a run would (the
 * engine's arguments) and the outcome the test chose — Failed with exit code 3 for an engine version ending in
 * `-fail`, Succeeded otherwise — and records the arguments of each run, in order.
 */

const environmentId = randomUUID();
const projectId = randomUUID();
const organizationId = randomUUID();
const namespace = namespaceOf(environmentId);
const networkId = randomUUID();
const brokenId = randomUUID();
const workflowId = randomUUID();
const scheduledId = randomUUID();
const GIT_TOKEN = 'ghp-token-never-in-a-pod-spec';
const DB_PASSWORD = 'tf-secret-password-4242';
const API_KEY = 'sk-model-key-never-in-a-pod-spec';
const COMMIT = 'a'.repeat(40);

let world: KubeWorld | undefined;
let driver: AgentDriver;
let workflowDriver: AgentDriver;
/** The engine's arguments of each Job pod the kubelet ran, with the service it belongs to. */
const runs: Array<{ serviceId: string; args: string[] }> = [];
const seenPods = new Set<string>();

function outcomeOf(pod: V1Pod, kubelet: { writeLog(namespace: string, pod: string, container: string, ...lines: string[]): void }) {
  if (!(pod.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'Job')) return undefined;
  const main = pod.spec?.containers.find((container) => container.name === 'main');
  const args = main?.args ?? [];
  const name = pod.metadata?.name ?? '';
  // Called again whenever the pod changes: each run is recorded and logged once.
  if (!seenPods.has(name)) {
    seenPods.add(name);
    runs.push({ serviceId: pod.metadata?.labels?.['slipway.dev/service-id'] ?? '', args });
    kubelet.writeLog(pod.metadata?.namespace ?? '', name, 'main', `engine ${args.join(' ')}`, 'Resources: 1 added, 0 changed, 0 destroyed.');
  }
  return (main?.image ?? '').endsWith('-fail') ? { state: 'Failed' as const, exitCode: 3 } : { state: 'Succeeded' as const };
}

function baseSpec(serviceId: string, kind: string, name: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    service: { id: serviceId, kind, name, organizationId, environmentId, clusterId: randomUUID(), settings },
    git_commit_id: COMMIT,
    image_tag: null,
    variables: [],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: projectId },
    image: null,
    git: { url: 'https://git.example.com/acme/infra.git', branch: 'main', commit_id: COMMIT, root_path: '/network', credentials: { provider: 'GITHUB', token: GIT_TOKEN } },
    database: null,
    routing: { hostnames: [], internal: null, peers: [] },
    ...extra,
  };
}

function terraformSpec(serviceId: string, name: string, version: string | null = null): Record<string, unknown> {
  const settings = {
    auto_deploy: true,
    git_repository: { url: 'https://git.example.com/acme/infra.git', branch: 'main', root_path: '/network', git_token_id: randomUUID(), provider: 'GITHUB' },
    tf_var_file_paths: ['env/prod.tfvars'],
    tf_vars: [{ key: 'region', value: 'eu-west-1' }],
    backend: 'kubernetes',
    engine: 'TERRAFORM',
    engine_version: version,
    timeout_sec: 600,
    job_resources: { cpu_milli: 500, ram_mib: 512, storage_gib: 1 },
    use_cluster_credentials: false,
    action_extra_arguments: { plan: [], apply: ['-parallelism=4'], destroy: ['-refresh=false'] },
    icon_uri: 'app://slipway-console/terraform',
  };
  return baseSpec(serviceId, 'TERRAFORM', name, settings, {
    variables: [
      { key: 'TF_VAR_db_password', value: DB_PASSWORD, mount_path: null, scope: 'SERVICE', secret: true },
      { key: 'REGION_HINT', value: 'eu', mount_path: null, scope: 'ENVIRONMENT', secret: false },
    ],
  });
}

function workflowSpec(serviceId: string, name: string, schedule: { scheduled_at: string; timezone: string } | null, withKey = true): Record<string, unknown> {
  const settings = {
    model: { provider: 'ANTHROPIC', model: 'claude-sonnet-4', base_url: null, api_key_variable: 'ANTHROPIC_API_KEY' },
    instructions: 'Triage the open issues.',
    tools: [{ name: 'issues', type: 'HTTP', description: null, url: 'https://tracker.example.com/api/issues', method: 'GET' }],
    git_repository: null,
    schedule,
    max_steps: 20,
    max_duration_seconds: 300,
    cpu: 250,
    memory: 256,
    auto_deploy: true,
    icon_uri: 'app://slipway-console/agentic-workflow',
  };
  return baseSpec(serviceId, 'AGENTIC_WORKFLOW', name, settings, {
    git: null,
    git_commit_id: null,
    variables: withKey ? [{ key: 'ANTHROPIC_API_KEY', value: API_KEY, mount_path: null, scope: 'SERVICE', secret: true }] : [],
  });
}

async function perform(
  action: string,
  spec: Record<string, unknown> | undefined,
  serviceId: string,
  kind: string,
  subject: 'SERVICE' | 'SERVICE_TEARDOWN' = 'SERVICE',
  using: AgentDriver = driver,
): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask(environmentId, serviceId, action, kind, subject), spec);
  await carryOutTask(using, session, (event, message) => session.report(event, message));
  return session;
}

function secretValue(data: Record<string, string> | undefined, key: string): string | undefined {
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

async function objectsOf(serviceId: string): Promise<string[]> {
  const cluster = world?.cluster;
  if (cluster === undefined) throw new Error('no cluster');
  const found: string[] = [];
  const kinds: Array<[string, string]> = [
    ['v1', 'Secret'],
    ['v1', 'ServiceAccount'],
    ['rbac.authorization.k8s.io/v1', 'Role'],
    ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
    ['batch/v1', 'Job'],
  ];
  for (const [apiVersion, kind] of kinds) {
    for (const object of await cluster.list(apiVersion, kind, namespace, `slipway.dev/service-id=${serviceId}`)) {
      if ((object.metadata as { deletionTimestamp?: string }).deletionTimestamp === undefined) found.push(`${kind}/${object.metadata.name}`);
    }
  }
  return found.sort();
}

beforeAll(async () => {
  world = await startKubeWorld({ kubelet: { outcome: outcomeOf } });
  const served = await world.cluster.servedKinds();
  driver = createKubernetesDriver({ cluster: world.cluster, served });
  workflowDriver = createKubernetesDriver({ cluster: world.cluster, served, workflowRunnerImage: 'registry.example.com/acme/workflow-runner:1.0' });
}, 20 * 60_000);

afterAll(async () => {
  await world?.stop();
});

describe('Kubernetes driver: a Terraform service', () => {
  const network = { id: networkId, name: 'network' };
  let applyDeployment = '';

  it('runs apply as a Job: the commit cloned, the Kubernetes state backend, var files and variables, no secret in the spec', async () => {
    const session = await perform('deploy', terraformSpec(networkId, 'network'), networkId, 'TERRAFORM');
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    applyDeployment = session.task.deployment_id;
    const jobName = terraformJobNameOf(network, 'apply', applyDeployment);
    expect(session.text()).toContain(`Job ${jobName} completed`);
    // The pod's log and exit code are the deployment's log.
    expect(session.lines).toContainEqual({ stream: 'stdout', line: 'Resources: 1 added, 0 changed, 0 destroyed.' });
    expect(session.text()).toMatch(/pod \S+ exited with code 0/);
    expect(session.text()).not.toContain(GIT_TOKEN);

    const job = await world?.batch.readNamespacedJob({ name: jobName, namespace });
    const pod = job?.spec?.template.spec;
    const main = pod?.containers[0];
    expect(main?.image).toBe(`hashicorp/terraform:${DEFAULT_TERRAFORM_VERSION}`);
    expect(main?.args).toEqual(['apply', '-input=false', '-auto-approve', '-var-file=env/prod.tfvars', '-var', 'region=eu-west-1', '-parallelism=4']);
    const env = Object.fromEntries((main?.env ?? []).map((variable) => [variable.name, variable.value]));
    expect(env).toMatchObject({ TF_BINARY: 'terraform', TF_WORKDIR: '/workspace/network', TF_BACKEND: 'kubernetes', TF_STATE_SUFFIX: networkId, TF_STATE_NAMESPACE: namespace });
    const script = main?.command?.join(' ') ?? '';
    expect(script).toContain('-backend-config="secret_suffix=$TF_STATE_SUFFIX"');
    expect(script).toContain('-backend-config="namespace=$TF_STATE_NAMESPACE"');
    expect(script).toContain('-backend-config=in_cluster_config=true');
    expect(main?.envFrom).toEqual([{ secretRef: { name: `${workloadNameOf(network)}-env` } }]);
    expect(pod?.initContainers?.map((container) => container.name)).toEqual(['clone']);
    expect(pod?.initContainers?.[0]?.env).toContainEqual({ name: 'GIT_COMMIT', value: COMMIT });
    expect(pod?.serviceAccountName).toBe(terraformAccountNameOf(network));
    expect(pod?.automountServiceAccountToken).toBe(true);
    expect(job?.spec?.activeDeadlineSeconds).toBe(600);
    expect(job?.spec?.template.metadata?.labels?.['slipway.dev/service-id']).toBe(networkId);
    // Secrets reach the run through Secrets only: not in the Job's args, env values or commands.
    const rendered = JSON.stringify(job?.spec);
    expect(rendered).not.toContain(GIT_TOKEN);
    expect(rendered).not.toContain(DB_PASSWORD);

    const envSecret = await world?.core.readNamespacedSecret({ name: `${workloadNameOf(network)}-env`, namespace });
    expect(secretValue(envSecret?.data, 'TF_VAR_db_password')).toBe(DB_PASSWORD);
    const login = await world?.core.readNamespacedSecret({ name: `${workloadNameOf(network)}-terraform-git`, namespace });
    expect(secretValue(login?.data, 'password')).toBe(GIT_TOKEN);
    expect(secretValue(login?.data, 'username')).toBe('x-access-token');

    const role = await world?.cluster.read('rbac.authorization.k8s.io/v1', 'Role', namespace, terraformAccountNameOf(network));
    expect(role?.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    ]);
    const binding = await world?.cluster.read('rbac.authorization.k8s.io/v1', 'RoleBinding', namespace, terraformAccountNameOf(network));
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: terraformAccountNameOf(network), namespace }]);
  });

  it('keeps only the last run: a redeploy applies again under its own Job and prunes the previous one', async () => {
    const session = await perform('redeploy', terraformSpec(networkId, 'network'), networkId, 'TERRAFORM');
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    const jobs = (await objectsOf(networkId)).filter((object) => object.startsWith('Job/'));
    expect(jobs).toEqual([`Job/${terraformJobNameOf(network, 'apply', session.task.deployment_id)}`]);
  });

  it('fails the deployment with the exit code of a failed run, its log in the deployment log', async () => {
    const session = await perform('deploy', terraformSpec(brokenId, 'broken', '1.9.0-fail'), brokenId, 'TERRAFORM');
    expect(session.events()).toEqual(['take', 'built', 'fail']);
    expect(session.reports.at(-1)?.message).toMatch(/^terraform apply failed: Job \S+ failed: exit code 3/);
    expect(session.lines).toContainEqual({ stream: 'stdout', line: 'Resources: 1 added, 0 changed, 0 destroyed.' });
    expect(session.text()).toMatch(/pod \S+ exited with code 3/);
  });

  it('runs nothing on stop', async () => {
    const before = runs.length;
    const session = await perform('stop', undefined, networkId, 'TERRAFORM');
    expect(session.events(), session.text()).toEqual(['take', 'succeed']);
    expect(runs.length).toBe(before);
  });

  it('keeps everything when the destroy of a teardown fails: the state and inputs stay for another try', async () => {
    const before = await objectsOf(brokenId);
    const session = await perform('delete', undefined, brokenId, 'TERRAFORM', 'SERVICE_TEARDOWN');
    expect(session.events()).toEqual(['take', 'fail']);
    expect(session.reports.at(-1)?.message).toMatch(/^terraform destroy failed: .*exit code 3/);
    expect(runs.at(-1)).toEqual({ serviceId: brokenId, args: expect.arrayContaining(['destroy', '-auto-approve', '-refresh=false']) });
    const after = (await objectsOf(brokenId)).filter((object) => !object.includes('-tf-destroy-'));
    expect(after).toEqual(before.filter((object) => !object.includes('-tf-destroy-')));
    expect(after).toContain(`Secret/${workloadNameOf({ id: brokenId, name: 'broken' })}-env`);
  });

  it('tears down by running destroy first, then deleting every object of the service by its labels', async () => {
    const session = await perform('delete', undefined, networkId, 'TERRAFORM', 'SERVICE_TEARDOWN');
    expect(session.events(), session.text()).toEqual(['take', 'succeed']);
    const destroyJob = terraformJobNameOf(network, 'destroy', session.task.deployment_id);
    const text = session.text();
    expect(text).toContain(`Job ${destroyJob} completed`);
    expect(text.indexOf(`Job ${destroyJob} completed`)).toBeLessThan(text.search(/removed \d+ object\(s\) of the service/));
    expect(session.lines).toContainEqual({ stream: 'stdout', line: 'engine destroy -input=false -auto-approve -var-file=env/prod.tfvars -var region=eu-west-1 -refresh=false' });
    expect(await objectsOf(networkId)).toEqual([]);
  });
});

describe('Kubernetes driver: an agentic workflow', () => {
  const workflow = { id: workflowId, name: 'triage' };

  it('fails at once without a workflow runner image, applying nothing', async () => {
    const session = await perform('deploy', workflowSpec(workflowId, 'triage', null), workflowId, 'AGENTIC_WORKFLOW');
    expect(session.reports.at(-1)).toEqual({ event: 'fail', message: WORKFLOW_RUNNER_MESSAGE });
    expect(await objectsOf(workflowId)).toEqual([]);
  });

  it('fails naming the API key secret when the service does not have it', async () => {
    const session = await perform('deploy', workflowSpec(workflowId, 'triage', null, false), workflowId, 'AGENTIC_WORKFLOW', 'SERVICE', workflowDriver);
    expect(session.events()).toEqual(['take', 'fail']);
    expect(session.reports.at(-1)?.message).toContain('ANTHROPIC_API_KEY');
  });

  it('runs a workflow without a schedule as a Job at deployment, the API key by secretKeyRef only', async () => {
    const session = await perform('deploy', workflowSpec(workflowId, 'triage', null), workflowId, 'AGENTIC_WORKFLOW', 'SERVICE', workflowDriver);
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain(`Job ${workflowRunJobNameOf(workflow)} completed`);
    const job = await world?.batch.readNamespacedJob({ name: workflowRunJobNameOf(workflow), namespace });
    expect(job?.spec?.activeDeadlineSeconds).toBe(300);
    expect(job?.spec?.backoffLimit).toBe(0);
    const main = job?.spec?.template.spec?.containers[0];
    expect(main?.image).toBe('registry.example.com/acme/workflow-runner:1.0');
    expect(main?.env).toContainEqual({ name: MODEL_API_KEY_ENV, valueFrom: { secretKeyRef: { name: `${workloadNameOf(workflow)}-env`, key: 'ANTHROPIC_API_KEY' } } });
    expect(JSON.stringify(job?.spec)).not.toContain(API_KEY);
    const config = await world?.core.readNamespacedSecret({ name: `${workloadNameOf(workflow)}-workflow`, namespace });
    expect(JSON.parse(secretValue(config?.data, 'workflow.json') ?? '{}')).toMatchObject({
      model: { provider: 'ANTHROPIC', model: 'claude-sonnet-4', api_key_env: MODEL_API_KEY_ENV },
      instructions: 'Triage the open issues.',
      max_steps: 20,
      workspace: null,
    });
  });

  it('schedules a workflow with a schedule as a CronJob, suspended on stop', async () => {
    const scheduled = { id: scheduledId, name: 'nightly' };
    const session = await perform('deploy', workflowSpec(scheduledId, 'nightly', { scheduled_at: '0 3 * * *', timezone: 'UTC' }), scheduledId, 'AGENTIC_WORKFLOW', 'SERVICE', workflowDriver);
    expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
    const served = await world?.cluster.servedKinds();
    const cronJob = await world?.cluster.read(served?.cronJob ?? 'batch/v1', 'CronJob', namespace, workloadNameOf(scheduled));
    const spec = cronJob?.spec as { schedule?: string; concurrencyPolicy?: string; jobTemplate?: { spec?: { activeDeadlineSeconds?: number; template?: { spec?: { containers?: Array<{ env?: unknown[] }> } } } } };
    expect(spec.schedule).toBe('0 3 * * *');
    expect(spec.concurrencyPolicy).toBe('Forbid');
    expect(spec.jobTemplate?.spec?.activeDeadlineSeconds).toBe(300);
    expect(spec.jobTemplate?.spec?.template?.spec?.containers?.[0]?.env).toContainEqual({ name: MODEL_API_KEY_ENV, valueFrom: { secretKeyRef: { name: `${workloadNameOf(scheduled)}-env`, key: 'ANTHROPIC_API_KEY' } } });
    const stopped = await perform('stop', undefined, scheduledId, 'AGENTIC_WORKFLOW', 'SERVICE', workflowDriver);
    expect(stopped.events(), stopped.text()).toEqual(['take', 'succeed']);
    const suspended = await world?.cluster.read(served?.cronJob ?? 'batch/v1', 'CronJob', namespace, workloadNameOf(scheduled));
    expect((suspended?.spec as { suspend?: boolean }).suspend).toBe(true);
  });
});
