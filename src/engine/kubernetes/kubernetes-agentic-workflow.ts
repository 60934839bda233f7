import type { CronJob, Job, JobSpec } from 'kubernetes-types/batch/v1.js';
import type { Container, EnvVar, Secret } from 'kubernetes-types/core/v1.js';
import { Type, type Static } from 'typebox';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import { ProtocolViolation, type ServiceDeploymentSpec } from '../../protocol/agent-protocol.ts';
import { Nullable, schemaProblem } from '../../protocol/wire.ts';
import type { KubernetesCluster, ServedKinds } from './kubernetes-cluster.ts';
import { JobRunFailed, runLifecycleJob } from './kubernetes-job.ts';
import { ANNOTATION_CONFIG_HASH, ANNOTATION_DEPLOYMENT, contentHash, namespaceOf, serviceLabels, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import { commitOfSpec, renderGitCheckout } from './kubernetes-terraform.ts';
import { base64, cpuQuantity, memoryQuantity, namespaceObject, renderConfig, type KubeObject, type WorkloadVariable } from './kubernetes-workload.ts';

/**
 * An AGENTIC_WORKFLOW as Kubernetes objects (docs/kubernetes.md, "What each kind becomes"): the workflow runner's
 * image, run by a CronJob on the workflow's schedule, or without one as a Job at each deployment, waited for (a
 * lifecycle job's run: runLifecycleJob) — its outcome is the deployment's.
 *
 *   Secret <name>-env, -files     its variables, as a CONTAINER's (the model's API key among its secrets)
 *   Secret <name>-workflow        `workflow.json`: the runner's contract (below), mounted at /slipway/workflow
 *   Secret <name>-workflow-git    the git login, when the workspace repository has one
 *   CronJob <name> | Job <name>-run
 *
 * Slipway has no workflow runner of its own: the image is the agent's setting (`--workflow-runner-image`, or
 * SLIPWAY_WORKFLOW_RUNNER_IMAGE), and without one a deployment fails saying so. The contract a runner implements: read SLIPWAY_WORKFLOW_CONFIG (the JSON: model
 * provider, name and base URL, instructions, tools, max_steps, the workspace directory or null), the API key from
 * SLIPWAY_MODEL_API_KEY — given by a secretKeyRef to the service's secret named `api_key_variable`, never as a value
 * in the pod spec — stop after max_steps model calls, and exit 0 when the workflow succeeded. The run lasts at most
 * max_duration_seconds (activeDeadlineSeconds) and is not retried.
 */

export const WORKFLOW_RUNNER_MESSAGE =
  'AGENTIC_WORKFLOW services run the workflow runner image the agent is configured with, and this agent has none (start it with --workflow-runner-image, or set SLIPWAY_WORKFLOW_RUNNER_IMAGE): Slipway ships no runner of its own';

export const WORKFLOW_CONFIG_PATH = '/slipway/workflow/workflow.json';
export const MODEL_API_KEY_ENV = 'SLIPWAY_MODEL_API_KEY';

const AgenticWorkflowSettings = Type.Object({
  model: Type.Object({ provider: Type.String({ minLength: 1 }), model: Type.String({ minLength: 1 }), base_url: Nullable(Type.String()), api_key_variable: Nullable(Type.String({ minLength: 1 })) }),
  instructions: Type.String(),
  tools: Type.Array(Type.Object({ name: Type.String(), type: Type.String(), description: Nullable(Type.String()), url: Type.String(), method: Nullable(Type.String()) })),
  git_repository: Nullable(Type.Object({}, { additionalProperties: true })),
  schedule: Nullable(Type.Object({ scheduled_at: Type.String({ minLength: 1 }), timezone: Type.String({ minLength: 1 }) })),
  max_steps: Type.Integer({ minimum: 1 }),
  max_duration_seconds: Type.Integer({ minimum: 1 }),
  cpu: Type.Integer({ minimum: 1 }),
  memory: Type.Integer({ minimum: 1 }),
});
type AgenticWorkflowSettings = Static<typeof AgenticWorkflowSettings>;

/** What the driver reads of an AGENTIC_WORKFLOW's settings (services.kind-agentic-workflow.ts), checked. */
export function agenticWorkflowSettingsOf(settings: unknown): AgenticWorkflowSettings {
  const problem = schemaProblem(AgenticWorkflowSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the agentic workflow's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as AgenticWorkflowSettings;
}

export function workflowRunJobNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>): string {
  return `${workloadNameOf(service)}-run`;
}

/** Zones that are the controller's own on any server: no timeZone field is needed for them. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/UCT', 'UCT', 'Etc/Universal', 'Universal', 'Etc/Zulu', 'Zulu']);

export interface WorkflowRender {
  service: ServiceIdentity;
  deploymentId: string;
  spec: ServiceDeploymentSpec;
  variables: readonly WorkloadVariable[];
  runnerImage: string;
  cronJobVersion: ServedKinds['cronJob'];
  gitImage?: string | undefined;
}

/** The workflow's objects: its Secrets, then the CronJob or the Job of its run (last); `timeZoneIgnored` for the log. */
export function renderAgenticWorkflow(render: WorkflowRender): { objects: KubeObject[]; workload: KubeObject; timeZoneIgnored: boolean } {
  const settings = agenticWorkflowSettingsOf(render.spec.service.settings);
  const { service, deploymentId } = render;
  const name = workloadNameOf(service);
  const namespace = namespaceOf(service.environmentId);
  const labels = serviceLabels(service);
  const metadata = (objectName: string) => ({ name: objectName, namespace, labels, annotations: { [ANNOTATION_DEPLOYMENT]: deploymentId } });
  const keyVariable = settings.model.api_key_variable;
  if (keyVariable !== null && !render.variables.some((variable) => variable.key === keyVariable && variable.mountPath === null)) {
    throw new Error(`the model's API key is the secret ${keyVariable} of the service, which is not set: add it before deploying`);
  }
  const config = renderConfig({ service, deploymentId, pullCredentials: undefined, variables: render.variables });
  const checkout = settings.git_repository === null ? undefined : (() => {
    const { git, commitId } = commitOfSpec(render.spec);
    return renderGitCheckout(service, deploymentId, git, commitId, `${name}-workflow-git`, render.gitImage);
  })();
  const workflow = JSON.stringify({
    model: { provider: settings.model.provider, model: settings.model.model, base_url: settings.model.base_url, api_key_env: keyVariable === null ? null : MODEL_API_KEY_ENV },
    instructions: settings.instructions,
    tools: settings.tools,
    max_steps: settings.max_steps,
    max_duration_seconds: settings.max_duration_seconds,
    workspace: checkout === undefined ? null : '/workspace',
  });
  const workflowSecret: Secret & KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: metadata(`${name}-workflow`), type: 'Opaque', data: { 'workflow.json': base64(workflow) } };
  const env: EnvVar[] = [{ name: 'SLIPWAY_WORKFLOW_CONFIG', value: WORKFLOW_CONFIG_PATH }];
  if (keyVariable !== null) env.push({ name: MODEL_API_KEY_ENV, valueFrom: { secretKeyRef: { name: config.envSecretName, key: keyVariable } } });
  const runner: Container = {
    name: 'main',
    image: render.runnerImage,
    env,
    envFrom: [{ secretRef: { name: config.envSecretName } }],
    resources: {
      requests: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
      limits: { cpu: cpuQuantity(settings.cpu), memory: memoryQuantity(settings.memory) },
    },
    volumeMounts: [{ name: 'workflow', mountPath: '/slipway/workflow', readOnly: true }, ...(checkout === undefined ? [] : [checkout.workspaceMount]), ...config.volumeMounts],
  };
  const jobSpec: JobSpec = {
    // A run that failed is reported, not repeated: a model's calls cost, and a second run may act twice.
    backoffLimit: 0,
    activeDeadlineSeconds: settings.max_duration_seconds,
    template: {
      metadata: { labels, annotations: { [ANNOTATION_CONFIG_HASH]: contentHash([config.configHash, workflow]) } },
      spec: {
        ...(checkout === undefined ? {} : { initContainers: [checkout.clone] }),
        containers: [runner],
        volumes: [{ name: 'workflow', secret: { secretName: workflowSecret.metadata.name } }, ...(checkout?.volumes ?? []), ...config.volumes],
        restartPolicy: 'Never',
        enableServiceLinks: false,
        automountServiceAccountToken: false,
      },
    },
  };
  const objects = [...config.objects, workflowSecret, ...(checkout?.secret === undefined ? [] : [checkout.secret])];
  if (settings.schedule === null) {
    const job: Job & KubeObject = { apiVersion: 'batch/v1', kind: 'Job', metadata: metadata(workflowRunJobNameOf(service)), spec: jobSpec };
    return { objects, workload: job, timeZoneIgnored: false };
  }
  const needsZone = !UTC_ZONES.has(settings.schedule.timezone);
  const withZone = needsZone && render.cronJobVersion === 'batch/v1';
  const cronJob: Omit<CronJob, 'apiVersion'> & KubeObject = {
    apiVersion: render.cronJobVersion,
    kind: 'CronJob',
    metadata: metadata(name),
    spec: {
      schedule: settings.schedule.scheduled_at,
      ...(withZone ? { timeZone: settings.schedule.timezone } : {}),
      concurrencyPolicy: 'Forbid',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: { metadata: { labels }, spec: jobSpec },
    },
  };
  return { objects, workload: cronJob, timeZoneIgnored: needsZone && !withZone };
}

