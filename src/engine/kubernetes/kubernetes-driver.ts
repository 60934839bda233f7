import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import type { GitAccess } from '../../git/git-access.ts';
import { TaskCanceled, type AgentDriver, type TaskSession } from '../../protocol/agent-driver.ts';
import type { ServiceDeploymentSpec, ServiceTaskPayload, ServiceTeardownPayload, SpecImage, SpecPeer } from '../../protocol/agent-protocol.ts';
import { internalHostnameResolver } from '../internal-hostnames.ts';
import { BUILD_ROLE, buildServiceImage, LABEL_ROLE, lastBuiltImage, type ImageBuildOptions } from './kubernetes-build.ts';
import { kubernetesErrorMessage, type KubernetesCluster, type ServedKinds } from './kubernetes-cluster.ts';
import { deployAgenticWorkflow } from './kubernetes-agentic-workflow.ts';
import { databasePortOf, MANAGED_DATABASE_MESSAGE, renderDatabase } from './kubernetes-database.ts';
import { chartKindsOf, deployHelm } from './kubernetes-helm.ts';
import { GIT_JOB_MESSAGE, JobRunFailed, lifecycleJobNameOf, renderCronJob, renderLifecycleJob, runLifecycleJob, type JobRender, type LifecycleEvent } from './kubernetes-job.ts';
import {
  ANNOTATION_RESTARTED_AT,
  clusterHostnameOf,
  FIELD_MANAGER,
  LABEL_SERVICE,
  MANAGED_BY,
  namespaceOf,
  serviceLabels,
  serviceSelector,
  SLIPWAY,
  workloadNameOf,
  type ServiceIdentity,
} from './kubernetes-names.ts';
import { RolloutFailed, waitForRollout } from './kubernetes-rollout.ts';
import { databaseSettingsOf, jobSettingsOf, workloadSettingsOf } from './kubernetes-settings.ts';
import { deployTerraform, destroyTerraformBeforeTeardown } from './kubernetes-terraform.ts';
import { namespaceObject, renderConfig, renderWorkload, type KubeObject } from './kubernetes-workload.ts';

/**
 * The Kubernetes driver (docs/kubernetes.md): each environment is a namespace, each service a set of plain objects
 * applied server-side under field manager `slipway`, found again by its labels. A deployment renders the whole
 * intent of the service, applies it, prunes what the intent no longer holds, and watches the rollout; a rollout that
 * fails re-applies the release that ran before (kept in a Secret of its own beside the service) and fails the
 * deployment with the kubelet's reason. Stop scales to zero through the scale subresource (a CronJob is suspended);
 * teardown deletes by label, and the namespace with its last service.
 *
 * Kinds: CONTAINER (kubernetes-workload.ts), DATABASE in container mode (kubernetes-database.ts, rolled out like a
 * container), JOB from an image (kubernetes-job.ts: a CronJob, or a Job run per lifecycle event and waited for);
 * APPLICATION, and a JOB from git, first built into an image by a Job in the namespace (kubernetes-build.ts);
 * TERRAFORM (kubernetes-terraform.ts: an apply Job per deployment, destroy before a teardown) and AGENTIC_WORKFLOW
 * (kubernetes-agentic-workflow.ts: the runner's Job or CronJob); HELM (kubernetes-helm.ts: `helm template`, then
 * applied, pruned, kept and torn down through the same machinery, the chart's kinds recorded for prune and teardown).
 */

export const KUBERNETES_SERVICE_KINDS = ['APPLICATION', 'CONTAINER', 'DATABASE', 'HELM', 'JOB', 'TERRAFORM', 'AGENTIC_WORKFLOW'] as const;

