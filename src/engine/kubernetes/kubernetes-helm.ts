import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApisApi, CoreApi, KubernetesObjectApi, type V1APIResource } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import type { GitAccess } from '../../git/git-access.ts';
import { normaliseRepositoryPath } from '../../git/system-git.ts';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import { ProtocolViolation, type ServiceDeploymentSpec } from '../../protocol/agent-protocol.ts';
import { Nullable, schemaProblem } from '../../protocol/wire.ts';
import type { KubernetesCluster } from './kubernetes-cluster.ts';
import { helmBinaryOf, helmTemplate, helmVersion, parseRendered, prepareChart, type ChartHook, type ChartLocation, type PreparedChart } from './kubernetes-helm-chart.ts';
import { JobRunFailed, runLifecycleJob } from './kubernetes-job.ts';
import { renderIngress, type IngressOptions } from './kubernetes-ingress.ts';
import { LABEL_SERVICE, namespaceOf, serviceLabels, workloadNameOf, type ServiceIdentity } from './kubernetes-names.ts';
import { RolloutFailed, waitForRollout } from './kubernetes-rollout.ts';
import { namespaceObject, type KubeObject } from './kubernetes-workload.ts';

/**
 * The HELM kind on the Kubernetes driver (docs/kubernetes.md, "HELM"): the chart is rendered with the real
 * `helm template` (kubernetes-helm-chart.ts), and what it renders is applied server-side under field manager
 * `slipway` like every other kind's objects — labelled, pruned by label, kept in the release Secret for a failed
 * rollout to go back to, torn down by label. Not `helm upgrade --install` with a post-renderer: one ownership model
 * for every kind, no Helm release Secrets in the namespace and no mutating webhook to label what Helm creates.
 *
 * What that costs is Helm's own hook machinery, so hooks are run here: `test` hooks are left out; pre-install or
 * pre-upgrade hooks are applied before the release (their Jobs run to Complete or Failed, deleted and created again
 * each time as Helm's default `before-hook-creation` does), post-install or post-upgrade hooks after its rollout;
 * hooks of other events (delete, rollback) do not run. Every Deployment and StatefulSet of the chart is waited for.
 *
 * The kinds a chart renders are open, so the service's prune and teardown must know them: they are recorded, grown
 * and never forgotten until teardown, on a Secret `<name>-chart-kinds` of the service (CHART_KINDS_ANNOTATION).
 */

const HelmPort = Type.Object({
  internal_port: Type.Integer({ minimum: 1, maximum: 65_535 }),
  service_name: Type.String({ minLength: 1 }),
  namespace: Nullable(Type.String()),
  protocol: Type.String(),
  is_default: Type.Boolean(),
});

const Pairs = Type.Array(Type.Tuple([Type.String(), Type.String()]));

/** What the driver reads of a HELM service's settings (services.kind-helm.ts, HelmSettings). */
export const HelmSettings = Type.Object({
  timeout_sec: Type.Integer({ minimum: 1 }),
  source: Type.Union([Type.Object({ kind: Type.Literal('git') }), Type.Object({ kind: Type.Literal('repository') })]),
  allow_cluster_wide_resources: Type.Boolean(),
  arguments: Type.Array(Type.String()),
  values_override: Type.Object({ set: Pairs, set_string: Pairs, set_json: Pairs, files: Type.Array(Type.Object({ name: Type.String(), content: Type.String() })) }),
  ports: Type.Array(HelmPort),
});
export type HelmSettings = Static<typeof HelmSettings>;

export function helmSettingsOf(settings: unknown): HelmSettings {
  const problem = schemaProblem(HelmSettings, settings);
  if (problem !== undefined) throw new ProtocolViolation(`the Helm service's settings are not what the Kubernetes driver runs: ${problem}`);
  return settings as HelmSettings;
}

