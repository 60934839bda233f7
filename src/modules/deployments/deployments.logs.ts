import type { Transaction } from 'kysely';
import type { DB, Queryable } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { logCursorOf, parseLogCursor, sinceTime, type LogPositions } from './deployments.log-query.ts';
import {
  findServiceDeployment,
  findRuntime,
  insertLogLines,
  takeLogSeqs,
  lastLogSeq,
  listServiceDeploymentsAfter,
  listLastLogLines,
  listLogLines,
  type LogLineFilter,
  type ServiceDeploymentLogRow,
  type ServiceDeploymentRow,
  type ServiceRuntimeRow,
} from './deployments.repo.ts';
import { recordStateOf, snapshotOf, type ServiceRecords } from './deployments.service-records.ts';
import type { DeploymentsDeps } from './deployments.service.ts';
import { isSettled, type DeploymentState } from '../../engine/deployment-states.ts';

/**
 * A service deployment's log: the lines of its build and rollout, then its workload's output once it runs. The
 * agent appends them; readers list them, follow one deployment live until it settles, or follow the service's
 * output without end, from one deployment to the next (docs/service-deployments.md, "Logs").
 */

export type LogStream = 'stdout' | 'stderr' | 'system';

export interface LogLineInput {
  message: string;
  stream?: LogStream;
  /** When the line was printed (ISO-8601); now when absent. */
  timestamp?: string;
  /** The instance of the workload that printed it (runtime output). */
  instance?: string;
}

/** At most this many lines per append, each cut to MAX_LOG_LINE_CHARS (a marker says so). */
export const MAX_LOG_LINES_PER_APPEND = 1000;
export const MAX_LOG_LINE_CHARS = 8192;
/** Lines per read (listing) and per batch of a live stream; also the most `tail` asks for. */
export const LOG_PAGE_SIZE = 1000;
/** New deployments a followed stream takes on per read (more wait for the next). */
const MAX_NEW_DEPLOYMENTS_PER_READ = 20;

/**
 * A line as stored: cut to the limit, control characters other than tab and ESC removed (a line is one line). ESC
 * stays so colour codes reach the console, which renders SGR and drops the rest, and the CLI, which prints SGR only
 * (src/cli/service-logs.ts): readers, not the store, decide which escape sequences are safe to show.
 */
function cleanLine(message: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const flat = message.replace(/\r?\n$/, '').replace(/[\u0000-\u0008\u000a-\u001a\u001c-\u001f\u007f]/g, ' ');
  return flat.length > MAX_LOG_LINE_CHARS ? `${flat.slice(0, MAX_LOG_LINE_CHARS)} … [line cut at ${MAX_LOG_LINE_CHARS} characters]` : flat;
}

/**
 * Lines appended inside `executor`'s transaction, numbered after the deployment's last one; a 404 when the
 * deployment does not exist. Writers of one deployment's log take turns (deployments.repo.ts takeLogSeqs).
 */
export async function writeLogLines(executor: Queryable, clock: Clock, deploymentId: string, lines: LogLineInput[]): Promise<void> {
  if (lines.length === 0) return;
  const first = await takeLogSeqs(executor, deploymentId, lines.length);
  if (first === undefined) throw notFound(`deployment ${deploymentId} not found`);
  const now = clock.now().toISOString();
  const rows: ServiceDeploymentLogRow[] = lines.map((line, index) => {
    const seq = first + index;
    return {
      id: newId(),
      deployment_id: deploymentId,
      seq,
      stream: line.stream ?? 'stdout',
      message: cleanLine(line.message),
      logged_at: line.timestamp === undefined ? now : new Date(line.timestamp).toISOString(),
      instance: line.instance ?? null,
    };
  });
  await insertLogLines(executor, rows);
}

function logView(row: ServiceDeploymentLogRow, version: string | null) {
  return {
    id: row.id,
    created_at: row.logged_at,
    message: row.message,
    ...(row.instance === null ? {} : { pod_name: row.instance }),
    ...(version === null ? {} : { version }),
    /** Slipway's additions: which deployment, where the line came from, and its place in the deployment's log. */
    deployment_id: row.deployment_id,
    stream: row.stream as LogStream,
    seq: row.seq,
  };
}
export type LogView = ReturnType<typeof logView>;

function versionOf(record: ServiceDeploymentRow): string | null {
  return record.git_commit_id ?? record.image_tag;
}

