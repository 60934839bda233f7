import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Placement } from '../../auth/principal.ts';
import { isForeignKeyViolation, isUniqueViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { findFreePort } from '../../lib/free-port.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { GitTokenAssociatedService } from '../git-tokens/git-tokens.service.ts';
import type { GroupAssociatedItem } from '../labels-groups/labels-groups.service.ts';
import type { DatabaseType, ServiceForVariables, ServiceKind } from '../variables/variables.builtins.ts';
import { hostnameLabelCandidate, publicHostname } from './services.hostnames.ts';
import { SERVICE_NAME_PATTERN } from './services.kind-fields.ts';
import type { DatabaseSummary, KindWrite, ServiceKindContext, ServiceKindDefinition, ServiceReferences, StoredService } from './services.kinds.ts';
import {
  claimHostnameLabel,
  claimLocalAddress,
  claimLocalPort,
  countServicesByProject,
  countServicesReferencing,
  deleteServiceRow,
  findServiceRow,
  insertService,
  listServicesOfEnvironment,
  listServicesReferencing,
  listServicesReferencingWithPlacement,
  replaceServiceReferences,
  updateService,
  type ReferenceKind,
  type ServiceReferenceRow,
  type ServiceRow,
} from './services.repo.ts';

/**
 * Services (issue 8 part 2, docs/services.md): the seven kinds in one table, created, read, edited and removed
 * through the same generic operations. A kind's definition (services.kinds.ts) turns a request into stored settings
 * and settings into an answer; this module owns the rows, the per-environment name rule, a database's generated
 * credentials, and what other modules ask of services (placement for the authorizer, usage of git tokens,
 * registries, Helm repositories and groups, counts per project, the variables module's view of an environment).
 */

/** The environment a service lives in, as the environments module describes it. */
export interface ServiceEnvironment {
  id: string;
  projectId: string;
  organizationId: string;
  name: string;
  mode: 'PRODUCTION' | 'STAGING' | 'DEVELOPMENT' | 'PREVIEW';
  clusterId: string;
}

/**
 * Where a local-driver agent runs databases (docs/local-engine.md, "Addresses"): on its own host, 127.0.0.1 on the
 * port chosen when the database was created; PostgreSQL databases on a shared server instead when one is configured
 * (SLIPWAY_LOCAL_POSTGRES_URL). Other clusters keep the placeholder address until a driver of theirs gives one.
 */
export interface LocalDatabaseAddressing {
  clusterRunsLocally(clusterId: string): Promise<boolean>;
  sharedPostgres?: { host: string; port: number } | undefined;
}

/** A database's connection as its built-ins and its agent see it. */
export interface DatabaseConnection {
  type: DatabaseType;
  version: string;
  host: string;
  port: number;
  username: string;
  password: string;
  databaseName: string;
  /** Whether a local-driver agent runs it on its host (else the address is a placeholder). */
  local: boolean;
  /** PostgreSQL on the shared server of SLIPWAY_LOCAL_POSTGRES_URL rather than a server of its own. */
  shared: boolean;
}

/** Whether what a request names exists in the organization (each module answers for its own things). */
export interface ServiceReferenceLookups {
  gitTokenExists(organizationId: string, gitTokenId: string): Promise<boolean>;
  containerRegistryExists(organizationId: string, registryId: string): Promise<boolean>;
  helmRepositoryExists(organizationId: string, repositoryId: string): Promise<boolean>;
  missingLabelsGroups(organizationId: string, ids: string[]): Promise<string[]>;
  missingAnnotationsGroups(organizationId: string, ids: string[]): Promise<string[]>;
}

/**
 * The deployments side of a service (services.deployments.service.ts, issue 8 part 5). Inside the removal's
 * transaction, `refuseBusy` refuses (409 naming the state) while the cluster's agent works on the service, withdraws
 * its queued actions and queues the teardown of a workload; `serviceRemoved` follows the commit (metering ends).
 * An edit needs no call: a deployment records the settings it ran, and OUT_OF_DATE compares them with the current.
 */
export interface ServiceRuntimePort {
  /** `teardown` false: the workload stays on its cluster (the reference's `skipReconcile`). */
  refuseBusy(trx: Transaction<DB>, serviceId: string, options: { teardown: boolean }): Promise<void>;
  serviceRemoved(serviceId: string): Promise<void>;
  /** Of these services, those deployed whose settings or variables changed since (OUT_OF_DATE). */
  outOfDate(serviceIds: readonly string[]): Promise<Set<string>>;
}

/** Without deployments a service never runs, so nothing is busy and nothing is metered. */
export const NO_SERVICE_RUNTIME: ServiceRuntimePort = { refuseBusy: async () => undefined, serviceRemoved: async () => undefined, outOfDate: async () => new Set() };

export interface ServicesDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  kinds: readonly ServiceKindDefinition[];
  environments: { findEnvironmentSummary(environmentId: string): Promise<ServiceEnvironment | undefined> };
  lookups: ServiceReferenceLookups;
  /** The variables module removes a service's own variables and secrets in the removal's transaction. */
  variables: { deleteServiceVariables(trx: Transaction<DB>, serviceId: string): Promise<void> };
  runtime: ServiceRuntimePort;
  localDatabases?: LocalDatabaseAddressing | undefined;
  /** SLIPWAY_APPS_DOMAIN: the domain of services' public hostnames (services.hostnames.ts). */
  appsDomain: string;
}