/** On the service's `<name>-chart-kinds` Secret: every `apiVersion kind` its charts rendered, as a JSON array. */
export const CHART_KINDS_ANNOTATION = 'slipway.dev/chart-kinds';

export function chartKindsNameOf(service: Pick<ServiceIdentity, 'id' | 'name'>): string {
  return `${workloadNameOf(service)}-chart-kinds`;
}

/** The kinds recorded on a service's Secrets (teardown and prune look through them besides the driver's own). */
export function chartKindsOf(secrets: readonly KubeObject[]): Array<[apiVersion: string, kind: string]> {
  const kinds = new Map<string, [string, string]>();
  for (const secret of secrets) {
    const recorded = secret.metadata.annotations?.[CHART_KINDS_ANNOTATION];
    if (recorded === undefined) continue;
    try {
      for (const entry of JSON.parse(recorded) as unknown[]) {
        if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'string') continue;
        kinds.set(`${entry[0]} ${entry[1]}`, [entry[0], entry[1]]);
      }
    } catch {
      continue;
    }
  }
  return [...kinds.values()];
}

/** The driver's release machinery, the same every kind goes through (kubernetes-driver.ts). */
export interface ReleaseMachinery {
  applyAll(intent: readonly KubeObject[]): Promise<KubeObject[]>;
  /** Deletes the service's objects the intent does not hold, looking through the driver's kinds and `extraKinds`. */
  prune(namespace: string, service: ServiceIdentity, intent: readonly KubeObject[], extraKinds: ReadonlyArray<[string, string]>): Promise<void>;
  previousRelease(namespace: string, service: ServiceIdentity): Promise<KubeObject[] | undefined>;
  keepRelease(namespace: string, service: ServiceIdentity, intent: readonly KubeObject[]): Promise<void>;
}

export interface HelmDeployment {
  cluster: KubernetesCluster;
  session: TaskSession;
  spec: ServiceDeploymentSpec;
  service: ServiceIdentity;
  machinery: ReleaseMachinery;
  ingress: IngressOptions;
  git: GitAccess | undefined;
  helmBinary: string | undefined;
}

