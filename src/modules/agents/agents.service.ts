import type { Kysely, Transaction } from 'kysely';
import type { AgentHeartbeat, AgentProgressEvent, AgentSubjectType, ServiceDeploymentSpec } from '../../protocol/agent-protocol.ts';
import type { DialectName } from '../../db/db.client.ts';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import type { ChangeSignals } from '../../db/db.signals.ts';
import type { AgentCertificateReport, AgentCertificateReportAnswer, WorkloadHealth } from '../../protocol/agent-protocol.ts';
import { expediteJob, findJob } from '../../jobs/job-queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { activeTraceparent } from '../../lib/tracing.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';
import type { AgentTaskMetrics } from './agents.metrics.ts';
import {
  countOpenAgentTasks,
  findAgentPresence,
  findAgentTaskByDeployment,
  findClusterAgentTask,
  insertAgentTask,
  leaseAgentTasks,
  closeAgentTask,
  expireAgentTaskLeases,
  updateLeasedAgentTask,
  claimAgentTaskLogSeqs,
  upsertAgentPresence,
  type AgentTaskRow,
} from './agents.repo.ts';

/**
 * The control plane's side of the agent protocol (docs/agent-protocol.md). Environment and service actions are
 * carried out by the agent of the subject's cluster: the action's job dispatches a task into the cluster's mailbox
 * and waits; the agent leases tasks (long-poll), reports each phase and its log lines under the lease, and
 * heartbeats. Reports carry a sequence number per task, so a retried report changes nothing; a report under a lost
 * lease is refused (409), so two agents holding one credential never both drive one task.
 */

/** SERVICE_TEARDOWN: removing what a deleted service left on the cluster (its record is gone; the payload says what). */

const SETTLING: Partial<Record<AgentProgressEvent, 'SUCCEEDED' | 'FAILED' | 'CANCELED'>> = {
  succeed: 'SUCCEEDED',
  fail: 'FAILED',
  cancel_done: 'CANCELED',
};

export interface AgentLogLine {
  seq: number;
  at: string;
  stream: 'stdout' | 'stderr' | 'system';
  line: string;
}

/** What the module whose state machine a task drives (environments, services) offers the agents module. */
export interface AgentSubject {
  /** Moves the subject through its transition table; throws conflict when the table has no such move. */
  recordProgress(subjectId: string, deploymentId: string, event: AgentProgressEvent, message?: string): Promise<{ status: string }>;
  /**
   * Whether the deployment still waits to be carried out: the subject exists and the record has not ended (it ends
   * when the action settles, and at once when it is canceled while queued). A task whose deployment closed is withdrawn.
   */
  deploymentOpen(subjectId: string, deploymentId: string): Promise<boolean>;
  /** The subject's current status (a cancel shows as CANCELING), undefined once it is gone. */
  statusOf(subjectId: string): Promise<string | undefined>;
  /**
   * What the agent needs to carry the deployment out: the subject's settings as deployed and its variables with
   * secrets opened. Read only by the lease holder; absent where the task needs nothing beyond its payload.
   */
  specOf?(subjectId: string, deploymentId: string): Promise<ServiceDeploymentSpec>;
  /**
   * Stores log lines of the deployment if `claim`, run first in the same transaction, says so (answers whether they
   * were stored); absent where the subject keeps no logs of its own.
   */
  appendLogs?(deploymentId: string, lines: Array<Omit<AgentLogLine, 'seq'>>, claim: (trx: Transaction<DB>) => Promise<boolean>): Promise<boolean>;
}

export interface WorkloadHealthReport {
  health: WorkloadHealth;
  restarts: number;
  message?: string | undefined;
}

/** Until the services module reports service progress, no service task exists, and none could be reported. */
export interface DispatchRequest {
  clusterId: string;
  organizationId: string;
  subjectType: AgentSubjectType;
  subjectId: string;
  deploymentId: string;
  action: string;
  payload: Record<string, unknown>;
  jobId: string;
  /** When the action was requested (tasks are offered in this order); the dispatch time when absent. */
  requestedAt?: string | undefined;
}