/** What a followed stream says when it moves on to a deployment that began while it was followed. */
export interface DeploymentMarker {
  deployment_id: string;
  action: string;
  created_at: string;
}

/**
 * One event of a live stream: a line, or (following a service) a deployment that began. `cursor` is where a
 * followed stream stands after the event (what Last-Event-ID gives back); a deployment's own stream resumes by seq.
 */
export type LogEvent = { type: 'log'; line: LogView; cursor?: string } | { type: 'deployment'; deployment: DeploymentMarker; cursor: string };

/** The reader of a live stream: the HTTP plumbing (deployments.log-stream.ts streamLog). */
export interface LogReader {
  /** Aborted when the reader left (or the server shuts down). */
  signal: AbortSignal;
  /** The read is valid and about to follow: the answer may start (its status is 200 from here on). */
  opened(): void;
  emit(events: LogEvent[]): Promise<void>;
  heartbeat(): Promise<void>;
}

/**
 * How a stream ended: the deployment followed and the state it reached (DELETED: the service went away); a followed
 * service's stream, which ends only when its reader leaves, answers its newest deployment and no state.
 */
export interface LogStreamEnd {
  deploymentId: string | null;
  state: DeploymentState | null;
}

/** What a read of a service's log asks for (the route's query, with the resumption point of a stream). */
export interface LogReadQuery {
  deploymentId?: string | undefined;
  after?: number | undefined;
  follow?: boolean | undefined;
  cursor?: string | undefined;
  since?: string | undefined;
  tail?: number | undefined;
  instance?: string | undefined;
  stream?: LogStream[] | undefined;
}

interface FollowTiming {
  pollMs?: number;
  heartbeatMs?: number;
  /** How long a deployment that can get no more lines (neither the newest nor the running one) is still read. */
  closeGraceMs?: number;
}

/** Where a followed stream begins: its positions, the deployments they are of, the lines to send first, the newest deployment. */
interface FollowStart {
  positions: LogPositions;
  deployments: Map<string, ServiceDeploymentRow>;
  backlog: LogEvent[];
  newest: string | null;
}

/** Lines of several deployments in the order they were printed; each deployment's own order (by seq) is kept. */
function inPrintedOrder(lists: ServiceDeploymentLogRow[][]): ServiceDeploymentLogRow[] {
  const heads = lists.map(() => 0);
  const merged: ServiceDeploymentLogRow[] = [];
  for (;;) {
    let pick = -1;
    let pickAt = Infinity;
    for (const [index, list] of lists.entries()) {
      const row = list[heads[index] ?? 0];
      if (row === undefined) continue;
      const at = Date.parse(row.logged_at);
      if (pick === -1 || at < pickAt) {
        pick = index;
        pickAt = at;
      }
    }
    const list = lists[pick];
    const head = heads[pick];
    if (list === undefined || head === undefined) return merged;
    merged.push(list[head] as ServiceDeploymentLogRow);
    heads[pick] = head + 1;
  }
}

/** The deployments of a service that can still get lines: the running one (its workload's output) and the newest. */
function liveDeploymentIds(runtime: ServiceRuntimeRow | undefined): string[] {
  const ids = [runtime?.deployed_deployment_id ?? null, runtime?.last_deployment_id ?? null].filter((id): id is string => id !== null);
  return [...new Set(ids)].sort();
}

