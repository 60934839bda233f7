import { sql, type Selectable, type Updateable } from 'kysely';
import type { DialectName } from '../../db/db.client.ts';
import { lockUntilCommit } from '../../db/db.locks.ts';
import type { Queryable, VariablesTable } from '../../db/db.schema.ts';

export type VariableRow = Selectable<VariablesTable>;

export async function insertVariables(db: Queryable, rows: VariableRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('variables').values(rows).execute();
}

export function findVariable(db: Queryable, id: string): Promise<VariableRow | undefined> {
  return db.selectFrom('variables').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findVariableByKey(db: Queryable, ownerId: string, key: string): Promise<VariableRow | undefined> {
  return db.selectFrom('variables').selectAll().where('owner_id', '=', ownerId).where('key', '=', key).executeTakeFirst();
}

/** What the alias-cycle check needs of a row: where it sits, its name and what it aliases. */
export type CycleCheckRow = Pick<VariableRow, 'owner_id' | 'scope' | 'environment_id' | 'key' | 'alias_of'>;

/**
 * What a write's alias-cycle check reads (variables.writes.ts, refuseCycles), after the write, in its transaction:
 *   - owners: the project, every owner in it that holds an alias, and the environments those owners live in; an owner
 *     without an alias can only shadow names of the scope above it, never close a cycle;
 *   - names: those aliased somewhere in the project; a name no owner aliases has a value wherever it is seen, so no
 *     cycle passes through it. A name that is an alias in one scope and a value in a narrower one is read in both.
 * Both come from the partial index of aliases (migration 0061); the rows from the (owner_id, key) constraint.
 * Unordered: the check orders names itself, and one owner holds a name once.
 */
export function listCycleCheckVariables(db: Queryable, projectId: string): Promise<CycleCheckRow[]> {
  const aliases = db.selectFrom('variables').where('project_id', '=', projectId).where('alias_of', 'is not', null);
  const owners = db
    .selectNoFrom(sql<string>`${projectId}`.as('owner_id'))
    .union(aliases.select('owner_id'))
    .union(aliases.select(sql<string>`environment_id`.as('owner_id')).where('environment_id', 'is not', null));
  return db
    .selectFrom('variables')
    .select(['owner_id', 'scope', 'environment_id', 'key', 'alias_of'])
    .where('owner_id', 'in', owners)
    .where('key', 'in', aliases.select('key'))
    .execute();
}

/** The rows of the given owners (project, environment or service ids), in one statement, by name. */
export function listVariablesOfOwners(db: Queryable, ownerIds: readonly string[]): Promise<VariableRow[]> {
  return db.selectFrom('variables').selectAll().where('owner_id', 'in', ownerIds).orderBy('key').orderBy('id').execute();
}

/** The rows one consumer sees: its project's PROJECT rows, its environment's rows and, with a service, that service's. */
export function listVisibleVariables(db: Queryable, projectId: string, environmentId: string, serviceId?: string): Promise<VariableRow[]> {
  return db
    .selectFrom('variables')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('owner_id', '=', projectId),
        eb('owner_id', '=', environmentId),
        ...(serviceId === undefined ? [] : [eb('owner_id', '=', serviceId)]),
      ]),
    )
    .orderBy('key')
    .orderBy('id')
    .execute();
}

export function listOwnerVariables(db: Queryable, ownerId: string): Promise<VariableRow[]> {
  // A key is unique per owner: the unique index (owner_id, key) gives the order, with no sort step.
  return db.selectFrom('variables').selectAll().where('owner_id', '=', ownerId).orderBy('key').execute();
}

export async function countOwnerVariables(db: Queryable, ownerId: string): Promise<number> {
  const row = await db.selectFrom('variables').select((eb) => eb.fn.countAll<number>().as('count')).where('owner_id', '=', ownerId).executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function updateVariable(db: Queryable, id: string, changes: Updateable<VariablesTable>): Promise<boolean> {
  const result = await db.updateTable('variables').set(changes).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteVariable(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('variables').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteServiceVariables(db: Queryable, serviceId: string): Promise<void> {
  await db.deleteFrom('variables').where('owner_id', '=', serviceId).execute();
}

/**
 * Serialises the variable writes of one project until the transaction ends, so two writes that each add half of an
 * alias cycle cannot both pass the check.
 */
export function lockProjectVariables(db: Queryable, dialect: DialectName, projectId: string): Promise<void> {
  return lockUntilCommit(db, dialect, `variables:${projectId}`);
}