export interface AgentsDeps {
  db: Kysely<DB>;
  dialect: DialectName;
  clock: Clock;
  subjects: Record<AgentSubjectType, AgentSubject>;
  /**
   * What agents say of deployed workloads outside any task: their output (the services module's appendWorkloadLog)
   * and their health (recordWorkloadHealth); 404 without it.
   */
  workloads?: {
    appendLogs(serviceId: string, clusterId: string, lines: Array<{ at: string; stream: AgentLogLine['stream']; line: string; instance?: string }>): Promise<void>;
    recordHealth(serviceId: string, clusterId: string, report: WorkloadHealthReport): Promise<void>;
    /** The hostnames each of these services running on the cluster is reached by now; the others are left out. */
    routesOf(clusterId: string, serviceIds: readonly string[]): Promise<Array<{ service_id: string; hostnames: string[] }>>;
  };
  /**
   * What agents of clusters that obtain their own certificates (Kubernetes with cert-manager) say of their hostnames'
   * certificates (the certificates module's cluster reports); 404 without it.
   */
  certificateReports?: { record(clusterId: string, report: AgentCertificateReport): Promise<AgentCertificateReportAnswer> } | undefined;
  /** Wakes this process's job worker after a task settles (its dispatching job can finish at once). */
  wakeWorkers(): void;
  /**
   * The permissions a Kubernetes agent reported missing, for the cluster's status message (the clusters module's
   * noteAgentPermissions: the message is the cluster's to write).
   */
  agentPermissions?: ((clusterId: string, missing: readonly string[]) => Promise<void>) | undefined;
  /** How long a lease lasts without a report (default 60 s); every accepted report renews it. */
  leaseMs?: number | undefined;
  /** How often agents are asked to heartbeat (default 15 s); three missed beats make the cluster unreachable. */
  heartbeatIntervalMs?: number | undefined;
  /** How often a long-poll looks at the database for tasks dispatched by another replica (default 1 s). */
  pollMs?: number | undefined;
  /**
   * Change signals between the processes sharing the database (db.signals.ts): work dispatched, or a task settled, on
   * one replica wakes the long-polls of its cluster on every replica at once. Without them, this process's only.
   */
  signals?: Pick<ChangeSignals, 'publish' | 'subscribe'> | undefined;
  /** Records each settled task's duration (agents.metrics.ts); none when absent. */
  metrics?: AgentTaskMetrics | undefined;
  /**
   * Open pages' "look again" (organization-changes.signals.ts): a heartbeat that changes how the cluster's agent
   * shows (it connects, comes back after being unreachable, or runs another version, driver or host) publishes it.
   */
  stateChanges?: Pick<StateChangePublisher, 'clusterChanged'> | undefined;
}

export const MAX_LEASE_WAIT_MS = 30_000;

/** The signal channel of "a cluster's mailbox changed": its payload is the cluster's id. */
export const AGENT_WORK_SIGNAL_CHANNEL = 'agent_work';

