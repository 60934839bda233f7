import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import type { ClaimedJob } from '../../jobs/job-queue.ts';
import type { JobHandler, JobOutcome } from '../../jobs/job-worker.ts';
import type { Clock } from '../../lib/clock.ts';
import { NO_EVENTS, publishClusterTransition, type EventPublisher } from '../webhooks/webhooks.events.ts';
import { deleteClusterRow, findClusterById, findOperator, updateClusterInStatus, type ClusterRow } from './clusters.repo.ts';
import { ClusterDriverError, type ClusterActionContext, type ClusterDriver, type DriverStep, type OperatorReadiness } from './clusters.drivers.ts';
import type { ClusterActionPayload } from './clusters.actions.ts';
import { summaryOf } from './clusters.records.ts';
import { isClusterState, transitionOf, type ClusterProgress, type ClusterState } from './clusters.states.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';

/** Cluster and service running time, reported to billing's metering (issue 6). */
export interface ClusterMetering {
  resourceRunning(input: { organizationId: string; resourceType: 'CLUSTER'; resourceId: string; priceKey: string; units: number; at: string }): Promise<void>;
  resourceStopped(input: { resourceType: 'CLUSTER'; resourceId: string; at: string }): Promise<void>;
}

export interface ClusterJobDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** The driver for each cluster kind (LOCAL, SELF_MANAGED, MANAGED, PARTIALLY_MANAGED). */
  drivers: Readonly<Record<string, ClusterDriver>>;
  metering: ClusterMetering;
  /** Deployment events (started, successful, failure, cancelled), published in the transaction of the move. */
  events?: EventPublisher;
  /** Open pages' "look again" (organization-changes.signals.ts), published in the transaction of the move. */
  stateChanges?: Pick<StateChangePublisher, 'clusterChanged'> | undefined;
}

/** The phases an action passes through, as states of the cluster table (clusters.states.ts). */
const FLOWS = {
  deploy: { queued: 'DEPLOYMENT_QUEUED', working: ['BUILDING', 'DEPLOYING'] },
  upgrade: { queued: 'DEPLOYMENT_QUEUED', working: ['BUILDING', 'DEPLOYING'] },
  stop: { queued: 'STOP_QUEUED', working: ['STOPPING'] },
  restart: { queued: 'RESTART_QUEUED', working: ['RESTARTING'] },
  delete: { queued: 'DELETE_QUEUED', working: ['DELETING'] },
} as const satisfies Record<ClusterActionPayload['action'], { queued: ClusterState; working: readonly ClusterState[] }>;

/** The state moved meanwhile (a cancel): the step stops and the job re-reads the cluster. */
class StateMoved extends Error {}

export function operatorReadinessOf(db: Kysely<DB>): OperatorReadiness {
  return {
    async lastReport(clusterId) {
      const operator = await findOperator(db, clusterId);
      return operator === undefined ? undefined : { status: operator.reported_status, reportedAt: operator.reported_at };
    },
  };
}

/**
 * Carries out one cluster action (the `cluster.action` job): claims the cluster out of the action's queued state,
 * runs the driver step by step, and records the outcome through the state machine. Every move is a
 * compare-and-set, so a cancel that lands between two steps wins and the job ends the cluster in CANCELED. A job
 * recovered after a crash resumes from whichever phase the cluster is in.
 */
