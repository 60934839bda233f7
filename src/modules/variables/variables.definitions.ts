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
import { listOwnerVariables, listProjectVariables, listVisibleVariables, readVariablesRevision, type VariableRow } from './variables.repo.ts';
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

/** A project's stored definitions by owner (project, environment or service id), as of one revision. */
export interface ProjectDefinitions {
  revision: number;
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
   * A project's rows by owner, kept in memory while the project's revision (bumped by every write, in its
   * transaction) stays the same: a resolution reads one number instead of a thousand rows. The revision is read
   * before the rows, so rows newer than their revision can only cause one extra reload, never a stale answer.
   */
  async function projectDefinitions(projectId: string): Promise<ProjectDefinitions> {
    const revision = await readVariablesRevision(db, projectId);
    const kept = projectCache.get(projectId);
    projectCache.delete(projectId);
    if (kept !== undefined && kept.revision === revision) {
      projectCache.set(projectId, kept);
      return kept;
    }
    const byOwner = new Map<string, Definition[]>();
    for (const row of await listProjectVariables(db, projectId)) {
      const definitions = byOwner.get(row.owner_id) ?? [];
      definitions.push(definitionOfRow(row));
      byOwner.set(row.owner_id, definitions);
    }
    const fresh: ProjectDefinitions = { revision, byOwner, fingerprints: new Map() };
    projectCache.set(projectId, fresh);
    if (projectCache.size > CACHED_PROJECTS) {
      const oldest = projectCache.keys().next().value;
      if (oldest !== undefined) projectCache.delete(oldest);
    }
    return fresh;
  }

  /** What a consumer sees: built-ins, then its project's, environment's and service's rows. Inside a write, read in its transaction. */
  async function visibleDefinitions(
    owner: Owner,
    trx?: Transaction<DB>,
    knownBuiltIns?: BuiltInVariable[],
  ): Promise<{ definitions: Definition[]; project: ProjectDefinitions | undefined }> {
    const builtIns = (knownBuiltIns ?? (await builtInsOf(owner))).map(definitionOfBuiltIn);
    if (trx !== undefined) return { definitions: [...builtIns, ...(await storedDefinitions(trx, owner))], project: undefined };
    const project = await projectDefinitions(owner.projectId);
    const own = (ownerId: string | undefined) => (ownerId === undefined ? [] : (project.byOwner.get(ownerId) ?? []));
    return {
      definitions: [...builtIns, ...own(owner.projectId), ...own(owner.environment?.id), ...own(owner.service?.id)],
      project,
    };
  }

  return { projectOwner, environmentOwner, serviceOwner, consumer, builtInsOf, storedDefinitions, visibleDefinitions };
}
