import type { Kysely } from 'kysely';
import { SignJWT } from 'jose';
import { Type } from 'typebox';
import type { DB } from '../../db/db.schema.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { GitAccess, GitCredentials } from '../../git/git-access.ts';
import { enqueueJobOf, handle, jobKind } from '../../jobs/job-kinds.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { SLIPWAY_VERSION } from '../../lib/version.ts';
import { clusterContextOf, type PlatformTemplatesService } from '../platform-templates/platform-templates.service.ts';
import type { ComponentPreview } from '../platform-templates/platform-templates.resolution.ts';
import { diagnoseCluster, formatFindings } from './cluster-settings.diagnosis.ts';
import { checkRoutes } from './cluster-settings.network.ts';
import {
  deleteAnalysisLogs,
  findActiveAnalysis,
  findAnalysis,
  findAnalysisById,
  findClusterSettings,
  insertAnalysis,
  insertAnalysisLogs,
  listAnalyses,
  listAnalysisLogs,
  moveAnalysis,
  readClusterRecord,
  upsertClusterSettings,
  type ClusterAnalysisRow,
  type ClusterRecord,
  type ClusterSettingsChange,
} from './cluster-settings.repo.ts';
import {
  CLOUD_PROVIDERS,
  type AnalysisFormat,
  type AnalysisKind,
  type CloudProvider,
  type CloudProviderInfoInput,
  type CloudProviderInfoView,
  type ClusterAnalysisInput,
  type DnsProviderInput,
  type DnsProviderView,
  type KarpenterSubnetsInput,
  type RouteInput,
} from './cluster-settings.schemas.ts';

/** The job that runs one analysis (its payload names it); docs/cluster-network.md. */
export const CLUSTER_ANALYSIS_JOB = jobKind('cluster-analysis', Type.Object({ analysisId: Type.String() }));

/** How many analyses a listing answers, newest first. */
export const ANALYSES_LISTED = 50;
/** The lifetime of an EKS Anywhere cluster JWT. */
export const EKS_ANYWHERE_JWT_TTL_SECONDS = 3600;
/** How far back the EKS Anywhere commits are listed, newest first. */
export const EKS_ANYWHERE_COMMITS = 50;

export interface ClusterSettingsDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  /** Called after a transaction that enqueued an analysis commits, so a worker picks it up at once. */
  wakeWorkers: () => void;
  /** The domain of the PLATFORM DNS provider: the installation's apps domain (SLIPWAY_APPS_DOMAIN). */
  platformDomain: string;
  /** Signs EKS Anywhere cluster JWTs (HS256): a key derived from the installation's secret key. */
  jwtKey: Uint8Array;
  /** The issuer of those JWTs: this control plane's public URL. */
  publicUrl: string;
  /** The agents' heartbeat interval, by which an analysis judges a heartbeat's age. */
  heartbeatIntervalMs: number;
  supportedKubernetesVersions: readonly string[];
  cloudCredentials: { findCredentialsSummary(organizationId: string, credentialsId: string): Promise<{ id: string; name: string; cloudProvider: string } | undefined> };
  git: Pick<GitAccess, 'listCommits'>;
  /** The platform templates module: a cluster's stored configuration and the component preview of a release. */
  platformConfiguration: Pick<PlatformTemplatesService, 'getClusterPlatformConfiguration' | 'resolvePlatformTemplateComponentConfiguration'>;
  gitCredentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined>;
}

/** What the stored cluster settings say about EKS Anywhere (ClusterInfrastructureEksAnywhereParameters). */
interface EksAnywhereParameters {
  git_repository?: { url?: string; branch?: string; commit_id?: string; git_token_id?: string };
  yaml_file_path?: string;
}

interface ClusterStoredSettings {
  features?: Array<{ id?: unknown; value?: unknown }>;
  infrastructure_charts_parameters?: { eks_anywhere_parameters?: EksAnywhereParameters };
}

/** The sealed DNS secret is bound to its cluster: an envelope copied to another row does not open. */
function dnsAssociatedData(clusterId: string): string {
  return `cluster_settings:dns:${clusterId}`;
}

function analysisView(row: ClusterAnalysisRow) {
  return {
    id: row.id,
    cluster_id: row.cluster_id,
    organization_id: row.organization_id,
    kind: row.kind as AnalysisKind,
    status: row.status as 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TERMINATED',
    output_format: row.output_format as AnalysisFormat,
    created_at: row.created_at,
    updated_at: row.updated_at,
    triggered_by: row.triggered_by,
    error_message: row.error_message,
  };
}

