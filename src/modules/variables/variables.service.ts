import { createHash, createHmac } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DialectName } from '../../db/db.client.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { deriveKey } from '../../lib/crypto.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import {
  builtInVariables,
  isBuiltInShapedName,
  RESERVED_PREFIX,
  type BuiltInVariable,
  type EnvironmentForVariables,
  type ServiceForVariables,
  type ServiceKind,
} from './variables.builtins.ts';
import {
  countOwnerVariables,
  deleteServiceVariables,
  deleteVariable,
  findVariable,
  findVariableByKey,
  bumpVariablesRevision,
  insertVariables,
  listOwnerVariables,
  listProjectVariables,
  listVisibleVariables,
  lockProjectVariables,
  readVariablesRevision,
  updateVariable,
  type VariableRow,
} from './variables.repo.ts';
import {
  aliasTargetOf,
  findAliasCycle,
  resolveVariables,
  scopeRank,
  type ResolvedVariable,
  type ServiceScope,
  type StoredScope,
  type VariableDefinition,
  type VariableScope,
} from './variables.resolver.ts';
import type { AliasBody, OverrideBody, SecretEditBody, VariableRequestBody } from './variables.schemas.ts';

/**
 * Variables and secrets (SPEC.md "Environment variable scopes and behaviour", rules 1–6; DESIGN.md §6).
 *
 *   - Rows live at PROJECT, ENVIRONMENT or a service scope; built-ins are computed, never stored.
 *   - A name is one row per scope: creating it again replaces the earlier row (rule 3), unless one is a secret and
 *     the other is not (409: a secret is never silently turned into plain text, nor the reverse).
 *   - Every write runs in one transaction that, before committing, refuses an alias cycle in any environment or
 *     service the written scope reaches (400 naming the cycle), so nothing half-written or cyclic is ever stored.
 *   - Secrets are sealed with the secret box, bound to their row; no answer, log or error carries their value.
 */

export const MAX_VARIABLES_PER_SCOPE = 1000;

/** Projects whose rows a service instance keeps in memory (least recently used out first). */
const CACHED_PROJECTS = 200;
/** Sealed hidden built-in values kept for reuse in snapshots (oldest out first). */
const CACHED_SEALED_BUILT_INS = 10_000;

/** The services of an environment, as the services module will report them; until it exists, there are none. */
export interface ServiceVariableContext {
  services(environmentId: string): Promise<ServiceForVariables[]>;
}

export const NO_SERVICES: ServiceVariableContext = { services: async () => [] };

/**
 * Told, inside the writing transaction, that what a scope's consumers resolve may have changed, so the owner of
 * deployments can mark running services OUT_OF_DATE (rule 4). environmentId is null for a PROJECT-scope change.
 */
export interface VariableChangeListener {
  variablesChanged(trx: Transaction<DB>, change: { projectId: string; environmentId: string | null }): Promise<void>;
}

export const NO_CHANGE_LISTENER: VariableChangeListener = { variablesChanged: async () => undefined };

export interface VariablesDeps {
  db: Kysely<DB>;
  dialect: DialectName;
  clock: Clock;
  secrets: SecretBox;
  /** Keys the content hash's fingerprints of secret values (variablesFingerprintKey). */
  fingerprintKey: Buffer;
  environments: { findEnvironmentSummary(environmentId: string): Promise<(EnvironmentForVariables & { createdAt?: string }) | undefined> };
  services: ServiceVariableContext;
  changes: VariableChangeListener;
}

/** A key of its own for the content hash, derived from the secret key, so fingerprints say nothing without it. */
export function variablesFingerprintKey(secretKey: Buffer): Buffer {
  return deriveKey(secretKey, 'slipway/variables-fingerprints/v1');
}

type Kind = 'variable' | 'secret';
type StoredVariableType = 'VALUE' | 'ALIAS' | 'OVERRIDE' | 'FILE';
type VariableType = StoredVariableType | 'BUILT_IN';

/** Where a row is scoped, and what its consumers see around it. */
interface Owner {
  scope: StoredScope;
  ownerId: string;
  organizationId: string;
  projectId: string;
  environment: (EnvironmentForVariables & { createdAt?: string }) | undefined;
  service: ServiceForVariables | undefined;
}

/** A project's stored definitions by owner (project, environment or service id), as of one revision. */
interface ProjectDefinitions {
  revision: number;
  byOwner: Map<string, Definition[]>;
  /** Content-hash digests of secret values, by envelope (opening a secret costs; its envelope changes with its value). */
  fingerprints: Map<string, string>;
}

