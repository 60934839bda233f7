import type { Job } from 'kubernetes-types/batch/v1.js';
import { GIT_ASKPASS_SCRIPT, GIT_CLONE_SCRIPT, gitCloneEnvOf } from './kubernetes-git-checkout.ts';
import type { Container, EnvVar, Secret, ServiceAccount, Volume, VolumeMount } from 'kubernetes-types/core/v1.js';
import type { Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import { Type, type Static } from 'typebox';
import { TOKEN_USER_NAME } from '../../git/git-access.ts';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import { ProtocolViolation, type ServiceDeploymentSpec, type SpecGitSource } from '../../protocol/agent-protocol.ts';
import { Nullable, schemaProblem } from '../../protocol/wire.ts';
import { GIT_IMAGE, LABEL_ROLE } from './kubernetes-build.ts';
import type { KubernetesCluster } from './kubernetes-cluster.ts';
import { JobRunFailed, runLifecycleJob } from './kubernetes-job.ts';
import { ANNOTATION_DEPLOYMENT, LABEL_SERVICE, namespaceOf, serviceLabels, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import { base64, cpuQuantity, memoryQuantity, namespaceObject, renderConfig, type KubeObject, type WorkloadVariable } from './kubernetes-workload.ts';

/**
 * A TERRAFORM service as Kubernetes objects (docs/kubernetes.md, "What each kind becomes"): each deployment is one
 * run of the engine, a Job waited for as a lifecycle job is (runLifecycleJob), whose outcome is the deployment's.
 *
 *   Secret <name>-env, -files                   its variables (TF_VAR_<name> secrets among them), as a CONTAINER's
 *   Secret <name>-terraform-git                 the git login (askpass program, user name, token), when there is one
 *   ServiceAccount/Role/RoleBinding             `<name>-terraform`: the run's identity, with rights on Secrets and
 *                                               Leases of the namespace only — the Kubernetes state backend's
 *   Secret <name>-terraform-destroy             the destroy run of the last deployment: a teardown (which has no
 *                                               spec) runs it before the service's objects go
 *   Job <name>-tf-<action>-<deployment>         init container `clone` fetches the commit into an emptyDir; `main`,
 *                                               the engine's image, runs init (with the backend) then the action
 *
 * The state is the Kubernetes backend's Secret `tfstate-default-<service id>` in the environment's namespace (locked
 * by a Lease), unless the module brings its own backend (`backend: user_provided`). The token reaches git through
 * GIT_ASKPASS, a file of the mounted Secret: never in the Job's args, env values or logs.
 */

/** Pinned: a run must not change because an image tag moved; a service's explicit version replaces them. */
export const TERRAFORM_IMAGE = 'hashicorp/terraform';
export const OPENTOFU_IMAGE = 'ghcr.io/opentofu/opentofu';
export const DEFAULT_TERRAFORM_VERSION = '1.12.2';
export const DEFAULT_OPENTOFU_VERSION = '1.9.1';

export type TerraformAction = 'plan' | 'apply' | 'destroy';

const TerraformSettings = Type.Object({
  tf_var_file_paths: Type.Array(Type.String()),
  tf_vars: Type.Array(Type.Object({ key: Type.String({ minLength: 1 }), value: Type.String() })),
  backend: Type.Union([Type.Literal('kubernetes'), Type.Literal('user_provided')]),
  engine: Type.Union([Type.Literal('TERRAFORM'), Type.Literal('OPEN_TOFU')]),
  engine_version: Nullable(Type.String({ pattern: '^\\d+\\.\\d+(?:\\.\\d+)?(?:-[0-9A-Za-z.]+)?$' })),
  timeout_sec: Type.Integer({ minimum: 1 }),
  job_resources: Type.Object({ cpu_milli: Type.Integer({ minimum: 1 }), ram_mib: Type.Integer({ minimum: 1 }), storage_gib: Type.Integer({ minimum: 1 }) }),
  use_cluster_credentials: Type.Boolean(),
  action_extra_arguments: Type.Object({ plan: Type.Array(Type.String()), apply: Type.Array(Type.String()), destroy: Type.Array(Type.String()) }),
});
type TerraformSettings = Static<typeof TerraformSettings>;

/** What the driver reads of a TERRAFORM's settings (services.kind-terraform.ts), checked; throws naming the field. */
export function terraformSettingsOf(settings: unknown): TerraformSettings {
  const problem = schemaProblem(TerraformSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the Terraform service's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as TerraformSettings;
}

/** `<name>-tf-<action>-<8 characters of the deployment>`, the name cut (its id suffix kept) to stay within 63. */
export function terraformJobNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>, action: TerraformAction, deploymentId: string): string {
  const tail = `-tf-${action}-${deploymentId.replaceAll('-', '').slice(0, 8).toLowerCase()}`;
  const name = workloadNameOf(service);
  const room = 63 - tail.length;
  if (name.length <= room) return `${name}${tail}`;
  const suffix = name.slice(-9);
  return `${name.slice(0, room - suffix.length).replace(/-+$/, '')}${suffix}${tail}`;
}

export function terraformAccountNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>): string {
  return `${workloadNameOf(service)}-terraform`;
}

function destroyRecordNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>): string {
  return `${workloadNameOf(service)}-terraform-destroy`;
}

