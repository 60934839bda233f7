import type { Transaction } from 'kysely';
import { isSettled, queuedActionOf, TAKE_EVENT, transitionOf, type DeploymentProgress, type DeploymentState } from '../../engine/deployment-states.ts';
import type { DB } from '../../db/db.schema.ts';
import { cancelQueuedJob } from '../../jobs/job-queue.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import { publishDeploymentTransition, type DeploymentEventSource } from '../webhooks/webhooks.events.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { EnvironmentDeploymentState, EnvironmentRecords } from './deployments.environment-records.ts';
import { writeLogLines } from './deployments.logs.ts';
import {
  findEnvironmentDeployment,
  findServiceDeployment,
  listServiceDeploymentsOfEnvironmentDeployment,
  updateEnvironmentDeployment,
  updateRuntimeInStatus,
  updateServiceDeployment,
  type EnvironmentDeploymentRow,
  type ServiceDeploymentRow,
  type ServiceRuntimeRow,
} from './deployments.repo.ts';
import { NO_WORKLOAD_HEALTH, type ServiceRecords } from './deployments.service-records.ts';
import type { DeploymentsDeps } from './deployments.service.ts';
import { stateOf, type DeploymentSubject } from './deployments.states.ts';

/**
 * The moves after a request, one machinery for environments and services: a cancel of the action under way, and
 * the cluster's agent's reports as it carries the newest action out (take, built, succeed, fail, cancel_done). Each
 * goes through the transition table (409 when it has no such move) inside one transaction: the subject's state (a
 * compare-and-set), its deployment record, and the webhooks' deployment event. What differs is kept explicit per
 * subject (Movable): where the state lives (an environment's row, a service's runtime row), what reaching DEPLOYED
 * writes beside it (the configuration revision; the deployment that runs and no workload health yet), and that a
 * service's deployment has a log, which gets a line for each move.
 */

/** What a move reads of a subject's row. */
interface MovableRow {
  status: string;
  last_deployment_id: string | null;
}

/** What a move reads of a deployment record. */
interface MovedRecord {
  id: string;
  action: string;
  job_id: string;
}

/** What a move writes of a deployment record (the same columns in both record tables). */
interface RecordChanges {
  status: DeploymentState;
  message: string | null;
  updated_at: string;
  finished_at?: string;
}

/** One subject as a move sees it. */
interface Movable<Row extends MovableRow, Record extends MovedRecord> {
  subject: DeploymentSubject;
  id: string;
  /** Where it lives, for its deployment events (read before the transaction: it asks other modules). */
  source: DeploymentEventSource | undefined;
  read(trx: Transaction<DB>): Promise<Row>;
  findRecord(trx: Transaction<DB>, deploymentId: string): Promise<Record | undefined>;
  updateRecord(trx: Transaction<DB>, deploymentId: string, changes: RecordChanges): Promise<void>;
  /** Moves the state from `from` to `to` (a compare-and-set): the row after, or undefined when it changed meanwhile. */
  move(trx: Transaction<DB>, current: Row, from: DeploymentState, to: DeploymentState, now: string, record?: Record): Promise<Row | undefined>;
  /** A line in the deployment's log, for subjects whose deployments have one. */
  log?(trx: Transaction<DB>, deploymentId: string, message: string): Promise<void>;
}

const CANCELED_AT_ONCE = 'canceled before the agent took it';
const CANCEL_REQUESTED = 'cancel requested: the agent stops at its next step';

