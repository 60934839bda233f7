import type { Selectable, Updateable } from 'kysely';
import type { LabelsGroupsTable, Queryable } from '../../db/db.schema.ts';

export type LabelsGroupRow = Selectable<LabelsGroupsTable>;

export async function insertLabelsGroup(db: Queryable, row: LabelsGroupRow): Promise<void> {
  await db.insertInto('labels_groups').values(row).execute();
}

export function findLabelsGroup(db: Queryable, organizationId: string, id: string): Promise<LabelsGroupRow | undefined> {
  return db.selectFrom('labels_groups').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function findLabelsGroups(db: Queryable, organizationId: string, ids: readonly string[]): Promise<LabelsGroupRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('labels_groups').selectAll().where('organization_id', '=', organizationId).where('id', 'in', [...ids]).execute();
}

export function listLabelsGroups(db: Queryable, organizationId: string): Promise<LabelsGroupRow[]> {
  return db.selectFrom('labels_groups').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export async function updateLabelsGroup(db: Queryable, organizationId: string, id: string, changes: Updateable<LabelsGroupsTable>): Promise<boolean> {
  const result = await db.updateTable('labels_groups').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteLabelsGroup(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('labels_groups').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
