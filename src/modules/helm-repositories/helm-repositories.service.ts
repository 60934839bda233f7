import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, type FieldProblem } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { HelmChartVersions, HelmIndexReader } from '../../registry/helm-index.ts';
import { RegistryAccessError, type OciDistributionClient, type RegistryCheck, type RegistryCredentials, type RegistryEndpoint } from '../../registry/oci-distribution.ts';
import { isNonPublicHost, OutboundFailure, type OutboundPolicy } from '../../registry/outbound-http.ts';
import { basicLoginProblem, checkedTargetUrl, ECR_UNAVAILABLE_MESSAGE, type EcrAuthorizer, inBatches, pickDefined, registryReadError, requireKnownAwsCredentials, sealedConfigOf } from '../../registry/registry-access.ts';
import type { AwsCredentialsLookup } from '../container-registries/container-registries.service.ts';
import { deleteHelmRepository, findHelmRepository, insertHelmRepository, listHelmRepositories, updateHelmRepository, type HelmRepositoryRow } from './helm-repositories.repo.ts';
import type { HelmRepositoryKind } from './helm-repositories.schemas.ts';

/** Helm services are owned by a later module; it reports how many use each repository. Until then none does. */
export interface HelmRepositoryUsage {
  countsByRepository(organizationId: string, repositoryIds: string[]): Promise<Map<string, number>>;
}

export const NO_HELM_REPOSITORY_USAGE: HelmRepositoryUsage = { countsByRepository: async () => new Map() };

export interface HelmRepositoriesDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  oci: OciDistributionClient;
  index: HelmIndexReader;
  policy: OutboundPolicy;
  usage: HelmRepositoryUsage;
  ecr?: EcrAuthorizer | undefined;
  awsCredentials?: AwsCredentialsLookup | undefined;
}

export interface HelmRepositoryInput {
  name: string;
  kind: HelmRepositoryKind;
  description?: string | null | undefined;
  url: string;
  skip_tls_verification?: boolean | undefined;
  config?:
    | {
        username?: string | undefined;
        password?: string | undefined;
        region?: string | undefined;
        aws_credentials_id?: string | undefined;
        access_key_id?: string | undefined;
        secret_access_key?: string | undefined;
        scaleway_access_key?: string | undefined;
        scaleway_secret_key?: string | undefined;
        scaleway_project_id?: string | undefined;
      }
    | undefined;
}

type ConfigInput = NonNullable<HelmRepositoryInput['config']>;

export interface HelmChartSource {
  repository_url: string;
  kind: 'HTTPS' | 'OCI';
  credentials: { username: string; password: string } | null;
  skip_tls_verification: boolean;
}

interface PublicConfig {
  username?: string;
  region?: string;
  aws_credentials_id?: string;
  scaleway_access_key?: string;
  scaleway_project_id?: string;
}

interface SecretConfig {
  password?: string;
  scaleway_secret_key?: string;
}

const PUBLIC_KEYS = ['username', 'region', 'aws_credentials_id', 'scaleway_access_key', 'scaleway_project_id'] as const;
const SECRET_KEYS = ['password', 'scaleway_secret_key'] as const;

/**
 * The configuration each kind cannot do without, field → what to give: what validateConfig requires and what
 * listAvailableHelmRepository answers (one table for both). The other kinds take an optional username and password,
 * together.
 */
export const REQUIRED_HELM_REPOSITORY_CONFIG: Readonly<Record<HelmRepositoryKind, Readonly<Partial<Record<keyof ConfigInput, string>>>>> = {
  HTTPS: {},
  OCI_ECR: { aws_credentials_id: 'the id of AWS credentials of the organization', region: 'the AWS region of the registry' },
  OCI_SCALEWAY_CR: { scaleway_secret_key: 'a Scaleway API secret key' },
  OCI_DOCKER_HUB: {},
  OCI_PUBLIC_ECR: {},
  OCI_GENERIC_CR: {},
  OCI_GITHUB_CR: {},
  OCI_GITLAB_CR: {},
};

