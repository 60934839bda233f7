import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound, type FieldProblem } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { OciDistributionClient, RegistryCheck, RegistryCredentials, RegistryEndpoint } from '../../registry/oci-distribution.ts';
import { urlProblem, type OutboundPolicy } from '../../registry/outbound-http.ts';
import { basicLoginProblem, checkedTargetUrl, ECR_UNAVAILABLE_MESSAGE, type EcrAuthorizer, inBatches, pickDefined, registryReadError, requireKnownAwsCredentials, sealedConfigOf } from '../../registry/registry-access.ts';
import {
  deleteContainerRegistry,
  findContainerRegistry,
  insertContainerRegistry,
  listContainerRegistries,
  updateContainerRegistry,
  type ContainerRegistryRow,
} from './container-registries.repo.ts';
import type { ContainerRegistryKind } from './container-registries.schemas.ts';

/** Services are owned by a later module; it reports how many use each registry. Until then none does. */
export interface ContainerRegistryUsage {
  countsByRegistry(organizationId: string, registryIds: string[]): Promise<Map<string, number>>;
}

export const NO_CONTAINER_REGISTRY_USAGE: ContainerRegistryUsage = { countsByRegistry: async () => new Map() };

/** The cloud credentials module answers whether an AWS credential exists in an organization. */
export interface AwsCredentialsLookup {
  findAwsCredentials(organizationId: string, credentialsId: string): Promise<unknown>;
}

export interface ContainerRegistriesDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  oci: OciDistributionClient;
  policy: OutboundPolicy;
  usage: ContainerRegistryUsage;
  /** Absent until the cloud credentials module is wired: ECR checks then answer a 400 saying so. */
  ecr?: EcrAuthorizer | undefined;
  /** Absent until the cloud credentials module is wired: an ECR registry's credential id is then not verified. */
  awsCredentials?: AwsCredentialsLookup | undefined;
}

export interface ContainerRegistryConfigInput {
  username?: string | undefined;
  password?: string | undefined;
  region?: string | undefined;
  aws_credentials_id?: string | undefined;
  access_key_id?: string | undefined;
  secret_access_key?: string | undefined;
  role_arn?: string | undefined;
  scaleway_access_key?: string | undefined;
  scaleway_secret_key?: string | undefined;
  scaleway_project_id?: string | undefined;
  json_credentials?: string | undefined;
  azure_tenant_id?: string | undefined;
  azure_subscription_id?: string | undefined;
}

export interface ContainerRegistryInput {
  name: string;
  kind: ContainerRegistryKind;
  description?: string | null | undefined;
  url?: string | undefined;
  config?: ContainerRegistryConfigInput | undefined;
}

/** What may be shown of a registry's configuration. */
interface PublicConfig {
  username?: string;
  region?: string;
  aws_credentials_id?: string;
  scaleway_access_key?: string;
  scaleway_project_id?: string;
  azure_tenant_id?: string;
  azure_subscription_id?: string;
}

/** What is sealed. */
interface SecretConfig {
  password?: string;
  scaleway_secret_key?: string;
  json_credentials?: string;
}

const PUBLIC_KEYS = ['username', 'region', 'aws_credentials_id', 'scaleway_access_key', 'scaleway_project_id', 'azure_tenant_id', 'azure_subscription_id'] as const;
const SECRET_KEYS = ['password', 'scaleway_secret_key', 'json_credentials'] as const;

/**
 * The configuration each kind cannot do without, field → what to give: what validateConfig requires and what
 * listAvailableContainerRegistry answers (one table for both). The other kinds take an optional username and
 * password, together.
 */
export const REQUIRED_REGISTRY_CONFIG: Readonly<Record<ContainerRegistryKind, Readonly<Partial<Record<keyof ContainerRegistryConfigInput, string>>>>> = {
  ECR: { aws_credentials_id: 'the id of AWS credentials of the organization', region: 'the AWS region of the registry' },
  SCALEWAY_CR: { scaleway_secret_key: 'a Scaleway API secret key', region: 'the Scaleway region of the registry' },
  DOCKER_HUB: {},
  GITHUB_CR: {},
  GITHUB_ENTERPRISE_CR: {},
  GITLAB_CR: {},
  PUBLIC_ECR: {},
  DOCR: {},
  GENERIC_CR: {},
  GCP_ARTIFACT_REGISTRY: { json_credentials: 'the JSON key of a GCP service account' },
  AZURE_CR: {},
};

