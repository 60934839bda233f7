import type { Kysely, Transaction } from 'kysely';
import type { GitAccess } from '../../git/git-access.ts';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { DatabaseType } from '../variables/variables.builtins.ts';
import { createServiceAddresses, createServiceClaims } from './services.addresses.ts';
import { createServiceClone, type ServiceCloneCopiers } from './services.clone.ts';
import { createServiceCrud } from './services.crud.ts';
import type { LinkedAnnotationsGroup, LinkedContainerRegistry, LinkedHelmRepository, LinkedLabelsGroup, LinkedRecords, ServiceKindDefinition } from './services.kinds.ts';
import { createServiceRecords } from './services.records.ts';
import { createServiceReferences } from './services.references.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';

export { internalHostname } from './services.addresses.ts';
export { serviceCountsOf } from './services.references.ts';

/**
 * Services (issue 8 part 2, docs/services.md): the seven kinds in one table, created, read, edited and removed
 * through the same generic operations. A kind's definition (services.kinds.ts) turns a request into stored settings
 * and settings into an answer; this module owns the rows, the per-environment name rule, a database's generated
 * credentials, and what other modules ask of services (placement for the authorizer, usage of git tokens,
 * registries, Helm repositories and groups, counts per project, the variables module's view of an environment).
 *
 * The service is assembled from its parts over one deps object: what they all read (services.records.ts), the
 * create/read/edit/remove operations (.crud.ts), what a service is given of its own and where it is reached — a
 * database's credentials and connection, local ports and addresses, public hostname labels (.addresses.ts) — and what
 * services use of other modules' things (.references.ts).
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

/** A database's connection as its built-ins and its agent see it. */
export interface DatabaseConnection {
  type: DatabaseType;
  version: string;
  host: string;
  port: number;
  username: string;
  password: string;
  databaseName: string;
  /** PostgreSQL named for the installation's shared server (SLIPWAY_LOCAL_POSTGRES_URL), should its driver put it there. */
  shared: boolean;
}

/** Whether what a request names exists in the organization (each module answers for its own things). */
export interface ServiceReferenceLookups {
  gitTokenExists(organizationId: string, gitTokenId: string): Promise<boolean>;
  containerRegistryExists(organizationId: string, registryId: string): Promise<boolean>;
  helmRepositoryExists(organizationId: string, repositoryId: string): Promise<boolean>;
  missingLabelsGroups(organizationId: string, ids: string[]): Promise<string[]>;
  missingAnnotationsGroups(organizationId: string, ids: string[]): Promise<string[]>;
  /** The groups and registries of these ids, as a service's answer embeds them; ids that name nothing are left out. */
  linkedRecords(organizationId: string, ids: LinkedRecordIds): Promise<LinkedRecords>;
}

export interface LinkedRecordIds {
  labelsGroupIds: readonly string[];
  annotationsGroupIds: readonly string[];
  containerRegistryIds: readonly string[];
  helmRepositoryIds: readonly string[];
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
  /** What a clone copies of other modules' tables (services.clone.ts): the variables' and the deployment restrictions'. */
  clone: ServiceCloneCopiers;
  /**
   * Whether the installation has a shared PostgreSQL server for databases (SLIPWAY_LOCAL_POSTGRES_URL): PostgreSQL
   * databases are then named uniquely, so that a driver may put them there.
   */
  sharedPostgres?: boolean | undefined;
  /** SLIPWAY_APPS_DOMAIN: the domain of services' public hostnames (services.hostnames.ts). */
  appsDomain: string;
  /** The git URL rules of this installation, as the builds apply them (git/git-urls.ts). */
  gitUrls: Pick<GitAccess, 'checkUrl'>;
  /**
   * Tells open pages that an environment's services changed, one came or went (organization-changes): told as a change
   * of the environment, so a page does not read the gone service again. Absent, pages see it at their next poll.
   */
  stateChanges?: Pick<StateChangePublisher, 'environmentChanged'> | undefined;
}

export function createServicesService(deps: ServicesDeps) {
  const records = createServiceRecords(deps);
  const claims = createServiceClaims(deps);
  const crud = createServiceCrud(deps, records, claims);
  return {
    ...crud,
    ...createServiceClone(deps, records, claims, crud.getService),
    ...createServiceAddresses(deps, records, claims),
    ...createServiceReferences(deps),
  };
}

export type ServicesService = ReturnType<typeof createServicesService>;

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

/** The records of these ids that exist, by id, over the owning module's get-one operation. */
function foundThrough<T>(get: (organizationId: string, id: string) => Promise<T>) {
  return async (organizationId: string, ids: readonly string[]): Promise<Map<string, T>> => {
    const found = new Map<string, T>();
    for (const id of new Set(ids)) {
      try {
        found.set(id, await get(organizationId, id));
      } catch (error) {
        if (!(error instanceof AppError && error.kind === 'not_found')) throw error;
      }
    }
    return found;
  };
}

/** ServiceReferenceLookups.linkedRecords over the get-one operations of the modules that own the records. */
export function linkedRecordsThrough(gets: {
  labelsGroup: (organizationId: string, id: string) => Promise<LinkedLabelsGroup>;
  annotationsGroup: (organizationId: string, id: string) => Promise<LinkedAnnotationsGroup>;
  containerRegistry: (organizationId: string, id: string) => Promise<LinkedContainerRegistry>;
  helmRepository: (organizationId: string, id: string) => Promise<LinkedHelmRepository>;
}) {
  const labelsGroups = foundThrough(gets.labelsGroup);
  const annotationsGroups = foundThrough(gets.annotationsGroup);
  const containerRegistries = foundThrough(async (organizationId: string, id: string) => {
    const { name, url, kind } = await gets.containerRegistry(organizationId, id);
    return { id, name, url, kind };
  });
  const helmRepositories = foundThrough(async (organizationId: string, id: string) => {
    const { name, url } = await gets.helmRepository(organizationId, id);
    return { id, name, url };
  });
  return async (organizationId: string, ids: LinkedRecordIds): Promise<LinkedRecords> => ({
    labelsGroups: await labelsGroups(organizationId, ids.labelsGroupIds),
    annotationsGroups: await annotationsGroups(organizationId, ids.annotationsGroupIds),
    containerRegistries: await containerRegistries(organizationId, ids.containerRegistryIds),
    helmRepositories: await helmRepositories(organizationId, ids.helmRepositoryIds),
  });
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
