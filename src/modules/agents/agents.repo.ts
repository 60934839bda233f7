import { sql, type Selectable } from 'kysely';
import type { DialectName } from '../../db/db.client.ts';
import type { AgentPresenceTable, AgentTasksTable, Queryable } from '../../db/db.schema.ts';
import { STARTING_ACTIONS } from '../../engine/deployment-states.ts';

export type AgentTaskRow = Selectable<AgentTasksTable>;
export type AgentPresenceRow = Selectable<AgentPresenceTable>;

export async function insertAgentTask(db: Queryable, row: AgentTaskRow): Promise<void> {
  await db.insertInto('agent_tasks').values(row).execute();
}

export function findAgentTaskByDeployment(db: Queryable, deploymentId: string): Promise<AgentTaskRow | undefined> {
  return db.selectFrom('agent_tasks').selectAll().where('deployment_id', '=', deploymentId).executeTakeFirst();
}

export function findClusterAgentTask(db: Queryable, clusterId: string, taskId: string): Promise<AgentTaskRow | undefined> {
  return db.selectFrom('agent_tasks').selectAll().where('cluster_id', '=', clusterId).where('id', '=', taskId).executeTakeFirst();
}

/** The key tasks are offered by: their request's time (ISO-8601 UTC text on both dialects), then their id. */
function offerOrder(row: AgentTaskRow): string {
  return new Date(row.requested_at ?? row.created_at).toISOString();
}

/**
 * The position of a service task's deployment stage (its payload's `deployment_stage_order`); a task written before
 * stages existed counts as the default stages did: databases 0, the rest 1.
 */
function stageOrder(table: 'earlier' | 'candidate') {
  const task = sql.ref(table);
  return sql`coalesce(cast(${task}.payload->>'deployment_stage_order' as integer), case when ${task}.payload->>'service_type' = 'DATABASE' then 0 else 1 end)`;
}

/**
 * Leases up to `max` tasks of a cluster, in the order of their requests: those offered (PENDING) and those whose lease ran out (the
 * agent holding them went silent). One statement, so two agents polling at once never lease the same task.
 *
 * An agent runs the tasks it holds side by side, so the order that matters is kept here, as the deployment stages of
 * an environment (docs/agent-protocol.md, "Order"; docs/deployment-stages.md): a task that starts a service is not
 * offered while a service of an earlier stage of its environment (by default: a database, whose first connection an
 * application would otherwise miss) requested before it is still being started, and an environment's own task is not
 * offered while any task of its environment requested before it — its fan-out — is unfinished. Two tasks of one service never meet here: the service's action jobs run one at a time.
 */
export async function leaseAgentTasks(
  db: Queryable,
  dialect: DialectName,
  input: { clusterId: string; leaseId: string; now: string; leasedUntil: string; max: number },
): Promise<AgentTaskRow[]> {
  const time = (value: string) => (dialect === 'postgres' ? sql`cast(${value} as timestamptz)` : sql`${value}`);
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const result = await sql<AgentTaskRow>`
    update agent_tasks
       set status = 'LEASED', lease_id = ${input.leaseId}, leased_until = ${time(input.leasedUntil)},
           leases = leases + 1, updated_at = ${time(input.now)}
     where id in (
       select candidate.id from agent_tasks candidate
        where candidate.cluster_id = ${input.clusterId}
          and (candidate.status = 'PENDING' or (candidate.status = 'LEASED' and candidate.leased_until < ${time(input.now)}))
          and not exists (
            select 1 from agent_tasks earlier
             where earlier.cluster_id = candidate.cluster_id
               and earlier.status in ('PENDING', 'LEASED')
               and earlier.payload->>'environment_id' = candidate.payload->>'environment_id'
               and (coalesce(earlier.requested_at, earlier.created_at) < coalesce(candidate.requested_at, candidate.created_at)
                    or (coalesce(earlier.requested_at, earlier.created_at) = coalesce(candidate.requested_at, candidate.created_at) and earlier.id < candidate.id))
               and (candidate.subject_type = 'ENVIRONMENT'
                    or (candidate.subject_type = 'SERVICE' and candidate.action in (${sql.join(STARTING_ACTIONS)})
                        and earlier.subject_type = 'SERVICE' and earlier.action in (${sql.join(STARTING_ACTIONS)})
                        and ${stageOrder('earlier')} < ${stageOrder('candidate')})))
        order by coalesce(candidate.requested_at, candidate.created_at), candidate.id
        limit ${input.max}
        ${lock})
    returning *`.execute(db);
  return [...result.rows].sort((a, b) => offerOrder(a).localeCompare(offerOrder(b)) || (a.id < b.id ? -1 : 1));
}

/** Applies a change to a task still held under the given lease; false when the lease was lost or the task ended. */
export async function updateLeasedAgentTask(db: Queryable, taskId: string, leaseId: string, changes: Partial<AgentTaskRow>): Promise<boolean> {
  const result = await db
    .updateTable('agent_tasks')
    .set(changes)
    .where('id', '=', taskId)
    .where('lease_id', '=', leaseId)
    .where('status', '=', 'LEASED')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** `updateLeasedAgentTask`, only while the task's last accepted log seq is still `seenLogSeq` (false otherwise). */
export async function claimAgentTaskLogSeqs(db: Queryable, taskId: string, leaseId: string, seenLogSeq: number, changes: Partial<AgentTaskRow>): Promise<boolean> {
  const result = await db
    .updateTable('agent_tasks')
    .set(changes)
    .where('id', '=', taskId)
    .where('lease_id', '=', leaseId)
    .where('status', '=', 'LEASED')
    .where('last_log_seq', '=', seenLogSeq)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Makes the leased tasks of these clusters offered again (their lease runs out now). */
export async function expireAgentTaskLeases(db: Queryable, clusterIds: readonly string[], now: string): Promise<void> {
  await db.updateTable('agent_tasks').set({ leased_until: now, updated_at: now }).where('cluster_id', 'in', clusterIds).where('status', '=', 'LEASED').execute();
}

/** Ends a task that has not ended, whoever holds it. */
export async function closeAgentTask(db: Queryable, taskId: string, changes: Partial<AgentTaskRow>): Promise<void> {
  await db.updateTable('agent_tasks').set(changes).where('id', '=', taskId).where('status', '!=', 'DONE').execute();
}

export async function upsertAgentPresence(db: Queryable, row: AgentPresenceRow): Promise<void> {
  await db
    .insertInto('agent_presence')
    .values(row)
    .onConflict((oc) =>
      oc.column('cluster_id').doUpdateSet({
        agent_version: row.agent_version,
        driver: row.driver,
        hostname: row.hostname,
        started_at: row.started_at,
        last_seen_at: row.last_seen_at,
        kubernetes_version: row.kubernetes_version,
        node_count: row.node_count,
        missing_permissions: row.missing_permissions,
        cert_manager_issuer: row.cert_manager_issuer,
      }),
    )
    .execute();
}

export function findAgentPresence(db: Queryable, clusterId: string): Promise<AgentPresenceRow | undefined> {
  return db.selectFrom('agent_presence').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
}

export async function countOpenAgentTasks(db: Queryable, clusterId: string): Promise<number> {
  const row = await db
    .selectFrom('agent_tasks')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('cluster_id', '=', clusterId)
    .where('status', '!=', 'DONE')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