/**
 * Checked again here, whatever a kind's schema says: a name becomes part of hostnames and of built-in variable
 * names, and without underscores two names of one environment never give one built-in name (they differ in more
 * than case, and the unique index is on the case-folded name).
 */
const SERVICE_NAME = new RegExp(SERVICE_NAME_PATTERN);

/** What a database's generated credentials hold (sealed in `credentials_envelope`). */
interface DatabaseCredentials {
  username: string;
  password: string;
}

/**
 * The hostname of a service inside its environment's network: a placeholder with a fixed shape (stable per service,
 * unique per environment, never reachable from outside) where no driver gives real addresses.
 */
export function internalHostname(service: { name: string; environmentId: string }): string {
  return `${nameKey(service.name)}.${service.environmentId}.slipway.internal`;
}

/** Candidates of 40 bits each: a fifth collision in a row would take more services than any installation holds. */
const HOSTNAME_LABEL_ATTEMPTS = 5;

/** Kinds that serve on ports inside their environment, hence get a local address (0024_service_local_addresses). */
const ADDRESSED_KINDS: ReadonlySet<string> = new Set(['APPLICATION', 'CONTAINER']);

/**
 * A candidate local address for a service: in 127.64.0.0/10 (4 million addresses, all the loopback interface on
 * Linux), spread by the service's id; `attempt` moves on when another service holds it.
 */
function localAddressCandidate(serviceId: string, attempt: number): string {
  const digest = createHash('sha256').update(`${serviceId}:${attempt}`).digest();
  return `127.${64 + ((digest[0] ?? 0) & 63)}.${digest[1] ?? 0}.${((digest[2] ?? 0) % 254) + 1}`;
}

