import type { Insertable, Selectable, Updateable } from 'kysely';
import type { EnvironmentDeploymentsTable, Queryable, ServiceDeploymentLogsTable, ServiceDeploymentsTable, ServiceRuntimeTable } from '../../db/db.schema.ts';
import { HISTORY_ACTION, STARTING_ACTIONS } from '../../engine/deployment-states.ts';

/**
 * The deployments module's tables: environment_deployments (an environment's actions), service_runtime (a
 * service's place in the state machine), service_deployments (a service's actions with their snapshots) and
 * service_deployment_logs. An environment's own place in the machine is a column of its row, which the
 * environments module writes (deployments.environment-requests.ts reaches it through that module's port).
 */

export type EnvironmentDeploymentRow = Selectable<EnvironmentDeploymentsTable>;
export type ServiceRuntimeRow = Selectable<ServiceRuntimeTable>;
export type ServiceDeploymentRow = Selectable<ServiceDeploymentsTable>;
export type ServiceDeploymentLogRow = Selectable<ServiceDeploymentLogsTable>;

export function findRuntime(db: Queryable, serviceId: string): Promise<ServiceRuntimeRow | undefined> {
  return db.selectFrom('service_runtime').selectAll().where('service_id', '=', serviceId).executeTakeFirst();
}

/** The services whose running deployment is in one of `statuses` (DEPLOYED, RESTARTED). */
export async function listServiceIdsInStatus(db: Queryable, statuses: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('service_runtime').select('service_id').where('status', 'in', [...statuses]).where('deployed_deployment_id', 'is not', null).orderBy('service_id').execute();
  return rows.map((row) => row.service_id);
}

export async function insertRuntime(db: Queryable, row: ServiceRuntimeRow): Promise<void> {
  await db.insertInto('service_runtime').values(row).execute();
}

/**
 * Changes a service's runtime only if it is still in `expectedStatus`: every state change is a compare-and-set, so
 * two requests (or a request and the agent) racing on one service cannot both move it.
 */
