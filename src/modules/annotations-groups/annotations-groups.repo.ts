import type { Selectable, Updateable } from 'kysely';
import type { AnnotationsGroupsTable, Queryable } from '../../db/db.schema.ts';

export type AnnotationsGroupRow = Selectable<AnnotationsGroupsTable>;

export async function insertAnnotationsGroup(db: Queryable, row: AnnotationsGroupRow): Promise<void> {
  await db.insertInto('annotations_groups').values(row).execute();
}

export function findAnnotationsGroup(db: Queryable, organizationId: string, id: string): Promise<AnnotationsGroupRow | undefined> {
  return db.selectFrom('annotations_groups').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function findAnnotationsGroups(db: Queryable, organizationId: string, ids: readonly string[]): Promise<AnnotationsGroupRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('annotations_groups').selectAll().where('organization_id', '=', organizationId).where('id', 'in', [...ids]).execute();
}

export function listAnnotationsGroups(db: Queryable, organizationId: string): Promise<AnnotationsGroupRow[]> {
  return db.selectFrom('annotations_groups').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export async function updateAnnotationsGroup(db: Queryable, organizationId: string, id: string, changes: Updateable<AnnotationsGroupsTable>): Promise<boolean> {
  const result = await db.updateTable('annotations_groups').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteAnnotationsGroup(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('annotations_groups').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
