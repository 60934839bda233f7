import { mkdtemp, rm } from 'node:fs/promises';
import { GIT_ASKPASS_SCRIPT, GIT_CLONE_SCRIPT, gitCloneEnvOf } from './kubernetes-git-checkout.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Job } from 'kubernetes-types/batch/v1.js';
import type { Container, EnvVar, Secret, Volume, VolumeMount } from 'kubernetes-types/core/v1.js';
import { TOKEN_USER_NAME, type GitAccess } from '../../git/git-access.ts';
import type { TaskSession } from '../../protocol/agent-driver.ts';
import type { ServiceDeploymentSpec, SpecGitSource, SpecImage } from '../../protocol/agent-protocol.ts';
import type { KubernetesCluster } from './kubernetes-cluster.ts';
import { JobRunFailed, runLifecycleJob } from './kubernetes-job.ts';
import { ANNOTATION_DEPLOYMENT, namespaceOf, serviceLabels, serviceSelector, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import { applicationBuildSettingsOf, jobSettingsOf } from './kubernetes-settings.ts';
import { base64, type ImagePullCredentials, type KubeObject } from './kubernetes-workload.ts';

/**
 * The in-cluster image build of a service from git (APPLICATION, and a JOB with a Dockerfile source), in the
 * environment's namespace (docs/kubernetes.md, "Image builds"):
 *
 *   Secret <name>-build               the git login (an askpass program and the user name and token it answers), the
 *                                     build registry's dockerconfigjson, a job's inline Dockerfile; deleted when the
 *                                     build ends
 *   Job <name>-build-<short commit>   init container `clone` (a git image) fetches the commit into an emptyDir; then
 *                                     `main`, the builder — Kaniko, or BuildKit rootless — builds the Dockerfile of
 *                                     the root path and pushes `<registry>/<name>:<commit>`
 *
 * The token reaches git through GIT_ASKPASS, a file of the mounted Secret: never in the Job's args, env values or
 * logs. The Job of the last successful build stays: a deployment of the same commit finds it Complete for the same
 * image and builds nothing. A build Job carries the `slipway.dev/role: build` label: prune leaves it to this step,
 * which removes the service's builds of other commits once a build succeeds.
 */

export const IMAGE_BUILDERS = ['kaniko', 'buildkit'] as const;
export type ImageBuilder = (typeof IMAGE_BUILDERS)[number];

/** Pinned: a build must not change because an image tag moved. */
export const KANIKO_IMAGE = 'gcr.io/kaniko-project/executor:v1.23.2';
export const BUILDKIT_IMAGE = 'moby/buildkit:v0.23.2-rootless';
export const GIT_IMAGE = 'alpine/git:v2.47.2';

/** What marks a service's build Jobs among its objects (prune leaves them to the build step). */
export const LABEL_ROLE = 'slipway.dev/role';
export const BUILD_ROLE = 'build';
const ANNOTATION_IMAGE = 'slipway.dev/image';

/** How long a build may run (activeDeadlineSeconds of its Job). */
const BUILD_DEADLINE_SECONDS = 1_800;
/** The last lines of a failed build's log that go into the deployment's error message. */
const FAILED_BUILD_LINES = 10;

export interface ImageBuildOptions {
  /** `--build-image-builder` / SLIPWAY_KUBERNETES_BUILDER. */
  builder: ImageBuilder;
  /** `--build-registry`: `host[:port]/path` under which each service's image is pushed, `<registry>/<name>:<commit>`. */
  registry: string;
  /** `--build-registry-auth`: a dockerconfigjson with the registry's push (and pull) login; none for an open registry. */
  registryAuth?: string | undefined;
  /** `--build-git-image`: the image of the clone step (it runs `sh` and `git`). */
  gitImage?: string | undefined;
}

/** What a build reads of the deployment: the commit and where the Dockerfile is. */
export interface BuildSource {
  git: SpecGitSource;
  commitId: string;
  /** The directory of the repository the build's context is, without leading or trailing slashes ('' for the root). */
  rootPath: string;
  /** The Dockerfile, relative to the root path, when it is in the repository. */
  dockerfilePath: string;
  /** A job's Dockerfile given inline: it replaces the repository's. */
  dockerfileRaw: string | null;
  targetStage: string | null;
}

export interface ImageBuild {
  service: ServiceIdentity;
  deploymentId: string;
  source: BuildSource;
  options: ImageBuildOptions;
}

function cleanPath(path: string | null | undefined, what: string): string {
  const segments = (path ?? '').split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new Error(`the ${what} "${path ?? ''}" leaves the repository`);
  return segments.join('/');
}

/** The build's source of the commit from an APPLICATION's or a git JOB's deployment spec; throws a sentence when it cannot be built. */
export function buildSourceOf(spec: ServiceDeploymentSpec, commitId: string): BuildSource {
  if (spec.git === null) throw new Error(`the deployment spec of ${spec.service.name} has no git source to build`);
  if (!/^[0-9a-f]{7,64}$/i.test(commitId)) throw new Error(`"${commitId}" is not a git commit id to build`);
  let dockerfile: { path: string | null | undefined; raw: string | null | undefined; stage: string | null | undefined };
  if (spec.service.kind === 'JOB') {
    const { source } = jobSettingsOf(spec.service.settings);
    if (source.kind !== 'docker') throw new Error(`the job ${spec.service.name} runs an image: it has nothing to build`);
    dockerfile = { path: source.dockerfile_path, raw: source.dockerfile_raw, stage: source.docker_target_build_stage };
  } else {
    const settings = applicationBuildSettingsOf(spec.service.settings);
    dockerfile = { path: settings.dockerfile_path, raw: null, stage: settings.docker_target_build_stage };
  }
  return {
    git: spec.git,
    commitId: commitId.toLowerCase(),
    rootPath: cleanPath(spec.git.root_path, 'root path'),
    dockerfilePath: cleanPath(dockerfile.path ?? 'Dockerfile', 'Dockerfile path') || 'Dockerfile',
    dockerfileRaw: dockerfile.raw ?? null,
    targetStage: dockerfile.stage ?? null,
  };
}

/** `<registry>/<name>:<commit>`: the image of a service's commit (the tag is the whole commit id). */
export function builtImageOf(registry: string, service: Pick<ServiceIdentity, 'id' | 'name'>, commitId: string): string {
  return `${registry.replace(/\/+$/, '')}/${workloadNameOf(service)}:${commitId}`;
}

/** `<name>-build-<7 characters of the commit>`: at most 63 characters, what a Job's `job-name` label allows. */
export function buildJobNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>, commitId: string): string {
  return `${workloadNameOf(service)}-build-${commitId.slice(0, 7)}`;
}