/** What marks the Secret of the recorded destroy run, which a teardown finds by the service's id alone. */
const DESTROY_ROLE = 'terraform-destroy';

// ---------------------------------------------------------------- the checkout of a commit (kubernetes-git-checkout.ts)

export interface GitCheckout {
  /** The login's Secret, when the repository has one. */
  secret: KubeObject | undefined;
  clone: Container;
  /** `workspace` (the emptyDir the commit is in) and the login's volume. */
  volumes: Volume[];
  /** The workspace's mount, for the container that works on the commit. */
  workspaceMount: VolumeMount;
}

/** A commit as the clone fetches it: git hosts serve one commit by its full id. */
export function commitOfSpec(spec: ServiceDeploymentSpec): { git: SpecGitSource; commitId: string; rootPath: string } {
  if (spec.git === null) throw new Error(`the deployment spec of ${spec.service.name} has no git source`);
  const commitId = spec.git.commit_id ?? spec.git_commit_id;
  if (commitId === null || !/^[0-9a-f]{7,64}$/i.test(commitId)) throw new Error(`the deployment of ${spec.service.name} names no git commit`);
  const segments = (spec.git.root_path ?? '').split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new Error(`the root path "${spec.git.root_path ?? ''}" leaves the repository`);
  return { git: spec.git, commitId: commitId.toLowerCase(), rootPath: segments.join('/') };
}

/** The init container that checks the commit out into `/workspace`, the token mounted for GIT_ASKPASS only. */
export function renderGitCheckout(service: ServiceIdentity, deploymentId: string, git: SpecGitSource, commitId: string, secretName: string, gitImage: string | undefined): GitCheckout {
  const volumes: Volume[] = [{ name: 'workspace', emptyDir: {} }];
  const workspaceMount: VolumeMount = { name: 'workspace', mountPath: '/workspace' };
  const mounts: VolumeMount[] = [workspaceMount];
  const env: EnvVar[] = gitCloneEnvOf(git, commitId);
  let secret: (Secret & KubeObject) | undefined;
  if (git.credentials !== null) {
    secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace: namespaceOf(service.environmentId), labels: serviceLabels(service), annotations: { [ANNOTATION_DEPLOYMENT]: deploymentId } },
      type: 'Opaque',
      data: { askpass: base64(GIT_ASKPASS_SCRIPT), username: base64(TOKEN_USER_NAME[git.credentials.provider]), password: base64(git.credentials.token) },
    };
    // Executable for its owner only: the askpass program, and the answers it reads.
    volumes.push({ name: 'git-login', secret: { secretName, defaultMode: 0o500 } });
    mounts.push({ name: 'git-login', mountPath: '/slipway/git', readOnly: true });
    env.push({ name: 'GIT_ASKPASS', value: '/slipway/git/askpass' });
  }
  const clone: Container = { name: 'clone', image: gitImage ?? GIT_IMAGE, command: ['sh', '-c', GIT_CLONE_SCRIPT], env, volumeMounts: mounts };
  return { secret, clone, volumes, workspaceMount };
}

// ---------------------------------------------------------------- the run

/**
 * Writes the Kubernetes backend in an override file (so a module without a backend block gets it too), runs init,
 * then the action with the arguments the Job gives (`$@`). Apply prints the outputs itself, sensitive ones hidden.
 */
const RUN_SCRIPT = `set -eu
cd "$TF_WORKDIR"
if [ "$TF_BACKEND" = kubernetes ]; then
  printf 'terraform {\\n  backend "kubernetes" {}\\n}\\n' > slipway_backend_override.tf
  "$TF_BINARY" init -input=false -backend-config="secret_suffix=$TF_STATE_SUFFIX" -backend-config="namespace=$TF_STATE_NAMESPACE" -backend-config=in_cluster_config=true
else
  "$TF_BINARY" init -input=false
fi
"$TF_BINARY" "$@"
`;

export interface TerraformRender {
  service: ServiceIdentity;
  deploymentId: string;
  spec: ServiceDeploymentSpec;
  /** The spec's variables, internal hostnames resolved for the cluster. */
  variables: readonly WorkloadVariable[];
  gitImage?: string | undefined;
}

