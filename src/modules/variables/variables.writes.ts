import type { Transaction } from 'kysely';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { isoTimestamp } from '../../lib/clock.ts';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { isBuiltInShapedName, RESERVED_PREFIX, type BuiltInVariable } from './variables.builtins.ts';
import {
  associatedData,
  kindNoun,
  openSecret,
  type Definition,
  type Kind,
  type Owner,
  type StoredVariableType,
  type VariableDefinitions,
} from './variables.definitions.ts';
import {
  countOwnerVariables,
  deleteServiceVariables,
  deleteVariable,
  findVariable,
  findVariableByKey,
  insertVariables,
  listOwnerVariables,
  listCycleCheckVariables,
  lockProjectVariables,
  updateVariable,
  type CycleCheckRow,
  type VariableRow,
} from './variables.repo.ts';
import { aliasTargetOf, findAliasCycle, scopeRank, type StoredScope, type VariableDefinition } from './variables.resolver.ts';
import type { AliasBody, OverrideBody, SecretEditBody, VariableRequestBody } from './variables.schemas.ts';
import type { VariablesDeps } from './variables.service.ts';
import type { VariableViews } from './variables.views.ts';

/**
 * Creating, editing, deleting, overriding and aliasing variables and secrets, with their validation; and the two
 * writes other modules make inside their own transaction (environment clone, service deletion).
 */

export const MAX_VARIABLES_PER_SCOPE = 1000;

/** One row of an import, resolved to the owner its scope names; `index` is its place in the request's `vars`. */
export interface ImportEntry {
  index: number;
  owner: Owner;
  key: string;
  kind: Kind;
  value: string;
}

export interface ImportOutcome {
  created: ImportEntry[];
  overwritten: ImportEntry[];
  skipped: ImportEntry[];
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

export function createVariableWrites(
  deps: Pick<VariablesDeps, 'db' | 'dialect' | 'clock' | 'secrets' | 'changes'>,
  reader: Pick<VariableDefinitions, 'builtInsOf' | 'storedDefinitions' | 'visibleDefinitions'>,
  views: Pick<VariableViews, 'viewOf'>,
) {
  const { db, clock, secrets } = deps;
  const { builtInsOf, storedDefinitions, visibleDefinitions } = reader;
  const { viewOf } = views;

  // ---- writes -------------------------------------------------------------------------------------------------

  /**
   * Every consumer a write at `owner` reaches whose cycle check matters, as the definitions of it that can take part
   * in a cycle (listCycleCheckVariables): built-ins never alias, so only stored rows can close a cycle; an environment
   * or service whose own rows hold no alias only shadows names of the scope above it, so its alias graph is part of
   * that scope's, which is checked (the project's always, an environment's when it has aliases or a service of it has).
   */
  function consumersReached(rows: CycleCheckRow[], owner: Pick<Owner, 'scope' | 'ownerId'>): VariableDefinition[][] {
    const project: VariableDefinition[] = [];
    const byEnvironment = new Map<string, VariableDefinition[]>();
    const byService = new Map<string, { environmentId: string; definitions: VariableDefinition[] }>();
    for (const row of rows) {
      const definition: VariableDefinition = {
        id: '',
        key: row.key,
        scope: row.scope as StoredScope,
        secret: false,
        sensitive: false,
        value: undefined,
        aliasOf: row.alias_of ?? undefined,
      };
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
    const consumers: VariableDefinition[][] = [];
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

  async function refuseCycles(trx: Transaction<DB>, owner: Pick<Owner, 'scope' | 'ownerId' | 'projectId'>): Promise<void> {
    const rows = await listCycleCheckVariables(trx, owner.projectId);
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

  /**
   * One .env import: every row at its own owner (the service, its environment or its project), in one transaction
   * serialised on the project, so an error anywhere writes nothing. A name that exists at its row's scope is skipped,
   * or with `overwrite` given the row's value in place (its id, description, mount and override stay); a secret and a
   * plain variable never replace each other (409). `writeOwner` is the broadest owner written: the cycle check and
   * the change announcement cover every consumer it reaches, which includes the narrower owners'.
   */
  async function importRows(writeOwner: Owner, entries: readonly ImportEntry[], overwrite: boolean): Promise<ImportOutcome> {
    const builtInsByOwner = new Map<string, BuiltInVariable[]>();
    for (const entry of entries) {
      if (!builtInsByOwner.has(entry.owner.ownerId)) builtInsByOwner.set(entry.owner.ownerId, await builtInsOf(entry.owner));
    }
    return write(writeOwner, 'variables were written at the same time by another request; retry the import', async (trx) => {
      const outcome: ImportOutcome = { created: [], overwritten: [], skipped: [] };
      const counts = new Map<string, number>();
      for (const entry of entries) {
        const existing = await findVariableByKey(trx, entry.owner.ownerId, entry.key);
        if (existing === undefined) {
          const count = counts.get(entry.owner.ownerId) ?? (await countOwnerVariables(trx, entry.owner.ownerId));
          if (count >= MAX_VARIABLES_PER_SCOPE) {
            throw badRequest(`vars[${entry.index}] (${entry.key}): the ${entry.owner.scope} scope already holds ${MAX_VARIABLES_PER_SCOPE} variables and secrets`, [
              { field: `/vars/${entry.index}`, message: 'scope full' },
            ]);
          }
          counts.set(entry.owner.ownerId, count + 1);
          const aliasOf = entry.kind === 'variable' ? aliasTargetOf(entry.value) : undefined;
          const row = rowFor(entry.owner, {
            key: entry.key,
            kind: entry.kind,
            value: entry.value,
            aliasOf,
            override: false,
            mountPath: null,
            description: null,
            enableInterpolationInFile: null,
          });
          await insertVariables(trx, [row]);
          outcome.created.push(entry);
          continue;
        }
        if (!overwrite) {
          outcome.skipped.push(entry);
          continue;
        }
        if ((existing.is_secret === 1) !== (entry.kind === 'secret')) {
          const held = existing.is_secret === 1 ? 'a secret' : 'a plain variable';
          throw conflict(`vars[${entry.index}] (${entry.key}): already ${held} at the ${entry.owner.scope} scope; delete it before importing a ${kindNoun(entry.kind)} of that name`);
        }
        const aliasOf = entry.kind === 'variable' ? aliasTargetOf(entry.value) : undefined;
        await updateVariable(trx, existing.id, {
          value: entry.kind === 'secret' ? null : entry.value,
          value_envelope: entry.kind === 'secret' ? secrets.seal(entry.value, associatedData(existing)) : null,
          alias_of: aliasOf ?? null,
          variable_type: variableTypeOf({ override: existing.variable_type === 'OVERRIDE', aliasOf, mountPath: existing.mount_path }),
          updated_at: isoTimestamp(clock),
        });
        outcome.overwritten.push(entry);
      }
      // After every row is in, so that an alias may name a variable of the same import.
      for (const entry of [...outcome.created, ...outcome.overwritten]) {
        const target = entry.kind === 'variable' ? aliasTargetOf(entry.value) : undefined;
        if (target === undefined) continue;
        try {
          await refuseUnknownAliasTarget(trx, entry.owner, entry.key, target, builtInsByOwner.get(entry.owner.ownerId) ?? []);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          throw new AppError(error.kind, `vars[${entry.index}] (${entry.key}): ${error.message}`, [{ field: `/vars/${entry.index}/value`, message: error.message }]);
        }
      }
      return outcome;
    });
  }

  // ---- for other modules, inside their transaction ------------------------------------------------------------

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
        value_envelope: row.value_envelope === null ? null : secrets.seal(openSecret(secrets, row), associatedData({ id, organization_id: row.organization_id })),
        created_at: now,
        updated_at: now,
      };
    });
    await insertVariables(trx, copies);
  }