/** The registry's login for pulling the built image, read from the dockerconfigjson for the registry's host. */
export function registryPullCredentials(registry: string, registryAuth: string | undefined): ImagePullCredentials | undefined {
  if (registryAuth === undefined) return undefined;
  const server = registry.split('/')[0] ?? registry;
  const auths = (JSON.parse(registryAuth) as { auths?: Record<string, { username?: string; password?: string; auth?: string }> }).auths ?? {};
  const entry = auths[server] ?? auths[`https://${server}`] ?? auths[`http://${server}`];
  if (entry === undefined) return undefined;
  if (entry.username !== undefined && entry.password !== undefined) return { server, username: entry.username, password: entry.password };
  if (entry.auth === undefined) return undefined;
  const pair = Buffer.from(entry.auth, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  return colon < 0 ? undefined : { server, username: pair.slice(0, colon), password: pair.slice(colon + 1) };
}

/** The image of a build, with the login the workload pulls it with (null for an open registry). */
function specImageOf(reference: string, options: ImageBuildOptions): SpecImage {
  return { reference, pull_credentials: registryPullCredentials(options.registry, options.registryAuth) ?? null };
}

/**
 * The commit a deployment builds: the one it names, else the head of its branch now — which the agent reads with
 * its git access (a fetch of that one commit into a directory removed at once), so the image is named by the commit
 * it holds, as the local driver's build is.
 */
async function commitToBuild(spec: ServiceDeploymentSpec, git: GitAccess | undefined, session: TaskSession): Promise<string> {
  const named = spec.git?.commit_id ?? spec.git_commit_id;
  if (named !== null) return named;
  if (spec.git === null) throw new Error(`the deployment spec of ${spec.service.name} has no git source to build`);
  if (git === undefined) throw new Error(`the deployment of ${spec.service.name} names no git commit to build`);
  const destination = await mkdtemp(join(tmpdir(), 'slipway-head-'));
  try {
    const commitId = await git.checkout({ url: spec.git.url, branch: spec.git.branch ?? undefined, credentials: spec.git.credentials ?? undefined, destination });
    session.log('system', `the head of ${spec.git.branch ?? 'the default branch'} is commit ${commitId}`);
    return commitId;
  } finally {
    await rm(destination, { recursive: true, force: true });
  }
}

/**
 * The service's image of the deployment's commit (namespace already there): built now, or found built; for a
 * restart, the image that runs. A failed build throws (buildImage); the workload is then left as it runs.
 */
export async function buildServiceImage(
  cluster: KubernetesCluster,
  session: TaskSession,
  build: { spec: ServiceDeploymentSpec; service: ServiceIdentity; options: ImageBuildOptions; git: GitAccess | undefined },
): Promise<SpecImage> {
  if (session.task.action === 'restart') {
    const running = await runningBuiltImage(cluster, build.service, build.options);
    if (running !== undefined) {
      session.log('system', `a restart builds nothing: ${running.reference} runs again`);
      return running;
    }
  }
  const commitId = await commitToBuild(build.spec, build.git, session);
  const source = buildSourceOf(build.spec, commitId);
  const reference = await buildImage(cluster, session, { service: build.service, deploymentId: session.task.deployment_id, source, options: build.options });
  return specImageOf(reference, build.options);
}

/**
 * The image the service's workload runs now, when it is one this agent built: what a restart keeps (a restart
 * rolls the pods, it builds nothing — and a deployment that named no commit would otherwise build a newer head).
 */
export async function runningBuiltImage(cluster: KubernetesCluster, service: ServiceIdentity, options: ImageBuildOptions): Promise<SpecImage | undefined> {
  const prefix = `${options.registry.replace(/\/+$/, '')}/${workloadNameOf(service)}:`;
  for (const kind of ['Deployment', 'StatefulSet']) {
    const workload = await cluster.read('apps/v1', kind, namespaceOf(service.environmentId), workloadNameOf(service));
    const image = (workload?.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } } | undefined)?.template?.spec?.containers?.[0]?.image;
    if (image?.startsWith(prefix) === true) return specImageOf(image, options);
  }
  return undefined;
}