/** A definition one consumer sees: a stored row or a built-in. */
interface Definition extends VariableDefinition {
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
function associatedData(row: Pick<VariableRow, 'id' | 'organization_id'>): string {
  return `variables:${row.organization_id}:${row.id}`;
}

function definitionOfRow(row: VariableRow): Definition {
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

function booleanOf(value: number | null): boolean | null {
  return value === null ? null : value === 1;
}

function flagOf(value: boolean | null | undefined): number | null {
  return value === undefined || value === null ? null : value ? 1 : 0;
}

/** VALUE, ALIAS, OVERRIDE or FILE for a stored row: an override stays one; otherwise its value and mount decide. */
function variableTypeOf(input: { override: boolean; aliasOf: string | undefined; mountPath: string | null }): StoredVariableType {
  if (input.override) return 'OVERRIDE';
  if (input.aliasOf !== undefined) return 'ALIAS';
  return input.mountPath === null ? 'VALUE' : 'FILE';
}

function kindNoun(kind: Kind): string {
  return kind === 'secret' ? 'secret' : 'environment variable';
}

function refuseReservedKey(key: string): void {
  if (key.toUpperCase().startsWith(RESERVED_PREFIX)) {
    throw badRequest(`variable names starting with ${RESERVED_PREFIX} are reserved for built-in variables; override a built-in with its override operation`, [
      { field: '/key', message: `must not start with ${RESERVED_PREFIX}` },
    ]);
  }
}

function refuseDotDotMount(mountPath: string | null | undefined): void {
  if (mountPath !== undefined && mountPath !== null && mountPath.split('/').some((segment) => segment === '..' || segment === '.')) {
    throw badRequest('mount_path must be an absolute path without "." or ".." segments', [{ field: '/mount_path', message: 'not a normalised absolute path' }]);
  }
}

export interface SnapshotVariable {
  key: string;
  scope: VariableScope;
  variable_id: string;
  mount_path: string | null;
  /** The names followed through aliases, from the variable itself to the one that holds the value. */
  alias_chain: string[];
  /** The plain value, or, for a secret or a hidden built-in, its sealed form (open with openSnapshotValue). */
  value?: string;
  sealed?: { envelope: string; associated_data: string };
}

export interface VariableSnapshot {
  environment_id: string;
  service_id: string | null;
  /** Changes exactly when a name, a mount or a resolved value changes; compare it to tell OUT_OF_DATE (rule 4). */
  content_hash: string;
  variables: SnapshotVariable[];
}

export function createVariablesService(deps: VariablesDeps) {
  const { db, clock, secrets } = deps;
  const projectCache = new Map<string, ProjectDefinitions>();
  const sealedBuiltInCache = new Map<string, { envelope: string; associated_data: string }>();

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

  // ---- views --------------------------------------------------------------------------------------------------

  /** The definition of `key` a consumer sees below `rank` (what an override overrides), or undefined. */
  function broaderDefinition(definitions: readonly Definition[], key: string, rank: number): Definition | undefined {
    let best: Definition | undefined;
    for (const definition of definitions) {
      if (definition.key !== key || scopeRank(definition.scope) >= rank) continue;
      if (best === undefined || scopeRank(definition.scope) > scopeRank(best.scope)) best = definition;
    }
    return best;
  }

  function finalDefinition(definitions: readonly Definition[], key: string): Definition | undefined {
    return broaderDefinition(definitions, key, Number.POSITIVE_INFINITY);
  }

  function linkedVariable(definition: Definition, reveal: boolean) {
    const shown = !definition.secret && (!definition.sensitive || reveal);
    return {
      id: definition.id,
      key: definition.key,
      ...(shown ? { value: definition.row?.value ?? definition.value ?? '' } : {}),
      mount_path: definition.mountPath,
      scope: definition.scope,
      variable_type: definition.variableType,
    };
  }

  function linkedSecret(definition: Definition) {
    return {
      id: definition.id,
      key: definition.key,
      mount_path: definition.mountPath,
      scope: definition.scope,
      variable_type: definition.variableType,
      description: definition.row?.description ?? null,
      enable_interpolation_in_file: booleanOf(definition.row?.enable_interpolation_in_file ?? null),
    };
  }

  function serviceFields(owner: Owner, row: VariableRow | undefined, builtIn: BuiltInVariable | undefined) {
    const service = builtIn?.service ?? (row?.service_id !== null && row?.service_id !== undefined && owner.service?.id === row.service_id ? owner.service : undefined);
    if (service === undefined) return {};
    return { service_id: service.id, service_name: service.name, service_type: service.kind };
  }

  function links(definition: Definition, context: readonly Definition[]) {
    const overridden = definition.variableType === 'OVERRIDE' ? broaderDefinition(context, definition.key, scopeRank(definition.scope)) : undefined;
    const aliased = definition.aliasOf === undefined ? undefined : finalDefinition(context, definition.aliasOf);
    return { overridden, aliased };
  }

  function variableView(owner: Owner, definition: Definition, context: readonly Definition[], reveal: boolean) {
    const { overridden, aliased } = links(definition, context);
    const row = definition.row;
    const hidden = definition.sensitive && !reveal;
    return {
      id: definition.id,
      created_at: row?.created_at ?? owner.environment?.createdAt ?? isoTimestamp(clock),
      ...(row === undefined ? {} : { updated_at: row.updated_at }),
      key: definition.key,
      ...(hidden ? {} : { value: row?.value ?? definition.value ?? '' }),
      mount_path: definition.mountPath,
      description: row?.description ?? null,
      enable_interpolation_in_file: booleanOf(row?.enable_interpolation_in_file ?? null),
      ...(overridden === undefined ? {} : { overridden_variable: linkedVariable(overridden, reveal) }),
      ...(aliased === undefined ? {} : { aliased_variable: linkedVariable(aliased, reveal) }),
      scope: definition.scope,
      variable_type: definition.variableType,
      ...serviceFields(owner, row, definition.builtIn),
    };
  }

  function secretView(owner: Owner, definition: Definition, context: readonly Definition[]) {
    const { overridden, aliased } = links(definition, context);
    const row = definition.row as VariableRow;
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      key: row.key,
      mount_path: row.mount_path,
      ...(overridden?.secret === true ? { overridden_secret: linkedSecret(overridden) } : {}),
      ...(aliased?.secret === true ? { aliased_secret: linkedSecret(aliased) } : {}),
      scope: definition.scope,
      variable_type: definition.variableType,
      ...serviceFields(owner, row, undefined),
      description: row.description,
      enable_interpolation_in_file: booleanOf(row.enable_interpolation_in_file),
    };
  }

  /** The answer of a write, read inside its transaction: a concurrent replacement after commit cannot make it a 404. */
  /**
   * The answer of a write, read in its transaction. The built-ins come from the services port, which reads through
   * its own connection: they are computed before the transaction (on SQLite it holds the one connection).
   */
  async function viewOf(trx: Transaction<DB>, owner: Owner, kind: Kind, rowId: string, builtIns: BuiltInVariable[]) {
    const context = (await visibleDefinitions(owner, trx, builtIns)).definitions;
    const definition = context.find((candidate) => candidate.id === rowId);
    if (definition === undefined) throw notFound(`${kindNoun(kind)} ${rowId} not found`);
    return kind === 'secret' ? secretView(owner, definition, context) : variableView(owner, definition, context, false);
  }

  // ---- listings (rule 1: a consumer sees its project's, its environment's and its own rows) ---------------------

  /** By name, then from the broadest scope to the narrowest. */
  function listingOrder(a: Definition, b: Definition): number {
    if (a.key !== b.key) return a.key < b.key ? -1 : 1;
    return scopeRank(a.scope) - scopeRank(b.scope);
  }

  async function listVariables(owner: Owner, reveal: boolean) {
    const context = (await visibleDefinitions(owner)).definitions;
    return context
      .filter((definition) => !definition.secret)
      .sort(listingOrder)
      .map((definition) => variableView(owner, definition, context, reveal));
  }

  async function listSecrets(owner: Owner) {
    const context = (await visibleDefinitions(owner)).definitions;
    return context
      .filter((definition) => definition.secret)
      .sort(listingOrder)
      .map((definition) => secretView(owner, definition, context));
  }

  // ---- writes -------------------------------------------------------------------------------------------------

  /**
   * Every consumer a write at `owner` reaches, as the stored definitions it sees, from one read of the project's rows:
   * built-ins never alias, so only stored rows can close a cycle, and an environment or service without rows of its
   * own sees exactly what the project alone sees.
   */
  function consumersReached(rows: VariableRow[], owner: Owner): Definition[][] {
    const project: Definition[] = [];
    const byEnvironment = new Map<string, Definition[]>();
    const byService = new Map<string, { environmentId: string; definitions: Definition[] }>();
    for (const row of rows) {
      const definition = definitionOfRow(row);
      if (row.scope === 'PROJECT') project.push(definition);
      else if (row.scope === 'ENVIRONMENT') byEnvironment.set(row.owner_id, [...(byEnvironment.get(row.owner_id) ?? []), definition]);
      else {
        const entry = byService.get(row.owner_id) ?? { environmentId: row.environment_id ?? '', definitions: [] };
        entry.definitions.push(definition);
        byService.set(row.owner_id, entry);
      }
    }
    const reachesEnvironment = (environmentId: string) =>
      owner.scope === 'PROJECT' || (owner.scope === 'ENVIRONMENT' && owner.ownerId === environmentId);
    const consumers: Definition[][] = [];
    if (owner.scope === 'PROJECT') consumers.push(project);
    for (const [environmentId, definitions] of byEnvironment) {
      if (reachesEnvironment(environmentId)) consumers.push([...project, ...definitions]);
    }
    for (const [serviceId, entry] of byService) {
      if (reachesEnvironment(entry.environmentId) || owner.ownerId === serviceId) {
        consumers.push([...project, ...(byEnvironment.get(entry.environmentId) ?? []), ...entry.definitions]);
      }
    }
    return consumers;
  }

  async function refuseCycles(trx: Transaction<DB>, owner: Owner): Promise<void> {
    const rows = await listProjectVariables(trx, owner.projectId);
    for (const consumer of consumersReached(rows, owner)) {
      const cycle = findAliasCycle(consumer);
      if (cycle !== undefined) {
        throw badRequest(`alias cycle: ${cycle.join(' → ')}; an alias must end at a variable that holds a value`, [
          { field: '/value', message: `cycle ${cycle.join(' → ')}` },
        ]);
      }
    }
  }

  /**
   * An alias must name something its consumers can see (built-ins at PROJECT scope: any name of SPEC.md's table). Its
   * own name is left to the cycle check, which names the cycle.
   */
  async function refuseUnknownAliasTarget(trx: Transaction<DB>, owner: Owner, ownKey: string, target: string, builtIns: BuiltInVariable[]): Promise<void> {
    if (target === ownKey) return;
    if (owner.environment === undefined ? isBuiltInShapedName(target) : builtIns.some((builtIn) => builtIn.key === target)) return;
    const stored = await storedDefinitions(trx, owner);
    if (stored.some((definition) => definition.key === target)) return;
    throw badRequest(`$${target} names no variable visible at the ${owner.scope} scope`, [{ field: '/value', message: `unknown variable ${target}` }]);
  }

  /** One transaction per write: serialised per project, checked for cycles, then the change is announced. */
  async function write<T>(owner: Owner, conflictMessage: string, mutate: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return uniqueOrConflict(
      () =>
        db.transaction().execute(async (trx) => {
          await lockProjectVariables(trx, deps.dialect, owner.projectId);
          const result = await mutate(trx);
          await refuseCycles(trx, owner);
          await bumpVariablesRevision(trx, owner.projectId);
          await deps.changes.variablesChanged(trx, { projectId: owner.projectId, environmentId: owner.environment?.id ?? null });
          return result;
        }),
      conflictMessage,
    );
  }

  interface NewRow {
    key: string;
    kind: Kind;
    /** The plain value or the secret's plaintext (sealed here); undefined for a secret alias. */
    value: string | undefined;
    aliasOf: string | undefined;
    override: boolean;
    mountPath: string | null;
    description: string | null;
    enableInterpolationInFile: number | null;
  }

  function rowFor(owner: Owner, input: NewRow): VariableRow {
    const now = isoTimestamp(clock);
    const id = newId();
    const secret = input.kind === 'secret';
    return {
      id,
      organization_id: owner.organizationId,
      project_id: owner.projectId,
      environment_id: owner.environment?.id ?? null,
      service_id: owner.service?.id ?? null,
      owner_id: owner.ownerId,
      scope: owner.scope,
      key: input.key,
      is_secret: secret ? 1 : 0,
      variable_type: variableTypeOf(input),
      value: secret ? null : (input.value ?? ''),
      value_envelope: secret && input.value !== undefined ? secrets.seal(input.value, associatedData({ id, organization_id: owner.organizationId })) : null,
      alias_of: input.aliasOf ?? null,
      mount_path: input.mountPath,
      description: input.description,
      enable_interpolation_in_file: input.enableInterpolationInFile,
      created_at: now,
      updated_at: now,
    };
  }

  /** Inserts a row, replacing the row of the same name in the same scope (rule 3); a secret and a plain variable never replace each other. */
  async function insertReplacing(trx: Transaction<DB>, owner: Owner, row: VariableRow, kind: Kind): Promise<void> {
    const existing = await findVariableByKey(trx, owner.ownerId, row.key);
    if (existing !== undefined) {
      if ((existing.is_secret === 1) !== (kind === 'secret')) {
        const held = existing.is_secret === 1 ? 'a secret' : 'a plain variable';
        throw conflict(`${row.key} is already ${held} at this ${owner.scope} scope; delete it before creating a ${kindNoun(kind)} of that name`);
      }
      await deleteVariable(trx, existing.id);
    } else if ((await countOwnerVariables(trx, owner.ownerId)) >= MAX_VARIABLES_PER_SCOPE) {
      throw badRequest(`this ${owner.scope} scope already holds ${MAX_VARIABLES_PER_SCOPE} variables and secrets, the most one scope may hold`);
    }
    await insertVariables(trx, [row]);
  }

  function takenMessage(key: string): string {
    return `${key} was created at the same time by another request; retry`;
  }

  async function create(owner: Owner, kind: Kind, body: VariableRequestBody) {
    refuseReservedKey(body.key);
    refuseDotDotMount(body.mount_path);
    const value = body.value ?? '';
    // Rule 2 concerns variable values; a secret's value is opaque (a password may well start with "$").
    const aliasOf = kind === 'variable' ? aliasTargetOf(value) : undefined;
    const builtIns = await builtInsOf(owner);
    const row = rowFor(owner, {
      key: body.key,
      kind,
      value,
      aliasOf,
      override: false,
      mountPath: body.mount_path ?? null,
      description: body.description ?? null,
      enableInterpolationInFile: flagOf(body.enable_interpolation_in_file),
    });
    return write(owner, takenMessage(body.key), async (trx) => {
      if (aliasOf !== undefined) await refuseUnknownAliasTarget(trx, owner, row.key, aliasOf, builtIns);
      await insertReplacing(trx, owner, row, kind);
      return viewOf(trx, owner, kind, row.id, builtIns);
    });
  }

  async function requireOwnRow(queryable: Queryable, owner: Owner, kind: Kind, id: string): Promise<VariableRow> {
    const row = await findVariable(queryable, id);
    if (row === undefined || row.owner_id !== owner.ownerId || (row.is_secret === 1) !== (kind === 'secret')) {
      throw notFound(`${kindNoun(kind)} ${id} not found at this ${owner.scope} scope`);
    }
    return row;
  }

  async function edit(owner: Owner, kind: Kind, id: string, body: VariableRequestBody | SecretEditBody) {
    const mountPathInput = 'mount_path' in body ? body.mount_path : undefined;
    refuseDotDotMount(mountPathInput);
    const builtIns = await builtInsOf(owner);
    return write(owner, `${body.key} already exists at this scope`, async (trx) => {
      const row = await requireOwnRow(trx, owner, kind, id);
      if (body.key !== row.key) {
        if (row.variable_type === 'OVERRIDE') {
          throw badRequest(`an override keeps the name of what it overrides (${row.key}); delete it and create a variable instead`, [
            { field: '/key', message: 'cannot rename an override' },
          ]);
        }
        refuseReservedKey(body.key);
        if ((await findVariableByKey(trx, owner.ownerId, body.key)) !== undefined) throw conflict(`${body.key} already exists at this ${owner.scope} scope`);
      }
      const mountPath = mountPathInput === undefined ? row.mount_path : mountPathInput;
      let value = row.value;
      let envelope = row.value_envelope;
      let aliasOf = row.alias_of ?? undefined;
      if (body.value !== undefined) {
        if (kind === 'secret') {
          envelope = secrets.seal(body.value, associatedData(row));
          aliasOf = undefined;
        } else {
          value = body.value;
          aliasOf = aliasTargetOf(body.value);
        }
      }
      if (aliasOf !== undefined && aliasOf !== row.alias_of) await refuseUnknownAliasTarget(trx, owner, body.key, aliasOf, builtIns);
      await updateVariable(trx, row.id, {
        key: body.key,
        value,
        value_envelope: envelope,
        alias_of: aliasOf ?? null,
        variable_type: variableTypeOf({ override: row.variable_type === 'OVERRIDE', aliasOf, mountPath }),
        mount_path: mountPath,
        description: body.description === undefined ? row.description : body.description,
        enable_interpolation_in_file:
          body.enable_interpolation_in_file === undefined ? row.enable_interpolation_in_file : flagOf(body.enable_interpolation_in_file),
        updated_at: isoTimestamp(clock),
      });
      return viewOf(trx, owner, kind, id, builtIns);
    });
  }

  async function remove(owner: Owner, kind: Kind, id: string): Promise<void> {
    await write(owner, 'concurrent change', async (trx) => {
      const row = await requireOwnRow(trx, owner, kind, id);
      await deleteVariable(trx, row.id);
    });
  }

  /** A variable (or built-in) the owner's consumers see, of the endpoint's kind: what an override or alias names. */
  async function requireVisibleParent(owner: Owner, kind: Kind, id: string): Promise<Definition> {
    const parent = (await visibleDefinitions(owner)).definitions.find((definition) => definition.id === id);
    if (parent === undefined || parent.secret !== (kind === 'secret')) throw notFound(`${kindNoun(kind)} ${id} not found at this ${owner.scope} scope`);
    return parent;
  }

  async function override(owner: Owner, kind: Kind, parentId: string, body: OverrideBody) {
    const parent = await requireVisibleParent(owner, kind, parentId);
    if (scopeRank(parent.scope) >= scopeRank(owner.scope)) {
      throw badRequest(
        `${parent.key} is defined at the ${parent.scope} scope; an override sets a narrower scope's value (APPLICATION > ENVIRONMENT > PROJECT > BUILT_IN), so edit it instead`,
      );
    }
    const value = body.value ?? '';
    const aliasOf = kind === 'variable' ? aliasTargetOf(value) : undefined;
    const builtIns = await builtInsOf(owner);
    const row = rowFor(owner, {
      key: parent.key,
      kind,
      value,
      aliasOf,
      override: true,
      mountPath: parent.mountPath,
      description: body.description ?? null,
      enableInterpolationInFile: flagOf(body.enable_interpolation_in_file),
    });
    return write(owner, takenMessage(parent.key), async (trx) => {
      if (aliasOf !== undefined) await refuseUnknownAliasTarget(trx, owner, row.key, aliasOf, builtIns);
      await insertReplacing(trx, owner, row, kind);
      return viewOf(trx, owner, kind, row.id, builtIns);
    });
  }

  async function alias(owner: Owner, kind: Kind, parentId: string, body: AliasBody) {
    refuseReservedKey(body.key);
    const parent = await requireVisibleParent(owner, kind, parentId);
    const builtIns = await builtInsOf(owner);
    const row = rowFor(owner, {
      key: body.key,
      kind,
      value: kind === 'secret' ? undefined : `$${parent.key}`,
      aliasOf: parent.key,
      override: false,
      mountPath: null,
      description: body.description ?? null,
      enableInterpolationInFile: flagOf(body.enable_interpolation_in_file),
    });
    return write(owner, takenMessage(body.key), async (trx) => {
      await insertReplacing(trx, owner, row, kind);
      return viewOf(trx, owner, kind, row.id, builtIns);
    });
  }

  // ---- resolution ---------------------------------------------------------------------------------------------

  function openSecret(row: VariableRow): string {
    if (row.value_envelope === null) return '';
    try {
      return secrets.open(row.value_envelope, associatedData(row));
    } catch {
      // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the value is lost, not exposed.
      throw badRequest(`secret ${row.key} (${row.id}) can no longer be decrypted (the server's secret key changed); set its value again`);
    }
  }

  function fingerprint(value: string): string {
    return createHmac('sha256', deps.fingerprintKey).update(value, 'utf8').digest('base64url');
  }

  /**
   * What the content hash takes of a variable's value: the value itself when it may be shown, else a keyed
   * fingerprint, so the hash says nothing about secrets. A stored secret is opened once per project revision.
   */
  function valueDigest(variable: ResolvedVariable<Definition>, project: ProjectDefinitions | undefined, memo: Map<string, string>): string {
    const holder = variable.chain[variable.chain.length - 1] as Definition;
    if (variable.unresolved !== undefined) return 'unresolved';
    if (!variable.hidden) return `v:${holder.value ?? ''}`;
    const known = memo.get(holder.id);
    if (known !== undefined) return known;
    let digest: string;
    if (holder.secret && holder.row !== undefined) {
      const envelope = holder.row.value_envelope ?? '';
      digest = project?.fingerprints.get(envelope) ?? `h:${fingerprint(openSecret(holder.row))}`;
      project?.fingerprints.set(envelope, digest);
    } else {
      digest = `h:${fingerprint(holder.value ?? '')}`;
    }
    memo.set(holder.id, digest);
    return digest;
  }

  /** SHA-256 over name, mount, dangling alias and value digest of every final variable (NUL cannot occur in any of them). */
  function contentHash(resolved: ResolvedVariable<Definition>[], project: ProjectDefinitions | undefined): string {
    const memo = new Map<string, string>();
    const lines = resolved.map(
      (variable) => `${variable.key}\0${variable.definition.mountPath ?? ''}\0${variable.unresolved ?? ''}\0${valueDigest(variable, project, memo)}`,
    );
    return createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
  }

  async function consumer(environmentId: string, serviceId: string | undefined): Promise<Owner> {
    return serviceId === undefined ? environmentOwner(environmentId) : serviceOwner(environmentId, serviceId);
  }

  function link(definition: Definition) {
    return { id: definition.id, key: definition.key, scope: definition.scope, variable_type: definition.variableType, is_secret: definition.secret };
  }

  /**
   * Every final variable of an environment (or of one of its services), with the scope that set it, the alias chain
   * that produced its value and what it overrides. Secret values never appear; hidden built-ins only with `reveal`.
   */
  async function explain(environmentId: string, serviceId: string | undefined, reveal: boolean) {
    const owner = await consumer(environmentId, serviceId);
    const { definitions: context, project } = await visibleDefinitions(owner);
    const resolved = resolveVariables(context);
    const byKey = new Map<string, Definition[]>();
    for (const definition of context) byKey.set(definition.key, [...(byKey.get(definition.key) ?? []), definition]);
    const results = resolved.map((variable) => {
      const hidden = variable.chain.some((definition) => definition.secret) || (variable.hidden && !reveal);
      const holder = variable.chain[variable.chain.length - 1] as Definition;
      const rank = scopeRank(variable.definition.scope);
      const overrides = (byKey.get(variable.key) ?? [])
        .filter((definition) => scopeRank(definition.scope) < rank)
        .sort((a, b) => scopeRank(b.scope) - scopeRank(a.scope));
      return {
        key: variable.key,
        ...(hidden || variable.unresolved !== undefined ? {} : { value: holder.value ?? '' }),
        hidden,
        scope: variable.definition.scope,
        variable_id: variable.definition.id,
        variable_type: variable.definition.variableType,
        is_secret: variable.definition.secret,
        mount_path: variable.definition.mountPath,
        alias_chain: variable.chain.map(link),
        unresolved_alias: variable.unresolved ?? null,
        overrides: overrides.map(link),
      };
    });
    return { content_hash: contentHash(resolved, project), results };
  }

  /**
   * The snapshot a deployment stores (rule 4: a running service keeps it until redeployed). Secrets travel sealed:
   * a stored secret as its own envelope, a hidden built-in sealed afresh for this snapshot; plain values as they are.
   * An alias that names nothing refuses the deployment (400) rather than starting a service with a missing value.
   */
  async function resolveForDeployment(environmentId: string, serviceId?: string): Promise<VariableSnapshot> {
    const owner = await consumer(environmentId, serviceId);
    const { definitions, project } = await visibleDefinitions(owner);
    const resolved = resolveVariables(definitions);
    const broken = resolved.filter((variable) => variable.unresolved !== undefined);
    if (broken.length > 0) {
      throw badRequest(
        `alias(es) naming no variable here: ${broken.map((variable) => `${variable.key} → $${variable.unresolved ?? ''}`).join(', ')}`,
      );
    }
    // One sealed copy per hidden built-in, shared by the aliases that end at it and kept for the next snapshot.
    const sealedBuiltIns = new Map<string, { envelope: string; associated_data: string }>();
    const variables = resolved.map((variable): SnapshotVariable => {
      const holder = variable.chain[variable.chain.length - 1] as Definition;
      const base = {
        key: variable.key,
        scope: variable.definition.scope,
        variable_id: variable.definition.id,
        mount_path: variable.definition.mountPath,
        alias_chain: variable.chain.map((definition) => definition.key),
      };
      if (holder.secret && holder.row !== undefined && holder.row.value_envelope !== null) {
        return { ...base, sealed: { envelope: holder.row.value_envelope, associated_data: associatedData(holder.row) } };
      }
      if (variable.hidden) {
        let sealed = sealedBuiltIns.get(holder.id);
        if (sealed === undefined) {
          sealed = sealedBuiltIn(`variables:snapshot:${environmentId}:${serviceId ?? '-'}:${holder.key}`, holder.value ?? '');
          sealedBuiltIns.set(holder.id, sealed);
        }
        return { ...base, sealed };
      }
      return { ...base, value: holder.value ?? '' };
    });
    return { environment_id: environmentId, service_id: serviceId ?? null, content_hash: contentHash(resolved, project), variables };
  }

  /**
   * A hidden built-in sealed for snapshots, reused while its value stays the same (keyed by its fingerprint, so no
   * plaintext is kept): sealing is the largest share of a snapshot's cost, and one envelope per value and place
   * reveals nothing the content hash does not.
   */
  function sealedBuiltIn(associated: string, value: string): { envelope: string; associated_data: string } {
    const cacheKey = `${associated}\0${fingerprint(value)}`;
    const kept = sealedBuiltInCache.get(cacheKey);
    if (kept !== undefined) return kept;
    const sealed = { envelope: secrets.seal(value, associated), associated_data: associated };
    sealedBuiltInCache.set(cacheKey, sealed);
    if (sealedBuiltInCache.size > CACHED_SEALED_BUILT_INS) {
      const oldest = sealedBuiltInCache.keys().next().value;
      if (oldest !== undefined) sealedBuiltInCache.delete(oldest);
    }
    return sealed;
  }

  /** The plaintext of one snapshot variable, for the agent that starts the workload. */
  function openSnapshotValue(variable: SnapshotVariable): string {
    if (variable.sealed === undefined) return variable.value ?? '';
    return secrets.open(variable.sealed.envelope, variable.sealed.associated_data);
  }

  /**
   * Copies an environment's own variables and secrets into another environment of the same project, inside the
   * caller's transaction (environment clone). Secrets are opened and sealed again for their new rows.
   */
  async function copyEnvironmentVariables(trx: Transaction<DB>, fromEnvironmentId: string, toEnvironmentId: string): Promise<void> {
    const rows = await listOwnerVariables(trx, fromEnvironmentId);
    const now = isoTimestamp(clock);
    const copies = rows.map((row): VariableRow => {
      const id = newId();
      return {
        ...row,
        id,
        owner_id: toEnvironmentId,
        environment_id: toEnvironmentId,
        value_envelope: row.value_envelope === null ? null : secrets.seal(openSecret(row), associatedData({ id, organization_id: row.organization_id })),
        created_at: now,
        updated_at: now,
      };
    });
    await insertVariables(trx, copies);
    const projectId = rows[0]?.project_id;
    if (projectId !== undefined) await bumpVariablesRevision(trx, projectId);
  }

  /** For the services module: a deleted service's own rows go with it (no foreign key until services exist). */
  async function removeServiceVariables(trx: Transaction<DB>, serviceId: string): Promise<void> {
    const rows = await listOwnerVariables(trx, serviceId);
    await deleteServiceVariables(trx, serviceId);
    const projectId = rows[0]?.project_id;
    if (projectId !== undefined) await bumpVariablesRevision(trx, projectId);
  }

  return {
    projectOwner,
    environmentOwner,
    serviceOwner,
    listVariables,
    listSecrets,
    createVariable: (owner: Owner, body: VariableRequestBody) => create(owner, 'variable', body),
    createSecret: (owner: Owner, body: VariableRequestBody) => create(owner, 'secret', body),
    editVariable: (owner: Owner, id: string, body: VariableRequestBody) => edit(owner, 'variable', id, body),
    editSecret: (owner: Owner, id: string, body: SecretEditBody) => edit(owner, 'secret', id, body),
    deleteVariable: (owner: Owner, id: string) => remove(owner, 'variable', id),
    deleteSecret: (owner: Owner, id: string) => remove(owner, 'secret', id),
    overrideVariable: (owner: Owner, id: string, body: OverrideBody) => override(owner, 'variable', id, body),
    overrideSecret: (owner: Owner, id: string, body: OverrideBody) => override(owner, 'secret', id, body),
    aliasVariable: (owner: Owner, id: string, body: AliasBody) => alias(owner, 'variable', id, body),
    aliasSecret: (owner: Owner, id: string, body: AliasBody) => alias(owner, 'secret', id, body),
    explain,
    resolveForDeployment,
    openSnapshotValue,
    copyEnvironmentVariables,
    deleteServiceVariables: removeServiceVariables,
  };
}

export type VariablesService = ReturnType<typeof createVariablesService>;
export type VariableOwner = Owner;
