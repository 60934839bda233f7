import type { Selectable, Updateable } from 'kysely';
import type {
  ClusterLocksTable,
  ClusterOperatorsTable,
  ClustersTable,
  LocalClusterGrantsTable,
  Queryable,
} from '../../db/db.schema.ts';

export type ClusterRow = Selectable<ClustersTable>;
export type ClusterLockRow = Selectable<ClusterLocksTable>;
export type ClusterOperatorRow = Selectable<ClusterOperatorsTable>;
export type LocalClusterGrantRow = Selectable<LocalClusterGrantsTable>;

export async function insertCluster(db: Queryable, row: Omit<ClusterRow, 'production' | 'is_deployed' | 'config_revision' | 'advanced_settings'> & Partial<ClusterRow>): Promise<void> {
  await db.insertInto('clusters').values(row).execute();
}

export function findCluster(db: Queryable, organizationId: string, id: string): Promise<ClusterRow | undefined> {
  return db.selectFrom('clusters').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function findClusterById(db: Queryable, id: string): Promise<ClusterRow | undefined> {
  return db.selectFrom('clusters').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listClusters(db: Queryable, organizationId: string): Promise<ClusterRow[]> {
  return db.selectFrom('clusters').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}

/**
 * Changes a cluster only if it is still in `expectedStatus`: every state change is a compare-and-set, so two
 * requests (or a request and the worker) racing on one cluster cannot both move it.
 */
/** The ids of every cluster of a kind across organizations (the in-process agent serves all LOCAL ones). */
export async function listClusterIdsOfKind(db: Queryable, kubernetes: string): Promise<string[]> {
  const rows = await db.selectFrom('clusters').select('id').where('kubernetes', '=', kubernetes).where('status', '!=', 'DELETED').orderBy('created_at').execute();
  return rows.map((row) => row.id);
}

export async function updateClusterInStatus(
  db: Queryable,
  id: string,
  expectedStatus: string,
  changes: Updateable<ClustersTable>,
): Promise<boolean> {
  const result = await db.updateTable('clusters').set(changes).where('id', '=', id).where('status', '=', expectedStatus).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function updateCluster(db: Queryable, id: string, changes: Updateable<ClustersTable>): Promise<boolean> {
  const result = await db.updateTable('clusters').set(changes).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Sets a cluster's status message to an agent's report, only when the message is empty or an earlier report of the
 * same agent (it starts with `prefix`), and only when it changes.
 */
export async function replaceAgentStatusMessage(db: Queryable, id: string, prefix: string, message: string | null, now: string): Promise<void> {
  await db
    .updateTable('clusters')
    .set({ status_message: message, updated_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('status_message', 'is', null), eb('status_message', 'like', `${prefix}%`)]))
    .where((eb) => (message === null ? eb('status_message', 'is not', null) : eb.or([eb('status_message', 'is', null), eb('status_message', '!=', message)])))
    .execute();
}

export async function deleteClusterRow(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('clusters').where('id', '=', id).execute();
}

export function findLock(db: Queryable, clusterId: string): Promise<ClusterLockRow | undefined> {
  return db.selectFrom('cluster_locks').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
}

export function listLocks(db: Queryable, organizationId: string): Promise<ClusterLockRow[]> {
  return db.selectFrom('cluster_locks').selectAll().where('organization_id', '=', organizationId).orderBy('locked_at').execute();
}

/**
 * One lock per cluster. A new lock takes the place of the expired lock the caller saw (matched by its locked_at, so a
 * live lock committed meanwhile by a concurrent request is never removed); with no expired lock it is a plain insert.
 * Either way a concurrent winner makes the insert collide on the cluster id.
 */
export async function replaceLock(db: Queryable, row: ClusterLockRow, expired: ClusterLockRow | undefined): Promise<void> {
  if (expired !== undefined) {
    await db.deleteFrom('cluster_locks').where('cluster_id', '=', row.cluster_id).where('locked_at', '=', expired.locked_at).execute();
  }
  await db.insertInto('cluster_locks').values(row).execute();
}

export async function deleteLock(db: Queryable, clusterId: string): Promise<boolean> {
  const result = await db.deleteFrom('cluster_locks').where('cluster_id', '=', clusterId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function insertEnrollment(
  db: Queryable,
  row: { id: string; cluster_id: string; token_hash: string; expires_at: string; created_at: string },
): Promise<void> {
  await db.insertInto('cluster_operator_enrollments').values({ ...row, used_at: null }).execute();
}

/** Marks an unused, unexpired enrollment token used and answers its cluster; undefined when it cannot be used. */
export async function consumeEnrollment(db: Queryable, tokenHash: string, now: string): Promise<string | undefined> {
  const row = await db
    .updateTable('cluster_operator_enrollments')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('cluster_id')
    .executeTakeFirst();
  return row?.cluster_id;
}

/** Whether consumeEnrollment would accept the token now; a read that uses nothing up. */
export async function isEnrollmentUsable(db: Queryable, tokenHash: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('cluster_operator_enrollments')
    .select('cluster_id')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** Invalidates the unused enrollment tokens of a cluster (a new bootstrap replaces them). */
export async function expireEnrollments(db: Queryable, clusterId: string, now: string): Promise<void> {
  await db
    .updateTable('cluster_operator_enrollments')
    .set({ expires_at: now })
    .where('cluster_id', '=', clusterId)
    .where('used_at', 'is', null)
    .execute();
}

export async function replaceOperator(db: Queryable, row: ClusterOperatorRow): Promise<void> {
  await db.deleteFrom('cluster_operators').where('cluster_id', '=', row.cluster_id).execute();
  await db.insertInto('cluster_operators').values(row).execute();
}

export function findOperatorByCredential(db: Queryable, credentialHash: string): Promise<ClusterOperatorRow | undefined> {
  return db.selectFrom('cluster_operators').selectAll().where('credential_hash', '=', credentialHash).executeTakeFirst();
}

export function findOperator(db: Queryable, clusterId: string): Promise<ClusterOperatorRow | undefined> {
  return db.selectFrom('cluster_operators').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
}

export async function recordOperatorReport(
  db: Queryable,
  clusterId: string,
  report: { reported_status: string; kubernetes_version: string | null; reported_at: string },
): Promise<void> {
  await db.updateTable('cluster_operators').set(report).where('cluster_id', '=', clusterId).execute();
}

export function findLocalClusterGrant(db: Queryable, organizationId: string): Promise<LocalClusterGrantRow | undefined> {
  return db.selectFrom('local_cluster_grants').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
}

/** Allows an organization; false when it was allowed already (of two concurrent grants, one inserts, the other finds it). */
export async function insertLocalClusterGrant(db: Queryable, row: LocalClusterGrantRow): Promise<boolean> {
  const result = await db
    .insertInto('local_cluster_grants')
    .values(row)
    .onConflict((conflict) => conflict.column('organization_id').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function deleteLocalClusterGrant(db: Queryable, organizationId: string): Promise<boolean> {
  const result = await db.deleteFrom('local_cluster_grants').where('organization_id', '=', organizationId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The organization an operator names by its id or else by its name (names are unique, compared by their key). A read
 * of the organizations module's table, as the clusters module reads it nowhere else.
 */
export async function findOrganizationNamed(db: Queryable, idOrName: string, nameKey: string): Promise<{ id: string; name: string } | undefined> {
  const live = db.selectFrom('organizations').select(['id', 'name']).where('deleted_at', 'is', null);
  const byId = await live.where('id', '=', idOrName).executeTakeFirst();
  return byId ?? live.where('name_key', '=', nameKey).executeTakeFirst();
}

/** How many LOCAL clusters (not deleted) each organization holds, for the operator's listing. */
export async function countLocalClustersByOrganization(db: Queryable): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('clusters')
    .select(['organization_id', (eb) => eb.fn.countAll<string | number>().as('count')])
    .where('kubernetes', '=', 'LOCAL')
    .where('status', '!=', 'DELETED')
    .groupBy('organization_id')
    .execute();
  return new Map(rows.map((row) => [row.organization_id, Number(row.count)]));
}

/** Every grant with its organization's name, oldest first. */
export function listLocalClusterGrants(db: Queryable) {
  return db
    .selectFrom('local_cluster_grants')
    .innerJoin('organizations', 'organizations.id', 'local_cluster_grants.organization_id')
    .select(['local_cluster_grants.organization_id as organization_id', 'organizations.name as organization_name', 'local_cluster_grants.granted_by as granted_by', 'local_cluster_grants.granted_at as granted_at'])
    .orderBy('local_cluster_grants.granted_at')
    .orderBy('local_cluster_grants.organization_id')
    .execute();
}

/** The names of these organizations (an operator's listing of LOCAL clusters held without a grant). */
export function listOrganizationNames(db: Queryable, organizationIds: string[]): Promise<Array<{ id: string; name: string }>> {
  if (organizationIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('organizations').select(['id', 'name']).where('id', 'in', organizationIds).orderBy('name_key').execute();
}