export function createDeploymentTransitions(
  deps: Pick<DeploymentsDeps, 'db' | 'clock' | 'environments' | 'services' | 'metering' | 'events' | 'serviceDeployed' | 'metrics' | 'stateChanges'>,
  services: ServiceRecords,
  environments: EnvironmentRecords,
) {
  const { db, clock } = deps;

  async function publishMove(trx: Transaction<DB>, source: DeploymentEventSource | undefined, move: Parameters<typeof publishDeploymentTransition>[3]) {
    if (source !== undefined && deps.events !== undefined) await publishDeploymentTransition(deps.events.publisher, trx, source, move);
  }

  /** Whether the subject's current action can be cancelled: the state has a cancel move and there is an action. */
  function cancellable(subject: DeploymentSubject, id: string, current: MovableRow): boolean {
    return transitionOf(stateOf(subject, id, current.status), 'cancel') !== undefined && current.last_deployment_id !== null;
  }

  /**
   * Cancels the action under way inside the caller's transaction: a queued one at once (its job is withdrawn), a
   * running deploy at the agent's next step. Answers the row after.
   */
  async function cancelIn<Row extends MovableRow, Record extends MovedRecord>(trx: Transaction<DB>, target: Movable<Row, Record>, current: Row): Promise<Row> {
    const from = stateOf(target.subject, target.id, current.status);
    const to = transitionOf(from, 'cancel');
    if (to === undefined || current.last_deployment_id === null) throw conflict(`cannot cancel: ${target.subject} is ${from}, with no cancellable action under way`);
    const now = clock.now().toISOString();
    const last = await target.findRecord(trx, current.last_deployment_id);
    if (last !== undefined) {
      if (to === 'CANCELED') await cancelQueuedJob(trx, clock, last.job_id);
      const message = to === 'CANCELED' ? CANCELED_AT_ONCE : CANCEL_REQUESTED;
      await target.updateRecord(trx, last.id, { status: to, message, updated_at: now, ...(to === 'CANCELED' ? { finished_at: now } : {}) });
      await target.log?.(trx, last.id, message);
      if (to === 'CANCELED') await publishMove(trx, target.source, { action: last.action, deploymentId: last.id, from, to, message });
    }
    const moved = await target.move(trx, current, from, to, now);
    if (moved === undefined) throw conflict(`cannot cancel: the ${target.subject} state changed meanwhile; read it again`);
    return moved;
  }

  /** Cancels the subject's action under way, in a transaction of its own. */
  async function cancel<Row extends MovableRow, Record extends MovedRecord>(target: Movable<Row, Record>): Promise<Row> {
    return db.transaction().execute(async (trx) => cancelIn(trx, target, await target.read(trx)));
  }

  /** What follows a service's cancel once committed: the metric of a settled action, and the wake-up of its log streams. */
  function serviceCanceled(service: StoredService, runtime: ServiceRuntimeRow): void {
    if (runtime.status === 'CANCELED') deps.metrics?.serviceActionSettled(service.kind, runtime.status);
    if (runtime.last_deployment_id !== null) services.changes.emit(runtime.last_deployment_id);
  }

  /** Moves the subject by one report of the agent on its newest action; answers the row after, the state reached and when. */
  async function progress<Row extends MovableRow, Record extends MovedRecord>(
    target: Movable<Row, Record>,
    deploymentId: string,
    event: DeploymentProgress | 'take',
    message: string | undefined,
  ) {
    return db.transaction().execute(async (trx) => {
      const current = await target.read(trx);
      if (current.last_deployment_id !== deploymentId) throw conflict(`deployment ${deploymentId} is not the ${target.subject}'s current action`);
      const record = await target.findRecord(trx, deploymentId);
      if (record === undefined) throw notFound(`deployment ${deploymentId} not found`);
      const resolved: DeploymentProgress = event === 'take' ? TAKE_EVENT[queuedActionOf(record.action)] : event;
      const from = stateOf(target.subject, target.id, current.status);
      const to = transitionOf(from, resolved);
      if (to === undefined) throw conflict(`cannot apply ${resolved} to ${target.subject}: it is ${from}`);
      const now = clock.now().toISOString();
      const moved = await target.move(trx, current, from, to, now, record);
      if (moved === undefined) throw conflict(`the ${target.subject} state changed meanwhile`);
      await target.updateRecord(trx, deploymentId, { status: to, message: message ?? null, updated_at: now, ...(isSettled(to) ? { finished_at: now } : {}) });
      await target.log?.(trx, deploymentId, `${from} → ${to}${message === undefined ? '' : `: ${message}`}`);
      await publishMove(trx, target.source, { action: record.action, deploymentId, from, to, message });
      return { row: moved, to, at: now };
    });
  }

  /** A service: its state in its runtime row (READY without one), its deployments with their logs. */
  async function movableService(service: StoredService): Promise<Movable<ServiceRuntimeRow, ServiceDeploymentRow>> {
    return {
      subject: 'service',
      id: service.id,
      source: deps.events === undefined ? undefined : await deps.events.serviceSource(service),
      read: (trx) => services.runtimeOf(trx, service.id),
      findRecord: findServiceDeployment,
      updateRecord: updateServiceDeployment,
      async move(trx, current, from, to, now, record) {
        // A new deployment's instance, or none at all, has no health to show yet.
        const alongside =
          to === 'DEPLOYED' && record !== undefined
            ? { deployed_deployment_id: record.id, ...NO_WORKLOAD_HEALTH }
            : to === 'STOPPED' || to === 'RESTARTED'
              ? NO_WORKLOAD_HEALTH
              : {};
        const changes = { status: to, updated_at: now, ...alongside };
        if (!(await updateRuntimeInStatus(trx, service.id, from, changes))) return undefined;
        await deps.stateChanges?.serviceChanged(trx, service.id);
        return { ...current, ...changes };
      },
      log: (trx, deploymentId, message) => writeLogLines(trx, clock, deploymentId, [{ stream: 'system', message }]),
    };
  }

  /** An environment: its state in its own row (moved through the environments module's port), its deployments. */
  async function movableEnvironment(environmentId: string): Promise<Movable<EnvironmentDeploymentState, EnvironmentDeploymentRow>> {
    const summary = deps.events === undefined ? undefined : await deps.environments.findEnvironmentSummary(environmentId);
    return {
      subject: 'environment',
      id: environmentId,
      source: summary === undefined || deps.events === undefined ? undefined : await deps.events.environmentSource(summary),
      read: (trx) => environments.requireEnvironment(trx, environmentId),
      findRecord: findEnvironmentDeployment,
      updateRecord: updateEnvironmentDeployment,
      async move(trx, current, from, to, now, record) {
        const changes = { status: to, updated_at: now, ...(to === 'DEPLOYED' && record !== undefined ? { deployed_revision: record.config_revision } : {}) };
        return (await deps.environments.moveDeploymentState(trx, environmentId, from, changes)) ? { ...current, ...changes } : undefined;
      },
    };
  }

  return {
    async cancelServiceDeployment(kind: ServiceKind, serviceId: string) {
      const service = await services.requireService(serviceId, kind);
      const runtime = await cancel(await movableService(service));
      serviceCanceled(service, runtime);
      return services.statusView(service, runtime);
    },

    /**
     * Cancels the environment's action and, in the same transaction, the services' own deployments it was fanned out
     * into that have not ended: each as that service's cancel does it (a queued one at once, its job withdrawn so it
     * never starts; one the agent carries out at its next step). A service whose newest action is no longer the one
     * the environment asked for, or whose action cannot be cancelled (a stop or restart under way), is left as it is.
     */
    async cancelEnvironmentDeployment(environmentId: string) {
      const environment = await movableEnvironment(environmentId);
      // The services' event sources read other modules: asked before the transaction, which on SQLite holds the one
      // connection. Every service of the environment, as a fan-out still writing when the cancel began commits first.
      const movables = new Map<string, { service: StoredService; target: Movable<ServiceRuntimeRow, ServiceDeploymentRow> }>();
      for (const service of await deps.services.listEnvironmentServices(environmentId)) movables.set(service.id, { service, target: await movableService(service) });
      const { row, canceled } = await db.transaction().execute(async (trx) => {
        const moved = await cancelIn(trx, environment, await environment.read(trx));
        const followed: Array<{ service: StoredService; runtime: ServiceRuntimeRow }> = [];
        // Listed after the environment's record was written: a fan-out that wrote its services' deployments first is
        // seen here, one that comes later finds the record ended and asks nothing (deployments.requests.ts).
        const fannedOut = moved.last_deployment_id === null ? [] : await listServiceDeploymentsOfEnvironmentDeployment(trx, moved.last_deployment_id);
        for (const record of fannedOut.filter((deployment) => deployment.finished_at === null)) {
          const movable = movables.get(record.service_id);
          if (movable === undefined) continue;
          const current = await movable.target.read(trx);
          if (current.last_deployment_id !== record.id || !cancellable('service', movable.service.id, current)) continue;
          followed.push({ service: movable.service, runtime: await cancelIn(trx, movable.target, current) });
        }
        return { row: moved, canceled: followed };
      });
      for (const { service, runtime } of canceled) serviceCanceled(service, runtime);
      return environments.statusView(row);
    },

    /**
     * What the cluster's agent reports while it carries out a service's newest action. Reaching DEPLOYED starts the
     * service's metered running time, STOPPED ends it.
     */
    async recordServiceProgress(serviceId: string, deploymentId: string, event: DeploymentProgress | 'take', message?: string) {
      const service = await services.requireService(serviceId);
      const { row, to, at } = await progress(await movableService(service), deploymentId, event, message);
      services.changes.emit(deploymentId);
      if (isSettled(to)) deps.metrics?.serviceActionSettled(service.kind, to);
      if (to === 'DEPLOYED') {
        const size = meteredSize(service);
        await deps.metering.resourceRunning({ organizationId: service.organizationId, resourceType: 'SERVICE', resourceId: serviceId, ...size, at });
        await deps.serviceDeployed?.(serviceId).catch(() => undefined);
      }
      if (to === 'STOPPED') await deps.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: serviceId, at });
      return services.statusView(service, row);
    },

    /** What the cluster's agent reports while it carries out an environment's newest action. */
    async recordEnvironmentProgress(environmentId: string, deploymentId: string, event: DeploymentProgress | 'take', message?: string) {
      const { row } = await progress(await movableEnvironment(environmentId), deploymentId, event, message);
      return environments.statusView(row);
    },
  };
}

/** Billing's price key and units for a running service: its CPU size and its minimum instance count. */
function meteredSize(service: StoredService): { priceKey: string; units: number } {
  const cpu = typeof service.settings.cpu === 'number' ? service.settings.cpu : 500;
  const instances = typeof service.settings.min_running_instances === 'number' ? service.settings.min_running_instances : 1;
  const priceKey = cpu <= 500 ? 'service.small' : cpu <= 2000 ? 'service.medium' : 'service.large';
  return { priceKey, units: Math.max(1, Math.floor(instances)) };
}