export interface KubernetesDriverOptions {
  cluster: KubernetesCluster;
  served: ServedKinds;
  /** SLIPWAY_KUBERNETES_INGRESS_CLASS: the Ingress class of public hostnames; the cluster's default when unset. */
  ingressClass?: string | undefined;
  /** The cert-manager ClusterIssuer that certifies public hostnames (--cert-manager-issuer); none: plain HTTP. */
  certManagerIssuer?: string | undefined;
  /** The in-cluster image build of APPLICATIONs and JOBs from git; without it they fail naming --build-registry. */
  build?: ImageBuildOptions | undefined;
  /** Reads the head of a branch for a deployment that names no commit (the agent's git access). */
  git?: GitAccess | undefined;
  /** The helm binary HELM services are rendered with (--helm-binary, SLIPWAY_HELM_BINARY); else `helm` on the PATH. */
  helmBinary?: string | undefined;
  /** The image AGENTIC_WORKFLOWs run (kubernetes-agentic-workflow.ts); without one they fail saying so. */
  workflowRunnerImage?: string | undefined;
  /** How long a rollout may take (default 10 min, the original's floor). */
  rolloutTimeoutMs?: number;
  onTrouble?: (message: string) => void;
}

/** The kinds a service's objects may be of: what prune and teardown look through. */
function managedKinds(served: ServedKinds): Array<[apiVersion: string, kind: string]> {
  return [
    ['networking.k8s.io/v1', 'Ingress'],
    [served.autoscaling, 'HorizontalPodAutoscaler'],
    [served.podDisruptionBudget, 'PodDisruptionBudget'],
    ['v1', 'Service'],
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    [served.cronJob, 'CronJob'],
    ['batch/v1', 'Job'],
    ['v1', 'Secret'],
    // A TERRAFORM run's identity (kubernetes-terraform.ts).
    ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
    ['rbac.authorization.k8s.io/v1', 'Role'],
    ['v1', 'ServiceAccount'],
  ];
}

/** The Secret that keeps a service's last release that rolled out, for a failed rollout to go back to. */
const RELEASE_ROLE = 'slipway.dev/role';

function releaseName(service: Pick<ServiceIdentity, 'id' | 'name'>): string {
  return `${workloadNameOf(service)}-release`;
}

export function unsupportedKubernetesKindMessage(kind: string): string {
  if (kind === 'APPLICATION') return 'APPLICATION services are built into an image in the cluster, and this agent has no registry to push it to: start it with --build-registry <host/path>';
  return `${kind} services cannot run on a Kubernetes cluster yet: this driver runs ${KUBERNETES_SERVICE_KINDS.join(', ')}`;
}

/** The spec's internal hostnames as this cluster resolves them: each peer's Service, by its in-cluster DNS name. */
export function clusterResolver(environmentId: string, peers: readonly SpecPeer[]): (value: string) => string {
  const suffix = `.${environmentId}.slipway.internal`;
  const targets = new Map<string, () => string>();
  for (const peer of peers) {
    const hostname = peer.hostname.toLowerCase();
    if (!hostname.endsWith(suffix)) continue;
    const target = clusterHostnameOf({ id: peer.service_id, name: hostname.slice(0, -suffix.length), environmentId });
    targets.set(hostname, () => target);
  }
  return internalHostnameResolver(targets);
}

