import type { Transaction } from 'kysely';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import {
  builtInVariables,
  type BuiltInVariable,
  type EnvironmentForVariables,
  type ServiceForVariables,
  type ServiceKind,
} from './variables.builtins.ts';
import { readListRevision } from '../../db/db.list-revisions.ts';
import { listOwnerVariables, listVariablesOfOwners, listVisibleVariables, type VariableRow } from './variables.repo.ts';
import type { ServiceScope, StoredScope, VariableDefinition } from './variables.resolver.ts';
import type { VariablesDeps } from './variables.service.ts';

/**
 * What a consumer sees (rule 1): the owners a row can be scoped to, and the definitions — stored rows and computed
 * built-ins — visible from one of them. The views, the writes and the snapshot all read through this.
 */

/** Projects whose rows a service instance keeps in memory (least recently used out first). */
const CACHED_PROJECTS = 200;

export type Kind = 'variable' | 'secret';
export type StoredVariableType = 'VALUE' | 'ALIAS' | 'OVERRIDE' | 'FILE';
export type VariableType = StoredVariableType | 'BUILT_IN';

/** Where a row is scoped, and what its consumers see around it. */
export interface Owner {
  scope: StoredScope;
  ownerId: string;
  organizationId: string;
  projectId: string;
  environment: (EnvironmentForVariables & { createdAt?: string }) | undefined;
  service: ServiceForVariables | undefined;
}

/**
 * A project's stored definitions by owner (project, environment or service id), for the owners read so far: each
 * owner's rows exactly as of one revision of the project's variables.
 */
export interface ProjectDefinitions {
  revision: string;
  byOwner: Map<string, Definition[]>;
  /** Content-hash digests of secret values, by envelope (opening a secret costs; its envelope changes with its value). */
  fingerprints: Map<string, string>;
}

/** A definition one consumer sees: a stored row or a built-in. */
export interface Definition extends VariableDefinition {
  row: VariableRow | undefined;
  builtIn: BuiltInVariable | undefined;
  variableType: VariableType;
  mountPath: string | null;
}

const SERVICE_SCOPE_OF: Record<Exclude<ServiceKind, 'DATABASE'>, ServiceScope> = {
  APPLICATION: 'APPLICATION',
  CONTAINER: 'CONTAINER',
  JOB: 'JOB',
  HELM: 'HELM',
  TERRAFORM: 'TERRAFORM',
  AGENTIC_WORKFLOW: 'AGENTIC_WORKFLOW',
};

/** Binds a sealed value to its row: an envelope copied into another row or organization does not open. */
export function associatedData(row: Pick<VariableRow, 'id' | 'organization_id'>): string {
  return `variables:${row.organization_id}:${row.id}`;
}

export function openSecret(secrets: SecretBox, row: VariableRow): string {
  if (row.value_envelope === null) return '';
  try {
    return secrets.open(row.value_envelope, associatedData(row));
  } catch {
    // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the value is lost, not exposed.
    throw badRequest(`secret ${row.key} (${row.id}) can no longer be decrypted (the server's secret key changed); set its value again`);
  }
}

export function definitionOfRow(row: VariableRow): Definition {
  const secret = row.is_secret === 1;
  const aliasOf = row.alias_of ?? undefined;
  return {
    id: row.id,
    key: row.key,
    scope: row.scope as StoredScope,
    secret,
    sensitive: false,
    value: secret || aliasOf !== undefined ? undefined : (row.value ?? ''),
    aliasOf,
    row,
    builtIn: undefined,
    variableType: row.variable_type as StoredVariableType,
    mountPath: row.mount_path,
  };
}

function definitionOfBuiltIn(builtIn: BuiltInVariable): Definition {
  return {
    id: builtIn.id,
    key: builtIn.key,
    scope: 'BUILT_IN',
    secret: false,
    sensitive: builtIn.sensitive,
    value: builtIn.value,
    aliasOf: undefined,
    row: undefined,
    builtIn,
    variableType: 'BUILT_IN',
    mountPath: null,
  };
}

export function kindNoun(kind: Kind): string {
  return kind === 'secret' ? 'secret' : 'environment variable';
}

export type VariableDefinitions = ReturnType<typeof createVariableDefinitions>;