/** Asks the apiserver which kinds it serves and whether in a namespace (discovery, cached per API version). */
class ResourceDiscovery extends KubernetesObjectApi {
  scopeOf(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

async function servedApiVersions(cluster: KubernetesCluster): Promise<string[]> {
  const core = await cluster.config.makeApiClient(CoreApi).getAPIVersions();
  const groups = await cluster.config.makeApiClient(ApisApi).getAPIVersions();
  return [...core.versions, ...groups.groups.flatMap((group) => group.versions.map((version) => version.groupVersion))];
}

export interface HelmIngressRender {
  service: ServiceIdentity;
  ports: HelmSettings['ports'];
  hostnames: readonly string[];
  options: IngressOptions;
  /** The service's settings, for their advanced settings (`network.ingress.*`). */
  settings: { advanced_settings?: unknown };
}

/**
 * The service's Ingress (kubernetes-ingress.ts) routing its public hostnames to the chart Service its default HTTP
 * (or gRPC) port names, on that port; none when the service has no such port or no hostname. A TCP or UDP port needs
 * a load balancer, which is the chart's own Service to declare.
 */
export function renderHelmIngress(render: HelmIngressRender): KubeObject | undefined {
  const namespace = namespaceOf(render.service.environmentId);
  const web = render.ports.filter((port) => (port.protocol === 'HTTP' || port.protocol === 'GRPC') && (port.namespace === null || port.namespace === namespace));
  const port = web.find((candidate) => candidate.is_default) ?? web[0];
  if (port === undefined || render.hostnames.length === 0) return undefined;
  return renderIngress({
    service: render.service,
    hostnames: render.hostnames,
    backend: { serviceName: port.service_name, port: port.internal_port },
    options: render.options,
    settings: render.settings,
  });
}

/** Renders the chart of the service's source with its values, in a checkout of its own when the chart is in git. */
async function renderChart(deployment: HelmDeployment, settings: HelmSettings, namespace: string): Promise<KubeObject[]> {
  const { spec, cluster } = deployment;
  const binary = helmBinaryOf(deployment.helmBinary);
  deployment.session.log('system', `helm ${await helmVersion(binary)}`);
  const run = {
    binary,
    release: workloadNameOf(deployment.service),
    namespace,
    values: settings.values_override,
    arguments: settings.arguments,
    kubeVersion: await cluster.serverVersion(),
    apiVersions: await servedApiVersions(cluster),
  };
  if (settings.source.kind === 'repository') {
    const chart = spec.helm_chart ?? null;
    if (chart === null) throw new Error(`the deployment spec of ${spec.service.name} names no Helm chart`);
    deployment.session.log('system', `rendering chart ${chart.chart_name} ${chart.chart_version} of ${chart.repository_url} with helm template`);
    return parseRendered(await helmTemplate({ ...run, chart: { kind: 'repository', chart } }));
  }
  const source = spec.git;
  if (source === null) throw new Error(`the deployment spec of ${spec.service.name} names no git repository`);
  if (deployment.git === undefined) throw new Error('this agent has no git access to fetch a chart from git');
  const checkout = await mkdtemp(path.join(tmpdir(), 'slipway-chart-'));
  try {
    const commit = await deployment.git.checkout({
      url: source.url,
      branch: source.branch ?? undefined,
      commitId: source.commit_id ?? undefined,
      credentials: source.credentials ?? undefined,
      destination: path.join(checkout, 'repository'),
    });
    const root = normaliseRepositoryPath(source.root_path ?? '/');
    deployment.session.log('system', `rendering the chart at ${root === '' ? '/' : root} of ${source.url} (commit ${commit.slice(0, 12)}) with helm template`);
    const chart: ChartLocation = { kind: 'directory', path: path.join(checkout, 'repository', root) };
    return parseRendered(await helmTemplate({ ...run, chart }));
  } finally {
    await rm(checkout, { recursive: true, force: true });
  }
}

async function runHooks(deployment: HelmDeployment, hooks: readonly ChartHook[], when: string): Promise<KubeObject[]> {
  const kept: KubeObject[] = [];
  for (const hook of hooks) {
    const { object } = hook;
    deployment.session.log('system', `running the ${when} hook ${object.kind}/${object.metadata.name}`);
    if (object.apiVersion === 'batch/v1' && object.kind === 'Job') {
      try {
        await runLifecycleJob(deployment.cluster, deployment.session, object);
      } catch (error) {
        if (error instanceof JobRunFailed) throw new Error(`the ${when} hook failed: ${error.message}`, { cause: error });
        throw error;
      }
    } else {
      await deployment.cluster.apply(object);
    }
    if (hook.deleteWhenSucceeded) await deployment.cluster.delete(object);
    else kept.push(object);
  }
  return kept;
}

function kindsRecord(deployment: HelmDeployment, namespace: string, kinds: ReadonlyArray<[string, string]>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: chartKindsNameOf(deployment.service),
      namespace,
      labels: serviceLabels(deployment.service),
      annotations: { [CHART_KINDS_ANNOTATION]: JSON.stringify(kinds) },
    },
    type: 'Opaque',
  };
}

function kindsIn(objects: readonly KubeObject[]): Array<[string, string]> {
  return objects.map((object): [string, string] => [object.apiVersion, object.kind]);
}

function uniqueKinds(kinds: ReadonlyArray<[string, string]>): Array<[string, string]> {
  return [...new Map(kinds.map((kind) => [`${kind[0]} ${kind[1]}`, kind])).values()];
}