export function createClusterActionHandler(deps: ClusterJobDeps): JobHandler {
  const { db, clock } = deps;

  async function move(row: ClusterRow, event: ClusterProgress, extra: Partial<ClusterRow> = {}): Promise<ClusterRow> {
    const from = row.status as ClusterState;
    const to = transitionOf(from, event);
    if (to === undefined) throw new StateMoved(`no ${event} from ${from}`);
    const now = clock.now().toISOString();
    const changes = { ...extra, status: to, updated_at: now };
    const moved = await db.transaction().execute(async (trx) => {
      if (!(await updateClusterInStatus(trx, row.id, from, changes))) return false;
      await deps.stateChanges?.clusterChanged(trx, row.id);
      await publishClusterTransition(deps.events ?? NO_EVENTS, trx, row, from, to, changes.status_message);
      return true;
    });
    if (!moved) throw new StateMoved(`cluster left ${from}`);
    return { ...row, ...changes };
  }

  async function current(clusterId: string): Promise<ClusterRow | undefined> {
    const row = await findClusterById(db, clusterId);
    return row !== undefined && isClusterState(row.status) ? row : undefined;
  }

  async function runStep(row: ClusterRow, payload: ClusterActionPayload, driver: ClusterDriver): Promise<JobOutcome> {
    const context: ClusterActionContext = {
      requestedAt: payload.requestedAt,
      dryRun: payload.dryRun,
      targetVersion: payload.targetVersion,
      deleteMode: payload.deleteMode,
      skipReconcile: payload.skipReconcile,
    };
    const cluster = summaryOf(row);
    const finish = async (step: DriverStep, onDone: () => Promise<void>): Promise<JobOutcome> => {
      if (step !== 'done') return { deferUntil: step.waitUntil };
      await onDone();
      return undefined;
    };
    switch (row.status) {
      case 'BUILDING':
        await driver.prepare(cluster, context);
        return runStep(await move(row, 'built'), payload, driver);
      case 'DEPLOYING':
        return finish(await driver.deploy(cluster, context), async () => {
          const now = clock.now().toISOString();
          if (payload.dryRun) {
            await move(row, 'dry_run_done', { status_message: null });
            return;
          }
          await move(row, 'succeed', {
            is_deployed: 1,
            deployed_revision: row.config_revision,
            last_deployment_date: now,
            version: payload.targetVersion,
            status_message: null,
          });
          await deps.metering.resourceRunning({
            organizationId: row.organization_id,
            resourceType: 'CLUSTER',
            resourceId: row.id,
            priceKey: row.instance_type ?? row.kubernetes,
            units: row.min_running_nodes,
            at: now,
          });
        });
      case 'STOPPING':
        return finish(await driver.stop(cluster, context), async () => {
          await move(row, 'succeed', { status_message: null });
          await deps.metering.resourceStopped({ resourceType: 'CLUSTER', resourceId: row.id, at: clock.now().toISOString() });
        });
      case 'RESTARTING':
        return finish(await driver.restart(cluster, context), async () => {
          await move(row, 'succeed', { status_message: null });
        });
      case 'DELETING':
        return finish(await driver.delete(cluster, context), async () => {
          await move(row, 'succeed', { status_message: null, is_deployed: 0 });
          await deps.metering.resourceStopped({ resourceType: 'CLUSTER', resourceId: row.id, at: clock.now().toISOString() });
          // The row goes with its locks, enrollments and (by cascade) anything that belongs to the cluster alone.
          await deleteClusterRow(db, row.id);
        });
      default:
        return undefined;
    }
  }

  async function settleFailure(clusterId: string, reason: 'failure' | 'credentials', message: string): Promise<void> {
    const row = await current(clusterId);
    if (row === undefined) return;
    if (row.status === 'CANCELING') {
      await move(row, 'cancel_done', { status_message: `canceled: ${message}` }).catch(() => undefined);
      return;
    }
    await move(row, reason === 'credentials' ? 'credentials_fail' : 'fail', { status_message: message }).catch((error: unknown) => {
      if (!(error instanceof StateMoved)) throw error;
    });
  }

  return {
    async run(job: ClaimedJob): Promise<JobOutcome> {
      const payload = job.payload as unknown as ClusterActionPayload;
      for (let round = 0; round < 5; round++) {
        let row = await current(payload.clusterId);
        if (row === undefined || row.last_execution_id !== job.id) return undefined;
        const driver = deps.drivers[row.kubernetes];
        try {
          if (row.status === 'CANCELING') {
            await move(row, 'cancel_done', { status_message: 'canceled before it completed' });
            return undefined;
          }
          const flow = FLOWS[payload.action];
          if (row.status === flow.queued) row = await move(row, 'claim');
          if (!(flow.working as readonly string[]).includes(row.status)) return undefined;
          if (driver === undefined) throw new ClusterDriverError('failure', `no driver runs ${row.kubernetes} clusters on this installation`);
          return await runStep(row, payload, driver);
        } catch (error) {
          if (error instanceof StateMoved) continue;
          if (error instanceof ClusterDriverError) {
            await settleFailure(payload.clusterId, error.reason, error.message);
            return undefined;
          }
          throw error;
        }
      }
      throw new Error('cluster state kept changing under the job');
    },

    async giveUp(job: ClaimedJob, error: string): Promise<void> {
      const payload = job.payload as unknown as ClusterActionPayload;
      const row = await current(payload.clusterId);
      if (row === undefined || row.last_execution_id !== job.id) return;
      const flow = FLOWS[payload.action];
      if (row.status === flow.queued) {
        const claimed = await move(row, 'claim').catch(() => undefined);
        if (claimed === undefined) return;
      }
      await settleFailure(payload.clusterId, 'failure', `the ${payload.action} failed after ${job.attempt} attempts: ${error}`);
    },
  };
}
