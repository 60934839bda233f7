import type { Selectable, Updateable } from 'kysely';
import type { HelmRepositoriesTable, Queryable } from '../../db/db.schema.ts';

export type HelmRepositoryRow = Selectable<HelmRepositoriesTable>;

export async function insertHelmRepository(db: Queryable, row: HelmRepositoryRow): Promise<void> {
  await db.insertInto('helm_repositories').values(row).execute();
}

export function findHelmRepository(db: Queryable, organizationId: string, id: string): Promise<HelmRepositoryRow | undefined> {
  return db.selectFrom('helm_repositories').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function listHelmRepositories(db: Queryable, organizationId: string): Promise<HelmRepositoryRow[]> {
  return db.selectFrom('helm_repositories').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export async function updateHelmRepository(
  db: Queryable,
  organizationId: string,
  id: string,
  changes: Updateable<HelmRepositoriesTable>,
): Promise<boolean> {
  const result = await db.updateTable('helm_repositories').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteHelmRepository(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('helm_repositories').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