/** The hosted registry each kind means when no URL is given (the reference's defaults). */
const DEFAULT_URL: Partial<Record<ContainerRegistryKind, string>> = {
  DOCKER_HUB: 'https://docker.io',
  GITHUB_CR: 'https://ghcr.io',
  GITLAB_CR: 'https://registry.gitlab.com',
  PUBLIC_ECR: 'https://public.ecr.aws',
};

/** Docker Hub's registry API is not served on the names people use for it. */
const DOCKER_HUB_API_HOSTS = new Set(['docker.io', 'index.docker.io', 'registry.hub.docker.com', 'hub.docker.com']);

/** Listing every repository's tags is one request each: the listing stops at this many repositories. */
const MAX_LISTED_IMAGES = 50;

function nameTakenMessage(name: string): string {
  return `a container registry named "${name}" already exists in this organization`;
}

/**
 * Container registries (issue 10): where container services pull images from. Credentials are sealed with the
 * secret box and only opened to talk to the registry; no answer carries them.
 */
export function createContainerRegistriesService(deps: ContainerRegistriesDeps) {
  const { db, clock, secrets, oci, policy, usage } = deps;
  const sealedConfig = sealedConfigOf<SecretConfig>(secrets, 'container_registries', 'container registry');

  function view(row: ContainerRegistryRow, servicesCount: number) {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      name: row.name,
      kind: row.kind as ContainerRegistryKind,
      // Not nullable in the reference: a registry without a description leaves the field out.
      ...(row.description === null ? {} : { description: row.description }),
      url: row.url,
      associated_services_count: servicesCount,
      config: readJson<PublicConfig>(row.config),
    };
  }

  async function requireRegistry(organizationId: string, registryId: string): Promise<ContainerRegistryRow> {
    const row = await findContainerRegistry(db, organizationId, registryId);
    if (row === undefined) throw notFound(`container registry ${registryId} not found`);
    return row;
  }

  /** The stored URL: the given one (without trailing slashes) or the kind's hosted registry; 400 when required. */
  async function urlFor(kind: ContainerRegistryKind, given: string | undefined): Promise<string> {
    const raw = given ?? DEFAULT_URL[kind];
    if (raw === undefined) throw badRequest(`url is required for a ${kind} registry`, [{ field: '/url', message: 'is required for this kind' }]);
    const url = await checkedTargetUrl(raw, '/url', policy);
    return url.href.replace(/\/+$/, '');
  }

  /** Kind-specific rules on the merged configuration (the request's fields over the stored secrets). */
  async function validateConfig(organizationId: string, kind: ContainerRegistryKind, config: ContainerRegistryConfigInput, sealed: SecretConfig): Promise<void> {
    const problems: FieldProblem[] = [];
    for (const key of ['access_key_id', 'secret_access_key', 'role_arn'] as const) {
      if (config[key] !== undefined) problems.push({ field: `/config/${key}`, message: 'register the AWS keys as AWS credentials and reference them with aws_credentials_id' });
    }
    const require = (key: keyof ContainerRegistryConfigInput, present: boolean) => {
      if (!present) problems.push({ field: `/config/${key}`, message: `is required for a ${kind} registry` });
    };
    const required = Object.keys(REQUIRED_REGISTRY_CONFIG[kind]) as (keyof ContainerRegistryConfigInput)[];
    for (const key of required) {
      // Secrets may be kept from before (an edit that leaves them out): the merged sealed config has them.
      require(key, (SECRET_KEYS as readonly string[]).includes(key) ? sealed[key as keyof SecretConfig] !== undefined : config[key] !== undefined);
    }
    if (required.length === 0) {
      const login = basicLoginProblem(config.username, sealed.password);
      if (login !== undefined) problems.push(login);
    }
    if (problems.length > 0) throw badRequest(`invalid configuration for a ${kind} registry`, problems);
    if (kind === 'ECR') await requireKnownAwsCredentials(deps.awsCredentials, organizationId, config.aws_credentials_id);
  }

  async function countOf(row: ContainerRegistryRow): Promise<number> {
    return (await usage.countsByRegistry(row.organization_id, [row.id])).get(row.id) ?? 0;
  }

  async function listContainerRegistry(organizationId: string) {
    const rows = await listContainerRegistries(db, organizationId);
    const counts = await usage.countsByRegistry(organizationId, rows.map((row) => row.id));
    return rows.map((row) => view(row, counts.get(row.id) ?? 0));
  }

  async function getContainerRegistry(organizationId: string, registryId: string) {
    const row = await requireRegistry(organizationId, registryId);
    return view(row, await countOf(row));
  }

  async function createContainerRegistry(organizationId: string, input: ContainerRegistryInput) {
    const config = input.config ?? {};
    const sealed = pickDefined<keyof SecretConfig>(config, SECRET_KEYS);
    await validateConfig(organizationId, input.kind, config, sealed);
    const url = await urlFor(input.kind, input.url);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const id = newId();
    const row: ContainerRegistryRow = {
      id,
      organization_id: organizationId,
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      kind: input.kind,
      url,
      config: writeJson(pickDefined<keyof PublicConfig>(config, PUBLIC_KEYS)),
      secret_envelope: sealedConfig.seal(sealed, { id, organization_id: organizationId }),
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertContainerRegistry(db, row), nameTakenMessage(name));
    return view(row, 0);
  }

  /** Replaces the registry's fields; a secret config field left out keeps its stored value. */
  async function editContainerRegistry(organizationId: string, registryId: string, input: ContainerRegistryInput) {
    const row = await requireRegistry(organizationId, registryId);
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
      config: writeJson(pickDefined<keyof PublicConfig>(config, PUBLIC_KEYS)),
      secret_envelope: sealedConfig.seal(sealed, row),
      updated_at: isoTimestamp(clock),
    };
    const updated = await uniqueOrConflict(() => updateContainerRegistry(db, organizationId, registryId, changes), nameTakenMessage(name));
    if (!updated) throw notFound(`container registry ${registryId} not found`);
    return view({ ...row, ...changes }, await countOf(row));
  }

  /** A registry that services still pull from is not deleted: their next deployment would fail. */
  async function removeContainerRegistry(organizationId: string, registryId: string): Promise<void> {
    const row = await requireRegistry(organizationId, registryId);
    const count = await countOf(row);
    if (count > 0) throw conflict(`container registry ${registryId} is used by ${count} service(s); point them at another registry first`);
    if (!(await deleteContainerRegistry(db, organizationId, registryId))) throw notFound(`container registry ${registryId} not found`);
  }

  /** Where the registry API is and with which credentials, per kind. */
  async function endpointOf(row: ContainerRegistryRow): Promise<RegistryEndpoint> {
    const config = readJson<PublicConfig>(row.config);
    if (row.kind === 'ECR') {
      if (deps.ecr === undefined) throw badRequest(ECR_UNAVAILABLE_MESSAGE);
      if (config.aws_credentials_id === undefined || config.region === undefined) throw badRequest(`container registry "${row.name}" names no AWS credentials`);
      // The login is valid for every registry of the account; the registry called is the one this row names.
      const authorization = await deps.ecr.authorizeEcr(row.organization_id, config.aws_credentials_id, config.region);
      return { baseUrl: new URL(row.url).origin, credentials: { username: authorization.username, password: authorization.password } };
    }
    const sealed = sealedConfig.open(row);
    let credentials: RegistryCredentials | undefined;
    if (row.kind === 'SCALEWAY_CR' && sealed.scaleway_secret_key !== undefined) credentials = { username: 'nologin', password: sealed.scaleway_secret_key };
    else if (row.kind === 'GCP_ARTIFACT_REGISTRY' && sealed.json_credentials !== undefined) credentials = { username: '_json_key', password: sealed.json_credentials };
    else if (config.username !== undefined && sealed.password !== undefined) credentials = { username: config.username, password: sealed.password };
    const url = new URL(row.url);
    const baseUrl = row.kind === 'DOCKER_HUB' && DOCKER_HUB_API_HOSTS.has(url.hostname) ? 'https://registry-1.docker.io' : url.origin;
    return { baseUrl, credentials };
  }

  /** Talks to the registry (GET /v2/ with the stored credentials) and says whether it is reachable and lets them in. */
  async function checkContainerRegistry(organizationId: string, registryId: string): Promise<RegistryCheck> {
    const row = await requireRegistry(organizationId, registryId);
    const endpoint = await endpointOf(row);
    try {
      return await oci.check(endpoint);
    } catch (error) {
      throw registryReadError(error, `container registry "${row.name}"`);
    }
  }

  /**
   * Where a cluster pulls an image of this registry: its full reference (`<registry host>/<name>:<tag>`; Docker Hub's
   * as `docker.io/…`) and the registry's login, opened, for the agent that deploys it; null for a registry without one.
   */
  async function imageOf(organizationId: string, registryId: string, imageName: string, tag: string) {
    const row = await requireRegistry(organizationId, registryId);
    const endpoint = await endpointOf(row);
    const host = row.kind === 'DOCKER_HUB' && DOCKER_HUB_API_HOSTS.has(new URL(row.url).hostname) ? 'docker.io' : new URL(endpoint.baseUrl).host;
    return {
      reference: `${host}/${imageName}:${tag}`,
      pull_credentials: endpoint.credentials === undefined ? null : { server: host, username: endpoint.credentials.username, password: endpoint.credentials.password },
    };
  }

  /**
   * The tags of `image_name`, or, without it, the registry's repositories (those containing `search`) with their
   * tags, from the catalog.
   */
  async function getContainerVersions(organizationId: string, registryId: string, query: { image_name?: string | undefined; search?: string | undefined }) {
    const row = await requireRegistry(organizationId, registryId);
    const endpoint = await endpointOf(row);
    try {
      if (query.image_name !== undefined) return [{ image_name: query.image_name, versions: await oci.listTags(endpoint, query.image_name) }];
      const search = query.search?.toLowerCase();
      const names = (await oci.listRepositories(endpoint)).filter((name) => search === undefined || name.includes(search)).slice(0, MAX_LISTED_IMAGES);
      return await inBatches(names, async (name) => ({ image_name: name, versions: await oci.listTags(endpoint, name) }));
    } catch (error) {
      throw registryReadError(error, `container registry "${row.name}"`);
    }
  }

  /**
   * A cluster's default registry (the ECR registry of its AWS account), written in the caller's transaction with
   * the cluster itself; 409 when the name is taken.
   */
  async function createClusterDefaultRegistry(
    trx: Transaction<DB>,
    input: { organizationId: string; name: string; url: string; region: string; awsCredentialsId: string },
  ): Promise<{ registryId: string }> {
    // No DNS here: this runs inside the caller's write transaction; every use of the registry checks the address.
    const url = URL.canParse(input.url) ? new URL(input.url) : undefined;
    const problem = url === undefined ? 'is not an absolute URL' : urlProblem(url, policy);
    if (url === undefined || problem !== undefined) throw badRequest(`the cluster registry URL ${problem ?? ''}`, [{ field: '/url', message: problem ?? 'invalid' }]);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const row: ContainerRegistryRow = {
      id: newId(),
      organization_id: input.organizationId,
      name,
      name_key: nameKey(name),
      description: null,
      kind: 'ECR',
      url: url.href.replace(/\/+$/, ''),
      config: writeJson({ region: input.region, aws_credentials_id: input.awsCredentialsId } satisfies PublicConfig),
      secret_envelope: null,
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertContainerRegistry(trx, row), nameTakenMessage(name));
    return { registryId: row.id };
  }

  /** The registry a service names, as the reference's ContainerRegistryProviderDetailsResponse; undefined if unknown. */
  async function providerDetails(organizationId: string, registryId: string) {
    const row = await findContainerRegistry(db, organizationId, registryId);
    return row === undefined ? undefined : { id: row.id, name: row.name, url: row.url, kind: row.kind as ContainerRegistryKind };
  }


  /** Names of the container registrys that sign in with an AWS credential (the credentials module refuses to delete it). */
  async function registriesUsingAwsCredentials(organizationId: string, credentialsId: string): Promise<string[]> {
    const rows = await listContainerRegistries(db, organizationId);
    return rows
      .filter((row) => readJson<{ aws_credentials_id?: string }>(row.config).aws_credentials_id === credentialsId)
      .map((row) => `container registry "${row.name}"`);
  }
  return {
    registriesUsingAwsCredentials,
    listContainerRegistry,
    getContainerRegistry,
    createContainerRegistry,
    editContainerRegistry,
    removeContainerRegistry,
    checkContainerRegistry,
    getContainerVersions,
    imageOf,
    createClusterDefaultRegistry,
    providerDetails,
  };
}

export type ContainerRegistriesService = ReturnType<typeof createContainerRegistriesService>;
