import type { Insertable, Selectable, Updateable } from 'kysely';
import type { DatabaseBackupsTable, Queryable } from '../../db/db.schema.ts';

export type DatabaseBackupRow = Selectable<DatabaseBackupsTable>;

/** The database service as a backup needs it: its type, where its environment runs and whether it runs now. */
export interface BackedUpDatabase {
  id: string;
  organization_id: string;
  name: string;
  settings: unknown;
  cluster_kind: string;
  runtime_status: string | null;
}

export function findBackedUpDatabase(db: Queryable, serviceId: string): Promise<BackedUpDatabase | undefined> {
  return db
    .selectFrom('services')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .innerJoin('clusters', 'clusters.id', 'environments.cluster_id')
    .leftJoin('service_runtime', 'service_runtime.service_id', 'services.id')
    .select(['services.id', 'services.organization_id', 'services.name', 'services.settings', 'clusters.kubernetes as cluster_kind', 'service_runtime.status as runtime_status'])
    .where('services.id', '=', serviceId)
    .where('services.kind', '=', 'DATABASE')
    .executeTakeFirst();
}

/** A page of a database's backups, newest first, after `afterId` when given. */
export function listBackups(db: Queryable, serviceId: string, afterId: string | undefined, limit: number): Promise<DatabaseBackupRow[]> {
  let query = db.selectFrom('database_backups').selectAll().where('service_id', '=', serviceId);
  if (afterId !== undefined) query = query.where('id', '<', afterId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** How many of a database's backups come before `afterId`'s successors (it included): the page number's basis. */
export async function countBackupsFrom(db: Queryable, serviceId: string, afterId: string): Promise<number> {
  const row = await db
    .selectFrom('database_backups')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('service_id', '=', serviceId)
    .where('id', '>=', afterId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export function findBackup(db: Queryable, serviceId: string, backupId: string): Promise<DatabaseBackupRow | undefined> {
  return db.selectFrom('database_backups').selectAll().where('service_id', '=', serviceId).where('id', '=', backupId).executeTakeFirst();
}

export function findBackupById(db: Queryable, backupId: string): Promise<DatabaseBackupRow | undefined> {
  return db.selectFrom('database_backups').selectAll().where('id', '=', backupId).executeTakeFirst();
}

export async function insertBackup(db: Queryable, row: Insertable<DatabaseBackupsTable>): Promise<void> {
  await db.insertInto('database_backups').values(row).execute();
}

export async function updateBackup(db: Queryable, backupId: string, changes: Updateable<DatabaseBackupsTable>): Promise<boolean> {
  const result = await db.updateTable('database_backups').set(changes).where('id', '=', backupId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteBackup(db: Queryable, serviceId: string, backupId: string): Promise<void> {
  await db.deleteFrom('database_backups').where('service_id', '=', serviceId).where('id', '=', backupId).execute();
}

/** Which of these service ids still name a service (the others' backup files are orphans). */
export async function existingServiceIds(db: Queryable, serviceIds: readonly string[]): Promise<Set<string>> {
  if (serviceIds.length === 0) return new Set();
  const rows = await db.selectFrom('services').select('id').where('id', 'in', [...serviceIds]).execute();
  return new Set(rows.map((row) => row.id));
}