  /**
   * For the services module's clone, inside its transaction: the source service's own rows become the clone's, in
   * the clone's environment and project, under the same names and scope. A secret is opened and sealed again for its
   * new row (an envelope is bound to its row) and never leaves this function. Aliases keep the names they follow, so
   * they resolve against what the clone's environment holds; one that would close a cycle there refuses the clone.
   */
  async function copyServiceVariables(trx: Transaction<DB>, fromServiceId: string, to: { serviceId: string; environmentId: string; projectId: string }): Promise<void> {
    const rows = await listOwnerVariables(trx, fromServiceId);
    const [first] = rows;
    if (first === undefined) return;
    await lockProjectVariables(trx, deps.dialect, to.projectId);
    const now = isoTimestamp(clock);
    const copies = rows.map((row): VariableRow => {
      const id = newId();
      return {
        ...row,
        id,
        project_id: to.projectId,
        environment_id: to.environmentId,
        service_id: to.serviceId,
        owner_id: to.serviceId,
        value_envelope: row.value_envelope === null ? null : secrets.seal(openSecret(secrets, row), associatedData({ id, organization_id: row.organization_id })),
        created_at: now,
        updated_at: now,
      };
    });
    await insertVariables(trx, copies);
    await refuseCycles(trx, { scope: first.scope as Owner['scope'], ownerId: to.serviceId, projectId: to.projectId });
  }

  /** For the services module: a deleted service's own rows go with it (no foreign key until services exist). */
  async function removeServiceVariables(trx: Transaction<DB>, serviceId: string): Promise<void> {
    await deleteServiceVariables(trx, serviceId);
  }

  return { create, edit, remove, override, alias, importRows, copyEnvironmentVariables, copyServiceVariables, removeServiceVariables };
}