/** The image of the service's last successful build on this cluster (what a stopped job from git runs its on_stop with). */
export async function lastBuiltImage(cluster: KubernetesCluster, service: ServiceIdentity, options: ImageBuildOptions): Promise<SpecImage | undefined> {
  const namespace = namespaceOf(service.environmentId);
  for (const job of await cluster.list('batch/v1', 'Job', namespace, `${serviceSelector(service.id)},${LABEL_ROLE}=${BUILD_ROLE}`)) {
    const complete = ((job.status as { conditions?: JobCondition[] } | undefined)?.conditions ?? []).some((condition) => condition.type === 'Complete' && condition.status === 'True');
    const reference = job.metadata.annotations?.[ANNOTATION_IMAGE];
    if (complete && reference !== undefined) return specImageOf(reference, options);
  }
  return undefined;
}

/** The build's Secret and Job (the Secret only when there is a login or an inline Dockerfile to give). */
export function renderImageBuild(build: ImageBuild): { secret: KubeObject | undefined; job: KubeObject } {
  const { service, source, options } = build;
  const name = buildJobNameOf(service, source.commitId);
  const namespace = namespaceOf(service.environmentId);
  const labels = serviceLabels(service);
  const image = builtImageOf(options.registry, service, source.commitId);
  const secretName = `${workloadNameOf(service)}-build`;
  const data: Record<string, string> = {};
  const credentials = source.git.credentials;
  if (credentials !== null) {
    data.askpass = base64(GIT_ASKPASS_SCRIPT);
    data.username = base64(TOKEN_USER_NAME[credentials.provider]);
    data.password = base64(credentials.token);
  }
  if (options.registryAuth !== undefined) data['config.json'] = base64(options.registryAuth);
  if (source.dockerfileRaw !== null) data.Dockerfile = base64(source.dockerfileRaw);
  const secretVolume = (volume: string, keys: string[], mode: number): Volume => ({
    name: volume,
    secret: { secretName, defaultMode: mode, items: keys.map((key) => ({ key, path: key })) },
  });

  const volumes: Volume[] = [{ name: 'workspace', emptyDir: {} }];
  const cloneMounts: VolumeMount[] = [{ name: 'workspace', mountPath: '/workspace' }];
  const cloneEnv: EnvVar[] = gitCloneEnvOf(source.git, source.commitId);
  if (credentials !== null) {
    // Executable for its owner only: the askpass program, and the answers it reads.
    volumes.push(secretVolume('git-login', ['askpass', 'username', 'password'], 0o500));
    cloneMounts.push({ name: 'git-login', mountPath: '/slipway/git', readOnly: true });
    cloneEnv.push({ name: 'GIT_ASKPASS', value: '/slipway/git/askpass' });
  }
  const builderMounts: VolumeMount[] = [{ name: 'workspace', mountPath: '/workspace' }];
  const builderEnv: EnvVar[] = [];
  if (options.registryAuth !== undefined) {
    volumes.push(secretVolume('registry-login', ['config.json'], 0o444));
    builderMounts.push({ name: 'registry-login', mountPath: '/slipway/docker', readOnly: true });
    builderEnv.push({ name: 'DOCKER_CONFIG', value: '/slipway/docker' });
  }
  const context = `/workspace${source.rootPath === '' ? '' : `/${source.rootPath}`}`;
  let dockerfile = `${context}/${source.dockerfilePath}`;
  if (source.dockerfileRaw !== null) {
    volumes.push(secretVolume('dockerfile', ['Dockerfile'], 0o444));
    builderMounts.push({ name: 'dockerfile', mountPath: '/slipway/dockerfile', readOnly: true });
    dockerfile = '/slipway/dockerfile/Dockerfile';
  }

  const clone: Container = {
    name: 'clone',
    image: options.gitImage ?? GIT_IMAGE,
    command: ['sh', '-c', GIT_CLONE_SCRIPT],
    env: cloneEnv,
    volumeMounts: cloneMounts,
  };
  const resources = { requests: { cpu: '250m', memory: '512Mi' } };
  let builder: Container;
  let podAnnotations: Record<string, string> = {};
  if (options.builder === 'kaniko') {
    builder = {
      name: 'main',
      image: KANIKO_IMAGE,
      args: [`--context=dir://${context}`, `--dockerfile=${dockerfile}`, `--destination=${image}`, ...(source.targetStage === null ? [] : [`--target=${source.targetStage}`])],
      env: builderEnv,
      volumeMounts: builderMounts,
      resources,
    };
  } else {
    const slash = dockerfile.lastIndexOf('/');
    volumes.push({ name: 'buildkit-state', emptyDir: {} });
    builder = {
      name: 'main',
      image: BUILDKIT_IMAGE,
      command: ['buildctl-daemonless.sh'],
      args: [
        'build',
        '--frontend=dockerfile.v0',
        `--local=context=${context}`,
        `--local=dockerfile=${dockerfile.slice(0, slash)}`,
        `--opt=filename=${dockerfile.slice(slash + 1)}`,
        ...(source.targetStage === null ? [] : [`--opt=target=${source.targetStage}`]),
        `--output=type=image,name=${image},push=true`,
      ],
      // Rootless BuildKit in an unprivileged pod: no process sandbox of its own, seccomp and AppArmor unconfined
      // (moby/buildkit's examples/kubernetes, "rootless").
      env: [...builderEnv, { name: 'BUILDKITD_FLAGS', value: '--oci-worker-no-process-sandbox' }],
      securityContext: { runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'Unconfined' } },
      volumeMounts: [...builderMounts, { name: 'buildkit-state', mountPath: '/home/user/.local/share/buildkit' }],
      resources,
    };
    podAnnotations = { 'container.apparmor.security.beta.kubernetes.io/main': 'unconfined' };
  }

  const job: Job & KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace,
      labels: { ...labels, [LABEL_ROLE]: BUILD_ROLE },
      annotations: { [ANNOTATION_DEPLOYMENT]: build.deploymentId, [ANNOTATION_IMAGE]: image },
    },
    spec: {
      // A failed build is the deployment's failure: not retried with the same input.
      backoffLimit: 0,
      activeDeadlineSeconds: BUILD_DEADLINE_SECONDS,
      template: {
        metadata: { labels: { ...labels, [LABEL_ROLE]: BUILD_ROLE }, ...(Object.keys(podAnnotations).length === 0 ? {} : { annotations: podAnnotations }) },
        spec: {
          initContainers: [clone],
          containers: [builder],
          volumes,
          restartPolicy: 'Never',
          enableServiceLinks: false,
          automountServiceAccountToken: false,
        },
      },
    },
  };
  const secret: (Secret & KubeObject) | undefined =
    Object.keys(data).length === 0
      ? undefined
      : { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName, namespace, labels, annotations: { [ANNOTATION_DEPLOYMENT]: build.deploymentId } }, type: 'Opaque', data };
  return { secret, job };
}