export function terraformImageOf(settings: TerraformSettings): string {
  if (settings.engine === 'OPEN_TOFU') return `${OPENTOFU_IMAGE}:${settings.engine_version ?? DEFAULT_OPENTOFU_VERSION}`;
  return `${TERRAFORM_IMAGE}:${settings.engine_version ?? DEFAULT_TERRAFORM_VERSION}`;
}

/** The engine's arguments of an action: Slipway's flags, the var files and variables, then the settings' extra ones. */
export function terraformArgumentsOf(settings: TerraformSettings, action: TerraformAction): string[] {
  return [
    action,
    '-input=false',
    ...(action === 'plan' ? [] : ['-auto-approve']),
    ...settings.tf_var_file_paths.map((path) => `-var-file=${path}`),
    ...settings.tf_vars.flatMap((variable) => ['-var', `${variable.key}=${variable.value}`]),
    ...settings.action_extra_arguments[action],
  ];
}

/** The ServiceAccount of the runs and its rights: the state's Secret and its lock's Lease, in the namespace only. */
function renderAccount(render: TerraformRender): KubeObject[] {
  const name = terraformAccountNameOf(render.service);
  const metadata = { name, namespace: namespaceOf(render.service.environmentId), labels: serviceLabels(render.service), annotations: { [ANNOTATION_DEPLOYMENT]: render.deploymentId } };
  const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  const account: ServiceAccount & KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata, automountServiceAccountToken: false };
  const role: Role & KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [
      { apiGroups: [''], resources: ['secrets'], verbs },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs },
    ],
  };
  const binding: RoleBinding & KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: metadata.namespace }],
  };
  return [account, role, binding];
}

/** The Job of one run of the action. */
function renderRunJob(render: TerraformRender, settings: TerraformSettings, checkout: GitCheckout, envSecretName: string, extraVolumes: { volumes: Volume[]; mounts: VolumeMount[] }, rootPath: string, action: TerraformAction): KubeObject {
  const { service } = render;
  const labels = serviceLabels(service);
  const { cpu_milli: cpu, ram_mib: memory, storage_gib: storage } = settings.job_resources;
  const main: Container = {
    name: 'main',
    image: terraformImageOf(settings),
    command: ['sh', '-c', RUN_SCRIPT, 'slipway-terraform'],
    args: terraformArgumentsOf(settings, action),
    env: [
      { name: 'TF_BINARY', value: settings.engine === 'OPEN_TOFU' ? 'tofu' : 'terraform' },
      { name: 'TF_WORKDIR', value: `/workspace${rootPath === '' ? '' : `/${rootPath}`}` },
      { name: 'TF_BACKEND', value: settings.backend },
      { name: 'TF_STATE_SUFFIX', value: service.id },
      { name: 'TF_STATE_NAMESPACE', value: namespaceOf(service.environmentId) },
      { name: 'TF_IN_AUTOMATION', value: '1' },
    ],
    envFrom: [{ secretRef: { name: envSecretName } }],
    resources: {
      requests: { cpu: cpuQuantity(cpu), memory: memoryQuantity(memory), 'ephemeral-storage': `${storage}Gi` },
      limits: { cpu: cpuQuantity(cpu), memory: memoryQuantity(memory), 'ephemeral-storage': `${storage}Gi` },
    },
    volumeMounts: [checkout.workspaceMount, ...extraVolumes.mounts],
  };
  const job: Job & KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: terraformJobNameOf(service, action, render.deploymentId), namespace: namespaceOf(service.environmentId), labels, annotations: { [ANNOTATION_DEPLOYMENT]: render.deploymentId } },
    spec: {
      // A failed apply is the deployment's failure: not run again on its own.
      backoffLimit: 0,
      activeDeadlineSeconds: settings.timeout_sec,
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: terraformAccountNameOf(service),
          // The backend reaches the API server as the run's ServiceAccount (in_cluster_config).
          automountServiceAccountToken: true,
          initContainers: [checkout.clone],
          containers: [main],
          volumes: [...checkout.volumes, ...extraVolumes.volumes],
          restartPolicy: 'Never',
          enableServiceLinks: false,
        },
      },
    },
  };
  return job;
}

/**
 * The objects of a Terraform deployment (applied before the run, kept by prune) and the Job of its run. The intent
 * also keeps the destroy run of this deployment, for a teardown.
 */
