import { enqueueJob, cancelQueuedJob } from '../../jobs/job-queue.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { NO_EVENTS, publishClusterTransition } from '../webhooks/webhooks.events.ts';
import { findCluster, findClusterById, updateCluster, updateClusterInStatus, type ClusterRow } from './clusters.repo.ts';
import { lockView, type ClusterLocks } from './clusters.locks.ts';
import { nextKubernetesVersion, stateOf, type ClusterRecords } from './clusters.records.ts';
import type { ClustersDeps } from './clusters.service.ts';
import { requestedState, transitionOf, type ClusterAction } from './clusters.states.ts';

/**
 * The actions asked of a cluster (deploy, stop, restart, upgrade, delete), their cancel, and the status view each
 * answers with. A request only moves the state and enqueues the job; clusters.jobs.ts carries the action out.
 */

export const CLUSTER_ACTION_JOB = 'cluster.action';

/** Actions that start or keep infrastructure running; stopping, deleting and cancelling stay possible while billing is invalid. */
const COSTS_MONEY: ReadonlySet<ClusterAction> = new Set(['deploy', 'upgrade', 'restart']);

export interface ClusterActionPayload {
  clusterId: string;
  action: Exclude<ClusterAction, 'cancel'>;
  requestedAt: string;
  dryRun: boolean;
  targetVersion: string;
  deleteMode: string;
  skipReconcile: boolean;
}