export interface WorkflowDeployContext {
  cluster: KubernetesCluster;
  service: ServiceIdentity;
  variables: readonly WorkloadVariable[];
  /** The agent's runner image (--workflow-runner-image, SLIPWAY_WORKFLOW_RUNNER_IMAGE). */
  runnerImage: string | undefined;
  cronJobVersion: ServedKinds['cronJob'];
  gitImage?: string | undefined;
  /** Deletes the service's objects that the intent does not hold (the driver's prune). */
  prune(intent: readonly KubeObject[]): Promise<void>;
}

/**
 * A deployment: the objects applied and the others pruned; a scheduled workflow is then left to its CronJob (stop
 * suspends it, as a cron job's), one without a schedule runs now and the deployment waits for the run.
 */
export async function deployAgenticWorkflow(context: WorkflowDeployContext, session: TaskSession, spec: ServiceDeploymentSpec): Promise<void> {
  const { cluster, service } = context;
  const runnerImage = context.runnerImage;
  if (runnerImage === undefined || runnerImage === '') throw new Error(WORKFLOW_RUNNER_MESSAGE);
  const rendered = renderAgenticWorkflow({
    service,
    deploymentId: session.task.deployment_id,
    spec,
    variables: context.variables,
    runnerImage,
    cronJobVersion: context.cronJobVersion,
    gitImage: context.gitImage,
  });
  if (!(await session.built())) throw new TaskCanceled();
  const namespace = namespaceOf(service.environmentId);
  await cluster.apply(namespaceObject(service));
  const intent = rendered.workload.kind === 'CronJob' ? [...rendered.objects, rendered.workload] : rendered.objects;
  session.log('system', `applying ${intent.map((object) => `${object.kind}/${object.metadata.name}`).join(', ')} in namespace ${namespace}`);
  for (const object of intent) await cluster.apply(object);
  await context.prune([...rendered.objects, rendered.workload]);
  if (rendered.workload.kind === 'CronJob') {
    const schedule = (rendered.workload.spec as { schedule: string }).schedule;
    if (rendered.timeZoneIgnored) session.log('system', `this cluster serves CronJob in ${context.cronJobVersion}, which has no time zone: the schedule runs in the controller's zone (UTC)`);
    session.log('system', `${spec.service.name} scheduled at "${schedule}" in namespace ${namespace}`);
    return;
  }
  try {
    await runLifecycleJob(cluster, session, rendered.workload);
  } catch (error) {
    if (error instanceof JobRunFailed) throw new Error(`the workflow run failed: ${error.message}`, { cause: error });
    throw error;
  }
  session.log('system', `${spec.service.name}: the workflow run succeeded`);
}