export function renderTerraform(render: TerraformRender, action: TerraformAction): { objects: KubeObject[]; job: KubeObject } {
  const settings = terraformSettingsOf(render.spec.service.settings);
  const { git, commitId, rootPath } = commitOfSpec(render.spec);
  const { service } = render;
  const config = renderConfig({ service, deploymentId: render.deploymentId, pullCredentials: undefined, variables: render.variables });
  const checkout = renderGitCheckout(service, render.deploymentId, git, commitId, `${workloadNameOf(service)}-terraform-git`, render.gitImage);
  const extra = { volumes: config.volumes, mounts: config.volumeMounts };
  const job = renderRunJob(render, settings, checkout, config.envSecretName, extra, rootPath, action);
  const destroy = renderRunJob(render, settings, checkout, config.envSecretName, extra, rootPath, 'destroy');
  const record: Secret & KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: destroyRecordNameOf(service), namespace: namespaceOf(service.environmentId), labels: { ...serviceLabels(service), [LABEL_ROLE]: DESTROY_ROLE }, annotations: { [ANNOTATION_DEPLOYMENT]: render.deploymentId } },
    type: 'Opaque',
    data: { job: base64(JSON.stringify(destroy)) },
  };
  const objects = [...config.objects, ...(checkout.secret === undefined ? [] : [checkout.secret]), ...renderAccount(render), record];
  return { objects, job };
}

/** Runs one Job of the engine to its end; a failed run fails the deployment with its exit code. */
async function runTerraformJob(cluster: KubernetesCluster, session: TaskSession, job: KubeObject, action: TerraformAction): Promise<void> {
  try {
    await runLifecycleJob(cluster, session, job);
  } catch (error) {
    if (error instanceof JobRunFailed) throw new Error(`terraform ${action} failed: ${error.message}`, { cause: error });
    throw error;
  }
}

export interface TerraformDeployContext {
  cluster: KubernetesCluster;
  service: ServiceIdentity;
  variables: readonly WorkloadVariable[];
  gitImage?: string | undefined;
  /** Deletes the service's objects that the intent does not hold (the driver's prune). */
  prune(intent: readonly KubeObject[]): Promise<void>;
}

/**
 * A deployment: the objects applied, the older runs' Jobs pruned, then `apply` run and waited for. Every action
 * that deploys (deploy, redeploy, restart) applies: the control plane offers no plan-only deployment.
 */
export async function deployTerraform(context: TerraformDeployContext, session: TaskSession, spec: ServiceDeploymentSpec): Promise<void> {
  const { cluster, service } = context;
  const settings = terraformSettingsOf(spec.service.settings);
  const { objects, job } = renderTerraform({ service, deploymentId: session.task.deployment_id, spec, variables: context.variables, gitImage: context.gitImage }, 'apply');
  if (!(await session.built())) throw new TaskCanceled();
  const namespace = namespaceOf(service.environmentId);
  await cluster.apply(namespaceObject(service));
  session.log('system', `applying ${objects.map((object) => `${object.kind}/${object.metadata.name}`).join(', ')} in namespace ${namespace}`);
  for (const object of objects) await cluster.apply(object);
  await context.prune([...objects, job]);
  if (settings.engine_version === null) session.log('system', `no explicit engine version: running ${terraformImageOf(settings)}`);
  if (settings.use_cluster_credentials) session.log('system', `the run's ServiceAccount ${terraformAccountNameOf(service)} has rights on the namespace's Secrets and Leases only`);
  session.log('system', settings.backend === 'kubernetes' ? `state: Secret tfstate-default-${service.id} in namespace ${namespace}` : "state: the module's own backend");
  await runTerraformJob(cluster, session, job, 'apply');
  session.log('system', `${spec.service.name}: terraform apply succeeded`);
}

/**
 * Before a TERRAFORM service's objects go: the destroy run its last deployment recorded, under this teardown's
 * deployment id. A failed destroy fails the teardown and removes nothing (the state, the inputs and the login stay
 * for another try); a successful one removes the backend's state Secret and lock Lease too.
 */
export async function destroyTerraformBeforeTeardown(cluster: KubernetesCluster, session: TaskSession, namespace: string, serviceId: string): Promise<void> {
  const [record] = await cluster.list('v1', 'Secret', namespace, `${LABEL_SERVICE}=${serviceId},${LABEL_ROLE}=${DESTROY_ROLE}`);
  const data = (record?.data as Record<string, string> | undefined)?.job;
  if (data === undefined) {
    session.log('system', 'no Terraform run of this service was recorded on this cluster: nothing to destroy');
    return;
  }
  const recorded = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as KubeObject;
  const name = recorded.metadata.name.replace(/-tf-destroy-[0-9a-f]{8}$/, `-tf-destroy-${session.task.deployment_id.replaceAll('-', '').slice(0, 8).toLowerCase()}`);
  const job: KubeObject = { ...recorded, metadata: { ...recorded.metadata, name, annotations: { ...recorded.metadata.annotations, [ANNOTATION_DEPLOYMENT]: session.task.deployment_id } } };
  session.log('system', 'running terraform destroy before the service is removed');
  await runTerraformJob(cluster, session, job, 'destroy');
  await cluster.delete({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `tfstate-default-${serviceId}`, namespace } });
  await cluster.delete({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `lock-tfstate-default-${serviceId}`, namespace } });
  session.log('system', 'terraform destroy succeeded: the state is removed');
}