export function createAgentsService(deps: AgentsDeps) {
  const { db, clock } = deps;
  const leaseMs = deps.leaseMs ?? 60_000;
  const heartbeatIntervalMs = deps.heartbeatIntervalMs ?? 15_000;
  const pollMs = deps.pollMs ?? 1_000;
  /** Long-polls of this process waiting per cluster, woken when this process dispatches to the cluster or a task there settles. */
  const waiting = new Map<string, Set<() => void>>();

  /** Waiters for work on any cluster (the in-process agent serves several). */
  const waitingForAny = new Set<() => void>();

  /** Wakes this process's long-polls of the cluster; all of them when signals may have been missed (`undefined`). */
  function wakeWaiters(clusterId: string | undefined): void {
    const clusters = clusterId === undefined ? [...waiting.keys()] : [clusterId];
    for (const id of clusters) for (const wake of [...(waiting.get(id) ?? [])]) wake();
    for (const wake of [...waitingForAny]) wake();
  }
  deps.signals?.subscribe(AGENT_WORK_SIGNAL_CHANNEL, wakeWaiters);

  function notify(clusterId: string): void {
    if (deps.signals === undefined) wakeWaiters(clusterId);
    else deps.signals.publish(AGENT_WORK_SIGNAL_CHANNEL, clusterId);
  }

  function waitForWork(clusterId: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const waiters = waiting.get(clusterId) ?? new Set<() => void>();
      waiting.set(clusterId, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) waiting.delete(clusterId);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      signal?.addEventListener('abort', done);
    });
  }

  function taskView(row: AgentTaskRow) {
    return {
      id: row.id,
      subject_type: row.subject_type as AgentSubjectType,
      subject_id: row.subject_id,
      deployment_id: row.deployment_id,
      action: row.action,
      payload: readJson<Record<string, unknown>>(row.payload),
      lease_id: row.lease_id ?? '',
      lease_expires_at: row.leased_until ?? '',
      attempt: row.leases,
      last_report_seq: row.last_report_seq,
      last_log_seq: row.last_log_seq,
      accepts_logs: deps.subjects[row.subject_type as AgentSubjectType].appendLogs !== undefined,
      ...(row.trace_context === null ? {} : { traceparent: row.trace_context }),
    };
  }

  async function requireTask(clusterId: string, taskId: string): Promise<AgentTaskRow> {
    const row = await findClusterAgentTask(db, clusterId, taskId);
    if (row === undefined) throw notFound(`task ${taskId} not found`);
    return row;
  }

  function subjectOf(row: AgentTaskRow): AgentSubject {
    return deps.subjects[row.subject_type as AgentSubjectType];
  }

  function renewedLease(): { updated_at: string; leased_until: string } {
    const now = clock.now();
    return { updated_at: now.toISOString(), leased_until: new Date(now.getTime() + leaseMs).toISOString() };
  }

  function refuseLostLease(row: AgentTaskRow, leaseId: string): void {
    if (row.status === 'DONE') throw conflict(`task ${row.id} has already ended (${row.outcome ?? 'DONE'})`);
    if (row.lease_id !== leaseId) throw conflict(`task ${row.id} is no longer leased under ${leaseId}: lease it again`);
  }

  /**
   * Whether a task is still wanted: its dispatching job waits for it and its deployment is open. The action may
   * have been canceled while queued, or its subject deleted, after the task was dispatched.
   */
  async function stillWanted(row: AgentTaskRow): Promise<boolean> {
    const job = await findJob(db, row.job_id);
    if (job === undefined || (job.status !== 'QUEUED' && job.status !== 'RUNNING')) return false;
    return subjectOf(row).deploymentOpen(row.subject_id, row.deployment_id);
  }

  /** Ends a task no one wants any more as CANCELED, whoever holds it. */
  async function withdraw(row: AgentTaskRow): Promise<void> {
    const now = clock.now().toISOString();
    await closeAgentTask(db, row.id, { status: 'DONE', outcome: 'CANCELED', finished_at: now, updated_at: now, lease_id: null, leased_until: null });
  }

  /** Leased tasks minus the withdrawn ones, which end instead of reaching an agent that could only be refused. */
  async function withoutWithdrawn(rows: AgentTaskRow[]): Promise<AgentTaskRow[]> {
    const live: AgentTaskRow[] = [];
    for (const row of rows) {
      if (await stillWanted(row)) live.push(row);
      else await withdraw(row);
    }
    return live;
  }

  /**
   * Applies a phase to the subject. A task offered again after its holder went silent (attempt 2 and later) starts
   * over, so its new holder repeats the phases the first one already reported (`take` of a deploy now BUILDING,
   * `built` of one now DEPLOYING): those are acknowledged as they stand rather than refused, or the task could never
   * be carried out again. Settling phases and first attempts get the transition table's answer as it is.
   */
  async function recordOrRepeat(row: AgentTaskRow, subject: AgentSubject, report: { event: AgentProgressEvent; message?: string | undefined }) {
    try {
      return await subject.recordProgress(row.subject_id, row.deployment_id, report.event, report.message);
    } catch (error) {
      const repeatable = row.leases > 1 && (report.event === 'take' || report.event === 'built');
      const status = repeatable && error instanceof AppError && error.kind === 'conflict' ? await subject.statusOf(row.subject_id) : undefined;
      if (status === undefined) throw error;
      return { status };
    }
  }

  /** What a heartbeat is answered: the server's time and the protocol's timings. */
  function heartbeatAnswer() {
    return { server_time: clock.now().toISOString(), heartbeat_interval_seconds: heartbeatIntervalMs / 1000, lease_seconds: leaseMs / 1000 };
  }

  return {
    /**
     * Puts an action into its cluster's mailbox once (per deployment): a dispatching job that runs again after a
     * crash finds the task it created before.
     */
    async dispatchTask(request: DispatchRequest): Promise<AgentTaskRow> {
      const existing = await findAgentTaskByDeployment(db, request.deploymentId);
      if (existing !== undefined) return existing;
      const now = clock.now().toISOString();
      const row: AgentTaskRow = {
        id: newId(),
        cluster_id: request.clusterId,
        organization_id: request.organizationId,
        subject_type: request.subjectType,
        subject_id: request.subjectId,
        deployment_id: request.deploymentId,
        action: request.action,
        payload: writeJson(request.payload),
        job_id: request.jobId,
        status: 'PENDING',
        lease_id: null,
        leased_until: null,
        leases: 0,
        last_report_seq: 0,
        last_log_seq: 0,
        outcome: null,
        requested_at: request.requestedAt ?? now,
        created_at: now,
        updated_at: now,
        finished_at: null,
        // Dispatched by a job run: the agent's work is a span of that run's trace (docs/operations.md, "Traces").
        trace_context: activeTraceparent() ?? null,
      };
      try {
        await insertAgentTask(db, row);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        const raced = await findAgentTaskByDeployment(db, request.deploymentId);
        if (raced === undefined) throw error;
        return raced;
      }
      notify(request.clusterId);
      return row;
    },

    /**
     * Offers again, at once, the tasks of these clusters that an agent holds: for an agent that knows it is the only
     * one of its clusters and was restarted (the in-process agent of the LOCAL clusters), so work its previous run
     * held resumes without waiting for the lease to run out.
     */
    async releaseLeases(clusterIds: readonly string[]): Promise<void> {
      if (clusterIds.length === 0) return;
      await expireAgentTaskLeases(db, clusterIds, clock.now().toISOString());
    },

    /**
     * Resolves when this process dispatches work to any cluster or a task there settles, after `ms` at the latest (work
     * dispatched by another replica, or a lease running out, is seen on the next look), or when `signal` aborts.
     */
    waitForAnyWork(ms: number, signal?: AbortSignal): Promise<void> {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waitingForAny.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waitingForAny.add(done);
        signal?.addEventListener('abort', done);
      });
    },

    /** Whether the deployment's task was put into its cluster's mailbox already (by an earlier run of its job). */
    async taskDispatched(deploymentId: string): Promise<boolean> {
      return (await findAgentTaskByDeployment(db, deploymentId)) !== undefined;
    },

    /**
     * Where a dispatched task stands, for its job: settled by the agent, withdrawn now because its deployment closed
     * without it (canceled while queued, subject deleted), or still waiting. The job finishes unless it waits.
     */
    async dispatchedTaskOutcome(deploymentId: string): Promise<'settled' | 'withdrawn' | 'waiting'> {
      const row = await findAgentTaskByDeployment(db, deploymentId);
      if (row === undefined || row.status === 'DONE') return 'settled';
      // A holder whose lease runs settles the task itself: its settling report closes the deployment a moment before
      // the task, and withdrawing it in between would refuse that very report. Only a task no one holds is withdrawn.
      if (row.status === 'LEASED' && row.leased_until !== null && Date.parse(row.leased_until) > clock.now().getTime()) return 'waiting';
      if (await subjectOf(row).deploymentOpen(row.subject_id, row.deployment_id)) return 'waiting';
      await withdraw(row);
      return 'withdrawn';
    },

    /** Long-poll: leases up to `max` tasks, waiting up to `waitMs` for one to arrive when none is there. */
    async leaseTasks(clusterId: string, options: { max: number; waitMs: number; signal?: AbortSignal }) {
      const deadline = clock.now().getTime() + Math.min(options.waitMs, MAX_LEASE_WAIT_MS);
      for (;;) {
        const now = clock.now();
        const rows = await leaseAgentTasks(db, deps.dialect, {
          clusterId,
          leaseId: newId(),
          now: now.toISOString(),
          leasedUntil: new Date(now.getTime() + leaseMs).toISOString(),
          max: options.max,
        });
        const live = await withoutWithdrawn(rows);
        const left = deadline - clock.now().getTime();
        if (live.length > 0 || left <= 0 || options.signal?.aborted === true) return { tasks: live.map(taskView) };
        await waitForWork(clusterId, Math.min(left, pollMs), options.signal);
      }
    },

    /** What an agent asks before going on with a task: whether it still holds it and where its subject stands. */
    async getTask(clusterId: string, taskId: string) {
      const row = await requireTask(clusterId, taskId);
      return {
        ...taskView(row),
        status: row.status as 'PENDING' | 'LEASED' | 'DONE',
        outcome: row.outcome as 'SUCCEEDED' | 'FAILED' | 'CANCELED' | null,
        subject_status: (await subjectOf(row).statusOf(row.subject_id)) ?? null,
      };
    },

    /**
     * Applies one phase report. `seq` numbers the reports of a task from 1: at or below the last applied one it is a
     * retry and changes nothing. A settling report (succeed, fail, cancel_done) ends the task and lets its
     * dispatching job finish at once.
     */
    async reportProgress(clusterId: string, taskId: string, report: { lease_id: string; seq: number; event: AgentProgressEvent; message?: string | undefined }) {
      const row = await requireTask(clusterId, taskId);
      const subject = subjectOf(row);
      if (report.seq <= row.last_report_seq) {
        return { applied: false, task_status: row.status, subject_status: (await subject.statusOf(row.subject_id)) ?? null };
      }
      refuseLostLease(row, report.lease_id);
      if (report.seq !== row.last_report_seq + 1) {
        throw badRequest(`report ${report.seq} skips ahead: the next report of task ${taskId} is ${row.last_report_seq + 1}`, [
          { field: '/seq', message: `must be ${row.last_report_seq + 1}` },
        ]);
      }
      const moved = await recordOrRepeat(row, subject, report);
      const outcome = SETTLING[report.event];
      const now = clock.now().toISOString();
      const settled = outcome === undefined ? {} : { status: 'DONE', outcome, finished_at: now, lease_id: null, leased_until: null };
      const kept = await updateLeasedAgentTask(db, taskId, report.lease_id, { last_report_seq: report.seq, ...renewedLease(), ...settled });
      if (!kept) throw conflict(`task ${taskId} changed hands while its report was applied`);
      if (outcome !== undefined) deps.metrics?.taskSettled(row.subject_type, row.action, outcome, (Date.parse(now) - Date.parse(row.created_at)) / 1000);
      if (outcome !== undefined && (await expediteJob(db, clock, row.job_id))) deps.wakeWorkers();
      // A settled task may open the next stage of its environment (docs/agent-protocol.md, "Order"): pollers look now.
      if (outcome !== undefined) notify(clusterId);
      return { applied: true, task_status: outcome === undefined ? 'LEASED' : 'DONE', subject_status: moved.status };
    },

    /** The deployment's spec for the lease holder (secrets opened: only the holder of the live lease may read it). */
    async getTaskSpec(clusterId: string, taskId: string, leaseId: string) {
      const row = await requireTask(clusterId, taskId);
      refuseLostLease(row, leaseId);
      const subject = subjectOf(row);
      if (subject.specOf === undefined) throw notFound(`${row.subject_type.toLowerCase()} tasks have no spec beyond their payload`);
      return { task_id: row.id, deployment_id: row.deployment_id, spec: await subject.specOf(row.subject_id, row.deployment_id) };
    },

    /** Stores a batch of log lines; lines at or below the last stored sequence number (a retried batch) are skipped. */
    async appendLogs(clusterId: string, taskId: string, batch: { lease_id: string; lines: AgentLogLine[] }) {
      const row = await requireTask(clusterId, taskId);
      const subject = subjectOf(row);
      if (subject.appendLogs === undefined) {
        throw badRequest(`${row.subject_type.toLowerCase()} tasks keep no logs: send the lines with the service tasks`);
      }
      // The lines past the task's last accepted seq are claimed (a compare-and-set on it) in the transaction that
      // appends them, so two batches sent at once with the same lines (a resend while the first is still in flight)
      // append them once, and a later batch is numbered after an earlier one still being written (on PostgreSQL the
      // claim's row lock makes it wait for that commit): the loser reads the seq again and appends only what is still
      // new, or nothing. An append that fails takes its claim back with it, so the agent's resend is taken.
      let current = row;
      for (;;) {
        const fresh = batch.lines.filter((line) => line.seq > current.last_log_seq).sort((a, b) => a.seq - b.seq);
        if (fresh.length === 0) return { accepted: 0 };
        refuseLostLease(current, batch.lease_id);
        const seen = current.last_log_seq;
        const last = fresh[fresh.length - 1]?.seq ?? seen;
        const claim = (trx: Transaction<DB>) => claimAgentTaskLogSeqs(trx, taskId, batch.lease_id, seen, { last_log_seq: last, ...renewedLease() });
        if (await subject.appendLogs(current.deployment_id, fresh.map(({ at, stream, line }) => ({ at, stream, line })), claim)) return { accepted: fresh.length };
        current = await requireTask(clusterId, taskId);
      }
    },

    /** Runtime output of a deployed workload of the agent's cluster (not part of any task, so under no lease). */
    async appendWorkloadLogs(clusterId: string, serviceId: string, lines: Array<{ at: string; stream: AgentLogLine['stream']; line: string; instance?: string }>) {
      if (deps.workloads === undefined) throw notFound('this control plane keeps no workload logs');
      await deps.workloads.appendLogs(serviceId, clusterId, lines);
      return { accepted: lines.length };
    },

    /** How a deployed workload of the agent's cluster runs (after a crash: restarting, or given up). */
    async recordWorkloadHealth(clusterId: string, serviceId: string, report: WorkloadHealthReport) {
      if (deps.workloads === undefined) throw notFound('this control plane keeps no workload health');
      await deps.workloads.recordHealth(serviceId, clusterId, report);
      return { recorded: true };
    },

    /** Where the certificates of the cluster's hostnames stand, as its cert-manager says (not part of any task). */
    async recordCertificates(clusterId: string, report: AgentCertificateReport): Promise<AgentCertificateReportAnswer> {
      if (deps.certificateReports === undefined) throw notFound('this control plane keeps no certificate reports');
      return deps.certificateReports.record(clusterId, report);
    },

    /**
     * Where the cluster's routed services are reached now (docs/agent-protocol.md, "Routes"): a custom domain
     * verified or removed after a deployment reaches the proxy without a new deployment.
     */
    async resolveRoutes(clusterId: string, serviceIds: readonly string[]) {
      if (deps.workloads === undefined) return { routes: [] };
      return { routes: await deps.workloads.routesOf(clusterId, serviceIds) };
    },

    async recordHeartbeat(clusterId: string, beat: AgentHeartbeat) {
      const now = clock.now().toISOString();
      const before = deps.stateChanges === undefined ? undefined : await findAgentPresence(db, clusterId);
      await upsertAgentPresence(db, {
        cluster_id: clusterId,
        agent_version: beat.agent_version,
        driver: beat.driver,
        hostname: beat.hostname ?? null,
        started_at: beat.started_at,
        last_seen_at: now,
        kubernetes_version: beat.cluster?.kubernetes_version ?? null,
        node_count: beat.cluster?.node_count ?? null,
        missing_permissions: beat.cluster === undefined ? null : writeJson(beat.cluster.missing_permissions),
        cert_manager_issuer: beat.cluster?.cert_manager_issuer ?? null,
      });
      if (beat.cluster !== undefined) await deps.agentPermissions?.(clusterId, beat.cluster.missing_permissions);
      const shownAgain =
        before === undefined ||
        Date.parse(now) - Date.parse(before.last_seen_at) > 3 * heartbeatIntervalMs ||
        before.agent_version !== beat.agent_version ||
        before.driver !== beat.driver ||
        before.hostname !== (beat.hostname ?? null);
      if (shownAgain) await deps.stateChanges?.clusterChanged(db, clusterId);
      return heartbeatAnswer();
    },

    heartbeatAnswer,

    /** The driver the cluster's agent last said it runs (`local`, …), undefined before its first heartbeat. */
    async driverOf(clusterId: string): Promise<string | undefined> {
      return (await findAgentPresence(db, clusterId))?.driver;
    },

    /** Whether the cluster's agent is there: connected once it has beaten, unreachable after three missed beats. */
    async agentStatus(clusterId: string) {
      const presence = await findAgentPresence(db, clusterId);
      const openTasks = await countOpenAgentTasks(db, clusterId);
      if (presence === undefined) {
        return { connected: false, reachable: false, last_seen_at: null, agent_version: null, driver: null, hostname: null, open_tasks: openTasks };
      }
      const missing = presence.missing_permissions === null ? undefined : readJson<string[]>(presence.missing_permissions);
      const silentFor = clock.now().getTime() - Date.parse(presence.last_seen_at);
      return {
        connected: true,
        reachable: silentFor <= 3 * heartbeatIntervalMs,
        last_seen_at: presence.last_seen_at,
        agent_version: presence.agent_version,
        driver: presence.driver,
        hostname: presence.hostname,
        open_tasks: openTasks,
        ...(missing === undefined ? {} : { cluster: { kubernetes_version: presence.kubernetes_version, node_count: presence.node_count, missing_permissions: missing } }),
      };
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
