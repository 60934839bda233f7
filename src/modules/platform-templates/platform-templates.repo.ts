import type { Selectable } from 'kysely';
import type { ClusterPlatformConfigurationsTable, Queryable } from '../../db/db.schema.ts';

export type ClusterPlatformConfigurationRow = Selectable<ClusterPlatformConfigurationsTable>;

export function findClusterPlatformConfiguration(
  db: Queryable,
  organizationId: string,
  clusterId: string,
): Promise<ClusterPlatformConfigurationRow | undefined> {
  return db
    .selectFrom('cluster_platform_configurations')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('cluster_id', '=', clusterId)
    .executeTakeFirst();
}

/** Inserts the cluster's configuration, or replaces it (keeping its creation time): one row per cluster. */
export async function upsertClusterPlatformConfiguration(db: Queryable, row: ClusterPlatformConfigurationRow): Promise<void> {
  const { cluster_id: _clusterId, created_at: _createdAt, ...changes } = row;
  await db
    .insertInto('cluster_platform_configurations')
    .values(row)
    .onConflict((conflict) => conflict.column('cluster_id').doUpdateSet(changes))
    .execute();
}

export async function deleteClusterPlatformConfigurationRow(db: Queryable, clusterId: string): Promise<void> {
  await db.deleteFrom('cluster_platform_configurations').where('cluster_id', '=', clusterId).execute();
}