export function createClusterActions(deps: ClustersDeps, records: ClusterRecords, locks: ClusterLocks) {
  const { db, clock } = deps;
  const { admit, requireCluster } = records;
  const { liveLock, refuseIfLocked } = locks;

  async function statusView(row: ClusterRow) {
    const lock = await liveLock(db, row.id);
    return {
      cluster_id: row.id,
      status: stateOf(row),
      is_deployed: row.is_deployed === 1,
      next_k8s_available_version: nextKubernetesVersion(row.version),
      last_execution_id: row.last_execution_id,
      cluster_lock: lock === undefined ? null : lockView(lock),
      last_deployment_date: row.last_deployment_date,
      reason: 'UNSPECIFIED' as const,
      message: row.status_message,
    };
  }

  /**
   * Moves a cluster into an action's queued state and enqueues the job that carries it out, in one transaction;
   * the job id is the action's execution id.
   */
  async function requestAction(
    organizationId: string | undefined,
    clusterId: string,
    action: Exclude<ClusterAction, 'cancel'>,
    options: { dryRun?: boolean; deleteMode?: string; skipReconcile?: boolean } = {},
  ): Promise<ClusterRow> {
    // Asked before the transaction: billing reads its own tables, and SQLite has one connection, held by a transaction.
    // A cluster that is not there is left to the transaction's 404.
    if (COSTS_MONEY.has(action)) {
      const cluster = organizationId === undefined ? await findClusterById(db, clusterId) : await findCluster(db, organizationId, clusterId);
      if (cluster !== undefined && cluster.status !== 'DELETED') await admit(cluster.organization_id, cluster);
    }
    const row = await db.transaction().execute(async (trx) => {
      const current = organizationId === undefined ? await findClusterById(trx, clusterId) : await findCluster(trx, organizationId, clusterId);
      if (current === undefined || current.status === 'DELETED') throw notFound(`cluster ${clusterId} not found`);
      await refuseIfLocked(trx, clusterId);
      const from = stateOf(current);
      const to = requestedState(from, action, current.is_deployed === 1);
      let targetVersion = current.version;
      if (action === 'upgrade') {
        const next = nextKubernetesVersion(current.version);
        if (next === null) throw conflict(`cluster already runs Kubernetes ${current.version}, the newest version Slipway supports`);
        targetVersion = next;
      }
      const now = clock.now().toISOString();
      const payload: ClusterActionPayload = {
        clusterId,
        action,
        requestedAt: now,
        dryRun: options.dryRun ?? false,
        targetVersion,
        deleteMode: options.deleteMode ?? 'DEFAULT',
        skipReconcile: options.skipReconcile ?? false,
      };
      const jobId = await enqueueJob(trx, clock, { kind: CLUSTER_ACTION_JOB, payload: { ...payload }, serialKey: `cluster:${clusterId}` });
      const moved = await updateClusterInStatus(trx, clusterId, from, {
        status: to,
        status_message: null,
        last_execution_id: jobId,
        updated_at: now,
      });
      if (!moved) throw conflict(`cannot ${action} cluster: its state changed meanwhile; read it again`);
      await deps.stateChanges?.clusterChanged(trx, clusterId);
      return { ...current, status: to, status_message: null, last_execution_id: jobId, updated_at: now };
    });
    deps.wakeWorkers();
    return row;
  }

  return {
    /**
     * deleteMode DEFAULT and DELETE_CLUSTER_AND_PLATFORM_CONFIG tear the cluster down through the delete action;
     * DELETE_PLATFORM_CONFIG removes only the stored platform configuration, at once. skipReconcile skips the
     * pre-destroy apply, so it cannot go with a mode that keeps the cluster (SPEC.md deletion rule 2).
     */
    async deleteCluster(organizationId: string, clusterId: string, mode: string, skipReconcile: boolean): Promise<void> {
      if (skipReconcile && mode === 'DELETE_PLATFORM_CONFIG') {
        throw badRequest('skipReconcile=true cannot be combined with deleteMode=DELETE_PLATFORM_CONFIG', [
          { field: '/skipReconcile', message: 'not allowed with deleteMode DELETE_PLATFORM_CONFIG' },
        ]);
      }
      if (mode === 'DELETE_PLATFORM_CONFIG') {
        await requireCluster(db, organizationId, clusterId);
        await refuseIfLocked(db, clusterId);
        await db.transaction().execute(async (trx) => {
          await deps.deletePlatformConfiguration(trx, clusterId);
          const current = await requireCluster(trx, organizationId, clusterId);
          await updateCluster(trx, clusterId, { config_revision: current.config_revision + 1, updated_at: clock.now().toISOString() });
        });
        return;
      }
      await requestAction(organizationId, clusterId, 'delete', { deleteMode: mode, skipReconcile });
    },

    async deployCluster(organizationId: string, clusterId: string, dryRun: boolean) {
      return statusView(await requestAction(organizationId, clusterId, 'deploy', { dryRun }));
    },

    async stopCluster(organizationId: string, clusterId: string) {
      return statusView(await requestAction(organizationId, clusterId, 'stop'));
    },

    async restartCluster(organizationId: string, clusterId: string) {
      return statusView(await requestAction(organizationId, clusterId, 'restart'));
    },

    /** SPEC.md's upgrade: 200 with the cluster upgrade status; a locked cluster answers 409 naming the lock. */
    async upgradeCluster(clusterId: string) {
      return statusView(await requestAction(undefined, clusterId, 'upgrade'));
    },

    /**
     * Cancels the action under way: a queued one at once (its job is withdrawn), a deploy in progress when the
     * worker reaches its next step.
     */
    async cancelClusterAction(organizationId: string, clusterId: string) {
      const row = await db.transaction().execute(async (trx) => {
        const current = await requireCluster(trx, organizationId, clusterId);
        const from = stateOf(current);
        const to = transitionOf(from, 'cancel');
        if (to === undefined) throw conflict(`cannot cancel: cluster is ${from}, with no cancellable action under way`);
        if (to === 'CANCELED' && current.last_execution_id !== null) await cancelQueuedJob(trx, clock, current.last_execution_id);
        const now = clock.now().toISOString();
        const moved = await updateClusterInStatus(trx, clusterId, from, { status: to, updated_at: now });
        if (!moved) throw conflict('cannot cancel: the cluster state changed meanwhile; read it again');
        await deps.stateChanges?.clusterChanged(trx, clusterId);
        await publishClusterTransition(deps.events ?? NO_EVENTS, trx, current, from, to, null);
        return { ...current, status: to, updated_at: now };
      });
      deps.wakeWorkers();
      return statusView(row);
    },

    async getClusterStatus(organizationId: string, clusterId: string) {
      return statusView(await requireCluster(db, organizationId, clusterId));
    },
  };
}
