import type { Selectable } from 'kysely';
import type { OrganizationsTable, Queryable } from '../../db/db.schema.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;

export async function insertOrganization(db: Queryable, row: OrganizationRow): Promise<void> {
  await db.insertInto('organizations').values(row).execute();
}

/** The organization, unless it was deleted (its row may outlive the delete while its workloads are torn down). */
export function findOrganization(db: Queryable, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** The organization's row, deleted or not: for the purge that removes it. */
export function findOrganizationRecord(db: Queryable, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listOrganizationsByIds(db: Queryable, ids: string[]): Promise<OrganizationRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('organizations')
    .selectAll()
    .where('id', 'in', ids)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateOrganization(
  db: Queryable,
  id: string,
  fields: Partial<Omit<OrganizationRow, 'id' | 'created_at'>>,
): Promise<boolean> {
  const result = await db.updateTable('organizations').set(fields).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes the organization's row; foreign keys cascade to everything beneath it (the purge, once nothing runs). */
export async function deleteOrganization(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