export function createVariableDefinitions(deps: Pick<VariablesDeps, 'db' | 'environments' | 'services'>) {
  const { db } = deps;
  const projectCache = new Map<string, ProjectDefinitions>();

  // ---- owners -------------------------------------------------------------------------------------------------

  function projectOwner(organizationId: string, projectId: string): Owner {
    return { scope: 'PROJECT', ownerId: projectId, organizationId, projectId, environment: undefined, service: undefined };
  }

  async function requireEnvironment(environmentId: string) {
    const environment = await deps.environments.findEnvironmentSummary(environmentId);
    if (environment === undefined) throw notFound(`environment ${environmentId} not found`);
    return environment;
  }

  async function environmentOwner(environmentId: string): Promise<Owner> {
    const environment = await requireEnvironment(environmentId);
    return {
      scope: 'ENVIRONMENT',
      ownerId: environment.id,
      organizationId: environment.organizationId,
      projectId: environment.projectId,
      environment,
      service: undefined,
    };
  }

  /** A service's own scope (APPLICATION, CONTAINER, …), for the service endpoints that land with services. */
  async function serviceOwner(environmentId: string, serviceId: string): Promise<Owner> {
    const environment = await requireEnvironment(environmentId);
    const service = (await deps.services.services(environmentId)).find((candidate) => candidate.id === serviceId);
    if (service === undefined) throw notFound(`service ${serviceId} not found in environment ${environmentId}`);
    if (service.kind === 'DATABASE') throw badRequest(`database ${service.name} has no variables of its own; it provides built-ins to the environment`);
    return {
      scope: SERVICE_SCOPE_OF[service.kind],
      ownerId: service.id,
      organizationId: environment.organizationId,
      projectId: environment.projectId,
      environment,
      service,
    };
  }

  /** The consumer whose final variables are resolved: an environment, or one of its services. */
  async function consumer(environmentId: string, serviceId: string | undefined): Promise<Owner> {
    return serviceId === undefined ? environmentOwner(environmentId) : serviceOwner(environmentId, serviceId);
  }

  // ---- what a consumer sees -----------------------------------------------------------------------------------

  async function builtInsOf(owner: Owner): Promise<BuiltInVariable[]> {
    if (owner.environment === undefined) return [];
    return builtInVariables(owner.environment, await deps.services.services(owner.environment.id), owner.service);
  }

  async function storedDefinitions(queryable: Queryable, owner: Owner): Promise<Definition[]> {
    const rows =
      owner.environment === undefined
        ? await listOwnerVariables(queryable, owner.projectId)
        : await listVisibleVariables(queryable, owner.projectId, owner.environment.id, owner.service?.id);
    return rows.map(definitionOfRow);
  }

  /**
   * The rows of a consumer's owners (its project, environment, service), kept per owner in memory while the project's
   * variables revision (moved by the database in every transaction that writes one of its variables, whoever writes
   * it: migrations/0060_list_revisions.ts) stays the same: a resolution reads one number instead of thousands of rows.
   * After a write only the owners a consumer needs are read again, not the whole project (bench:data's project holds
   * 47,000 rows: 200 ms to read, against the 2,500 one service sees).
   *
   * Everything kept under a revision is exactly that revision's rows, so owners kept at different times combine into
   * one consistent view: owners missing are read in one statement and kept only when the revision read after them is
   * still the one read before (nothing was written in between). Otherwise every owner the consumer needs is read again
   * in one statement, consistent by itself, and nothing is kept.
   */
  async function ownersDefinitions(projectId: string, ownerIds: readonly string[]): Promise<{ byOwner: ReadonlyMap<string, Definition[]>; project: ProjectDefinitions }> {
    const revision = await readListRevision(db, projectId, 'variables');
    let project = projectCache.get(projectId);
    projectCache.delete(projectId);
    if (project === undefined || project.revision !== revision) project = { revision, byOwner: new Map(), fingerprints: new Map() };
    projectCache.set(projectId, project);
    if (projectCache.size > CACHED_PROJECTS) {
      const oldest = projectCache.keys().next().value;
      if (oldest !== undefined) projectCache.delete(oldest);
    }
    const missing = ownerIds.filter((ownerId) => !project.byOwner.has(ownerId));
    if (missing.length === 0) return { byOwner: project.byOwner, project };
    const read = await readOwners(missing);
    if ((await readListRevision(db, projectId, 'variables')) !== revision) return { byOwner: await readOwners(ownerIds), project };
    for (const [ownerId, definitions] of read) project.byOwner.set(ownerId, definitions);
    return { byOwner: project.byOwner, project };
  }

  async function readOwners(ownerIds: readonly string[]): Promise<Map<string, Definition[]>> {
    const byOwner = new Map<string, Definition[]>(ownerIds.map((ownerId) => [ownerId, []]));
    for (const row of await listVariablesOfOwners(db, ownerIds)) byOwner.get(row.owner_id)?.push(definitionOfRow(row));
    return byOwner;
  }

  /** What a consumer sees: built-ins, then its project's, environment's and service's rows. Inside a write, read in its transaction. */
  async function visibleDefinitions(
    owner: Owner,
    trx?: Transaction<DB>,
    knownBuiltIns?: BuiltInVariable[],
  ): Promise<{ definitions: Definition[]; project: ProjectDefinitions | undefined }> {
    const builtIns = (knownBuiltIns ?? (await builtInsOf(owner))).map(definitionOfBuiltIn);
    if (trx !== undefined) return { definitions: [...builtIns, ...(await storedDefinitions(trx, owner))], project: undefined };
    const ownerIds = [owner.projectId, ...(owner.environment === undefined ? [] : [owner.environment.id]), ...(owner.service === undefined ? [] : [owner.service.id])];
    const { byOwner, project } = await ownersDefinitions(owner.projectId, ownerIds);
    const own = (ownerId: string | undefined) => (ownerId === undefined ? [] : (byOwner.get(ownerId) ?? []));
    return {
      definitions: [...builtIns, ...own(owner.projectId), ...own(owner.environment?.id), ...own(owner.service?.id)],
      project,
    };
  }

  return { projectOwner, environmentOwner, serviceOwner, consumer, builtInsOf, storedDefinitions, visibleDefinitions };
}