function storedOf(row: ServiceRow): StoredService {
  return {
    id: row.id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    environmentId: row.environment_id,
    kind: row.kind as ServiceKind,
    name: row.name,
    description: row.description,
    settings: readJson<Record<string, unknown>>(row.settings),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function referenceRows(serviceId: string, references: ServiceReferences): ServiceReferenceRow[] {
  const rows: ServiceReferenceRow[] = [];
  const add = (kind: ReferenceKind, id: string | null) => {
    if (id !== null && !rows.some((row) => row.kind === kind && row.reference_id === id)) rows.push({ service_id: serviceId, kind, reference_id: id });
  };
  add('GIT_TOKEN', references.gitTokenId);
  add('CONTAINER_REGISTRY', references.containerRegistryId);
  add('HELM_REPOSITORY', references.helmRepositoryId);
  for (const id of references.labelsGroupIds) add('LABELS_GROUP', id);
  for (const id of references.annotationsGroupIds) add('ANNOTATIONS_GROUP', id);
  return rows;
}

function refuseInvalidName(name: string): void {
  if (!SERVICE_NAME.test(name)) {
    throw badRequest(`invalid service name "${name}"`, [
      { field: '/name', message: 'letters, digits and dashes (not first or last), 1 to 63 characters: it becomes part of hostnames and variable names' },
    ]);
  }
}

function nameTaken(name: string): string {
  return `a service named "${name}" already exists in this environment`;
}

function generatedCredentials(type: DatabaseType): DatabaseCredentials {
  return {
    // Redis ACLs start with the `default` user; the SQL servers and MongoDB get a user of their own.
    username: type === 'REDIS' ? 'default' : `u${randomBytes(8).toString('hex')}`,
    password: randomBytes(24).toString('base64url'),
  };
}

/** The sealed credentials are bound to their service, so an envelope copied into another row does not open. */
function credentialsAssociatedData(row: Pick<ServiceRow, 'id' | 'organization_id'>): string {
  return `services:credentials:${row.organization_id}:${row.id}`;
}

/**
 * The git-token answer's service type: jobs are told apart by their schedule (cron or lifecycle events); containers
 * and databases never build from git.
 */
function gitServiceType(kind: ServiceKind, settings: Record<string, unknown>): GitTokenAssociatedService['service_type'] | undefined {
  switch (kind) {
    case 'APPLICATION':
    case 'HELM':
    case 'TERRAFORM':
    case 'AGENTIC_WORKFLOW':
      return kind;
    case 'JOB': {
      const schedule = settings['schedule'];
      const cron = typeof schedule === 'object' && schedule !== null && (schedule as Record<string, unknown>)['cronjob'] !== undefined;
      return cron ? 'CRON' : 'LIFECYCLE';
    }
    default:
      return undefined;
  }
}

export function createServicesService(deps: ServicesDeps) {
  const { db, clock, secrets } = deps;
  const definitions = new Map<ServiceKind, ServiceKindDefinition>(deps.kinds.map((definition) => [definition.kind, definition]));

  function definitionOf(kind: string): ServiceKindDefinition {
    const definition = definitions.get(kind as ServiceKind);
    if (definition === undefined) throw new Error(`no definition registered for service kind ${kind}`);
    return definition;
  }

  function contextFor(organizationId: string, environmentId: string): ServiceKindContext {
    const { lookups } = deps;
    return {
      organizationId,
      environmentId,
      gitTokenExists: (id) => lookups.gitTokenExists(organizationId, id),
      containerRegistryExists: (id) => lookups.containerRegistryExists(organizationId, id),
      helmRepositoryExists: (id) => lookups.helmRepositoryExists(organizationId, id),
      missingLabelsGroups: (ids) => lookups.missingLabelsGroups(organizationId, ids),
      missingAnnotationsGroups: (ids) => lookups.missingAnnotationsGroups(organizationId, ids),
    };
  }

  async function requireEnvironment(environmentId: string): Promise<ServiceEnvironment> {
    const environment = await deps.environments.findEnvironmentSummary(environmentId);
    if (environment === undefined) throw notFound(`environment ${environmentId} not found`);
    return environment;
  }

  /** The service a kind's path names: a service of another kind is not found there (a job id under /application). */
  async function requireServiceOfKind(kind: ServiceKind, serviceId: string): Promise<ServiceRow> {
    const row = await findServiceRow(db, serviceId);
    if (row === undefined || row.kind !== kind) throw notFound(`${definitionOf(kind).item} ${serviceId} not found`);
    return row;
  }

  function responseOf(row: ServiceRow): Record<string, unknown> {
    return definitionOf(row.kind).toResponse(storedOf(row));
  }

  function cleanWrite(write: KindWrite): KindWrite {
    const name = cleanName(write.name);
    refuseInvalidName(name);
    return { ...write, name };
  }

  /** What a database's settings say of its server (the DATABASE kind's `database`); undefined for other kinds. */
  function databaseSummaryOf(kind: string, settings: Record<string, unknown>, name: string): DatabaseSummary | undefined {
    return definitions.get(kind as ServiceKind)?.database?.(settings, name);
  }

  function openCredentials(row: ServiceRow): DatabaseCredentials | undefined {
    if (row.credentials_envelope === null) return undefined;
    let plaintext: string;
    try {
      plaintext = secrets.open(row.credentials_envelope, credentialsAssociatedData(row));
    } catch {
      // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the credentials are lost, not exposed.
      throw conflict(`the credentials of database "${row.name}" can no longer be decrypted (the server's secret key changed)`);
    }
    return JSON.parse(plaintext) as DatabaseCredentials;
  }

  function sealCredentials(row: Pick<ServiceRow, 'id' | 'organization_id'>, credentials: DatabaseCredentials): string {
    return secrets.seal(JSON.stringify(credentials), credentialsAssociatedData(row));
  }

  /**
   * Gives a service a value of its own, once: `read` says whether it has one, `claim` tries a candidate (attempt 0,
   * 1, …) and a candidate another service holds is a unique violation, so the next attempt tries another. Claimed
   * right after creation, and again by whoever needs it should a crash have come between.
   */
  async function claimOnce<T>(
    serviceId: string,
    read: (row: ServiceRow) => T | null,
    claim: (attempt: number, current: ServiceRow) => Promise<boolean>,
    attempts: number,
  ): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const current = await findServiceRow(db, serviceId);
      if (current === undefined) throw notFound(`service ${serviceId} not found`);
      const held = read(current);
      if (held !== null) return held;
      try {
        await claim(attempt, current);
      } catch (error) {
        if (!isUniqueViolation(error) || attempt + 1 >= attempts) throw error;
      }
    }
  }

  /** A database's port on a local-driver host: a port free on this host now, unique among services. */
  function claimFreeLocalPort(serviceId: string): Promise<number> {
    return claimOnce(serviceId, (row) => row.local_port, async () => claimLocalPort(db, serviceId, await findFreePort()), 5);
  }

  /** An application's or container's local address (0024_service_local_addresses), unique among services. */
  function claimFreeLocalAddress(serviceId: string): Promise<string> {
    return claimOnce(serviceId, (row) => row.local_address, (attempt) => claimLocalAddress(db, serviceId, localAddressCandidate(serviceId, attempt)), 20);
  }

  /**
   * The label of a service's public hostname (services.hostnames.ts), unique in the installation: a candidate another
   * service holds is a unique violation, and the next attempt hashes differently. The names in it are those at the
   * claim; the label is kept afterwards, renames included.
   */
  function claimFreeHostnameLabel(serviceId: string): Promise<string> {
    return claimOnce(
      serviceId,
      (row) => row.hostname_label,
      async (attempt, current) => {
        const environment = await deps.environments.findEnvironmentSummary(current.environment_id);
        return claimHostnameLabel(db, serviceId, hostnameLabelCandidate(current, environment?.name ?? '', attempt));
      },
      HOSTNAME_LABEL_ATTEMPTS,
    );
  }

  async function runsLocally(clusterId: string): Promise<boolean> {
    return (await deps.localDatabases?.clusterRunsLocally(clusterId)) ?? false;
  }

  function databaseConnectionOf(row: ServiceRow, local: boolean): DatabaseConnection | undefined {
    const database = databaseSummaryOf(row.kind, readJson<Record<string, unknown>>(row.settings), row.name);
    const credentials = database === undefined ? undefined : openCredentials(row);
    if (database === undefined || credentials === undefined) return undefined;
    const shared = local && database.type === 'POSTGRESQL' ? deps.localDatabases?.sharedPostgres : undefined;
    const placeholder = { host: internalHostname({ name: row.name, environmentId: row.environment_id }), port: database.port };
    const address = shared ?? (local && row.local_port !== null ? { host: '127.0.0.1', port: row.local_port } : placeholder);
    return {
      type: database.type,
      version: database.version,
      host: address.host,
      port: address.port,
      username: credentials.username,
      password: credentials.password,
      // Names on a shared server must not collide between services: the service's id goes into them.
      databaseName: shared === undefined ? database.dbName : `${database.dbName}_${row.id.replaceAll('-', '').slice(0, 12)}`,
      local: local && (shared !== undefined || row.local_port !== null),
      shared: shared !== undefined,
    };
  }

  /** What the variables module's built-ins say of one service (hostname, branch, a database's connection). */
  function forVariables(row: ServiceRow, local: boolean): ServiceForVariables {
    const kind = row.kind as ServiceKind;
    const settings = readJson<Record<string, unknown>>(row.settings);
    const references = definitions.get(kind)?.references(settings);
    const service: ServiceForVariables = { id: row.id, kind, name: row.name, branch: references?.branch ?? null };
    if (ADDRESSED_KINDS.has(kind)) {
      // On a local-driver host the agent answers on the service's own loopback address (docs/local-engine.md, "Addresses").
      service.hostname = local && row.local_address !== null ? row.local_address : internalHostname({ name: row.name, environmentId: row.environment_id });
    }
    const connection = databaseConnectionOf(row, local);
    if (connection !== undefined) {
      service.database = {
        type: connection.type,
        version: connection.version,
        host: connection.host,
        fqdn: null,
        port: connection.port,
        username: connection.username,
        password: connection.password,
        dbName: connection.databaseName,
      };
    }
    return service;
  }

  /** Inserts or rewrites a service's settings and references in one transaction; a taken name is a 409. */
  async function writeOrRefuse(name: string, write: (trx: Transaction<DB>) => Promise<void>): Promise<void> {
    try {
      await uniqueOrConflict(() => db.transaction().execute(write), nameTaken(name));
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound('the environment of this service no longer exists');
      throw error;
    }
  }

  /** `toUpdate`: only the deployed ones whose settings or variables changed since (the reference's list parameter). */
  async function listServices(kind: ServiceKind, environmentId: string, options: { toUpdate?: boolean | undefined } = {}) {
    await requireEnvironment(environmentId);
    const rows = await listServicesOfEnvironment(db, environmentId, kind);
    if (options.toUpdate !== true) return rows.map(responseOf);
    const outOfDate = await deps.runtime.outOfDate(rows.map((row) => row.id));
    return rows.filter((row) => outOfDate.has(row.id)).map(responseOf);
  }

  async function createService(kind: ServiceKind, environmentId: string, body: unknown) {
    const definition = definitionOf(kind);
    const environment = await requireEnvironment(environmentId);
    const write = cleanWrite(await definition.fromCreate(body, contextFor(environment.organizationId, environment.id)));
    const now = isoTimestamp(clock);
    const id = newId();
    const row: ServiceRow = {
      id,
      organization_id: environment.organizationId,
      project_id: environment.projectId,
      environment_id: environment.id,
      kind,
      name: write.name,
      name_key: nameKey(write.name),
      description: write.description,
      settings: writeJson(write.settings),
      credentials_envelope: null,
      local_port: null,
      local_address: null,
      hostname_label: null,
      created_at: now,
      updated_at: now,
    };
    const database = databaseSummaryOf(kind, write.settings, write.name);
    if (database !== undefined) row.credentials_envelope = sealCredentials(row, generatedCredentials(database.type));
    await writeOrRefuse(write.name, async (trx) => {
      await insertService(trx, row);
      await replaceServiceReferences(trx, id, referenceRows(id, definition.references(write.settings)));
    });
    row.hostname_label = await claimFreeHostnameLabel(id);
    if (database !== undefined) row.local_port = await claimFreeLocalPort(id);
    if (ADDRESSED_KINDS.has(kind)) row.local_address = await claimFreeLocalAddress(id);
    return responseOf(row);
  }

  async function getService(kind: ServiceKind, serviceId: string) {
    return responseOf(await requireServiceOfKind(kind, serviceId));
  }

  async function editService(kind: ServiceKind, serviceId: string, body: unknown) {
    const definition = definitionOf(kind);
    const current = await requireServiceOfKind(kind, serviceId);
    const write = cleanWrite(await definition.fromEdit(storedOf(current), body, contextFor(current.organization_id, current.environment_id)));
    const changes: Partial<ServiceRow> = {
      name: write.name,
      name_key: nameKey(write.name),
      description: write.description,
      settings: writeJson(write.settings),
      updated_at: isoTimestamp(clock),
    };
    // A database whose type changes needs credentials of the new server's shape (a Redis user is `default`).
    const before = databaseSummaryOf(kind, readJson<Record<string, unknown>>(current.settings), current.name);
    const after = databaseSummaryOf(kind, write.settings, write.name);
    if (after !== undefined && (before?.type !== after.type || current.credentials_envelope === null)) {
      changes.credentials_envelope = sealCredentials(current, generatedCredentials(after.type));
    }
    await writeOrRefuse(write.name, async (trx) => {
      if (!(await updateService(trx, serviceId, changes))) throw notFound(`${definition.item} ${serviceId} not found`);
      await replaceServiceReferences(trx, serviceId, referenceRows(serviceId, definition.references(write.settings)));
    });
    return responseOf({ ...current, ...changes });
  }

  /** Removes the service with its own variables and, by foreign keys, what other modules keep for it. */
  /** `skipReconcile`: the record goes, what runs on the cluster stays (the reference's delete parameter). */
  async function deleteService(kind: ServiceKind, serviceId: string, options: { skipReconcile?: boolean | undefined } = {}): Promise<void> {
    const definition = definitionOf(kind);
    await requireServiceOfKind(kind, serviceId);
    await db.transaction().execute(async (trx) => {
      await deps.runtime.refuseBusy(trx, serviceId, { teardown: options.skipReconcile !== true });
      await deps.variables.deleteServiceVariables(trx, serviceId);
      if (!(await deleteServiceRow(trx, serviceId))) throw notFound(`${definition.item} ${serviceId} not found`);
    });
    await deps.runtime.serviceRemoved(serviceId);
  }

  /**
   * For the environments module's delete, inside its transaction: removes every service of the environment as
   * deleteService does (409 while the agent works on one; a deployed one's teardown queued for the agent), so that
   * no workload outlives its environment. Answers the removed ids for `servicesRemoved` after the commit.
   */
  async function removeEnvironmentServices(trx: Transaction<DB>, environmentId: string, options: { teardown: boolean }): Promise<string[]> {
    const rows = await listServicesOfEnvironment(trx, environmentId);
    for (const row of rows) {
      await deps.runtime.refuseBusy(trx, row.id, options);
      await deps.variables.deleteServiceVariables(trx, row.id);
      await deleteServiceRow(trx, row.id);
    }
    return rows.map((row) => row.id);
  }

  async function itemsReferencing(organizationId: string, kind: ReferenceKind, id: string): Promise<GroupAssociatedItem[]> {
    return (await listServicesReferencing(db, organizationId, kind, id)).map((row) => ({ item_id: row.id, item_name: row.name, item_type: row.kind }));
  }

  return {
    removeEnvironmentServices,
    async servicesRemoved(serviceIds: readonly string[]): Promise<void> {
      for (const serviceId of serviceIds) await deps.runtime.serviceRemoved(serviceId);
    },
    listServices,
    createService,
    getService,
    editService,
    deleteService,

    /** A service of any kind, for the modules built on services (deployments, custom domains, restrictions). */
    async findService(serviceId: string): Promise<StoredService | undefined> {
      const row = await findServiceRow(db, serviceId);
      return row === undefined ? undefined : storedOf(row);
    },

    /** The service a kind's path names, 404 when it names none of that kind. */
    async requireService(kind: ServiceKind, serviceId: string): Promise<StoredService> {
      return storedOf(await requireServiceOfKind(kind, serviceId));
    },

    async listEnvironmentServices(environmentId: string): Promise<StoredService[]> {
      return (await listServicesOfEnvironment(db, environmentId)).map(storedOf);
    },

    /** Where a service addressed without its organization in the path (`/application/{applicationId}/…`) lives. */
    async placementOf(serviceId: string): Promise<Placement | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined) return undefined;
      const environment = await deps.environments.findEnvironmentSummary(row.environment_id);
      if (environment === undefined) return undefined;
      return { organizationId: row.organization_id, projectId: row.project_id, environmentId: row.environment_id, environmentMode: environment.mode };
    },

    /** The variables module's ServiceVariableContext: every service of an environment as the built-ins see it. */
    async servicesForVariables(environmentId: string): Promise<ServiceForVariables[]> {
      const environment = await deps.environments.findEnvironmentSummary(environmentId);
      const local = environment !== undefined && (await runsLocally(environment.clusterId));
      return (await listServicesOfEnvironment(db, environmentId)).map((row) => forVariables(row, local));
    },

    /**
     * Where other services reach an application or a container on its cluster's agent host: its local address, when
     * a local-driver agent runs the cluster; undefined elsewhere (and for other kinds).
     */
    async internalAddressOf(serviceId: string): Promise<string | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined || !ADDRESSED_KINDS.has(row.kind)) return undefined;
      const environment = await deps.environments.findEnvironmentSummary(row.environment_id);
      if (environment === undefined || !(await runsLocally(environment.clusterId))) return undefined;
      return row.local_address ?? (await claimFreeLocalAddress(serviceId));
    },

    /**
     * The service's public hostname, `<label>.<SLIPWAY_APPS_DOMAIN>`, whatever its kind or ports (whether it is routed
     * is the caller's business: only a service with a public port is). Undefined once the service is gone.
     */
    async publicHostnameOf(serviceId: string): Promise<string | undefined> {
      const row = await findServiceRow(db, serviceId);
      if (row === undefined) return undefined;
      try {
        return publicHostname(row.hostname_label ?? (await claimFreeHostnameLabel(serviceId)), deps.appsDomain);
      } catch (error) {
        // Deleted between the read and the claim.
        if (error instanceof AppError && error.kind === 'not_found') return undefined;
        throw error;
      }
    },

    /** A database's connection for its agent (what to run, on which port, with which credentials). */
    async databaseConnection(serviceId: string): Promise<DatabaseConnection | undefined> {
      let row = await findServiceRow(db, serviceId);
      if (row === undefined || row.kind !== 'DATABASE') return undefined;
      const environment = await deps.environments.findEnvironmentSummary(row.environment_id);
      const local = environment !== undefined && (await runsLocally(environment.clusterId));
      if (local && row.local_port === null) row = { ...row, local_port: await claimFreeLocalPort(serviceId) };
      return databaseConnectionOf(row, local);
    },

    /** The git tokens module's usage port (getGitTokenAssociatedServices, and its 409 on deleting a used token). */
    async servicesUsingGitToken(organizationId: string, gitTokenId: string): Promise<GitTokenAssociatedService[]> {
      const rows = await listServicesReferencingWithPlacement(db, organizationId, 'GIT_TOKEN', gitTokenId);
      const out: GitTokenAssociatedService[] = [];
      for (const row of rows) {
        const type = gitServiceType(row.kind as ServiceKind, readJson<Record<string, unknown>>(row.settings));
        if (type === undefined) continue;
        out.push({
          project_id: row.project_id,
          project_name: row.project_name,
          environment_id: row.environment_id,
          environment_name: row.environment_name,
          service_id: row.id,
          service_name: row.name,
          service_type: type,
        });
      }
      return out;
    },

    countsByGitToken: (organizationId: string, ids: string[]) => countServicesReferencing(db, organizationId, 'GIT_TOKEN', ids),
    countsByRegistry: (organizationId: string, ids: string[]) => countServicesReferencing(db, organizationId, 'CONTAINER_REGISTRY', ids),
    countsByRepository: (organizationId: string, ids: string[]) => countServicesReferencing(db, organizationId, 'HELM_REPOSITORY', ids),
    servicesUsingLabelsGroup: (organizationId: string, groupId: string) => itemsReferencing(organizationId, 'LABELS_GROUP', groupId),
    servicesUsingAnnotationsGroup: (organizationId: string, groupId: string) => itemsReferencing(organizationId, 'ANNOTATIONS_GROUP', groupId),
  };
}

export type ServicesService = ReturnType<typeof createServicesService>;

/** The projects module's content port, services side: services per project (getOrganizationProjectStats). */
export function serviceCountsOf(db: Kysely<DB>) {
  return { countsByProject: (projectIds: string[]) => countServicesByProject(db, projectIds) };
}

/**
 * An existence check over another module's get-one operation (for ServiceReferenceLookups): its 404 means "no such
 * thing in this organization", any other failure stays a failure.
 */
export function existsThrough(get: (organizationId: string, id: string) => Promise<unknown>) {
  return async (organizationId: string, id: string): Promise<boolean> => {
    try {
      await get(organizationId, id);
      return true;
    } catch (error) {
      if (error instanceof AppError && error.kind === 'not_found') return false;
      throw error;
    }
  };
}

/** The ids of the list that name nothing, over the same kind of get-one operation. */
export function missingThrough(get: (organizationId: string, id: string) => Promise<unknown>) {
  const exists = existsThrough(get);
  return async (organizationId: string, ids: string[]): Promise<string[]> => {
    const missing: string[] = [];
    for (const id of ids) if (!(await exists(organizationId, id))) missing.push(id);
    return missing;
  };
}
