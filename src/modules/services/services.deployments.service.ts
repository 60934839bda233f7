import { HISTORY_ACTION, queuedActionOf, waitingMessage, wireAction, type WorkloadHealth } from '../../engine/deployment-states.ts';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Kysely, Transaction } from 'kysely';
import { principalDisplayName, type Principal } from '../../auth/principal.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { cancelQueuedJob, enqueueJob } from '../../jobs/job-queue.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, badRequest, conflict, notFound, type AppErrorKind } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { SnapshotVariable, VariableSnapshot } from '../variables/variables.service.ts';
import { publishDeploymentTransition, type DeploymentEventSource, type EventPublisher } from '../webhooks/webhooks.events.ts';
import type { StoredService } from './services.kinds.ts';
import {
  countDeploymentsNewerThan,
  findDeployment,
  findRuntime,
  insertDeployment,
  insertLogLines,
  insertRuntime,
  lastLogSeq,
  listDeploymentJobIds,
  listOpenDeploymentIdsOfEnvironment,
  listDeploymentsPage,
  listLogLines,
  updateDeployment,
  updateRuntimeInStatus,
  type ServiceDeploymentLogRow,
  type ServiceDeploymentRow,
  type ServiceRuntimeRow,
} from './services.deployments.repo.ts';
import {
  actionStatusOf,
  isServiceState,
  isSettled,
  requestedState,
  TAKE_EVENT,
  transitionOf,
  type QueuedServiceAction,
  type ServiceProgress,
  type ServiceState,
} from './services.states.ts';

/**
 * Service deployments (issue 8 part 5, docs/service-deployments.md). An action request writes, in one transaction,
 * the state change, a deployment record carrying the service's settings and its resolved variable snapshot
 * (secrets as sealed envelopes), its first log lines and the job that carries it out, and answers 202. The work is
 * the cluster's agent's (issue 9): until it takes the job the service stays QUEUED and its status says so.
 */

/** The job that carries a service action out; the cluster's agent (issue 9) handles it. */
export const SERVICE_ACTION_JOB = 'service.action';
/** The job that removes a deleted service's workload from its cluster (the row is already gone). */
export const SERVICE_TEARDOWN_JOB = 'service.teardown';

export interface ServiceActionPayload {
  serviceId: string;
  deploymentId: string;
  action: QueuedServiceAction;
  kind: ServiceKind;
  organizationId: string;
  environmentId: string;
  clusterId: string;
  requestedAt: string;
}

/** Everything the agent needs to tear a deleted service down: its record is gone when the job runs. */
export interface ServiceTeardownPayload {
  serviceId: string;
  kind: ServiceKind;
  name: string;
  organizationId: string;
  environmentId: string;
  clusterId: string;
  /** The deployment that last ran (its id names the workload the agent started). */
  deployedDeploymentId: string | null;
  requestedAt: string;
}

/** What a deployment carries: the service as deployed and its resolved variables (stored as JSON). */
export interface DeploymentSnapshot {
  service: {
    id: string;
    kind: ServiceKind;
    name: string;
    organizationId: string;
    environmentId: string;
    /** The cluster it runs on (the environment's at the time of the deployment). */
    clusterId: string;
    settings: Record<string, unknown>;
  };
  git_commit_id: string | null;
  image_tag: string | null;
  /** Null for databases: they consume no variables (they provide built-ins to the others). */
  variables: VariableSnapshot | null;
}

/** Running time reported to billing (its MeteringPort, resource type SERVICE). */
export interface ServiceMetering {
  resourceRunning(input: { organizationId: string; resourceType: 'SERVICE'; resourceId: string; priceKey: string; units: number; at: string }): Promise<void>;
  resourceStopped(input: { resourceType: 'SERVICE'; resourceId: string; at: string }): Promise<void>;
}

export interface ServiceDeploymentsDeps {
  db: Kysely<DB>;
  clock: Clock;
  services: {
    findService(serviceId: string): Promise<StoredService | undefined>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
  };
  environments: { findEnvironmentSummary(environmentId: string): Promise<{ clusterId: string } | undefined> };
  /** The variables module: the snapshot a deployment stores, and the content hash OUT_OF_DATE compares with. */
  variables: {
    resolveForDeployment(environmentId: string, serviceId?: string): Promise<VariableSnapshot>;
    explain(environmentId: string, serviceId: string | undefined, reveal: boolean): Promise<{ content_hash: string }>;
  };
  /**
   * Refuses an action that starts workloads on the cluster by throwing (the clusters module's admitDeployment): 403
   * on a LOCAL cluster the organization holds no grant for, 402 while its billing is not valid.
   */
  deploymentGate: (organizationId: string, clusterId: string) => Promise<void>;
  metering: ServiceMetering;
  /** Wakes the in-process job worker after a commit (the agent's dispatcher may be waiting). */
  wakeWorkers?: () => void;
  /** Deployment events for the webhooks, published in the transaction of each move (none unless given). */
  events?: { publisher: EventPublisher; sourceOf(service: StoredService): Promise<DeploymentEventSource> };
}

