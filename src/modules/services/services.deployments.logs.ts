import { uniqueOrConflict } from '../../db/db.errors.ts';
import type { Queryable } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import {
  findDeployment,
  findRuntime,
  insertLogLines,
  lastLogSeq,
  listLogLines,
  type ServiceDeploymentLogRow,
  type ServiceDeploymentRow,
} from './services.deployments.repo.ts';
import { snapshotOf, stateOf, type DeploymentRecords } from './services.deployments.records.ts';
import type { ServiceDeploymentsDeps } from './services.deployments.service.ts';
import { isSettled, type ServiceState } from './services.states.ts';

/**
 * A service deployment's log: the lines of its build and rollout, then its workload's output once it runs. The
 * agent appends them, readers list them or follow them live until the deployment settles.
 */

export type LogStream = 'stdout' | 'stderr' | 'system';

export interface LogLineInput {
  message: string;
  stream?: LogStream;
  /** When the line was printed (ISO-8601); now when absent. */
  timestamp?: string;
}

/** At most this many lines per append, each cut to MAX_LOG_LINE_CHARS (a marker says so). */
export const MAX_LOG_LINES_PER_APPEND = 1000;
export const MAX_LOG_LINE_CHARS = 8192;
/** Lines per read (listing) and per batch of a live stream. */
export const LOG_PAGE_SIZE = 1000;

/** A line as stored: cut to the limit, control characters other than tab removed (a line is one line). */
function cleanLine(message: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const flat = message.replace(/\r?\n$/, '').replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, ' ');
  return flat.length > MAX_LOG_LINE_CHARS ? `${flat.slice(0, MAX_LOG_LINE_CHARS)} … [line cut at ${MAX_LOG_LINE_CHARS} characters]` : flat;
}

/** Lines appended inside `executor`'s transaction, numbered after the deployment's last one. */
export async function writeLogLines(executor: Queryable, clock: Clock, deploymentId: string, lines: LogLineInput[]): Promise<void> {
  let seq = await lastLogSeq(executor, deploymentId);
  const now = clock.now().toISOString();
  const rows: ServiceDeploymentLogRow[] = lines.map((line) => {
    seq += 1;
    return {
      id: newId(),
      deployment_id: deploymentId,
      seq,
      stream: line.stream ?? 'stdout',
      message: cleanLine(line.message),
      logged_at: line.timestamp === undefined ? now : new Date(line.timestamp).toISOString(),
    };
  });
  await insertLogLines(executor, rows);
}

function logView(row: ServiceDeploymentLogRow, version: string | null) {
  return {
    id: row.id,
    created_at: row.logged_at,
    message: row.message,
    ...(version === null ? {} : { version }),
    /** Slipway's additions: which deployment, where the line came from, and its place in the deployment's log. */
    deployment_id: row.deployment_id,
    stream: row.stream as LogStream,
    seq: row.seq,
  };
}
type LogView = ReturnType<typeof logView>;

function versionOf(record: ServiceDeploymentRow): string | null {
  return record.git_commit_id ?? record.image_tag;
}