export function createKubernetesDriver(options: KubernetesDriverOptions): AgentDriver {
  const { cluster, served } = options;
  const kinds = managedKinds(served);
  const objects = KubernetesObjectApi.makeApiClient(cluster.config);

  function identityOf(spec: ServiceDeploymentSpec): ServiceIdentity {
    return { id: spec.service.id, name: spec.service.name, organizationId: spec.service.organizationId, projectId: spec.environment.project_id, environmentId: spec.service.environmentId };
  }

  /** Deletes, among the service's objects in the namespace, those the intent does not hold (the release Secret stays). */
  async function prune(namespace: string, service: ServiceIdentity, intent: readonly KubeObject[], extraKinds: ReadonlyArray<[string, string]> = []): Promise<void> {
    const kept = new Set(intent.map((object) => `${object.kind}/${object.metadata.name}`));
    kept.add(`Secret/${releaseName(service)}`);
    // A lifecycle job's last run stays (its pods and logs, for inspection) until its next run replaces it.
    for (const event of ['on_start', 'on_stop', 'on_delete'] as const) kept.add(`Job/${lifecycleJobNameOf(service, event)}`);
    for (const [apiVersion, kind] of withKinds(extraKinds)) {
      for (const object of await cluster.list(apiVersion, kind, namespace, serviceSelector(service.id))) {
        // What a controller made (a CronJob's Jobs carry the service's labels) is its controller's to remove.
        const owners = (object.metadata as { ownerReferences?: Array<{ controller?: boolean }> }).ownerReferences ?? [];
        if (owners.some((owner) => owner.controller === true)) continue;
        // Image builds are the build step's (kubernetes-build.ts): the last one stays, so its commit is not built again.
        if (kind === 'Job' && object.metadata.labels?.[LABEL_ROLE] === BUILD_ROLE) continue;
        if (!kept.has(`${kind}/${object.metadata.name}`)) await cluster.delete({ apiVersion, kind, metadata: { name: object.metadata.name, namespace } });
      }
    }
  }

  /** The driver's kinds and a chart's (a HELM service's, recorded on it: kubernetes-helm.ts), the chart's first. */
  function withKinds(extraKinds: ReadonlyArray<[string, string]>): Array<[string, string]> {
    const known = new Set(kinds.map(([apiVersion, kind]) => `${apiVersion} ${kind}`));
    return [...extraKinds.filter(([apiVersion, kind]) => !known.has(`${apiVersion} ${kind}`)), ...kinds];
  }

  async function applyAll(intent: readonly KubeObject[]): Promise<KubeObject[]> {
    const applied: KubeObject[] = [];
    for (const object of intent) applied.push(await cluster.apply(object));
    return applied;
  }

  async function previousRelease(namespace: string, service: ServiceIdentity): Promise<KubeObject[] | undefined> {
    const secret = await cluster.read('v1', 'Secret', namespace, releaseName(service));
    const data = (secret?.data as Record<string, string> | undefined)?.manifests;
    return data === undefined ? undefined : (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as KubeObject[]);
  }

  async function keepRelease(namespace: string, service: ServiceIdentity, intent: readonly KubeObject[]): Promise<void> {
    await cluster.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: releaseName(service), namespace, labels: { ...serviceLabels(service), [RELEASE_ROLE]: 'release' } },
      type: 'Opaque',
      data: { manifests: Buffer.from(JSON.stringify(intent), 'utf8').toString('base64') },
    });
  }

  /** The restart annotation the pod template keeps: set now by a restart, else what the running template has. */
  async function restartedAtOf(session: TaskSession, namespace: string, kind: 'Deployment' | 'StatefulSet', name: string): Promise<string | undefined> {
    if (session.task.action === 'restart') return new Date().toISOString();
    const current = await cluster.read('apps/v1', kind, namespace, name);
    return (current?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template?.metadata?.annotations?.[ANNOTATION_RESTARTED_AT];
  }

  /**
   * Applies a long-running workload's intent (its namespace first), prunes what it no longer holds and waits for the
   * Deployment or StatefulSet to roll out; a failed or canceled rollout goes back to the release kept from the last
   * one that rolled out, and a successful one becomes that release.
   */
  async function rollOut(
    session: TaskSession,
    spec: ServiceDeploymentSpec,
    intent: readonly KubeObject[],
    workloadKind: 'Deployment' | 'StatefulSet',
    beforeWait?: (workload: KubeObject) => Promise<void>,
  ): Promise<void> {
    const service = identityOf(spec);
    const namespace = namespaceOf(service.environmentId);
    if (!(await session.built())) throw new TaskCanceled();
    await cluster.apply(namespaceObject(service));
    session.log('system', `applying ${intent.map((object) => `${object.kind}/${object.metadata.name}`).join(', ')} in namespace ${namespace}`);
    const applied = await applyAll(intent);
    await prune(namespace, service, intent);
    const workload = applied.find((object) => object.kind === workloadKind);
    if (workload === undefined) throw new Error(`no ${workloadKind} was applied for ${spec.service.name}`);
    await beforeWait?.(workload);
    try {
      await waitForRollout(cluster, session, workload, { timeoutMs: options.rolloutTimeoutMs ?? 600_000, podSelector: `${LABEL_SERVICE}=${service.id}` });
    } catch (error) {
      if (!(error instanceof RolloutFailed) && !(error instanceof TaskCanceled)) throw error;
      const previous = await previousRelease(namespace, service);
      if (previous === undefined) {
        session.log('system', 'no earlier release of this service rolled out here: nothing to go back to');
      } else {
        session.log('system', `going back to the release that ran before (${previous.length} objects)`);
        await applyAll(previous);
        await prune(namespace, service, previous);
      }
      throw error;
    }
    await keepRelease(namespace, service, intent);
    session.log('system', `${spec.service.name} rolled out in namespace ${namespace}${spec.routing.hostnames.length > 0 ? `, served on ${spec.routing.hostnames.join(', ')}` : ''}`);
  }

  /** The image a built kind runs, built now (or found built for its commit); a failed build leaves the running release alone. */
  async function builtImage(session: TaskSession, spec: ServiceDeploymentSpec): Promise<SpecImage> {
    if (options.build === undefined) throw new Error(spec.service.kind === 'JOB' ? GIT_JOB_MESSAGE : unsupportedKubernetesKindMessage(spec.service.kind));
    const service = identityOf(spec);
    await cluster.apply(namespaceObject(service));
    return buildServiceImage(cluster, session, { spec, service, options: options.build, git: options.git });
  }

  async function deployContainer(session: TaskSession, spec: ServiceDeploymentSpec, image: SpecImage | null = spec.image): Promise<void> {
    const service = identityOf(spec);
    const settings = workloadSettingsOf(spec.service.settings);
    if (image === null) throw new Error(`the deployment spec of ${spec.service.name} names no image`);
    const namespace = namespaceOf(service.environmentId);
    const name = workloadNameOf(service);
    const workloadKind = settings.storage.length > 0 ? 'StatefulSet' : 'Deployment';
    const resolve = clusterResolver(service.environmentId, spec.routing.peers);
    const intent = renderWorkload({
      service,
      deploymentId: session.task.deployment_id,
      settings,
      image: image.reference,
      pullCredentials: image.pull_credentials ?? undefined,
      variables: spec.variables.map((variable) => ({ key: variable.key, value: resolve(variable.value), mountPath: variable.mount_path })),
      hostnames: spec.routing.hostnames,
      versions: served,
      ingressClass: options.ingressClass,
      clusterIssuer: options.certManagerIssuer,
      restartedAt: await restartedAtOf(session, namespace, workloadKind, name),
    });
    await rollOut(session, spec, intent, workloadKind, async (workload) => {
      // A stopped service was scaled to 0 through the scale subresource; an autoscaled one comes back at its minimum.
      if (settings.min_running_instances !== settings.max_running_instances && (workload.spec as { replicas?: number }).replicas === 0) {
        await cluster.scale(workloadKind, namespace, name, Math.max(1, settings.min_running_instances));
      }
    });
  }

  async function deployDatabase(session: TaskSession, spec: ServiceDeploymentSpec): Promise<void> {
    const service = identityOf(spec);
    const settings = databaseSettingsOf(spec.service.settings);
    if (settings.mode === 'MANAGED') throw new Error(MANAGED_DATABASE_MESSAGE);
    if (spec.database === null) throw new Error(`the deployment spec of ${spec.service.name} has no database credentials`);
    const namespace = namespaceOf(service.environmentId);
    const name = workloadNameOf(service);
    // A Kubernetes cluster has no installation-wide server to share: every database runs a server of its own.
    if (spec.database.shared) session.log('system', 'no shared PostgreSQL server on a Kubernetes cluster: the database runs a server of its own');
    const declared = spec.routing.internal?.ports ?? [];
    if (declared.length > 0 && !declared.includes(databasePortOf(settings.type))) {
      session.log('system', `the database is declared on port(s) ${declared.join(', ')}; its Service serves the engine's port ${databasePortOf(settings.type)}`);
    }
    const intent = renderDatabase({ service, deploymentId: session.task.deployment_id, settings, database: spec.database, restartedAt: await restartedAtOf(session, namespace, 'StatefulSet', name) });
    // A StatefulSet's claim templates cannot change: a volume grown in the settings keeps the size it was created
    // with (resizing the claim needs a storage class that allows expansion, which is the cluster operator's).
    type ClaimTemplates = { volumeClaimTemplates?: Array<{ spec?: { resources?: { requests?: Record<string, string> } } }> };
    const current = await cluster.read('apps/v1', 'StatefulSet', namespace, name);
    const currentClaims = (current?.spec as ClaimTemplates | undefined)?.volumeClaimTemplates;
    const statefulSet = intent.find((object) => object.kind === 'StatefulSet')?.spec as ClaimTemplates | undefined;
    const currentSize = currentClaims?.[0]?.spec?.resources?.requests?.storage;
    const claim = statefulSet?.volumeClaimTemplates?.[0];
    const requests = claim?.spec?.resources?.requests;
    if (currentSize !== undefined && requests !== undefined && requests.storage !== currentSize) {
      session.log('system', `the data volume keeps the size it was created with (${currentSize}, not ${requests.storage ?? ''}): a deployment cannot resize a StatefulSet's claim`);
      requests.storage = currentSize;
    }
    await rollOut(session, spec, intent, 'StatefulSet');
  }

  /** A job's image: its registry's, or for a job from git the one built of its commit (`built`). */
  function jobRenderOf(session: TaskSession, spec: ServiceDeploymentSpec, built?: SpecImage): JobRender {
    const service = identityOf(spec);
    const settings = jobSettingsOf(spec.service.settings);
    let image = spec.image;
    if (settings.source.kind !== 'image') {
      if (options.build === undefined) throw new Error(GIT_JOB_MESSAGE);
      if (built === undefined) throw new Error(`no image of ${spec.service.name} was built on this cluster`);
      image = built;
    }
    if (image === null) throw new Error(`the deployment spec of ${spec.service.name} names no image`);
    const resolve = clusterResolver(service.environmentId, spec.routing.peers);
    const config = renderConfig({
      service,
      deploymentId: session.task.deployment_id,
      pullCredentials: image.pull_credentials ?? undefined,
      variables: spec.variables.map((variable) => ({ key: variable.key, value: resolve(variable.value), mountPath: variable.mount_path })),
    });
    return { service, deploymentId: session.task.deployment_id, settings, image: image.reference, config };
  }

  async function runEvent(session: TaskSession, render: JobRender, event: LifecycleEvent): Promise<boolean> {
    const { schedule } = render.settings;
    const command = schedule.kind === 'LIFECYCLE' ? schedule[event] : null;
    if (command === null) return false;
    try {
      await runLifecycleJob(cluster, session, renderLifecycleJob(render, event, command));
    } catch (error) {
      if (error instanceof JobRunFailed) throw new Error(`${event} failed: ${error.message}`, { cause: error });
      throw error;
    }
    return true;
  }

  async function deployJob(session: TaskSession, spec: ServiceDeploymentSpec): Promise<void> {
    const fromGit = jobSettingsOf(spec.service.settings).source.kind === 'docker';
    const render = jobRenderOf(session, spec, fromGit ? await builtImage(session, spec) : undefined);
    const namespace = namespaceOf(render.service.environmentId);
    const intent = [...render.config.objects];
    if (render.settings.schedule.kind === 'CRON') {
      const { cronJob, timeZoneIgnored } = renderCronJob(render, served.cronJob, false);
      intent.push(cronJob);
      if (timeZoneIgnored) {
        session.log('system', `this cluster serves CronJob in ${served.cronJob}, which has no time zone: the schedule runs in the controller's zone (UTC), not ${render.settings.schedule.cronjob.timezone}`);
      }
    }
    if (!(await session.built())) throw new TaskCanceled();
    await cluster.apply(namespaceObject(render.service));
    session.log('system', `applying ${intent.map((object) => `${object.kind}/${object.metadata.name}`).join(', ')} in namespace ${namespace}`);
    await applyAll(intent);
    await prune(namespace, render.service, intent);
    if (render.settings.schedule.kind === 'CRON') {
      session.log('system', `${spec.service.name} scheduled at "${render.settings.schedule.cronjob.scheduled_at}" in namespace ${namespace}`);
      return;
    }
    const ran = await runEvent(session, render, 'on_start');
    session.log('system', ran ? `${spec.service.name}: on_start succeeded` : `${spec.service.name} has no on_start command: nothing runs until its next event`);
  }

  async function deploy(session: TaskSession, spec: ServiceDeploymentSpec): Promise<void> {
    switch (spec.service.kind) {
      case 'DATABASE':
        return deployDatabase(session, spec);
      case 'JOB':
        return deployJob(session, spec);
      case 'APPLICATION':
        return deployContainer(session, spec, await builtImage(session, spec));
      case 'HELM':
        return deployHelm({
          cluster,
          session,
          spec,
          service: identityOf(spec),
          machinery: { applyAll, prune, previousRelease, keepRelease },
          ingress: { className: options.ingressClass, clusterIssuer: options.certManagerIssuer },
          git: options.git,
          helmBinary: options.helmBinary,
        });
      case 'TERRAFORM':
      case 'AGENTIC_WORKFLOW': {
        const service = identityOf(spec);
        const resolve = clusterResolver(service.environmentId, spec.routing.peers);
        const context = {
          cluster,
          service,
          variables: spec.variables.map((variable) => ({ key: variable.key, value: resolve(variable.value), mountPath: variable.mount_path })),
          gitImage: options.build?.gitImage,
          prune: (intent: readonly KubeObject[]) => prune(namespaceOf(service.environmentId), service, intent),
        };
        if (spec.service.kind === 'TERRAFORM') return deployTerraform(context, session, spec);
        return deployAgenticWorkflow({ ...context, runnerImage: options.workflowRunnerImage, cronJobVersion: served.cronJob }, session, spec);
      }
      default:
        return deployContainer(session, spec);
    }
  }

  /** The service's Deployments and StatefulSets, wherever they are (a stop task names the service only). */
  async function workloadsOf(serviceId: string): Promise<KubeObject[]> {
    const found: KubeObject[] = [];
    for (const kind of ['Deployment', 'StatefulSet']) found.push(...(await cluster.list('apps/v1', kind, undefined, serviceSelector(serviceId))));
    return found;
  }

  async function stop(session: TaskSession, serviceId: string): Promise<void> {
    const workloads = await workloadsOf(serviceId);
    const cronJobs = await cluster.list(served.cronJob, 'CronJob', undefined, serviceSelector(serviceId));
    // A lifecycle job's on_stop runs with the deployment's spec, when the control plane still gives one; no other
    // kind needs the spec to stop, so only a job's stop asks for it.
    const isJob = (session.task.payload as { service_type?: unknown }).service_type === 'JOB';
    const spec = isJob ? await session.spec().catch(() => undefined) : undefined;
    const onStop = spec?.service.kind === 'JOB' && spec.service.id === serviceId ? spec : undefined;
    if (workloads.length === 0 && cronJobs.length === 0 && onStop === undefined) session.log('system', 'nothing of this service runs on this cluster');
    for (const workload of workloads) {
      await cluster.scale(workload.kind as 'Deployment' | 'StatefulSet', workload.metadata.namespace ?? '', workload.metadata.name, 0);
      session.log('system', `${workload.kind}/${workload.metadata.name} scaled to 0`);
    }
    for (const cronJob of cronJobs) {
      // A merge patch of that one field: an apply would have to carry the CronJob's whole intent. The next
      // deployment's apply (forced) takes `suspend` back, as false.
      await objects.patch(
        { apiVersion: served.cronJob, kind: 'CronJob', metadata: { name: cronJob.metadata.name, namespace: cronJob.metadata.namespace ?? '' }, spec: { suspend: true } } as KubernetesObject,
        undefined,
        undefined,
        FIELD_MANAGER,
        undefined,
        PatchStrategy.MergePatch,
      );
      session.log('system', `CronJob/${cronJob.metadata.name} suspended`);
    }
    if (onStop !== undefined) {
      // A job from git runs on_stop with the image of its last build here.
      const fromGit = jobSettingsOf(onStop.service.settings).source.kind === 'docker';
      const built = fromGit && options.build !== undefined ? await lastBuiltImage(cluster, identityOf(onStop), options.build) : undefined;
      const render = jobRenderOf(session, onStop, built);
      if (render.settings.schedule.kind === 'LIFECYCLE' && render.settings.schedule.on_stop !== null) {
        await cluster.apply(namespaceObject(render.service));
        await applyAll(render.config.objects);
        await runEvent(session, render, 'on_stop');
      }
    }
  }

  /**
   * A lifecycle job's on_delete, before its objects go, with the spec of its last deployment when the control plane
   * still serves one. A failed run is told (the teardown's log, and the agent's trouble) and the teardown goes on: the
   * service's record is already gone, so a hook that keeps failing would otherwise leave its objects on the cluster
   * with nothing left to retry the deletion from.
   */
  async function runOnDelete(session: TaskSession, serviceId: string): Promise<void> {
    const spec = await session.spec().catch(() => undefined);
    if (spec?.service.kind !== 'JOB' || spec.service.id !== serviceId) return;
    const schedule = jobSettingsOf(spec.service.settings).schedule;
    if (schedule.kind !== 'LIFECYCLE' || schedule.on_delete === null) return;
    try {
      const fromGit = jobSettingsOf(spec.service.settings).source.kind === 'docker';
      const built = fromGit && options.build !== undefined ? await lastBuiltImage(cluster, identityOf(spec), options.build) : undefined;
      const render = jobRenderOf(session, spec, built);
      await cluster.apply(namespaceObject(render.service));
      await applyAll(render.config.objects);
      await runEvent(session, render, 'on_delete');
      session.log('system', `${spec.service.name}: on_delete succeeded`);
    } catch (error) {
      if (error instanceof TaskCanceled) throw error;
      const reason = kubernetesErrorMessage(error);
      const message = `${spec.service.name}: ${reason.startsWith('on_delete') ? reason : `on_delete failed: ${reason}`}; the service is torn down all the same`;
      session.log('system', message);
      options.onTrouble?.(message);
    }
  }

  async function teardown(session: TaskSession, payload: ServiceTeardownPayload | ServiceTaskPayload): Promise<void> {
    const namespace = namespaceOf(payload.environment_id);
    if (payload.service_type === 'JOB') await runOnDelete(session, payload.service_id);
    // Terraform's resources go before the objects that hold its inputs and state (a failed destroy keeps them all).
    if (payload.service_type === 'TERRAFORM') await destroyTerraformBeforeTeardown(cluster, session, namespace, payload.service_id);
    let removed = 0;
    const chartKinds = chartKindsOf(await cluster.list('v1', 'Secret', namespace, serviceSelector(payload.service_id)));
    for (const [apiVersion, kind] of [...withKinds(chartKinds), ['v1', 'PersistentVolumeClaim'] as [string, string]]) {
      for (const object of await cluster.list(apiVersion, kind, namespace, serviceSelector(payload.service_id))) {
        await cluster.delete({ apiVersion, kind, metadata: { name: object.metadata.name, namespace } });
        removed += 1;
      }
    }
    session.log('system', removed === 0 ? 'nothing of this service was on this cluster' : `removed ${removed} object(s) of the service from namespace ${namespace}`);
    // The namespace is the environment's: it goes with the last of its services (an environment's deletion tears
    // each of them down).
    const left = (await cluster.list('v1', 'Secret', namespace, `${MANAGED_BY}=${SLIPWAY}`)).filter((object) => (object.metadata as { deletionTimestamp?: unknown }).deletionTimestamp === undefined);
    if (left.length === 0 && (await cluster.read('v1', 'Namespace', undefined, namespace)) !== undefined) {
      await cluster.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      session.log('system', `namespace ${namespace} removed: no service of the environment is left on this cluster`);
    }
  }

  const withKubernetesErrors =
    <A extends unknown[]>(work: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      try {
        await work(...args);
      } catch (error) {
        if (error instanceof TaskCanceled || error instanceof RolloutFailed) throw error;
        throw new Error(kubernetesErrorMessage(error), { cause: error });
      }
    };

  return {
    name: 'kubernetes',
    serviceKinds: KUBERNETES_SERVICE_KINDS,
    unsupported: unsupportedKubernetesKindMessage,
    deploy: withKubernetesErrors(deploy),
    stop: withKubernetesErrors(stop),
    teardown: withKubernetesErrors(teardown),
  };
}