export async function updateRuntimeInStatus(db: Queryable, serviceId: string, expectedStatus: string, changes: Updateable<ServiceRuntimeTable>): Promise<boolean> {
  const result = await db.updateTable('service_runtime').set(changes).where('service_id', '=', serviceId).where('status', '=', expectedStatus).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertServiceDeployment(db: Queryable, row: Insertable<ServiceDeploymentsTable>): Promise<void> {
  await db.insertInto('service_deployments').values(row).execute();
}

export function findServiceDeployment(db: Queryable, id: string): Promise<ServiceDeploymentRow | undefined> {
  return db.selectFrom('service_deployments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateServiceDeployment(db: Queryable, id: string, changes: Updateable<ServiceDeploymentsTable>): Promise<void> {
  await db.updateTable('service_deployments').set(changes).where('id', '=', id).execute();
}

/**
 * The deployments of an environment's services that have not ended (queued or under way). With `startsBefore`: only
 * those that start one of `serviceIds` (deploy, redeploy, restart) requested at or before `at` — what a service of a
 * later deployment stage started then waits for (docs/deployment-stages.md).
 */
export async function listOpenDeploymentIdsOfEnvironment(
  db: Queryable,
  environmentId: string,
  options: { startsBefore?: { at: string; serviceIds: readonly string[] } } = {},
): Promise<string[]> {
  let query = db
    .selectFrom('service_deployments')
    .innerJoin('services', 'services.id', 'service_deployments.service_id')
    .select('service_deployments.id')
    .where('services.environment_id', '=', environmentId)
    .where('service_deployments.finished_at', 'is', null);
  if (options.startsBefore !== undefined) {
    if (options.startsBefore.serviceIds.length === 0) return [];
    query = query
      .where('service_deployments.service_id', 'in', [...options.startsBefore.serviceIds])
      .where('service_deployments.action', 'in', STARTING_ACTIONS.map((action) => HISTORY_ACTION[action]))
      .where('service_deployments.created_at', '<=', options.startsBefore.at);
  }
  return (await query.execute()).map((row) => row.id);
}

/** The service deployments an environment action's fan-out requested, in their stages' order, then request order. */
export function listServiceDeploymentsOfEnvironmentDeployment(db: Queryable, environmentDeploymentId: string): Promise<ServiceDeploymentRow[]> {
  return db
    .selectFrom('service_deployments')
    .selectAll()
    .where('environment_deployment_id', '=', environmentDeploymentId)
    .orderBy('deployment_stage_order')
    .orderBy('id')
    .execute();
}

/** The jobs of a service's actions that may still wait (to withdraw them when it is removed). */
export async function listServiceDeploymentJobIds(db: Queryable, serviceId: string): Promise<string[]> {
  const rows = await db.selectFrom('service_deployments').select('job_id').where('service_id', '=', serviceId).where('finished_at', 'is', null).execute();
  return rows.map((r) => r.job_id);
}

/** One page of history, newest first: the records older than `beforeId` (all when undefined). */
export function listServiceDeploymentsPage(db: Queryable, serviceId: string, limit: number, beforeId: string | undefined): Promise<ServiceDeploymentRow[]> {
  let query = db.selectFrom('service_deployments').selectAll().where('service_id', '=', serviceId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** How many records are newer than `id` (the page number of a cursor). */
export async function countServiceDeploymentsNewerThan(db: Queryable, serviceId: string, id: string): Promise<number> {
  const row = await db
    .selectFrom('service_deployments')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('service_id', '=', serviceId)
    .where('id', '>', id)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** The highest sequence number of a deployment's lines (0 when it has none). */
export async function lastLogSeq(db: Queryable, deploymentId: string): Promise<number> {
  const row = await db
    .selectFrom('service_deployment_logs')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('deployment_id', '=', deploymentId)
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/**
 * Takes `count` seqs for a deployment's new lines and answers the first, or undefined when the deployment does not
 * exist. The counter's update locks the deployment's row until the transaction ends (PostgreSQL), so concurrent
 * writers of one log are numbered one after the other.
 */
export async function takeLogSeqs(db: Queryable, deploymentId: string, count: number): Promise<number | undefined> {
  const row = await db
    .updateTable('service_deployments')
    .set((eb) => ({ log_seq: eb('log_seq', '+', count) }))
    .where('id', '=', deploymentId)
    .returning('log_seq')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.log_seq) - count + 1;
}

export async function insertLogLines(db: Queryable, rows: ServiceDeploymentLogRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('service_deployment_logs').values(rows).execute();
}

/** Which of a deployment's lines a read keeps; an absent field keeps every line. */
export interface LogLineFilter {
  /** Printed at or after this time (ISO-8601). */
  since?: string | undefined;
  /** Printed by this instance of the workload. */
  instance?: string | undefined;
  /** On one of these streams. */
  streams?: readonly string[] | undefined;
}

function logLinesMatching(db: Queryable, deploymentId: string, filter: LogLineFilter) {
  let query = db.selectFrom('service_deployment_logs').selectAll().where('deployment_id', '=', deploymentId);
  if (filter.since !== undefined) query = query.where('logged_at', '>=', filter.since);
  if (filter.instance !== undefined) query = query.where('instance', '=', filter.instance);
  if (filter.streams !== undefined) query = query.where('stream', 'in', [...filter.streams]);
  return query;
}

/** A deployment's lines after `afterSeq` that pass `filter`, in order, at most `limit`. */
export function listLogLines(db: Queryable, deploymentId: string, afterSeq: number, limit: number, filter: LogLineFilter = {}): Promise<ServiceDeploymentLogRow[]> {
  return logLinesMatching(db, deploymentId, filter).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
}

/** The last `limit` lines of a deployment after `afterSeq` (and up to `upToSeq`) that pass `filter`, in order. */
export async function listLastLogLines(
  db: Queryable,
  deploymentId: string,
  range: { afterSeq: number; upToSeq?: number | undefined },
  limit: number,
  filter: LogLineFilter = {},
): Promise<ServiceDeploymentLogRow[]> {
  let query = logLinesMatching(db, deploymentId, filter).where('seq', '>', range.afterSeq);
  if (range.upToSeq !== undefined) query = query.where('seq', '<=', range.upToSeq);
  const rows = await query
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** A service's deployments newer than `id` (all when null), oldest first, at most `limit`. */
export function listServiceDeploymentsAfter(db: Queryable, serviceId: string, id: string | null, limit: number): Promise<ServiceDeploymentRow[]> {
  let query = db.selectFrom('service_deployments').selectAll().where('service_id', '=', serviceId);
  if (id !== null) query = query.where('id', '>', id);
  return query.orderBy('id').limit(limit).execute();
}

export async function insertEnvironmentDeployment(db: Queryable, row: EnvironmentDeploymentRow): Promise<void> {
  await db.insertInto('environment_deployments').values(row).execute();
}

export function findEnvironmentDeployment(db: Queryable, id: string): Promise<EnvironmentDeploymentRow | undefined> {
  return db.selectFrom('environment_deployments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateEnvironmentDeployment(db: Queryable, id: string, changes: Updateable<EnvironmentDeploymentsTable>): Promise<void> {
  await db.updateTable('environment_deployments').set(changes).where('id', '=', id).execute();
}

/**
 * Whether the environment's deployment has not ended, holding its row until the transaction ends: an update that
 * changes nothing, so that on PostgreSQL a cancel writing the same row waits for this transaction or is waited for.
 */
export async function lockOpenEnvironmentDeployment(db: Queryable, id: string): Promise<boolean> {
  const result = await db
    .updateTable('environment_deployments')
    .set((eb) => ({ finished_at: eb.ref('finished_at') }))
    .where('id', '=', id)
    .where('finished_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The jobs of an environment's actions that may still wait (to withdraw them when it is removed), as for a service. */
export async function listEnvironmentDeploymentJobIds(db: Queryable, environmentId: string): Promise<string[]> {
  const rows = await db.selectFrom('environment_deployments').select('job_id').where('environment_id', '=', environmentId).where('finished_at', 'is', null).execute();
  return rows.map((r) => r.job_id);
}

/** One page of an environment's history, newest first: the records older than `beforeId` (all when undefined). */
export function listEnvironmentDeploymentsPage(db: Queryable, environmentId: string, limit: number, beforeId: string | undefined): Promise<EnvironmentDeploymentRow[]> {
  let query = db.selectFrom('environment_deployments').selectAll().where('environment_id', '=', environmentId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** How many of an environment's records are newer than `id` (the page number of a cursor). */
export async function countEnvironmentDeploymentsNewerThan(db: Queryable, environmentId: string, id: string): Promise<number> {
  const row = await db
    .selectFrom('environment_deployments')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('environment_id', '=', environmentId)
    .where('id', '>', id)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** An environment's actions not ended yet (queued or under way), oldest first: its part of the deployment queue. */
export function listOpenEnvironmentDeployments(db: Queryable, environmentId: string): Promise<EnvironmentDeploymentRow[]> {
  return db.selectFrom('environment_deployments').selectAll().where('environment_id', '=', environmentId).where('finished_at', 'is', null).orderBy('id').execute();
}

/** The actions of an environment's services not ended yet, oldest first (one service's only, when `serviceId` is given). */
export function listOpenServiceDeployments(db: Queryable, scope: { environmentId: string } | { serviceId: string }): Promise<ServiceDeploymentRow[]> {
  let query = db.selectFrom('service_deployments').innerJoin('services', 'services.id', 'service_deployments.service_id').selectAll('service_deployments');
  query = 'serviceId' in scope ? query.where('service_deployments.service_id', '=', scope.serviceId) : query.where('services.environment_id', '=', scope.environmentId);
  return query.where('service_deployments.finished_at', 'is', null).orderBy('service_deployments.id').execute();
}

/** The newest deployments of an environment's services, newest first, at most `limit`. */
export function listRecentServiceDeploymentsOfEnvironment(db: Queryable, environmentId: string, limit: number): Promise<ServiceDeploymentRow[]> {
  return db
    .selectFrom('service_deployments')
    .innerJoin('services', 'services.id', 'service_deployments.service_id')
    .selectAll('service_deployments')
    .where('services.environment_id', '=', environmentId)
    .orderBy('service_deployments.id', 'desc')
    .limit(limit)
    .execute();
}

/** The environment a deployment request (an environment's deployment record, or a service's) belongs to. */
export async function findDeploymentRequestEnvironmentId(db: Queryable, deploymentRequestId: string): Promise<string | undefined> {
  const environment = await db.selectFrom('environment_deployments').select('environment_id').where('id', '=', deploymentRequestId).executeTakeFirst();
  if (environment !== undefined) return environment.environment_id;
  const service = await db
    .selectFrom('service_deployments')
    .innerJoin('services', 'services.id', 'service_deployments.service_id')
    .select('services.environment_id')
    .where('service_deployments.id', '=', deploymentRequestId)
    .executeTakeFirst();
  return service?.environment_id;
}
