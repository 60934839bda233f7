import { sql, type Selectable } from 'kysely';
import type { ClusterInsightEventsTable, ClusterInsightLogsTable, ClusterOperatorTargetsTable, Queryable } from '../../db/db.schema.ts';

export type ClusterEventRow = Selectable<ClusterInsightEventsTable>;
export type ClusterLogRow = Selectable<ClusterInsightLogsTable>;
export type ClusterOperatorTargetRow = Selectable<ClusterOperatorTargetsTable>;

/**
 * The module's own tables (migrations/0051_cluster_insight.ts), and reads of the clusters, agents, environments and
 * services tables it reports on: it writes none of those.
 */

export interface ClusterFacts {
  id: string;
  organization_id: string;
  name: string;
  kubernetes: string;
  cloud_provider: string;
  region: string;
  status: string;
}

const CLUSTER_FACTS = ['id', 'organization_id', 'name', 'kubernetes', 'cloud_provider', 'region', 'status'] as const;

/** A cluster of the organization that is not deleted. */
export function findLiveCluster(db: Queryable, organizationId: string, clusterId: string): Promise<ClusterFacts | undefined> {
  return db
    .selectFrom('clusters')
    .select(CLUSTER_FACTS)
    .where('organization_id', '=', organizationId)
    .where('id', '=', clusterId)
    .where('status', '!=', 'DELETED')
    .executeTakeFirst();
}

export function findLiveClusterById(db: Queryable, clusterId: string): Promise<ClusterFacts | undefined> {
  return db.selectFrom('clusters').select(CLUSTER_FACTS).where('id', '=', clusterId).where('status', '!=', 'DELETED').executeTakeFirst();
}