type JobCondition = { type?: string; status?: string };

/**
 * Builds the service's image of the commit in its namespace and answers the image: nothing is built when the Job of
 * that commit's build is still there, Complete, for the same image. The build runs as a lifecycle job does
 * (runLifecycleJob: the log of each attempt, a cancel deletes the Job); a failed build throws with the builder's exit
 * code and the last lines of its log (or of the clone's, when the commit could not be fetched).
 */
export async function buildImage(cluster: KubernetesCluster, session: TaskSession, build: ImageBuild): Promise<string> {
  const { job, secret } = renderImageBuild(build);
  const namespace = job.metadata.namespace ?? '';
  const image = job.metadata.annotations?.[ANNOTATION_IMAGE] ?? '';
  const existing = await cluster.read('batch/v1', 'Job', namespace, job.metadata.name);
  const complete = ((existing?.status as { conditions?: JobCondition[] } | undefined)?.conditions ?? []).some((condition) => condition.type === 'Complete' && condition.status === 'True');
  if (existing !== undefined && complete && existing.metadata.annotations?.[ANNOTATION_IMAGE] === image) {
    session.log('system', `${image} was built by Job ${job.metadata.name} already: not building commit ${build.source.commitId} again`);
    return image;
  }
  session.log('system', `building ${image} from commit ${build.source.commitId} with ${build.options.builder} (Job ${job.metadata.name})`);
  if (secret !== undefined) await cluster.apply(secret);
  try {
    await runLifecycleJob(cluster, session, job);
  } catch (error) {
    if (!(error instanceof JobRunFailed)) throw error;
    throw new Error(`the image build failed: ${error.message}${await failedLines(cluster, namespace, job.metadata.name)}`, { cause: error });
  } finally {
    if (secret !== undefined) await cluster.delete(secret);
  }
  // The builds of the service's other commits are done with: their Jobs go (this one stays, for the next deployment).
  for (const other of await cluster.list('batch/v1', 'Job', namespace, `${serviceSelector(build.service.id)},${LABEL_ROLE}=${BUILD_ROLE}`)) {
    if (other.metadata.name !== job.metadata.name) await cluster.delete({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: other.metadata.name, namespace } });
  }
  session.log('system', `built and pushed ${image}`);
  return image;
}

/** The last lines of the build pod's failed container (the clone when it failed, else the builder), for the error message. */
async function failedLines(cluster: KubernetesCluster, namespace: string, jobName: string): Promise<string> {
  const core = cluster.config.makeApiClient(CoreV1Api);
  try {
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: `job-name=${jobName}` })).items;
    for (const pod of pods) {
      const clone = (pod.status?.initContainerStatuses ?? []).find((status) => status.name === 'clone')?.state?.terminated;
      const container = clone !== undefined && clone.exitCode !== 0 ? 'clone' : 'main';
      const text = String(await core.readNamespacedPodLog({ name: pod.metadata?.name ?? '', namespace, container, tailLines: FAILED_BUILD_LINES }));
      const lines = text.split('\n').filter((line) => line !== '');
      if (lines.length > 0) return `; the ${container === 'clone' ? 'clone' : 'build'}'s last lines:\n${lines.join('\n')}`;
    }
  } catch {
    // The lines are a help to the message, which stands without them.
  }
  return '';
}