/** Listing the charts of an OCI registry reads each chart's tags: the listing stops at this many charts. */
const MAX_LISTED_CHARTS = 50;

function nameTakenMessage(name: string): string {
  return `a helm repository named "${name}" already exists in this organization`;
}

/**
 * Helm repositories (issue 10): where Helm services take charts from, either an HTTPS chart repository (its
 * index.yaml) or an OCI registry (`oci://host/path`, read through the distribution API). Credentials are sealed.
 */
export function createHelmRepositoriesService(deps: HelmRepositoriesDeps) {
  const { db, clock, secrets, oci, index, policy, usage } = deps;
  const sealedConfig = sealedConfigOf<SecretConfig>(secrets, 'helm_repositories', 'helm repository');

  function view(row: HelmRepositoryRow, servicesCount: number) {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      name: row.name,
      kind: row.kind as HelmRepositoryKind,
      // Not nullable in the reference: a repository without a description leaves the field out.
      ...(row.description === null ? {} : { description: row.description }),
      url: row.url,
      skip_tls_verification: row.skip_tls_verification === 1,
      associated_services_count: servicesCount,
      config: readJson<PublicConfig>(row.config),
    };
  }

  async function requireRepository(organizationId: string, repositoryId: string): Promise<HelmRepositoryRow> {
    const row = await findHelmRepository(db, organizationId, repositoryId);
    if (row === undefined) throw notFound(`helm repository ${repositoryId} not found`);
    return row;
  }

  async function urlFor(kind: HelmRepositoryKind, raw: string): Promise<string> {
    const url = await checkedTargetUrl(raw, '/url', policy, kind === 'HTTPS' ? ['https:', 'http:'] : ['oci:']);
    return url.href.replace(/\/+$/, '');
  }

  async function validateConfig(organizationId: string, kind: HelmRepositoryKind, config: ConfigInput, sealed: SecretConfig): Promise<void> {
    const problems: FieldProblem[] = [];
    for (const key of ['access_key_id', 'secret_access_key'] as const) {
      if (config[key] !== undefined) problems.push({ field: `/config/${key}`, message: 'register the AWS keys as AWS credentials and reference them with aws_credentials_id' });
    }
    const required = Object.keys(REQUIRED_HELM_REPOSITORY_CONFIG[kind]) as (keyof ConfigInput)[];
    for (const key of required) {
      // Secrets may be kept from before (an edit that leaves them out): the merged sealed config has them.
      const present = (SECRET_KEYS as readonly string[]).includes(key) ? sealed[key as keyof SecretConfig] !== undefined : config[key] !== undefined;
      if (!present) problems.push({ field: `/config/${key}`, message: `is required for an ${kind} repository` });
    }
    if (required.length === 0) {
      const login = basicLoginProblem(config.username, sealed.password);
      if (login !== undefined) problems.push(login);
    }
    if (problems.length > 0) throw badRequest(`invalid configuration for a ${kind} helm repository`, problems);
    if (kind === 'OCI_ECR') await requireKnownAwsCredentials(deps.awsCredentials, organizationId, config.aws_credentials_id);
  }

  async function countOf(row: HelmRepositoryRow): Promise<number> {
    return (await usage.countsByRepository(row.organization_id, [row.id])).get(row.id) ?? 0;
  }

  async function listHelmRepository(organizationId: string) {
    const rows = await listHelmRepositories(db, organizationId);
    const counts = await usage.countsByRepository(organizationId, rows.map((row) => row.id));
    return rows.map((row) => view(row, counts.get(row.id) ?? 0));
  }

  async function getHelmRepository(organizationId: string, repositoryId: string) {
    const row = await requireRepository(organizationId, repositoryId);
    return view(row, await countOf(row));
  }

  async function createHelmRepository(organizationId: string, input: HelmRepositoryInput) {
    const config = input.config ?? {};
    const sealed = pickDefined<keyof SecretConfig>(config, SECRET_KEYS);
    await validateConfig(organizationId, input.kind, config, sealed);
    const url = await urlFor(input.kind, input.url);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const id = newId();
    const row: HelmRepositoryRow = {
      id,
      organization_id: organizationId,
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      kind: input.kind,
      url,
      skip_tls_verification: input.skip_tls_verification === true ? 1 : 0,
      config: writeJson(pickDefined<keyof PublicConfig>(config, PUBLIC_KEYS)),
      secret_envelope: sealedConfig.seal(sealed, { id, organization_id: organizationId }),
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertHelmRepository(db, row), nameTakenMessage(name));
    return view(row, 0);
  }

  async function editHelmRepository(organizationId: string, repositoryId: string, input: HelmRepositoryInput) {
    const row = await requireRepository(organizationId, repositoryId);
    const config = input.config ?? {};
    const sealed = { ...sealedConfig.open(row), ...pickDefined<keyof SecretConfig>(config, SECRET_KEYS) };
    await validateConfig(organizationId, input.kind, config, sealed);
    const url = await urlFor(input.kind, input.url);
    const name = cleanName(input.name);
    const changes = {
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      kind: input.kind,
      url,
      skip_tls_verification: input.skip_tls_verification === true ? 1 : 0,
      config: writeJson(pickDefined<keyof PublicConfig>(config, PUBLIC_KEYS)),
      secret_envelope: sealedConfig.seal(sealed, row),
      updated_at: isoTimestamp(clock),
    };
    const updated = await uniqueOrConflict(() => updateHelmRepository(db, organizationId, repositoryId, changes), nameTakenMessage(name));
    if (!updated) throw notFound(`helm repository ${repositoryId} not found`);
    return view({ ...row, ...changes }, await countOf(row));
  }

  async function removeHelmRepository(organizationId: string, repositoryId: string): Promise<void> {
    const row = await requireRepository(organizationId, repositoryId);
    const count = await countOf(row);
    if (count > 0) throw conflict(`helm repository ${repositoryId} is used by ${count} service(s); point them at another repository first`);
    if (!(await deleteHelmRepository(db, organizationId, repositoryId))) throw notFound(`helm repository ${repositoryId} not found`);
  }

  function basicCredentials(row: HelmRepositoryRow): RegistryCredentials | undefined {
    const config = readJson<PublicConfig>(row.config);
    const sealed = sealedConfig.open(row);
    if (row.kind === 'OCI_SCALEWAY_CR' && sealed.scaleway_secret_key !== undefined) return { username: 'nologin', password: sealed.scaleway_secret_key };
    if (config.username !== undefined && sealed.password !== undefined) return { username: config.username, password: sealed.password };
    return undefined;
  }

  /**
   * The registry behind an oci:// repository and the path its charts live under. It is reached over https, or over
   * plain http when it is on a loopback or private address this installation may reach (an on-premise registry).
   */
  async function ociLocation(row: HelmRepositoryRow): Promise<{ endpoint: RegistryEndpoint; prefix: string }> {
    const url = new URL(row.url);
    const prefix = url.pathname.replace(/^\/+|\/+$/g, '');
    const insecureTls = row.skip_tls_verification === 1;
    if (row.kind === 'OCI_ECR') {
      const config = readJson<PublicConfig>(row.config);
      if (deps.ecr === undefined) throw badRequest(ECR_UNAVAILABLE_MESSAGE);
      if (config.aws_credentials_id === undefined || config.region === undefined) throw badRequest(`helm repository "${row.name}" names no AWS credentials`);
      const authorization = await deps.ecr.authorizeEcr(row.organization_id, config.aws_credentials_id, config.region);
      return { endpoint: { baseUrl: `https://${url.host}`, credentials: { username: authorization.username, password: authorization.password }, insecureTls }, prefix };
    }
    const plainHttp = policy.allowPrivateHosts && (await isNonPublicHost(url.hostname));
    return { endpoint: { baseUrl: `${plainHttp ? 'http' : 'https'}://${url.host}`, credentials: basicCredentials(row), insecureTls }, prefix };
  }

  async function ociCharts(row: HelmRepositoryRow, chartName: string | undefined): Promise<HelmChartVersions[]> {
    const { endpoint, prefix } = await ociLocation(row);
    const repositoryOf = (chart: string) => (prefix === '' ? chart : `${prefix}/${chart}`);
    if (chartName !== undefined) return [{ chart_name: chartName, versions: await oci.listTags(endpoint, repositoryOf(chartName)) }];
    const under = prefix === '' ? '' : `${prefix}/`;
    const charts = (await oci.listRepositories(endpoint))
      .filter((name) => name.startsWith(under) && !name.slice(under.length).includes('/'))
      .map((name) => name.slice(under.length))
      .slice(0, MAX_LISTED_CHARTS);
    return inBatches(charts, async (chart) => ({ chart_name: chart, versions: await oci.listTags(endpoint, repositoryOf(chart)) }));
  }

  /** The charts of the repository and their versions, read from the repository itself (optionally one chart). */
  async function getHelmCharts(organizationId: string, repositoryId: string, chartName: string | undefined): Promise<HelmChartVersions[]> {
    const row = await requireRepository(organizationId, repositoryId);
    try {
      if (row.kind !== 'HTTPS') return await ociCharts(row, chartName);
      const charts = await index.readIndex({ url: row.url, credentials: basicCredentials(row), insecureTls: row.skip_tls_verification === 1 });
      return chartName === undefined ? charts : charts.filter((chart) => chart.chart_name === chartName);
    } catch (error) {
      throw registryReadError(error, `helm repository "${row.name}"`);
    }
  }

  /** Reads the repository once (index.yaml, or GET /v2/ of the OCI registry) and says whether that worked. */
  async function checkHelmRepository(organizationId: string, repositoryId: string): Promise<RegistryCheck> {
    const row = await requireRepository(organizationId, repositoryId);
    try {
      if (row.kind !== 'HTTPS') return await oci.check((await ociLocation(row)).endpoint);
      const charts = await index.readIndex({ url: row.url, credentials: basicCredentials(row), insecureTls: row.skip_tls_verification === 1 });
      return { reachable: true, authenticated: true, message: `index.yaml lists ${charts.length} chart(s)` };
    } catch (error) {
      if (error instanceof OutboundFailure && error.kind !== 'refused') return { reachable: false, authenticated: false, message: error.message };
      if (error instanceof RegistryAccessError) return { reachable: true, authenticated: false, message: error.message };
      throw registryReadError(error, `helm repository "${row.name}"`);
    }
  }


  /**
   * Where a HELM service's agent takes a chart of the repository from: its URL, whether it is an OCI registry, and
   * its login opened (an ECR login is asked of AWS now: it lasts hours). Undefined once the repository is gone.
   */
  async function chartSourceOf(organizationId: string, repositoryId: string): Promise<HelmChartSource | undefined> {
    const row = await findHelmRepository(db, organizationId, repositoryId);
    if (row === undefined) return undefined;
    const skipTls = row.skip_tls_verification === 1;
    if (row.kind === 'HTTPS') return { repository_url: row.url, kind: 'HTTPS', credentials: basicCredentials(row) ?? null, skip_tls_verification: skipTls };
    const credentials = row.kind === 'OCI_ECR' ? (await ociLocation(row)).endpoint.credentials : basicCredentials(row);
    return { repository_url: row.url, kind: 'OCI', credentials: credentials ?? null, skip_tls_verification: skipTls };
  }

  /** Names of the helm repositorys that sign in with an AWS credential (the credentials module refuses to delete it). */
  async function repositoriesUsingAwsCredentials(organizationId: string, credentialsId: string): Promise<string[]> {
    const rows = await listHelmRepositories(db, organizationId);
    return rows
      .filter((row) => readJson<{ aws_credentials_id?: string }>(row.config).aws_credentials_id === credentialsId)
      .map((row) => `helm repository "${row.name}"`);
  }
  return {
    chartSourceOf,
    repositoriesUsingAwsCredentials,
    listHelmRepository,
    getHelmRepository,
    createHelmRepository,
    editHelmRepository,
    removeHelmRepository,
    getHelmCharts,
    checkHelmRepository,
  };
}

export type HelmRepositoriesService = ReturnType<typeof createHelmRepositoriesService>;
