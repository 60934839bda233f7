import { dataOf, type AnswerOf, type ApiClient, type RequestOf } from './api-client.ts';
import { printJson, printTable } from './output.ts';
import { CliError, type CliIo } from './sign-in.ts';
import { organizationScope, type OrganizationOptions } from './team.ts';
import type { CommandIo } from './terminal.ts';
import { settledLine, waitUntilSettled, wantsWait, type Settling, type WaitOptions } from './wait.ts';

/**
 * `slipway cluster list|create|deploy|status`: the organization's clusters (docs/clusters.md). A cluster is named by
 * id or by name (case-insensitive) among the organization's clusters.
 */

type Cluster = AnswerOf<'listOrganizationCluster'>['results'][number];
type ClusterStatus = AnswerOf<'getClusterStatus'>;
type ClusterRequest = RequestOf<'createCluster'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function clustersOf(client: ApiClient, organizationId: string): Promise<Cluster[]> {
  return (await dataOf(client.api.GET('/organization/{organizationId}/cluster', { params: { path: { organizationId } } }))).results;
}

/** A cluster by id, or by name among the organization's; an unknown or ambiguous name lists the clusters there are. */
export async function clusterNamed(client: ApiClient, organizationId: string, wanted: string): Promise<{ id: string; name: string }> {
  const clusters = await clustersOf(client, organizationId);
  if (UUID.test(wanted)) {
    const id = wanted.toLowerCase();
    return { id, name: clusters.find((cluster) => cluster.id === id)?.name ?? id };
  }
  const matching = clusters.filter((cluster) => cluster.name.toLowerCase() === wanted.toLowerCase());
  const [cluster] = matching;
  if (cluster !== undefined && matching.length === 1) return { id: cluster.id, name: cluster.name };
  if (matching.length > 1) throw new CliError(`several clusters are named "${wanted}": ${matching.map((candidate) => candidate.id).join(', ')}; give its id`);
  const known = clusters.map((candidate) => candidate.name);
  throw new CliError(`the organization has no cluster named "${wanted}"; ${known.length === 0 ? 'it has no clusters' : `there are: ${known.join(', ')}`}`);
}

export async function listClusters(options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const clusters = await clustersOf(client, organizationId);
  if (options.json === true) return printJson(io, { results: clusters });
  const rows = clusters.map((cluster) => [cluster.id, cluster.name, cluster.kubernetes, cluster.cloud_provider, cluster.region, cluster.status, cluster.deployment_status]);
  printTable(io, ['ID', 'NAME', 'KIND', 'PROVIDER', 'REGION', 'STATUS', 'DEPLOYMENT'], rows, 'No clusters. Create one with slipway cluster create <name>.');
}

export interface CreateClusterOptions extends OrganizationOptions {
  kind?: string | undefined;
  provider?: string | undefined;
  region?: string | undefined;
  description?: string | undefined;
  instanceType?: string | undefined;
  minNodes?: number | undefined;
  maxNodes?: number | undefined;
  production?: boolean | undefined;
}

/**
 * Creates a cluster: LOCAL (the host Slipway runs on, ON_PREMISE in region `local`) unless --kind names another, whose
 * provider and region then come from the flags. Kinds and providers are passed on unchecked: the server judges them and
 * refuses another in its own words.
 */
export async function createCluster(name: string, options: CreateClusterOptions, io: CliIo): Promise<void> {
  const kind = (options.kind ?? 'LOCAL').toUpperCase() as ClusterRequest['kubernetes'] & string;
  const local = kind === 'LOCAL';
  const provider = options.provider?.toUpperCase() ?? (local ? 'ON_PREMISE' : undefined);
  const region = options.region ?? (local ? 'local' : undefined);
  if (provider === undefined || region === undefined) throw new CliError(`a ${kind} cluster needs --provider and --region`);
  const body: ClusterRequest = {
    name,
    kubernetes: kind,
    cloud_provider: provider as ClusterRequest['cloud_provider'],
    region,
    ...(options.description === undefined ? {} : { description: options.description }),
    ...(options.instanceType === undefined ? {} : { instance_type: options.instanceType }),
    ...(options.minNodes === undefined ? {} : { min_running_nodes: options.minNodes }),
    ...(options.maxNodes === undefined ? {} : { max_running_nodes: options.maxNodes }),
    ...(options.production === undefined ? {} : { production: options.production }),
  };
  const { client, organizationId } = await organizationScope(options, io);
  const created = await dataOf(client.api.POST('/organization/{organizationId}/cluster', { params: { path: { organizationId } }, body }));
  if (options.json === true) return printJson(io, created);
  io.out(`Created ${created.kubernetes} cluster ${created.name} (${created.id}), ${created.status}. Deploy it with: slipway cluster deploy ${created.name}\n`);
}