/** The self-managed clusters of these organizations, with their operator's enrollment and presence. */
export function listSelfManagedClusters(db: Queryable, organizationIds: readonly string[]) {
  if (organizationIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('clusters')
    .select(CLUSTER_FACTS)
    .where('organization_id', 'in', organizationIds)
    .where('kubernetes', '=', 'SELF_MANAGED')
    .where('status', '!=', 'DELETED')
    .orderBy('organization_id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Whether the cluster's operator ever enrolled, or holds an enrollment token it may still use. */
export async function hasOperatorEnrollment(db: Queryable, clusterId: string): Promise<boolean> {
  const operator = await db.selectFrom('cluster_operators').select('cluster_id').where('cluster_id', '=', clusterId).executeTakeFirst();
  if (operator !== undefined) return true;
  const enrollment = await db.selectFrom('cluster_operator_enrollments').select('cluster_id').where('cluster_id', '=', clusterId).executeTakeFirst();
  return enrollment !== undefined;
}

/** The organizations a person is a member of. */
export async function listMemberOrganizationIds(db: Queryable, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('members')
    .innerJoin('organizations', 'organizations.id', 'members.organization_id')
    .select('members.organization_id as organization_id')
    .where('members.user_id', '=', userId)
    .where('organizations.deleted_at', 'is', null)
    .execute();
  return rows.map((row) => row.organization_id);
}

// ---------------------------------------------------------------- kubeconfig

export async function upsertKubeconfig(db: Queryable, row: { cluster_id: string; kubeconfig_sealed: string; updated_at: string }): Promise<void> {
  await db
    .insertInto('cluster_kubeconfigs')
    .values(row)
    .onConflict((conflict) => conflict.column('cluster_id').doUpdateSet({ kubeconfig_sealed: row.kubeconfig_sealed, updated_at: row.updated_at }))
    .execute();
}

export async function findSealedKubeconfig(db: Queryable, clusterId: string): Promise<string | undefined> {
  const row = await db.selectFrom('cluster_kubeconfigs').select('kubeconfig_sealed').where('cluster_id', '=', clusterId).executeTakeFirst();
  return row?.kubeconfig_sealed;
}

// ---------------------------------------------------------------- events

/** Writes one reported event: a new uid inserts, a known one takes the report's count, message and occurrences. */
export async function upsertClusterEvent(db: Queryable, row: ClusterEventRow): Promise<void> {
  await db
    .insertInto('cluster_insight_events')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['cluster_id', 'uid']).doUpdateSet({
        reason: row.reason,
        message: row.message,
        type: row.type,
        count: row.count,
        node_name: row.node_name,
        first_occurrence: row.first_occurrence,
        last_occurrence: row.last_occurrence,
      }),
    )
    .execute();
}

export function listClusterEvents(
  db: Queryable,
  clusterId: string,
  filter: { from: string; to: string; nodeName?: string | undefined; podName?: string | undefined; reportingComponent?: string | undefined; limit: number },
): Promise<ClusterEventRow[]> {
  let query = db
    .selectFrom('cluster_insight_events')
    .selectAll()
    .where('cluster_id', '=', clusterId)
    .where('last_occurrence', '>=', filter.from)
    .where('last_occurrence', '<=', filter.to);
  if (filter.nodeName !== undefined) query = query.where('node_name', '=', filter.nodeName);
  if (filter.podName !== undefined) query = query.where('pod_name', '=', filter.podName);
  if (filter.reportingComponent !== undefined) query = query.where('reporting_component', '=', filter.reportingComponent);
  return query.orderBy('last_occurrence', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

// ---------------------------------------------------------------- logs

export async function insertClusterLogs(db: Queryable, rows: ClusterLogRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('cluster_insight_logs').values(rows).execute();
}

export function listClusterLogRows(db: Queryable, clusterId: string, limit: number): Promise<ClusterLogRow[]> {
  return db.selectFrom('cluster_insight_logs').selectAll().where('cluster_id', '=', clusterId).orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Keeps the newest `keep` rows of a cluster in one of the bounded tables and deletes the rest (ids are uuid v7, so
 * they break ties between rows of one instant in insertion order).
 */
export async function pruneClusterRows(db: Queryable, table: 'cluster_insight_events' | 'cluster_insight_logs', clusterId: string, keep: number): Promise<void> {
  const order = table === 'cluster_insight_events' ? sql.ref('last_occurrence') : sql.ref('at');
  await sql`
    delete from ${sql.table(table)}
     where cluster_id = ${clusterId}
       and id not in (select id from ${sql.table(table)} where cluster_id = ${clusterId} order by ${order} desc, id desc limit ${keep})`.execute(db);
}

// ---------------------------------------------------------------- operator targets

export function findOperatorTarget(db: Queryable, clusterId: string): Promise<ClusterOperatorTargetRow | undefined> {
  return db.selectFrom('cluster_operator_targets').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
}

export function listOperatorTargets(db: Queryable, clusterIds: readonly string[]): Promise<ClusterOperatorTargetRow[]> {
  if (clusterIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('cluster_operator_targets').selectAll().where('cluster_id', 'in', clusterIds).execute();
}

/** Attaches the operator (once: a second attach keeps the first one's time and targets). */
export async function insertOperatorTarget(db: Queryable, row: ClusterOperatorTargetRow): Promise<void> {
  await db
    .insertInto('cluster_operator_targets')
    .values(row)
    .onConflict((conflict) => conflict.column('cluster_id').doNothing())
    .execute();
}

export async function updateOperatorTarget(
  db: Queryable,
  clusterId: string,
  changes: Pick<ClusterOperatorTargetRow, 'desired_image_version' | 'desired_chart_version' | 'execution_id' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('cluster_operator_targets').set(changes).where('cluster_id', '=', clusterId).execute();
}

// ---------------------------------------------------------------- environments on a cluster

export function listClusterEnvironments(db: Queryable, clusterId: string) {
  return db
    .selectFrom('environments')
    .innerJoin('projects', 'projects.id', 'environments.project_id')
    .select([
      'environments.id as environment_id',
      'environments.name as environment_name',
      'environments.mode as mode',
      'environments.organization_id as organization_id',
      'projects.id as project_id',
      'projects.name as project_name',
    ])
    .where('environments.cluster_id', '=', clusterId)
    .orderBy('projects.name')
    .orderBy('environments.name')
    .orderBy('environments.id')
    .execute();
}

export function listServicesOfEnvironments(db: Queryable, environmentIds: readonly string[]) {
  if (environmentIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('services')
    .select(['id', 'name', 'kind', 'environment_id'])
    .where('environment_id', 'in', environmentIds)
    .orderBy('name')
    .orderBy('id')
    .execute();
}