export function createServiceDeploymentLogs(deps: Pick<ServiceDeploymentsDeps, 'db' | 'clock'>, records: DeploymentRecords) {
  const { db, clock } = deps;
  const { changes, requireService } = records;

  /** The deployment a log read is about: the one named (of this service), else the newest; undefined when none exists. */
  async function logDeployment(kind: ServiceKind, serviceId: string, deploymentId: string | undefined): Promise<ServiceDeploymentRow | undefined> {
    await requireService(serviceId, kind);
    if (deploymentId !== undefined) {
      const record = await findDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      return record;
    }
    const runtime = await findRuntime(db, serviceId);
    return runtime?.last_deployment_id === null || runtime === undefined ? undefined : findDeployment(db, runtime.last_deployment_id);
  }

  /**
   * For the cluster's agent (issue 9): appends lines to a deployment's log (stdout/stderr of the build or the
   * workload, or the agent's own as `system`). At most MAX_LOG_LINES_PER_APPEND per call, each cut to
   * MAX_LOG_LINE_CHARS; retries are the caller's to deduplicate (the agent protocol numbers its batches).
   */
  async function appendDeploymentLog(deploymentId: string, lines: LogLineInput[]): Promise<void> {
    if (lines.length > MAX_LOG_LINES_PER_APPEND) throw badRequest(`at most ${MAX_LOG_LINES_PER_APPEND} log lines per call, got ${lines.length}`);
    for (const [index, line] of lines.entries()) {
      if (line.timestamp !== undefined && Number.isNaN(Date.parse(line.timestamp))) {
        throw badRequest('invalid log line timestamp', [{ field: `/lines/${index}/timestamp`, message: 'must be an ISO-8601 date-time' }]);
      }
    }
    await uniqueOrConflict(
      () =>
        db.transaction().execute(async (trx) => {
          if ((await findDeployment(trx, deploymentId)) === undefined) throw notFound(`deployment ${deploymentId} not found`);
          await writeLogLines(trx, clock, deploymentId, lines);
        }),
      'log lines were appended to this deployment at the same time; send them again',
    );
    changes.emit(deploymentId);
  }

  return {
    /** Stored lines of one deployment (the newest when none is named), after `afterSeq`, at most LOG_PAGE_SIZE. */
    async listServiceLog(kind: ServiceKind, serviceId: string, query: { deploymentId?: string | undefined; after?: number | undefined }): Promise<{ results: LogView[] }> {
      const record = await logDeployment(kind, serviceId, query.deploymentId);
      if (record === undefined) return { results: [] };
      const rows = await listLogLines(db, record.id, query.after ?? 0, LOG_PAGE_SIZE);
      return { results: rows.map((row) => logView(row, versionOf(record))) };
    },

    /**
     * Follows one deployment's log (the newest when none is named): `emit` gets each batch of lines after
     * `afterSeq`, in order, until the deployment is settled and every line was sent, or `closed()` says the reader
     * left. New lines are noticed at once in this process, and by polling (other replicas) within `pollMs`.
     */
    async followServiceLog(
      kind: ServiceKind,
      serviceId: string,
      query: { deploymentId?: string | undefined; after?: number | undefined },
      reader: { emit(lines: LogView[]): Promise<void>; closed(): boolean; heartbeat(): Promise<void> },
      options: { pollMs?: number; heartbeatMs?: number } = {},
    ): Promise<{ deploymentId: string | null; state: ServiceState | null }> {
      const record = await logDeployment(kind, serviceId, query.deploymentId);
      if (record === undefined) return { deploymentId: null, state: null };
      const version = versionOf(record);
      const pollMs = options.pollMs ?? 1000;
      const heartbeatMs = options.heartbeatMs ?? 15_000;
      let after = query.after ?? 0;
      let lastBeat = Date.now();
      for (;;) {
        const current = await findDeployment(db, record.id);
        if (current === undefined) return { deploymentId: record.id, state: 'DELETED' };
        const settled = isSettled(stateOf(current, current.id));
        const rows = await listLogLines(db, record.id, after, LOG_PAGE_SIZE);
        if (reader.closed()) return { deploymentId: record.id, state: stateOf(current, current.id) };
        if (rows.length > 0) {
          after = rows[rows.length - 1]?.seq ?? after;
          await reader.emit(rows.map((row) => logView(row, version)));
          continue;
        }
        // Settled before the read: every line written before it settled has been sent.
        if (settled) return { deploymentId: record.id, state: stateOf(current, current.id) };
        if (Date.now() - lastBeat >= heartbeatMs) {
          await reader.heartbeat();
          lastBeat = Date.now();
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            changes.off(record.id, wake);
            resolve();
          };
          const timer = setTimeout(wake, pollMs);
          changes.on(record.id, wake);
        });
      }
    },

    appendDeploymentLog,

    /**
     * Output of a deployed workload after its deployment settled (its process's stdout and stderr, the runs of a cron
     * job), sent by the agent of the service's cluster: kept with the deployment that runs, so the service's logs show
     * it. A service of another cluster, or one never deployed, is a 404.
     */
    async appendWorkloadLog(serviceId: string, clusterId: string, lines: LogLineInput[]): Promise<void> {
      const runtime = await findRuntime(db, serviceId);
      const deploymentId = runtime?.deployed_deployment_id ?? null;
      const record = deploymentId === null ? undefined : await findDeployment(db, deploymentId);
      if (record === undefined || snapshotOf(record).service.clusterId !== clusterId) throw notFound(`no deployed service ${serviceId} on this cluster`);
      await appendDeploymentLog(record.id, lines);
    },
  };
}