export type LogStream = 'stdout' | 'stderr' | 'system';


/** The states in which a deployed workload runs as its last action left it (a health report applies to it). */
const RUNNING_STATES: ReadonlySet<string> = new Set(['DEPLOYED', 'RESTARTED']);

const NO_WORKLOAD_HEALTH = { workload_health: null, workload_restarts: null, workload_message: null, workload_reported_at: null };

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
const DEFAULT_PAGE_SIZE = 20;
export const MAX_HISTORY_PAGE_SIZE = 100;

/** Actions that start workloads, and so cost money; a stop is always allowed. */
const COSTS_MONEY: ReadonlySet<QueuedServiceAction> = new Set(['deploy', 'redeploy', 'restart']);

/** What an environment's fanned-out action records as a skipped service rather than failing the whole action. */
const FAN_OUT_REFUSALS: ReadonlySet<AppErrorKind> = new Set(['conflict', 'payment_required', 'forbidden']);

/** Kinds whose deploy may name a git commit, and kinds whose deploy may name an image tag. */
const GIT_KINDS: ReadonlySet<ServiceKind> = new Set(['APPLICATION', 'JOB', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW']);
const IMAGE_KINDS: ReadonlySet<ServiceKind> = new Set(['CONTAINER', 'JOB']);

function stateOf(row: { status: string }, id: string): ServiceState {
  if (!isServiceState(row.status)) throw new Error(`service ${id} holds an unknown status ${row.status}`);
  return row.status;
}

/** JSON with object keys sorted at every level: the same settings always hash the same, whatever the database's key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What a deployment of the service would carry of its own configuration; a change makes a deployed service OUT_OF_DATE. */
export function settingsHashOf(service: Pick<StoredService, 'kind' | 'name' | 'settings'>): string {
  return createHash('sha256').update(canonicalJson({ kind: service.kind, name: service.name, settings: service.settings }), 'utf8').digest('hex');
}

/** Billing's price key and units for a running service: its CPU size and its minimum instance count. */
function meteredSize(service: StoredService): { priceKey: string; units: number } {
  const cpu = typeof service.settings.cpu === 'number' ? service.settings.cpu : 500;
  const instances = typeof service.settings.min_running_instances === 'number' ? service.settings.min_running_instances : 1;
  const priceKey = cpu <= 500 ? 'service.small' : cpu <= 2000 ? 'service.medium' : 'service.large';
  return { priceKey, units: Math.max(1, Math.floor(instances)) };
}

/** ISO-8601 duration of a deployment: until it finished, or until now while it runs or waits. */
function durationSeconds(record: ServiceDeploymentRow, now: Date): number {
  const end = record.finished_at === null ? now.getTime() : new Date(record.finished_at).getTime();
  return Math.max(0, (end - new Date(record.created_at).getTime()) / 1000);
}

function snapshotOf(record: ServiceDeploymentRow): DeploymentSnapshot {
  return readJson<DeploymentSnapshot>(record.snapshot);
}

/** A line as stored: cut to the limit, control characters other than tab removed (a line is one line). */
function cleanLine(message: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const flat = message.replace(/\r?\n$/, '').replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, ' ');
  return flat.length > MAX_LOG_LINE_CHARS ? `${flat.slice(0, MAX_LOG_LINE_CHARS)} … [line cut at ${MAX_LOG_LINE_CHARS} characters]` : flat;
}

export function createServiceDeploymentsService(deps: ServiceDeploymentsDeps) {
  const { db, clock } = deps;
  /** Wakes live log streams of a deployment in this process when it gets lines or changes state. */
  const changes = new EventEmitter();
  changes.setMaxListeners(0);

  /** The service an id names; with a kind (the path's), 404 unless it is of that kind, as the services module answers. */
  async function requireService(serviceId: string, kind?: ServiceKind): Promise<StoredService> {
    const service = await deps.services.findService(serviceId);
    if (service === undefined || (kind !== undefined && service.kind !== kind)) {
      throw notFound(`${kind === undefined ? 'service' : kind.toLowerCase().replace('_', ' ')} ${serviceId} not found`);
    }
    return service;
  }

  /** The runtime of a service never asked to act: READY, with no deployment. */
  function neverActed(serviceId: string): ServiceRuntimeRow {
    return {
      service_id: serviceId,
      status: 'READY',
      last_deployment_id: null,
      deployed_deployment_id: null,
      ...NO_WORKLOAD_HEALTH,
      updated_at: clock.now().toISOString(),
    };
  }

  async function runtimeOf(executor: Queryable, serviceId: string): Promise<ServiceRuntimeRow> {
    return (await findRuntime(executor, serviceId)) ?? neverActed(serviceId);
  }

  /** Lines appended inside `executor`'s transaction, numbered after the deployment's last one. */
  /** The service's running deployment (DEPLOYED or RESTARTED), when that deployment put it on `clusterId`. */
  async function runningOn(serviceId: string, clusterId: string): Promise<{ status: string; service: DeploymentSnapshot['service'] } | undefined> {
    const runtime = await findRuntime(db, serviceId);
    if (runtime?.deployed_deployment_id === null || runtime === undefined || !RUNNING_STATES.has(runtime.status)) return undefined;
    const record = await findDeployment(db, runtime.deployed_deployment_id);
    const service = record === undefined ? undefined : snapshotOf(record).service;
    return service?.clusterId === clusterId ? { status: runtime.status, service } : undefined;
  }

  async function writeLines(executor: Queryable, deploymentId: string, lines: LogLineInput[]): Promise<void> {
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

  /** Whether what would be deployed now differs from what runs: settings, or the variables' content hash. */
  async function deploymentStatusOf(service: StoredService, runtime: ServiceRuntimeRow): Promise<'NEVER_DEPLOYED' | 'UP_TO_DATE' | 'OUT_OF_DATE'> {
    if (runtime.deployed_deployment_id === null) return 'NEVER_DEPLOYED';
    const deployed = await findDeployment(db, runtime.deployed_deployment_id);
    if (deployed === undefined) return 'NEVER_DEPLOYED';
    if (deployed.settings_hash !== settingsHashOf(service)) return 'OUT_OF_DATE';
    if (deployed.variables_hash !== null) {
      const current = await deps.variables.explain(service.environmentId, service.id, false);
      if (current.content_hash !== deployed.variables_hash) return 'OUT_OF_DATE';
    }
    return 'UP_TO_DATE';
  }

  async function statusView(service: StoredService, runtime: ServiceRuntimeRow) {
    const state = stateOf(runtime, service.id);
    const last = runtime.last_deployment_id === null ? undefined : await findDeployment(db, runtime.last_deployment_id);
    return {
      id: service.id,
      state,
      service_deployment_status: await deploymentStatusOf(service, runtime),
      ...(last === undefined ? {} : { last_deployment_date: last.created_at, execution_id: last.job_id }),
      is_part_last_deployment: last !== undefined,
      status_details: {
        action: last === undefined ? ('DEPLOY' as const) : wireAction(last.action),
        status: actionStatusOf(state),
        sub_action: 'NONE' as const,
      },
      deployment_request_id: last?.id ?? null,
      deployment_requests_count: state === 'QUEUED' ? 1 : 0,
      /** Slipway's addition: why the service waits or failed, or why its running workload is not well. */
      message: (runtime.workload_health !== null && runtime.workload_health !== 'RUNNING' ? runtime.workload_message : null) ?? last?.message ?? null,
      /** Slipway's addition: how the deployed workload runs, as its agent last said; null until it said anything. */
      workload:
        runtime.workload_health === null
          ? null
          : {
              health: runtime.workload_health as WorkloadHealth,
              restarts: runtime.workload_restarts ?? 0,
              message: runtime.workload_message,
              reported_at: runtime.workload_reported_at ?? runtime.updated_at,
            },
    };
  }
  type StatusView = Awaited<ReturnType<typeof statusView>>;

  /** What a deploy or redeploy carries: the service's settings now and its variables resolved now. */
  async function freshSnapshot(service: StoredService, clusterId: string, gitCommitId: string | null, imageTag: string | null): Promise<DeploymentSnapshot> {
    const variables = service.kind === 'DATABASE' ? null : await deps.variables.resolveForDeployment(service.environmentId, service.id);
    return {
      service: {
        id: service.id,
        kind: service.kind,
        name: service.name,
        organizationId: service.organizationId,
        environmentId: service.environmentId,
        clusterId,
        settings: service.settings,
      },
      git_commit_id: gitCommitId,
      image_tag: imageTag,
      variables,
    };
  }

  function refuseDeployInput(service: StoredService, input: { git_commit_id?: string | undefined; image_tag?: string | undefined }): void {
    if (input.git_commit_id !== undefined && !GIT_KINDS.has(service.kind)) {
      throw badRequest(`a ${service.kind} is not built from git`, [{ field: '/git_commit_id', message: `not accepted for a ${service.kind}` }]);
    }
    if (input.image_tag !== undefined && !IMAGE_KINDS.has(service.kind)) {
      throw badRequest(`a ${service.kind} does not run a container image of its own`, [{ field: '/image_tag', message: `not accepted for a ${service.kind}` }]);
    }
  }

  /**
   * Moves a service into QUEUED for an action and writes its deployment record (with its snapshot), its first log
   * lines and the job that carries it out, in one transaction. The job waits for the cluster's agent.
   */
  async function requestAction(
    triggeredBy: string,
    kind: ServiceKind,
    serviceId: string,
    action: QueuedServiceAction,
    input: { git_commit_id?: string | undefined; image_tag?: string | undefined } = {},
  ): Promise<StatusView> {
    // Other modules read their own tables: asked before the transaction, which on SQLite holds the one connection.
    const service = await requireService(serviceId, kind);
    refuseDeployInput(service, input);
    const environment = await deps.environments.findEnvironmentSummary(service.environmentId);
    if (environment === undefined) throw notFound(`service ${serviceId} not found`);
    if (COSTS_MONEY.has(action)) await deps.deploymentGate(service.organizationId, environment.clusterId);
    const before = await runtimeOf(db, serviceId);
    requestedState(stateOf(before, serviceId), action, before.deployed_deployment_id !== null);
    const deployedBefore = before.deployed_deployment_id === null ? undefined : await findDeployment(db, before.deployed_deployment_id);
    let snapshot: DeploymentSnapshot;
    if (action === 'deploy' || action === 'redeploy') {
      // A redeploy rebuilds what ran (its commit and tag) with today's settings and variables, unless told otherwise.
      const previous = action === 'redeploy' && deployedBefore !== undefined ? snapshotOf(deployedBefore) : undefined;
      snapshot = await freshSnapshot(service, environment.clusterId, input.git_commit_id ?? previous?.git_commit_id ?? null, input.image_tag ?? previous?.image_tag ?? null);
    } else {
      // Stop and restart act on what runs: the deployed snapshot, unchanged (new configuration needs a redeploy).
      if (deployedBefore === undefined) throw conflict(`cannot ${action} service: it has never been deployed`);
      snapshot = snapshotOf(deployedBefore);
    }
    const settingsHash = action === 'deploy' || action === 'redeploy' ? settingsHashOf(service) : (deployedBefore?.settings_hash ?? settingsHashOf(service));
    const variablesHash = snapshot.variables?.content_hash ?? null;

    const runtime = await uniqueOrConflict(
      () =>
        db.transaction().execute(async (trx) => {
          const existing = await findRuntime(trx, serviceId);
          const current = existing ?? neverActed(serviceId);
          const from = stateOf(current, serviceId);
          const to = requestedState(from, action, current.deployed_deployment_id !== null);
          const now = clock.now().toISOString();
          const deploymentId = newId();
          const payload: ServiceActionPayload = {
            serviceId,
            deploymentId,
            action,
            kind: service.kind,
            organizationId: service.organizationId,
            environmentId: service.environmentId,
            clusterId: environment.clusterId,
            requestedAt: now,
          };
          const jobId = await enqueueJob(trx, clock, { kind: SERVICE_ACTION_JOB, payload: { ...payload }, serialKey: `service:${serviceId}` });
          await insertDeployment(trx, {
            id: deploymentId,
            service_id: serviceId,
            action: HISTORY_ACTION[action],
            status: to,
            message: waitingMessage(action),
            origin: 'API',
            triggered_by: triggeredBy,
            job_id: jobId,
            git_commit_id: snapshot.git_commit_id,
            image_tag: snapshot.image_tag,
            settings_hash: settingsHash,
            variables_hash: variablesHash,
            snapshot: writeJson(snapshot),
            created_at: now,
            updated_at: now,
            finished_at: null,
          });
          const variableCount = snapshot.variables?.variables.length ?? 0;
          await writeLines(trx, deploymentId, [
            { stream: 'system', message: `${action} of ${service.kind.toLowerCase()} ${service.name} requested by ${triggeredBy}` },
            ...(snapshot.variables === null
              ? []
              : [{ stream: 'system' as const, message: `variables snapshot ${snapshot.variables.content_hash.slice(0, 12)}: ${variableCount} variable(s)` }]),
            { stream: 'system', message: waitingMessage(action) },
          ]);
          const changes = { status: to, last_deployment_id: deploymentId, updated_at: now };
          if (existing === undefined) {
            await insertRuntime(trx, { ...current, ...changes });
          } else if (!(await updateRuntimeInStatus(trx, serviceId, from, changes))) {
            throw conflict(`cannot ${action} service: its state changed meanwhile; read it again`);
          }
          return { ...current, ...changes };
        }),
      `cannot ${action} service: another action was requested at the same time; read its status again`,
    );
    deps.wakeWorkers?.();
    return statusView(service, runtime);
  }

  async function historyPage(kind: ServiceKind, serviceId: string, pageSize: number | undefined, cursor: string | undefined, cursorField: string) {
    const size = pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(size) || size < 1 || size > MAX_HISTORY_PAGE_SIZE) {
      throw badRequest('invalid pageSize', [{ field: '/pageSize', message: `must be an integer from 1 to ${MAX_HISTORY_PAGE_SIZE}` }]);
    }
    const service = await requireService(serviceId, kind);
    if (cursor !== undefined) {
      const at = await findDeployment(db, cursor);
      if (at === undefined || at.service_id !== serviceId) throw badRequest('invalid cursor', [{ field: cursorField, message: 'names no deployment of this service' }]);
    }
    const rows = await listDeploymentsPage(db, serviceId, size + 1, cursor);
    const page = rows.slice(0, size);
    const before = cursor === undefined ? 0 : (await countDeploymentsNewerThan(db, serviceId, cursor)) + 1;
    return {
      service,
      rows: page,
      page: Math.floor(before / size) + 1,
      page_size: size,
      next_cursor: rows.length > size ? (page[page.length - 1]?.id ?? null) : null,
    };
  }

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

  /** Moves the service by one agent report, inside one transaction; answers the rows before and after. */
  /** Where a service lives, for its deployment events (read before a transaction: it asks other modules). */
  async function eventSourceOf(service: StoredService): Promise<DeploymentEventSource | undefined> {
    return deps.events === undefined ? undefined : deps.events.sourceOf(service);
  }

  async function publishMove(trx: Transaction<DB>, source: DeploymentEventSource | undefined, move: Parameters<typeof publishDeploymentTransition>[3]) {
    if (source !== undefined && deps.events !== undefined) await publishDeploymentTransition(deps.events.publisher, trx, source, move);
  }

  async function applyProgress(
    serviceId: string,
    deploymentId: string,
    event: ServiceProgress | 'take',
    message: string | undefined,
    source: DeploymentEventSource | undefined,
  ) {
    return db.transaction().execute(async (trx) => {
      const current = await findRuntime(trx, serviceId);
      if (current === undefined || current.last_deployment_id !== deploymentId) throw conflict(`deployment ${deploymentId} is not the service's current action`);
      const record = await findDeployment(trx, deploymentId);
      if (record === undefined) throw notFound(`deployment ${deploymentId} not found`);
      const resolved: ServiceProgress = event === 'take' ? TAKE_EVENT[queuedActionOf(record.action)] : event;
      const from = stateOf(current, serviceId);
      const to = transitionOf(from, resolved);
      if (to === undefined) throw conflict(`cannot apply ${resolved} to service: it is ${from}`);
      const now = clock.now().toISOString();
      // A new deployment's instance, or none at all, has no health to show yet.
      const deployed = to === 'DEPLOYED' ? { deployed_deployment_id: deploymentId, ...NO_WORKLOAD_HEALTH } : to === 'STOPPED' || to === 'RESTARTED' ? NO_WORKLOAD_HEALTH : {};
      if (!(await updateRuntimeInStatus(trx, serviceId, from, { status: to, updated_at: now, ...deployed }))) throw conflict('the service state changed meanwhile');
      await updateDeployment(trx, deploymentId, { status: to, message: message ?? null, updated_at: now, ...(isSettled(to) ? { finished_at: now } : {}) });
      await writeLines(trx, deploymentId, [{ stream: 'system', message: `${from} → ${to}${message === undefined ? '' : `: ${message}`}` }]);
      await publishMove(trx, source, { action: record.action, deploymentId, from, to, message });
      return { runtime: { ...current, status: to, updated_at: now, ...deployed }, to, at: now };
    });
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
          await writeLines(trx, deploymentId, lines);
        }),
      'log lines were appended to this deployment at the same time; send them again',
    );
    changes.emit(deploymentId);
  }

  return {
    async getServiceStatus(kind: ServiceKind, serviceId: string) {
      const service = await requireService(serviceId, kind);
      return statusView(service, await runtimeOf(db, serviceId));
    },

    /** A service's state for the agents module; undefined once the service is gone. */
    /** Whether an action's deployment record still waits to be carried out (exists, this service's, not ended). */
    async isDeploymentOpen(serviceId: string, deploymentId: string): Promise<boolean> {
      const record = await findDeployment(db, deploymentId);
      return record !== undefined && record.service_id === serviceId && record.finished_at === null;
    },

    async findServiceState(serviceId: string): Promise<ServiceState | undefined> {
      if ((await deps.services.findService(serviceId)) === undefined) return undefined;
      return stateOf(await runtimeOf(db, serviceId), serviceId);
    },

    deployService: (principal: Principal, kind: ServiceKind, serviceId: string, input: { git_commit_id?: string | undefined; image_tag?: string | undefined }) =>
      requestAction(principalDisplayName(principal), kind, serviceId, 'deploy', input),
    redeployService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestAction(principalDisplayName(principal), kind, serviceId, 'redeploy'),
    stopService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestAction(principalDisplayName(principal), kind, serviceId, 'stop'),
    restartService: (principal: Principal, kind: ServiceKind, serviceId: string) => requestAction(principalDisplayName(principal), kind, serviceId, 'restart'),

    /** The environment's service deployments still queued or under way (an environment's action waits on them). */
    openDeploymentIdsOfEnvironment(environmentId: string, options: { databaseStartsBefore?: string } = {}): Promise<string[]> {
      return listOpenDeploymentIdsOfEnvironment(db, environmentId, options);
    },

    /**
     * An environment's action carried into its services (docs/service-deployments.md, "Environment actions"): deploy
     * and redeploy deploy each service (a deployed one is redeployed), databases first so that their tasks reach the
     * agent before the applications that connect to them; stop and restart act on the deployed ones (restart on
     * `only` when given). A service whose state refuses its action (busy, already stopped) is skipped with the
     * reason. Runs from the environment's action job, so a retry after a crash skips what the first run requested.
     */
    async requestEnvironmentServicesAction(environmentId: string, action: QueuedServiceAction, triggeredBy: string, only?: readonly string[]) {
      const services = (await deps.services.listEnvironmentServices(environmentId))
        .filter((service) => only === undefined || only.includes(service.id))
        .sort((a, b) => Number(b.kind === 'DATABASE') - Number(a.kind === 'DATABASE'));
      const outcomes: Array<{ serviceId: string; name: string; action: QueuedServiceAction | null; skipped?: string }> = [];
      for (const service of services) {
        const deployed = (await runtimeOf(db, service.id)).deployed_deployment_id !== null;
        const own: QueuedServiceAction | null = action === 'deploy' || action === 'redeploy' ? (deployed ? 'redeploy' : 'deploy') : deployed ? action : null;
        if (own === null) {
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: 'never deployed' });
          continue;
        }
        try {
          await requestAction(triggeredBy, service.kind, service.id, own);
          outcomes.push({ serviceId: service.id, name: service.name, action: own });
        } catch (error) {
          // Refusals (a state that does not allow it, billing, a LOCAL cluster's grant withdrawn meanwhile) skip the service.
          if (!(error instanceof AppError) || !FAN_OUT_REFUSALS.has(error.kind)) throw error;
          outcomes.push({ serviceId: service.id, name: service.name, action: null, skipped: error.message });
        }
      }
      return outcomes;
    },

    /** Cancels the action under way: a queued one at once (its job is withdrawn), a running deploy at the agent's next step. */
    async cancelServiceDeployment(kind: ServiceKind, serviceId: string) {
      const service = await requireService(serviceId, kind);
      const source = await eventSourceOf(service);
      const runtime = await db.transaction().execute(async (trx) => {
        const current = await runtimeOf(trx, serviceId);
        const from = stateOf(current, serviceId);
        const to = transitionOf(from, 'cancel');
        if (to === undefined || current.last_deployment_id === null) throw conflict(`cannot cancel: service is ${from}, with no cancellable action under way`);
        const now = clock.now().toISOString();
        const last = await findDeployment(trx, current.last_deployment_id);
        if (last !== undefined) {
          if (to === 'CANCELED') await cancelQueuedJob(trx, clock, last.job_id);
          const message = to === 'CANCELED' ? 'canceled before the agent took it' : 'cancel requested: the agent stops at its next step';
          await updateDeployment(trx, last.id, { status: to, message, updated_at: now, ...(to === 'CANCELED' ? { finished_at: now } : {}) });
          await writeLines(trx, last.id, [{ stream: 'system', message }]);
          if (to === 'CANCELED') await publishMove(trx, source, { action: last.action, deploymentId: last.id, from, to, message });
        }
        if (!(await updateRuntimeInStatus(trx, serviceId, from, { status: to, updated_at: now }))) {
          throw conflict('cannot cancel: the service state changed meanwhile; read it again');
        }
        return { ...current, status: to, updated_at: now };
      });
      if (runtime.last_deployment_id !== null) changes.emit(runtime.last_deployment_id);
      return statusView(service, runtime);
    },

    async listServiceDeploymentHistory(kind: ServiceKind, serviceId: string, query: { startId?: string | undefined; pageSize?: number | undefined }) {
      const page = await historyPage(kind, serviceId, query.pageSize, query.startId, '/startId');
      return {
        page: page.page,
        page_size: page.page_size,
        next_cursor: page.next_cursor,
        results: page.rows.map((r) => {
          const state = stateOf(r, r.id);
          const outcome = actionStatusOf(state);
          return {
            id: r.id,
            created_at: r.created_at,
            updated_at: r.updated_at,
            name: page.service.name,
            ...(r.git_commit_id === null ? {} : { commit: { git_commit_id: r.git_commit_id } }),
            // The reference's enum has only the two outcomes; a record still under way carries none.
            ...(outcome === 'SUCCESS' ? { status: 'SUCCESS' as const } : outcome === 'ERROR' || outcome === 'CANCELED' ? { status: 'FAILED' as const } : {}),
            state,
            action: wireAction(r.action),
            message: r.message,
          };
        }),
      };
    },

    async listServiceDeploymentHistoryV2(kind: ServiceKind, serviceId: string, query: { cursor?: string | undefined; pageSize?: number | undefined }) {
      const page = await historyPage(kind, serviceId, query.pageSize, query.cursor, '/cursor');
      const now = clock.now();
      const { service } = page;
      return {
        page: page.page,
        page_size: page.page_size,
        next_cursor: page.next_cursor,
        results: page.rows.map((r) => {
          const status = stateOf(r, r.id);
          const snapshot = snapshotOf(r);
          return {
            identifier: { name: snapshot.service.name, service_id: service.id, service_type: service.kind, execution_id: r.job_id },
            status,
            auditing_data: { created_at: r.created_at, updated_at: r.updated_at, triggered_by: r.triggered_by, origin: r.origin as 'API' },
            details: {
              ...(r.git_commit_id === null ? {} : { commit: { git_commit_id: r.git_commit_id } }),
              ...(r.image_tag === null ? {} : { tag: r.image_tag }),
            },
            status_details: { action: wireAction(r.action), status: actionStatusOf(status), sub_action: 'NONE' as const },
            icon_uri: `urn:slipway:service-kind:${service.kind.toLowerCase()}`,
            total_duration: `PT${durationSeconds(r, now).toFixed(3)}S`,
            deployment_id: r.id,
            message: r.message,
          };
        }),
      };
    },

    /**
     * One deployment with what it carries: the service's settings as deployed and its variables, each with the scope
     * that set it and its alias chain. Plain values are shown; secrets and hidden built-ins only as `sealed: true`.
     */
    async getServiceDeployment(kind: ServiceKind, serviceId: string, deploymentId: string) {
      await requireService(serviceId, kind);
      const record = await findDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      const snapshot = snapshotOf(record);
      const state = stateOf(record, record.id);
      return {
        id: record.id,
        service_id: serviceId,
        action: wireAction(record.action),
        state,
        message: record.message,
        triggered_by: record.triggered_by,
        execution_id: record.job_id,
        created_at: record.created_at,
        updated_at: record.updated_at,
        finished_at: record.finished_at,
        git_commit_id: record.git_commit_id,
        image_tag: record.image_tag,
        settings_hash: record.settings_hash,
        service: snapshot.service,
        variables:
          snapshot.variables === null
            ? null
            : {
                content_hash: snapshot.variables.content_hash,
                results: snapshot.variables.variables.map((variable) => ({
                  key: variable.key,
                  scope: variable.scope,
                  variable_id: variable.variable_id,
                  mount_path: variable.mount_path,
                  alias_chain: variable.alias_chain,
                  sealed: variable.sealed !== undefined,
                  ...(variable.sealed === undefined ? { value: variable.value ?? '' } : {}),
                })),
              },
      };
    },

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
     * What the cluster's agent (issue 9) reports while it carries out a service's newest action: it takes the queued
     * action (`take`), then reports its phases (built, succeed, fail, cancel_done). Each report moves the state
     * through the transition table (409 when the table has no such move) and the deployment record with it;
     * reaching DEPLOYED starts the service's metered running time, STOPPED ends it.
     */
    /**
     * How a deployed workload runs, from the agent of the service's cluster (docs/agent-protocol.md, "Workload
     * health"): RUNNING, RESTARTING after a crash (restarts so far, the reason) or FAILED. Shown in the service's
     * status until its next deployment. A service of another cluster, or one not deployed, is a 404.
     */
    async recordWorkloadHealth(serviceId: string, clusterId: string, report: { health: WorkloadHealth; restarts: number; message?: string | undefined }) {
      const running = await runningOn(serviceId, clusterId);
      if (running === undefined) throw notFound(`no running service ${serviceId} on this cluster`);
      await updateRuntimeInStatus(db, serviceId, running.status, {
        workload_health: report.health,
        workload_restarts: report.restarts,
        workload_message: report.message ?? null,
        workload_reported_at: clock.now().toISOString(),
      });
    },

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

    async recordServiceProgress(serviceId: string, deploymentId: string, event: ServiceProgress | 'take', message?: string) {
      const service = await requireService(serviceId);
      const { runtime, to, at } = await applyProgress(serviceId, deploymentId, event, message, await eventSourceOf(service));
      changes.emit(deploymentId);
      if (to === 'DEPLOYED') {
        const size = meteredSize(service);
        await deps.metering.resourceRunning({ organizationId: service.organizationId, resourceType: 'SERVICE', resourceId: serviceId, ...size, at });
      }
      if (to === 'STOPPED') await deps.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: serviceId, at });
      return statusView(service, runtime);
    },

    /**
     * For the cluster's agent: one deployment with its snapshot (secrets still sealed: open them with the
     * variables module's openSnapshotValue where the workload starts).
     */
    async deploymentForAgent(deploymentId: string): Promise<{ record: ServiceDeploymentRow; snapshot: DeploymentSnapshot } | undefined> {
      const record = await findDeployment(db, deploymentId);
      return record === undefined ? undefined : { record, snapshot: snapshotOf(record) };
    },

    /**
     * The deployment as the agent carries it out (its task spec): the service as deployed, the commit or tag, and
     * every variable with its value opened — secrets and hidden built-ins included, for the lease holder only.
     */
    /** The service as its running deployment deployed it, when it runs on the cluster (DEPLOYED or RESTARTED there). */
    async runningServiceOn(serviceId: string, clusterId: string): Promise<DeploymentSnapshot['service'] | undefined> {
      return (await runningOn(serviceId, clusterId))?.service;
    },

    async deploymentSpecForAgent(serviceId: string, deploymentId: string, openValue: (variable: SnapshotVariable) => string) {
      const record = await findDeployment(db, deploymentId);
      if (record === undefined || record.service_id !== serviceId) throw notFound(`deployment ${deploymentId} of service ${serviceId} not found`);
      const snapshot = snapshotOf(record);
      return {
        service: snapshot.service,
        git_commit_id: snapshot.git_commit_id,
        image_tag: snapshot.image_tag,
        variables: (snapshot.variables?.variables ?? []).map((variable) => ({
          key: variable.key,
          value: openValue(variable),
          mount_path: variable.mount_path,
          scope: variable.scope,
          secret: variable.sealed !== undefined,
        })),
      };
    },

    /**
     * For the services module's delete, inside its transaction (before the row goes): refuses (409, naming the
     * state) while the agent works on the service, withdraws its queued actions, and, when a workload may exist,
     * queues its teardown for the agent (unless `teardown` is false: skipReconcile). Call `serviceRemoved` after the
     * commit.
     */
    async refuseBusy(trx: Transaction<DB>, serviceId: string, options: { teardown: boolean }): Promise<void> {
      const runtime = await findRuntime(trx, serviceId);
      if (runtime === undefined) return;
      requestedState(stateOf(runtime, serviceId), 'delete', runtime.deployed_deployment_id !== null);
      for (const jobId of await listDeploymentJobIds(trx, serviceId)) await cancelQueuedJob(trx, clock, jobId);
      const deployed = runtime.deployed_deployment_id === null || !options.teardown ? undefined : await findDeployment(trx, runtime.deployed_deployment_id);
      if (deployed !== undefined) {
        const { service } = snapshotOf(deployed);
        const payload: ServiceTeardownPayload = {
          serviceId,
          kind: service.kind,
          name: service.name,
          organizationId: service.organizationId,
          environmentId: service.environmentId,
          clusterId: service.clusterId,
          deployedDeploymentId: deployed.id,
          requestedAt: clock.now().toISOString(),
        };
        await enqueueJob(trx, clock, { kind: SERVICE_TEARDOWN_JOB, payload: { ...payload }, serialKey: `service:${serviceId}` });
      }
    },

    /** Of these services, those deployed whose settings or variables changed since their deployment. */
    async outOfDate(serviceIds: readonly string[]): Promise<Set<string>> {
      const found = new Set<string>();
      for (const serviceId of serviceIds) {
        const service = await deps.services.findService(serviceId);
        const runtime = await findRuntime(db, serviceId);
        if (service !== undefined && runtime !== undefined && (await deploymentStatusOf(service, runtime)) === 'OUT_OF_DATE') found.add(serviceId);
      }
      return found;
    },

    /** After a service's removal is committed: its metered running time ends. */
    async serviceRemoved(serviceId: string): Promise<void> {
      await deps.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: serviceId, at: clock.now().toISOString() });
    },
  };
}

export type ServiceDeploymentsService = ReturnType<typeof createServiceDeploymentsService>;
export type ServiceStatusView = Awaited<ReturnType<ServiceDeploymentsService['getServiceStatus']>>;