/**
 * A cluster's network and provider settings and its analyses (docs/cluster-network.md). The settings are one row per
 * cluster in this module's table; the cluster itself is read, never written.
 */
export function createClusterSettingsService(deps: ClusterSettingsDeps) {
  const { db, clock, secrets } = deps;

  async function requireCluster(organizationId: string, clusterId: string): Promise<ClusterRecord> {
    const cluster = await readClusterRecord(db, organizationId, clusterId);
    if (cluster === undefined) throw notFound(`cluster ${clusterId} not found`);
    return cluster;
  }

  /** Writes some settings of a cluster; a cluster deleted meanwhile answers 404 rather than a foreign key error. */
  async function store(cluster: ClusterRecord, change: ClusterSettingsChange): Promise<void> {
    try {
      await upsertClusterSettings(db, { clusterId: cluster.id, organizationId: cluster.organization_id, now: isoTimestamp(clock) }, change);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`cluster ${cluster.id} not found`);
      throw error;
    }
  }

  function storedSettingsOf(cluster: ClusterRecord): ClusterStoredSettings {
    return readJson<ClusterStoredSettings | null>(cluster.settings) ?? {};
  }

  // Routing table ---------------------------------------------------------------------------------------------------

  async function getRoutingTable(organizationId: string, clusterId: string) {
    await requireCluster(organizationId, clusterId);
    const row = await findClusterSettings(db, clusterId);
    return { results: row?.routing_table == null ? [] : readJson<RouteInput[]>(row.routing_table) };
  }

  async function editRoutingTable(organizationId: string, clusterId: string, routes: readonly RouteInput[]) {
    const cluster = await requireCluster(organizationId, clusterId);
    const checked = checkRoutes(routes);
    if (checked.problems.length > 0) throw badRequest('invalid routing table', checked.problems);
    await store(cluster, { routing_table: writeJson(checked.routes) });
    return { results: checked.routes };
  }

  // DNS provider ------------------------------------------------------------------------------------------------------

  async function getClusterDnsProvider(organizationId: string, clusterId: string): Promise<{ dns_provider: DnsProviderView }> {
    await requireCluster(organizationId, clusterId);
    const row = await findClusterSettings(db, clusterId);
    if (row?.dns_provider == null) return { dns_provider: { provider: 'PLATFORM', domain: deps.platformDomain } };
    return { dns_provider: readJson<DnsProviderView>(row.dns_provider) };
  }

  async function editClusterDnsProvider(organizationId: string, clusterId: string, input: DnsProviderInput): Promise<{ dns_provider: DnsProviderView }> {
    const cluster = await requireCluster(organizationId, clusterId);
    const domain = input.domain.toLowerCase().replace(/\.$/, '');
    let view: DnsProviderView;
    let secret: string | null = null;
    switch (input.provider) {
      case 'PLATFORM':
        view = { provider: 'PLATFORM', domain };
        break;
      case 'CLOUDFLARE':
        view = { provider: 'CLOUDFLARE', domain, email: input.email, proxied: input.proxied ?? false };
        secret = JSON.stringify({ api_token: input.api_token });
        break;
      case 'ROUTE53':
        view = {
          provider: 'ROUTE53',
          domain,
          credentials: { type: 'STATIC', aws_access_key_id: input.credentials.aws_access_key_id },
          aws_region: input.aws_region,
          hosted_zone_id: input.hosted_zone_id == null ? null : input.hosted_zone_id.replace(/^\/hostedzone\//, ''),
        };
        secret = JSON.stringify({ aws_secret_access_key: input.credentials.aws_secret_access_key });
        break;
    }
    await store(cluster, { dns_provider: writeJson(view), dns_secret_envelope: secret === null ? null : secrets.seal(secret, dnsAssociatedData(cluster.id)) });
    return { dns_provider: view };
  }

  // Cloud provider info -----------------------------------------------------------------------------------------------

  function providerOf(value: string): CloudProvider | undefined {
    return (CLOUD_PROVIDERS as readonly string[]).includes(value) ? (value as CloudProvider) : undefined;
  }

  async function credentialsView(organizationId: string, credentialsId: string | null) {
    if (credentialsId === null) return undefined;
    const summary = await deps.cloudCredentials.findCredentialsSummary(organizationId, credentialsId);
    return summary === undefined ? { id: credentialsId } : { id: summary.id, name: summary.name };
  }

  async function getOrganizationCloudProviderInfo(organizationId: string, clusterId: string): Promise<CloudProviderInfoView> {
    const cluster = await requireCluster(organizationId, clusterId);
    const row = await findClusterSettings(db, clusterId);
    // The binding set here, or else what the cluster was created with.
    const provider = providerOf(row?.cloud_provider ?? cluster.cloud_provider);
    const credentials = await credentialsView(organizationId, row?.cloud_credentials_id ?? cluster.credentials_id);
    return {
      ...(provider === undefined ? {} : { cloud_provider: provider }),
      ...(credentials === undefined ? {} : { credentials }),
      region: row?.cloud_region ?? cluster.region,
    };
  }

  async function specifyClusterCloudProviderInfo(organizationId: string, clusterId: string, input: CloudProviderInfoInput): Promise<CloudProviderInfoView> {
    const cluster = await requireCluster(organizationId, clusterId);
    const clusterProvider = providerOf(cluster.cloud_provider) ?? 'ON_PREMISE';
    const provider = input.cloud_provider ?? clusterProvider;
    if (provider !== clusterProvider) {
      throw badRequest(`cluster ${cluster.name} runs on ${cluster.cloud_provider}: its credentials must be ${clusterProvider} ones`, [
        { field: '/cloud_provider', message: `must be ${clusterProvider}` },
      ]);
    }
    const credentialsId = input.credentials?.id;
    if (credentialsId === undefined) throw badRequest('the credentials to bind are required', [{ field: '/credentials/id', message: 'is required' }]);
    const summary = await deps.cloudCredentials.findCredentialsSummary(organizationId, credentialsId);
    if (summary === undefined) throw badRequest(`credentials ${credentialsId} not found in this organization`, [{ field: '/credentials/id', message: 'unknown credentials' }]);
    if (summary.cloudProvider !== provider) {
      throw badRequest(`credentials ${summary.name} are ${summary.cloudProvider} credentials, not ${provider} ones`, [{ field: '/credentials/id', message: `must be ${provider} credentials` }]);
    }
    const region = input.region ?? cluster.region;
    try {
      await store(cluster, { cloud_provider: provider, cloud_credentials_id: summary.id, cloud_region: region });
    } catch (error) {
      // The credential was deleted between the check and the write.
      if (isForeignKeyViolation(error)) throw badRequest(`credentials ${credentialsId} not found in this organization`, [{ field: '/credentials/id', message: 'unknown credentials' }]);
      throw error;
    }
    return { cloud_provider: provider, credentials: { id: summary.id, name: summary.name }, region };
  }

  // EKS Anywhere ------------------------------------------------------------------------------------------------------

  function requireEksAnywhere(cluster: ClusterRecord): EksAnywhereParameters {
    const parameters = storedSettingsOf(cluster).infrastructure_charts_parameters?.eks_anywhere_parameters;
    if (parameters === undefined || parameters === null || typeof parameters !== 'object') {
      throw badRequest(
        `cluster ${cluster.name} is not an EKS Anywhere cluster: its infrastructure_charts_parameters have no eks_anywhere_parameters`,
      );
    }
    return parameters;
  }

  async function getEksAnywhereClusterJwt(organizationId: string, clusterId: string) {
    const cluster = await requireCluster(organizationId, clusterId);
    requireEksAnywhere(cluster);
    const jwt = await new SignJWT({ organization_id: organizationId, cluster_name: cluster.name, scope: 'eks-anywhere' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(deps.publicUrl)
      .setSubject(`cluster:${cluster.id}`)
      .setAudience('slipway-eks-anywhere')
      .setIssuedAt(Math.floor(clock.now().getTime() / 1000))
      .setExpirationTime(Math.floor(clock.now().getTime() / 1000) + EKS_ANYWHERE_JWT_TTL_SECONDS)
      .setJti(newId())
      .sign(deps.jwtKey);
    return { jwt };
  }

  /** The cluster definition's repository and the commits of its branch; no repository configured: none. */
  async function eksAnywhereCommits(cluster: ClusterRecord) {
    const parameters = requireEksAnywhere(cluster);
    const repository = parameters.git_repository;
    if (repository?.url === undefined) return { repository: undefined, commits: [] };
    let credentials: GitCredentials | undefined;
    if (repository.git_token_id !== undefined) {
      credentials = await deps.gitCredentialsOf(cluster.organization_id, repository.git_token_id);
      if (credentials === undefined) throw badRequest(`the git token ${repository.git_token_id} of cluster ${cluster.name}'s EKS Anywhere repository no longer exists`);
    }
    const commits = await deps.git.listCommits({ url: repository.url, branch: repository.branch ?? 'main', maxCount: EKS_ANYWHERE_COMMITS, credentials });
    return { repository, commits };
  }

  async function listEksAnywhereCommits(organizationId: string, clusterId: string) {
    const cluster = await requireCluster(organizationId, clusterId);
    const { commits } = await eksAnywhereCommits(cluster);
    return {
      results: commits.map((commit) => ({
        git_commit_id: commit.id,
        created_at: commit.authoredAt,
        author_name: commit.authorName,
        message: commit.message,
        // Tags are not fetched: no commit is answered as tagged.
        tag: '',
      })),
    };
  }

  async function updateEksAnywhereCommit(organizationId: string, clusterId: string, commitId: string) {
    const cluster = await requireCluster(organizationId, clusterId);
    const { repository, commits } = await eksAnywhereCommits(cluster);
    if (repository === undefined) {
      throw badRequest(`cluster ${cluster.name} has no EKS Anywhere git repository (eks_anywhere_parameters.git_repository): there is no commit to choose`);
    }
    const wanted = commitId.toLowerCase();
    const found = commits.find((commit) => commit.id.startsWith(wanted));
    if (found === undefined) {
      throw badRequest(`commit ${commitId} is not among the last ${EKS_ANYWHERE_COMMITS} commits of ${repository.branch ?? 'main'}`, [{ field: '/commit_id', message: 'unknown commit' }]);
    }
    await store(cluster, { eks_anywhere_commit_id: found.id });
    return { commit_id: found.id };
  }

  // Karpenter ---------------------------------------------------------------------------------------------------------

  /**
   * Karpenter runs on AWS clusters whose features enable it: a feature whose value has the shape of Karpenter's
   * parameters (ClusterFeatureKarpenterParameters, as a ClusterRequest sends it) or whose value_object is of type
   * KARPENTER (as a ClusterFeatureResponse shows it).
   */
  function runsKarpenter(cluster: ClusterRecord): boolean {
    if (cluster.cloud_provider !== 'AWS') return false;
    const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
    return (storedSettingsOf(cluster).features ?? []).some((feature) => {
      const { value } = feature;
      if (isObject(value) && 'default_service_architecture' in value && 'platform_node_pools' in value) return true;
      const valueObject = (feature as { value_object?: unknown }).value_object;
      return isObject(valueObject) && valueObject.type === 'KARPENTER' && isObject(valueObject.value);
    });
  }

  async function updateKarpenterPrivateFargateSubnetIds(organizationId: string, clusterId: string, input: KarpenterSubnetsInput): Promise<void> {
    const cluster = await requireCluster(organizationId, clusterId);
    if (!runsKarpenter(cluster)) {
      throw badRequest(`cluster ${cluster.name} does not run Karpenter: only AWS clusters with the KARPENTER feature have Fargate subnets`);
    }
    const zones = {
      zone_a: input.eks_karpenter_fargate_subnets_zone_a_ids ?? [],
      zone_b: input.eks_karpenter_fargate_subnets_zone_b_ids ?? [],
      zone_c: input.eks_karpenter_fargate_subnets_zone_c_ids ?? [],
    };
    // A subnet lives in one availability zone: the same id under two zones is a mistake.
    const seen = new Map<string, string>();
    for (const [zone, ids] of Object.entries(zones)) {
      for (const [index, id] of ids.entries()) {
        const other = seen.get(id);
        if (other !== undefined) {
          throw badRequest(`subnet ${id} is given for two zones`, [{ field: `/eks_karpenter_fargate_subnets_${zone}_ids/${index}`, message: `already given for ${other}` }]);
        }
        seen.set(id, zone);
      }
    }
    await store(cluster, { karpenter_fargate_subnets: writeJson(zones) });
  }

  // Platform configuration --------------------------------------------------------------------------------------------

  /**
   * The preview of one component of the cluster's platform configuration (resolvePlatformComponentConfiguration): the
   * catalog's preview for the cluster's template release and context, over the values the cluster stores for that
   * component with the request's on top. Sensitive values are never read back, so a required sensitive field shows
   * MISSING unless the request gives it.
   */
  async function resolvePlatformComponentConfiguration(organizationId: string, clusterId: string, componentKey: string, preview: ComponentPreview) {
    const cluster = await requireCluster(organizationId, clusterId);
    const stored = await deps.platformConfiguration.getClusterPlatformConfiguration(organizationId, clusterId);
    const context = clusterContextOf({ kubernetes: cluster.kubernetes, cloudProvider: cluster.cloud_provider });
    const storedProfile = stored.managedConfig[componentKey] ?? {};
    const storedInputs = stored.customerProvidedInputs[componentKey] ?? {};
    const resolved = await deps.platformConfiguration.resolvePlatformTemplateComponentConfiguration(
      { templateKey: stored.templateKey, templateVersion: stored.templateVersion, componentKey },
      context,
      {
        profileConfig: { ...storedProfile, ...preview.profileConfig },
        clusterInputs: { ...storedInputs, ...preview.clusterInputs },
        ...(preview.componentOutputs === undefined ? {} : { componentOutputs: preview.componentOutputs }),
      },
    );
    return { clusterId: cluster.id, ...resolved };
  }

  // Analyses ----------------------------------------------------------------------------------------------------------

  async function startClusterAnalysis(organizationId: string, clusterId: string, input: ClusterAnalysisInput, triggeredBy: string) {
    const cluster = await requireCluster(organizationId, clusterId);
    if (input.target_kubernetes_version != null && input.kind !== 'DEPRECATED_API_CHECK') {
      throw badRequest('target_kubernetes_version is for DEPRECATED_API_CHECK analyses', [{ field: '/target_kubernetes_version', message: 'only with kind DEPRECATED_API_CHECK' }]);
    }
    const now = isoTimestamp(clock);
    const row: ClusterAnalysisRow = {
      id: newId(),
      cluster_id: cluster.id,
      organization_id: organizationId,
      kind: input.kind,
      output_format: input.output_format,
      status: 'PENDING',
      parameters: writeJson({
        prometheus_url: input.prometheus_url ?? null,
        cmd_args: input.cmd_args ?? [],
        target_kubernetes_version: input.target_kubernetes_version ?? null,
      }),
      triggered_by: triggeredBy,
      error_message: null,
      active_cluster_id: cluster.id,
      created_at: now,
      updated_at: now,
    };
    const refuse = async () => {
      const active = await findActiveAnalysis(db, cluster.id);
      const which = active === undefined ? 'another analysis' : `analysis ${active.id} (${active.status})`;
      return conflict(`${which} of cluster ${cluster.name} has not ended yet: one analysis runs at a time`);
    };
    try {
      await db.transaction().execute(async (trx) => {
        await insertAnalysis(trx, row);
        await enqueueJobOf(trx, clock, CLUSTER_ANALYSIS_JOB, { analysisId: row.id }, { serialKey: `cluster-analysis:${cluster.id}`, maxAttempts: 3 });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw await refuse();
      if (isForeignKeyViolation(error)) throw notFound(`cluster ${clusterId} not found`);
      throw error;
    }
    deps.wakeWorkers();
    return analysisView(row);
  }

  async function requireAnalysis(organizationId: string, clusterId: string, analysisId: string) {
    await requireCluster(organizationId, clusterId);
    const row = await findAnalysis(db, clusterId, analysisId);
    if (row === undefined) throw notFound(`analysis ${analysisId} of cluster ${clusterId} not found`);
    return row;
  }

  async function listClusterAnalyses(organizationId: string, clusterId: string) {
    await requireCluster(organizationId, clusterId);
    return { results: (await listAnalyses(db, clusterId, ANALYSES_LISTED)).map(analysisView) };
  }

  async function getClusterAnalysis(organizationId: string, clusterId: string, analysisId: string) {
    return analysisView(await requireAnalysis(organizationId, clusterId, analysisId));
  }

  async function listClusterAnalysisLogs(organizationId: string, clusterId: string, analysisId: string) {
    await requireAnalysis(organizationId, clusterId, analysisId);
    const rows = await listAnalysisLogs(db, analysisId);
    return { results: rows.map((row) => ({ timestamp: row.timestamp, level: row.level, message: row.message, line_order: row.line_order })) };
  }

  /**
   * Runs one analysis (the job's handler): PENDING → RUNNING, the diagnosis, then its lines and SUCCEEDED in one
   * transaction. A run that finds the analysis RUNNING (its worker died) starts it over; one that fails ends it FAILED
   * with the reason, so an analysis never stays active.
   */
  async function runAnalysis(analysisId: string): Promise<void> {
    const row = await findAnalysisById(db, analysisId);
    if (row === undefined || (row.status !== 'PENDING' && row.status !== 'RUNNING')) return;
    const active = { active: true, clusterId: row.cluster_id };
    if (row.status === 'PENDING' && !(await moveAnalysis(db, analysisId, 'PENDING', { status: 'RUNNING', now: isoTimestamp(clock), ...active }))) return;
    try {
      const parameters = readJson<{ target_kubernetes_version: string | null }>(row.parameters);
      const findings = await diagnoseCluster(db, {
        clusterId: row.cluster_id,
        kind: row.kind as AnalysisKind,
        targetKubernetesVersion: parameters.target_kubernetes_version,
        now: clock.now(),
        serverVersion: SLIPWAY_VERSION,
        heartbeatIntervalMs: deps.heartbeatIntervalMs,
        supportedKubernetesVersions: deps.supportedKubernetesVersions,
      });
      if (findings === undefined) {
        await moveAnalysis(db, analysisId, 'RUNNING', { status: 'TERMINATED', errorMessage: 'the cluster was deleted', now: isoTimestamp(clock), active: false, clusterId: row.cluster_id });
        return;
      }
      const timestamp = isoTimestamp(clock);
      const lines = formatFindings(findings, row.output_format as AnalysisFormat).map((line, index) => ({
        analysis_id: analysisId,
        line_order: index + 1,
        timestamp,
        level: line.level,
        message: line.message,
      }));
      await db.transaction().execute(async (trx) => {
        await deleteAnalysisLogs(trx, analysisId);
        await insertAnalysisLogs(trx, lines);
        await moveAnalysis(trx, analysisId, 'RUNNING', { status: 'SUCCEEDED', errorMessage: null, now: isoTimestamp(clock), active: false, clusterId: row.cluster_id });
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await moveAnalysis(db, analysisId, 'RUNNING', { status: 'FAILED', errorMessage: `the analysis could not run: ${message}`, now: isoTimestamp(clock), active: false, clusterId: row.cluster_id });
    }
  }

  /** A job that failed for good (its worker kept dying): the analysis ends FAILED rather than staying active. */
  async function giveUpAnalysis(analysisId: string, error: string): Promise<void> {
    const row = await findAnalysisById(db, analysisId);
    if (row === undefined || (row.status !== 'PENDING' && row.status !== 'RUNNING')) return;
    await moveAnalysis(db, analysisId, row.status, { status: 'FAILED', errorMessage: `the analysis could not run: ${error}`, now: isoTimestamp(clock), active: false, clusterId: row.cluster_id });
  }

  return {
    getRoutingTable,
    editRoutingTable,
    getClusterDnsProvider,
    editClusterDnsProvider,
    getOrganizationCloudProviderInfo,
    specifyClusterCloudProviderInfo,
    getEksAnywhereClusterJwt,
    listEksAnywhereCommits,
    updateEksAnywhereCommit,
    updateKarpenterPrivateFargateSubnetIds,
    resolvePlatformComponentConfiguration,
    startClusterAnalysis,
    listClusterAnalyses,
    getClusterAnalysis,
    listClusterAnalysisLogs,
    runAnalysis,
    giveUpAnalysis,
  };
}

export type ClusterSettingsService = ReturnType<typeof createClusterSettingsService>;

/** The worker's registry entry for analyses (app.ts). */
export function clusterAnalysisHandler(settings: Pick<ClusterSettingsService, 'runAnalysis' | 'giveUpAnalysis'>) {
  return handle(CLUSTER_ANALYSIS_JOB, {
    run: async (_job, payload) => settings.runAnalysis(payload.analysisId),
    giveUp: async (_job, error, payload) => settings.giveUpAnalysis(payload.analysisId, error),
  });
}
