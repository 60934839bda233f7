import type { Insertable, Selectable, Updateable } from 'kysely';
import type { ClusterAnalysesTable, ClusterAnalysisLogsTable, ClusterSettingsTable, Queryable } from '../../db/db.schema.ts';

export type ClusterSettingsRow = Selectable<ClusterSettingsTable>;
export type ClusterAnalysisRow = Selectable<ClusterAnalysesTable>;
export type ClusterAnalysisLogRow = Selectable<ClusterAnalysisLogsTable>;

/** The columns one operation sets; the others keep their value (or null on a new row). */
export type ClusterSettingsChange = Omit<Updateable<ClusterSettingsTable>, 'cluster_id' | 'organization_id' | 'created_at'>;

export function findClusterSettings(db: Queryable, clusterId: string): Promise<ClusterSettingsRow | undefined> {
  return db.selectFrom('cluster_settings').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
}

/**
 * Writes some columns of a cluster's row in one statement (insert, or update on conflict), so two operations setting
 * different columns at once both keep their change.
 */
export async function upsertClusterSettings(
  db: Queryable,
  key: { clusterId: string; organizationId: string; now: string },
  change: ClusterSettingsChange,
): Promise<void> {
  const row: Insertable<ClusterSettingsTable> = {
    cluster_id: key.clusterId,
    organization_id: key.organizationId,
    created_at: key.now,
    updated_at: key.now,
    ...change,
  };
  await db
    .insertInto('cluster_settings')
    .values(row)
    .onConflict((conflict) => conflict.column('cluster_id').doUpdateSet({ ...change, updated_at: key.now }))
    .execute();
}

export async function insertAnalysis(db: Queryable, row: ClusterAnalysisRow): Promise<void> {
  await db.insertInto('cluster_analyses').values(row).execute();
}

export function findAnalysis(db: Queryable, clusterId: string, analysisId: string): Promise<ClusterAnalysisRow | undefined> {
  return db.selectFrom('cluster_analyses').selectAll().where('cluster_id', '=', clusterId).where('id', '=', analysisId).executeTakeFirst();
}

export function findAnalysisById(db: Queryable, analysisId: string): Promise<ClusterAnalysisRow | undefined> {
  return db.selectFrom('cluster_analyses').selectAll().where('id', '=', analysisId).executeTakeFirst();
}

export function findActiveAnalysis(db: Queryable, clusterId: string): Promise<ClusterAnalysisRow | undefined> {
  return db.selectFrom('cluster_analyses').selectAll().where('active_cluster_id', '=', clusterId).executeTakeFirst();
}

