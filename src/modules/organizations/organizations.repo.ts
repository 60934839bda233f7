import type { Selectable } from 'kysely';
import type { OrganizationsTable, Queryable } from '../../db/db.schema.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;

export async function insertOrganization(db: Queryable, row: OrganizationRow): Promise<void> {
  await db.insertInto('organizations').values(row).execute();
}

export function findOrganization(db: Queryable, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listOrganizationsByIds(db: Queryable, ids: string[]): Promise<OrganizationRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('organizations').selectAll().where('id', 'in', ids).orderBy('created_at').orderBy('id').execute();
}

export async function updateOrganization(
  db: Queryable,
  id: string,
  fields: Partial<Omit<OrganizationRow, 'id' | 'created_at'>>,
): Promise<boolean> {
  const result = await db.updateTable('organizations').set(fields).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes the organization; foreign keys cascade to everything beneath it. */
export async function deleteOrganization(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
