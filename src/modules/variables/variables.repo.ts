import type { Selectable, Updateable } from 'kysely';
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

/** Every row of a project, all scopes: what a write checks for alias cycles in every environment and service it reaches. */
export function listProjectVariables(db: Queryable, projectId: string): Promise<VariableRow[]> {
  return db.selectFrom('variables').selectAll().where('project_id', '=', projectId).orderBy('key').orderBy('id').execute();
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
