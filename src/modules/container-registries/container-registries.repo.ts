import type { Selectable, Updateable } from 'kysely';
import type { ContainerRegistriesTable, Queryable } from '../../db/db.schema.ts';

export type ContainerRegistryRow = Selectable<ContainerRegistriesTable>;

export async function insertContainerRegistry(db: Queryable, row: ContainerRegistryRow): Promise<void> {
  await db.insertInto('container_registries').values(row).execute();
}

export function findContainerRegistry(db: Queryable, organizationId: string, id: string): Promise<ContainerRegistryRow | undefined> {
  return db.selectFrom('container_registries').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function listContainerRegistries(db: Queryable, organizationId: string): Promise<ContainerRegistryRow[]> {
  return db.selectFrom('container_registries').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export async function updateContainerRegistry(
  db: Queryable,
  organizationId: string,
  id: string,
  changes: Updateable<ContainerRegistriesTable>,
): Promise<boolean> {
  const result = await db.updateTable('container_registries').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteContainerRegistry(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('container_registries').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