function clusterSettling(client: ApiClient, organizationId: string, cluster: { id: string; name: string }): Settling<ClusterStatus> {
  return {
    subject: `cluster ${cluster.name}`,
    read: () => dataOf(client.api.GET('/organization/{organizationId}/cluster/{clusterId}/status', { params: { path: { organizationId, clusterId: cluster.id } } })),
    phaseOf: (status) => status.status,
    messageOf: (status) => status.message,
  };
}

/** Queues a cluster's deploy (--dry-run: render and check only); with --wait, follows it until it settles. */
export async function deployCluster(wanted: string, options: OrganizationOptions & WaitOptions & { dryRun?: boolean | undefined }, io: CommandIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const cluster = await clusterNamed(client, organizationId, wanted);
  const query = options.dryRun === true ? { dry_run: true } : {};
  const queued = await dataOf(
    client.api.POST('/organization/{organizationId}/cluster/{clusterId}/deploy', { params: { path: { organizationId, clusterId: cluster.id }, query } }),
  );
  if (!wantsWait(options)) {
    if (options.json === true) return printJson(io, queued);
    io.out(`Deploy of cluster ${cluster.name}: ${queued.status}\n`);
    return;
  }
  const settled = await waitUntilSettled(clusterSettling(client, organizationId, cluster), options, io);
  if (options.json === true) return printJson(io, settled.status);
  io.out(settledLine(`cluster ${cluster.name}`, settled));
}

/** One cluster's status, or every cluster's (name and status) without one named. */
export async function clusterStatus(wanted: string | undefined, options: OrganizationOptions, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  if (wanted === undefined) {
    const [clusters, body] = await Promise.all([
      clustersOf(client, organizationId),
      dataOf(client.api.GET('/organization/{organizationId}/cluster/status', { params: { path: { organizationId } } })),
    ]);
    if (options.json === true) return printJson(io, body);
    const nameOf = (id: string) => clusters.find((cluster) => cluster.id === id)?.name ?? '';
    printTable(io, ['ID', 'NAME', 'STATUS'], body.results.map((entry) => [entry.cluster_id, nameOf(entry.cluster_id), entry.status]), 'No clusters.');
    return;
  }
  const cluster = await clusterNamed(client, organizationId, wanted);
  const status = await clusterSettling(client, organizationId, cluster).read();
  if (options.json === true) return printJson(io, status);
  const lock = status.cluster_lock === null ? '' : `; locked by ${status.cluster_lock.owner_name}: ${status.cluster_lock.reason}`;
  io.out(
    `cluster ${cluster.name}: ${status.status}${status.message === null ? '' : ` — ${status.message}`}\n` +
      `deployed: ${status.is_deployed ? `yes, last on ${status.last_deployment_date ?? 'an unknown date'}` : 'never'}${lock}\n`,
  );
}

/**
 * Prints what installs a self-managed cluster's Kubernetes agent (docs/kubernetes.md, "Installing the agent"): the
 * plain manifests, or with --helm-values the chart's values. Each call mints a new one-time enrollment token.
 */
export async function clusterInstallManifests(wanted: string, options: OrganizationOptions & { helmValues?: boolean | undefined }, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const cluster = await clusterNamed(client, organizationId, wanted);
  const params = { path: { organizationId, clusterId: cluster.id } };
  const headers = { accept: 'application/x-yaml' };
  const yaml =
    options.helmValues === true
      ? await dataOf(client.api.GET('/organization/{organizationId}/cluster/{clusterId}/installationHelmValues', { params, headers, parseAs: 'text' }))
      : await dataOf(client.api.GET('/organization/{organizationId}/cluster/{clusterId}/installationManifests', { params, headers, parseAs: 'text' }));
  io.out(yaml.endsWith('\n') ? yaml : `${yaml}\n`);
}