/** Newest first. */
export function listAnalyses(db: Queryable, clusterId: string, limit: number): Promise<ClusterAnalysisRow[]> {
  return db.selectFrom('cluster_analyses').selectAll().where('cluster_id', '=', clusterId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Moves an analysis from one status to another; false when it was no longer in `from` (another run got there). */
export async function moveAnalysis(
  db: Queryable,
  analysisId: string,
  from: string,
  to: { status: string; errorMessage?: string | null; now: string; active: boolean; clusterId: string },
): Promise<boolean> {
  const result = await db
    .updateTable('cluster_analyses')
    .set({
      status: to.status,
      updated_at: to.now,
      active_cluster_id: to.active ? to.clusterId : null,
      ...(to.errorMessage === undefined ? {} : { error_message: to.errorMessage }),
    })
    .where('id', '=', analysisId)
    .where('status', '=', from)
    .executeTakeFirst();
  return (result.numUpdatedRows ?? 0n) > 0n;
}

export async function insertAnalysisLogs(db: Queryable, rows: ClusterAnalysisLogRow[]): Promise<void> {
  // Chunks keep each statement under SQLite's bound-parameter limit.
  for (let start = 0; start < rows.length; start += 100) {
    await db.insertInto('cluster_analysis_logs').values(rows.slice(start, start + 100)).execute();
  }
}

export async function deleteAnalysisLogs(db: Queryable, analysisId: string): Promise<void> {
  await db.deleteFrom('cluster_analysis_logs').where('analysis_id', '=', analysisId).execute();
}

export function listAnalysisLogs(db: Queryable, analysisId: string): Promise<ClusterAnalysisLogRow[]> {
  return db.selectFrom('cluster_analysis_logs').selectAll().where('analysis_id', '=', analysisId).orderBy('line_order').execute();
}

// What an analysis reads of the rest of the installation. Reads only: each of these tables is written by its own
// module (clusters, agents, deployments, certificates); the analysis reports on them and changes nothing.

export function readClusterForDiagnosis(db: Queryable, clusterId: string) {
  return db
    .selectFrom('clusters')
    .select(['id', 'name', 'kubernetes', 'cloud_provider', 'status', 'status_message', 'version', 'min_running_nodes', 'max_running_nodes', 'instance_type'])
    .where('id', '=', clusterId)
    .executeTakeFirst();
}

export function readAgentPresence(db: Queryable, clusterId: string) {
  return db.selectFrom('agent_presence').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
}

export function readClusterOperator(db: Queryable, clusterId: string) {
  return db.selectFrom('cluster_operators').select(['reported_status', 'kubernetes_version', 'reported_at']).where('cluster_id', '=', clusterId).executeTakeFirst();
}

export function readAgentTasks(db: Queryable, clusterId: string, finishedSince: string) {
  return db
    .selectFrom('agent_tasks')
    .select(['id', 'subject_type', 'subject_id', 'action', 'status', 'outcome', 'requested_at', 'created_at', 'finished_at', 'leases'])
    .where('cluster_id', '=', clusterId)
    .where((where) => where.or([where('status', '!=', 'DONE'), where('finished_at', '>=', finishedSince)]))
    .orderBy('created_at')
    .execute();
}

export function readAgentCertificates(db: Queryable, clusterId: string) {
  return db.selectFrom('agent_certificates').select(['hostname', 'status', 'error', 'expires_at']).where('cluster_id', '=', clusterId).orderBy('hostname').execute();
}

/** The cluster's services (through their environments) with their runtime state. */
export function readClusterServices(db: Queryable, clusterId: string) {
  return db
    .selectFrom('services')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .leftJoin('service_runtime', 'service_runtime.service_id', 'services.id')
    .select([
      'services.id as id',
      'services.name as name',
      'services.kind as kind',
      'environments.id as environment_id',
      'environments.name as environment_name',
      'service_runtime.status as status',
      'service_runtime.workload_health as workload_health',
      'service_runtime.workload_restarts as workload_restarts',
      'service_runtime.workload_message as workload_message',
    ])
    .where('environments.cluster_id', '=', clusterId)
    .orderBy('environments.name_key')
    .orderBy('services.name_key')
    .execute();
}

/** Certificates the control plane obtains for the cluster's services: their own host names and their custom domains. */
export function readServiceCertificates(db: Queryable, serviceIds: readonly string[]) {
  if (serviceIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('certificates')
    .leftJoin('service_custom_domains', 'service_custom_domains.id', 'certificates.custom_domain_id')
    .select(['certificates.hostname as hostname', 'certificates.status as status', 'certificates.last_error as last_error', 'certificates.not_after as not_after'])
    .where((where) => where.or([where('certificates.service_id', 'in', serviceIds), where('service_custom_domains.service_id', 'in', serviceIds)]))
    .orderBy('certificates.hostname')
    .execute();
}

/** The organization's cluster as these settings need it (undefined when it is not the organization's, or deleted). */
export async function readClusterRecord(db: Queryable, organizationId: string, clusterId: string) {
  const row = await db
    .selectFrom('clusters')
    .select(['id', 'organization_id', 'name', 'status', 'kubernetes', 'cloud_provider', 'region', 'credentials_id', 'version', 'settings'])
    .where('organization_id', '=', organizationId)
    .where('id', '=', clusterId)
    .executeTakeFirst();
  return row === undefined || row.status === 'DELETED' ? undefined : row;
}
export type ClusterRecord = NonNullable<Awaited<ReturnType<typeof readClusterRecord>>>;