export async function deployHelm(deployment: HelmDeployment): Promise<void> {
  const { cluster, session, spec, service, machinery } = deployment;
  const settings = helmSettingsOf(spec.service.settings);
  const namespace = namespaceOf(service.environmentId);
  const previous = await machinery.previousRelease(namespace, service);
  const discovery = cluster.config.makeApiClient(ResourceDiscovery);
  const rendered = await renderChart(deployment, settings, namespace);
  const scopes = new Map<string, boolean | undefined>();
  for (const object of rendered) {
    const key = `${object.apiVersion} ${object.kind}`;
    if (!scopes.has(key)) scopes.set(key, (await discovery.scopeOf(object.apiVersion, object.kind).catch(() => undefined))?.namespaced);
  }
  const chart: PreparedChart = prepareChart(rendered, {
    service,
    namespace,
    allowClusterWide: settings.allow_cluster_wide_resources,
    upgrade: previous !== undefined,
    namespaced: (apiVersion, kind) => scopes.get(`${apiVersion} ${kind}`),
  });
  for (const skipped of chart.skipped) session.log('system', `left out: ${skipped}`);
  if (chart.before.length + chart.after.length > 0) {
    session.log('system', `Helm hooks run as Slipway runs them: ${chart.before.length} before the release, ${chart.after.length} after its rollout (Jobs waited for)`);
  }
  const ingress = renderHelmIngress({
    service,
    ports: settings.ports,
    hostnames: spec.routing.hostnames,
    options: deployment.ingress,
    settings: spec.service.settings,
  });
  const release = ingress === undefined ? chart.objects : [...chart.objects, ingress];
  const hookObjects = [...chart.before, ...chart.after].map((hook) => hook.object);
  const recorded = chartKindsOf([(await cluster.read('v1', 'Secret', namespace, chartKindsNameOf(service))) ?? kindsRecord(deployment, namespace, [])]);
  const kinds = uniqueKinds([...recorded, ...kindsIn(release), ...kindsIn(hookObjects), ...kindsIn(previous ?? [])]);
  const record = kindsRecord(deployment, namespace, kinds);

  if (!(await session.built())) throw new TaskCanceled();
  await cluster.apply(namespaceObject(service));
  // Recorded first: whatever is applied after is found again by a prune or a teardown, even if this run fails.
  await cluster.apply(record);
  const keptHooks = await runHooks(deployment, chart.before, previous === undefined ? 'pre-install' : 'pre-upgrade');
  session.log('system', `applying ${release.map((object) => `${object.kind}/${object.metadata.name}`).join(', ')} in namespace ${namespace}`);
  const applied = await machinery.applyAll(release);
  await machinery.prune(namespace, service, [...release, record, ...keptHooks], kinds);
  const workloads = applied.filter((object) => object.apiVersion === 'apps/v1' && (object.kind === 'Deployment' || object.kind === 'StatefulSet'));
  const deadline = Date.now() + settings.timeout_sec * 1000;
  try {
    for (const workload of workloads) {
      await waitForRollout(cluster, session, workload, { timeoutMs: Math.max(1_000, deadline - Date.now()), podSelector: `${LABEL_SERVICE}=${service.id}` });
    }
  } catch (error) {
    if (!(error instanceof RolloutFailed) && !(error instanceof TaskCanceled)) throw error;
    if (previous === undefined) {
      session.log('system', 'no earlier release of this service rolled out here: nothing to go back to');
    } else {
      session.log('system', `going back to the release that ran before (${previous.length} objects)`);
      await machinery.applyAll(previous);
      await machinery.prune(namespace, service, [...previous, record], kinds);
    }
    throw error;
  }
  keptHooks.push(...(await runHooks(deployment, chart.after, previous === undefined ? 'post-install' : 'post-upgrade')));
  await machinery.keepRelease(namespace, service, release);
  session.log('system', `${spec.service.name} rolled out in namespace ${namespace}${spec.routing.hostnames.length > 0 && ingress !== undefined ? `, served on ${spec.routing.hostnames.join(', ')}` : ''}`);
}