export function createServiceDeploymentLogs(deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'services' | 'livePollMs'>, records: ServiceRecords) {
  const { db, clock } = deps;
  const { changes, requireService } = records;

  /** The deployment a log read is about: the one named (of this service), else the newest; undefined when none exists. */
  async function logDeployment(kind: ServiceKind, serviceId: string, deploymentId: string | undefined): Promise<ServiceDeploymentRow | undefined> {
    await requireService(serviceId, kind);
    if (deploymentId !== undefined) {
      const record = await findServiceDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      return record;
    }
    const runtime = await findRuntime(db, serviceId);
    return runtime?.last_deployment_id === null || runtime === undefined ? undefined : findServiceDeployment(db, runtime.last_deployment_id);
  }

  function filterOf(query: LogReadQuery): LogLineFilter {
    return {
      since: query.since === undefined ? undefined : sinceTime(query.since, clock.now()),
      instance: query.instance,
      streams: query.stream === undefined ? undefined : [...new Set(query.stream)],
    };
  }

  /** Resolves after `pollMs`, at once when one of `deploymentIds` gets lines or moves (signalled), or the reader leaves. */
  function nextChange(deploymentIds: readonly string[], pollMs: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const wake = () => {
        clearTimeout(timer);
        for (const id of deploymentIds) changes.off(id, wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      const timer = setTimeout(wake, pollMs);
      for (const id of deploymentIds) changes.on(id, wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  /**
   * One deployment's log, live: the last `tail` lines (or from `after`), then each new line, until the deployment is
   * settled and every line was sent, or the reader left. Each event's id is the line's seq.
   */
  async function followDeploymentLog(kind: ServiceKind, serviceId: string, query: LogReadQuery, reader: LogReader, timing: FollowTiming): Promise<LogStreamEnd> {
    const record = await logDeployment(kind, serviceId, query.deploymentId);
    const filter = filterOf(query);
    if (record === undefined) return { deploymentId: null, state: null };
    const version = versionOf(record);
    const pollMs = timing.pollMs ?? deps.livePollMs ?? 1000;
    const heartbeatMs = timing.heartbeatMs ?? 15_000;
    const send = (rows: ServiceDeploymentLogRow[]) => reader.emit(rows.map((row) => ({ type: 'log', line: logView(row, version) })));
    let after = query.after ?? 0;
    reader.opened();
    if (query.tail !== undefined && query.after === undefined) {
      after = await lastLogSeq(db, record.id);
      await send(await listLastLogLines(db, record.id, { afterSeq: 0, upToSeq: after }, query.tail, filter));
    }
    let lastBeat = Date.now();
    for (;;) {
      const current = await findServiceDeployment(db, record.id);
      if (current === undefined) return { deploymentId: record.id, state: 'DELETED' };
      const settled = isSettled(recordStateOf(current));
      const rows = await listLogLines(db, record.id, after, LOG_PAGE_SIZE, filter);
      if (reader.signal.aborted) return { deploymentId: record.id, state: recordStateOf(current) };
      if (rows.length > 0) {
        after = rows[rows.length - 1]?.seq ?? after;
        await send(rows);
        lastBeat = Date.now();
        continue;
      }
      // Settled before the read: every line written before it settled has been sent.
      if (settled) return { deploymentId: record.id, state: recordStateOf(current) };
      if (Date.now() - lastBeat >= heartbeatMs) {
        await reader.heartbeat();
        lastBeat = Date.now();
      }
      await nextChange([record.id], pollMs, reader.signal);
    }
  }

  /** Where a followed stream starts: at the first lines of the deployments that can get lines, or their last `tail`. */
  async function startOfFollow(serviceId: string, tail: number | undefined, filter: LogLineFilter): Promise<FollowStart> {
    const runtime = await findRuntime(db, serviceId);
    const positions: LogPositions = new Map();
    const deployments = new Map<string, ServiceDeploymentRow>();
    const tails: ServiceDeploymentLogRow[][] = [];
    for (const id of liveDeploymentIds(runtime)) {
      const record = await findServiceDeployment(db, id);
      if (record === undefined) continue;
      deployments.set(id, record);
      if (tail === undefined) {
        positions.set(id, 0);
        continue;
      }
      const upTo = await lastLogSeq(db, id);
      positions.set(id, upTo);
      tails.push(await listLastLogLines(db, id, { afterSeq: 0, upToSeq: upTo }, tail, filter));
    }
    // The last `tail` of them all; their cursor is the start of following, so a resumed stream does not repeat them.
    const merged = inPrintedOrder(tails);
    const backlog: LogEvent[] = merged
      .slice(merged.length - (tail ?? 0))
      .map((row) => ({ type: 'log', line: logView(row, versionOf(deployments.get(row.deployment_id) as ServiceDeploymentRow)), cursor: logCursorOf(positions) }));
    return { positions, deployments, backlog, newest: runtime?.last_deployment_id ?? null };
  }

  /** Where a resumed stream starts: the cursor's positions, each a deployment of this service (a 400 otherwise). */
  async function resumeOfFollow(serviceId: string, cursor: string): Promise<FollowStart> {
    const positions = parseLogCursor(cursor);
    const deployments = new Map<string, ServiceDeploymentRow>();
    for (const id of positions.keys()) {
      const record = await findServiceDeployment(db, id);
      if (record === undefined || record.service_id !== serviceId) {
        throw badRequest('invalid cursor', [{ field: '/cursor', message: `names deployment ${id}, which is not a deployment of this service` }]);
      }
      deployments.set(id, record);
    }
    return { positions, deployments, backlog: [], newest: [...positions.keys()].sort().at(-1) ?? null };
  }

  /**
   * A service's output, live and without end (`follow`): the lines of its running deployment and of its newest one
   * (a deploy under way, or one that failed while the previous deployment still runs), in the order they were
   * printed; each deployment that begins meanwhile is announced by a `deployment` event and followed from its first
   * line. A deployment that can get no more lines is read for `closeGraceMs` more (a line in flight still arrives),
   * then dropped. Each event carries the cursor to resume after it. Ends only when the reader leaves or the service
   * is deleted.
   */
  async function followServiceOutput(kind: ServiceKind, serviceId: string, query: LogReadQuery, reader: LogReader, timing: FollowTiming): Promise<LogStreamEnd> {
    if (query.deploymentId !== undefined) {
      throw badRequest('follow reads the service, not one deployment', [{ field: '/deploymentId', message: 'cannot be combined with follow; leave follow out to read one deployment' }]);
    }
    if (query.after !== undefined) throw badRequest('follow resumes with a cursor', [{ field: '/after', message: 'cannot be combined with follow; give cursor (or Last-Event-ID)' }]);
    await requireService(serviceId, kind);
    const filter = filterOf(query);
    const pollMs = timing.pollMs ?? deps.livePollMs ?? 1000;
    const heartbeatMs = timing.heartbeatMs ?? 15_000;
    const closeGraceMs = timing.closeGraceMs ?? 5000;
    const start = query.cursor === undefined ? await startOfFollow(serviceId, query.tail, filter) : await resumeOfFollow(serviceId, query.cursor);
    const { positions, deployments, backlog } = start;
    let { newest } = start;
    reader.opened();
    if (backlog.length > 0) await reader.emit(backlog);

    const leftSince = new Map<string, number>();
    let lastBeat = Date.now();
    for (;;) {
      if (reader.signal.aborted) return { deploymentId: newest, state: null };
      const current = await findRuntime(db, serviceId);
      if (current === undefined && (await deps.services.findService(serviceId)) === undefined) return { deploymentId: null, state: 'DELETED' };
      const events: LogEvent[] = [];
      if (current !== undefined && current.last_deployment_id !== null && current.last_deployment_id !== newest) {
        for (const record of await listServiceDeploymentsAfter(db, serviceId, newest, MAX_NEW_DEPLOYMENTS_PER_READ)) {
          deployments.set(record.id, record);
          positions.set(record.id, 0);
          newest = record.id;
          events.push({ type: 'deployment', deployment: { deployment_id: record.id, action: record.action, created_at: record.created_at }, cursor: logCursorOf(positions) });
        }
      }
      // Which deployments can still get lines, read before their lines: one found drained after it left is done.
      const live = new Set(liveDeploymentIds(current));
      const now = Date.now();
      const lists: ServiceDeploymentLogRow[][] = [];
      const done: string[] = [];
      let more = false;
      for (const [id, after] of [...positions.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const rows = await listLogLines(db, id, after, LOG_PAGE_SIZE, filter);
        lists.push(rows);
        if (rows.length === LOG_PAGE_SIZE) more = true;
        if (live.has(id)) leftSince.delete(id);
        else if (rows.length < LOG_PAGE_SIZE) {
          const left = leftSince.get(id) ?? now;
          leftSince.set(id, left);
          if (now - left >= closeGraceMs) done.push(id);
        }
      }
      for (const row of inPrintedOrder(lists)) {
        positions.set(row.deployment_id, row.seq);
        events.push({ type: 'log', line: logView(row, versionOf(deployments.get(row.deployment_id) as ServiceDeploymentRow)), cursor: logCursorOf(positions) });
      }
      for (const id of done) {
        positions.delete(id);
        leftSince.delete(id);
        deployments.delete(id);
      }
      if (reader.signal.aborted) return { deploymentId: newest, state: null };
      if (events.length > 0) {
        await reader.emit(events);
        lastBeat = Date.now();
      }
      if (more) continue;
      if (Date.now() - lastBeat >= heartbeatMs) {
        await reader.heartbeat();
        lastBeat = Date.now();
      }
      await nextChange([...positions.keys()], pollMs, reader.signal);
    }
  }

  /**
   * For the cluster's agent (issue 9): appends lines to a deployment's log (stdout/stderr of the build or the
   * workload, or the agent's own as `system`). At most MAX_LOG_LINES_PER_APPEND per call, each cut to
   * MAX_LOG_LINE_CHARS; retries are the caller's to deduplicate (the agent protocol numbers its batches).
   */
  /**
   * Appends lines to a deployment's log. With `claim`, the append happens only if the claim, run first in the same
   * transaction, says so (false: nothing written): the agents module claims a task's batch there, so a batch is
   * numbered in the order its claim was made, even when a resend of an earlier batch is still in flight.
   */
  async function appendDeploymentLog(deploymentId: string, lines: LogLineInput[], claim?: (trx: Transaction<DB>) => Promise<boolean>): Promise<boolean> {
    if (lines.length > MAX_LOG_LINES_PER_APPEND) throw badRequest(`at most ${MAX_LOG_LINES_PER_APPEND} log lines per call, got ${lines.length}`);
    for (const [index, line] of lines.entries()) {
      if (line.timestamp !== undefined && Number.isNaN(Date.parse(line.timestamp))) {
        throw badRequest('invalid log line timestamp', [{ field: `/lines/${index}/timestamp`, message: 'must be an ISO-8601 date-time' }]);
      }
    }
    const appended = await db.transaction().execute(async (trx) => {
      if (claim !== undefined && !(await claim(trx))) return false;
      await writeLogLines(trx, clock, deploymentId, lines);
      return true;
    });
    if (appended) changes.emit(deploymentId);
    return appended;
  }

  return {
    /**
     * Stored lines of one deployment (the newest when none is named) that pass the filters (`since`, `instance`,
     * `stream`): after `after`, the first LOG_PAGE_SIZE, or with `tail` the last `tail`.
     */
    async listServiceLog(kind: ServiceKind, serviceId: string, query: LogReadQuery): Promise<{ results: LogView[] }> {
      if (query.follow === true) throw badRequest('a followed log is a stream', [{ field: '/follow', message: 'needs Accept: text/event-stream, application/x-ndjson or text/plain' }]);
      const record = await logDeployment(kind, serviceId, query.deploymentId);
      const filter = filterOf(query);
      if (record === undefined) return { results: [] };
      const afterSeq = query.after ?? 0;
      const rows =
        query.tail === undefined
          ? await listLogLines(db, record.id, afterSeq, LOG_PAGE_SIZE, filter)
          : await listLastLogLines(db, record.id, { afterSeq }, query.tail, filter);
      return { results: rows.map((row) => logView(row, versionOf(record))) };
    },

    /**
     * A live log. With `follow`, the service's output without end (followServiceOutput); without it, one deployment
     * (the newest when none is named) until it settles. New lines are noticed at once in this process, and by
     * polling (other replicas) within `pollMs`; `heartbeat` is called when nothing was sent for `heartbeatMs`.
     */
    async followServiceLog(kind: ServiceKind, serviceId: string, query: LogReadQuery, reader: LogReader, timing: FollowTiming = {}): Promise<LogStreamEnd> {
      return query.follow === true ? followServiceOutput(kind, serviceId, query, reader, timing) : followDeploymentLog(kind, serviceId, query, reader, timing);
    },

    appendDeploymentLog,

    /**
     * Output of a deployed workload after its deployment settled (its process's stdout and stderr, the runs of a cron
     * job), sent by the agent of the service's cluster: kept with the deployment that runs, so the service's logs show
     * it. Before a service's first deployment is DEPLOYED its workload already runs (the agent reports success once it
     * answers), and what it prints meanwhile can arrive before that report: it is kept with that first deployment. A
     * service of another cluster, or one with no deployment, is a 404.
     */
    async appendWorkloadLog(serviceId: string, clusterId: string, lines: LogLineInput[]): Promise<void> {
      const runtime = await findRuntime(db, serviceId);
      const deploymentId = runtime?.deployed_deployment_id ?? runtime?.last_deployment_id ?? null;
      const record = deploymentId === null ? undefined : await findServiceDeployment(db, deploymentId);
      if (record === undefined || snapshotOf(record).service.clusterId !== clusterId) throw notFound(`no deployed service ${serviceId} on this cluster`);
      await appendDeploymentLog(record.id, lines);
    },
  };
}
