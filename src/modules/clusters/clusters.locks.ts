import type { Kysely, Transaction } from 'kysely';
import { principalDisplayName, type Principal } from '../../auth/principal.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB } from '../../db/db.schema.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import { deleteLock, findClusterById, findLock, listLocks, replaceLock, type ClusterLockRow } from './clusters.repo.ts';
import type { ClustersDeps } from './clusters.service.ts';

/**
 * Cluster locks: while a live lock holds (no TTL, or within its TTL), the cluster refuses edits, deletion and the
 * deploy, stop, restart and upgrade actions (409 naming the lock); a cancel stays possible. An expired lock is none.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

function lockIsLive(lock: ClusterLockRow, now: Date): boolean {
  return lock.ttl_in_days === null || new Date(lock.locked_at).getTime() + lock.ttl_in_days * DAY_MS > now.getTime();
}

export function lockView(lock: ClusterLockRow) {
  return {
    reason: lock.reason,
    cluster_id: lock.cluster_id,
    locked_at: lock.locked_at,
    owner_name: lock.owner_name,
    // Not nullable in the reference: a lock without an end leaves its lifetime out.
    ...(lock.ttl_in_days === null ? {} : { ttl_in_days: lock.ttl_in_days }),
  };
}

function lockedMessage(lock: ClusterLockRow): string {
  const until = lock.ttl_in_days === null ? 'until unlocked' : `until ${new Date(new Date(lock.locked_at).getTime() + lock.ttl_in_days * DAY_MS).toISOString()}`;
  return `cluster is locked by ${lock.owner_name} since ${lock.locked_at} (${until}): ${lock.reason}`;
}

export function createClusterLocks(deps: ClustersDeps) {
  const { db, clock } = deps;

  async function liveLock(executor: Kysely<DB> | Transaction<DB>, clusterId: string): Promise<ClusterLockRow | undefined> {
    const lock = await findLock(executor, clusterId);
    return lock !== undefined && lockIsLive(lock, clock.now()) ? lock : undefined;
  }

  async function refuseIfLocked(executor: Kysely<DB> | Transaction<DB>, clusterId: string): Promise<void> {
    const lock = await liveLock(executor, clusterId);
    if (lock !== undefined) throw conflict(lockedMessage(lock));
  }

  return {
    liveLock,
    refuseIfLocked,

    async lockCluster(principal: Principal, clusterId: string, body: { reason: string; ttl_in_days?: number | null | undefined }) {
      const existing = await liveLock(db, clusterId);
      if (existing !== undefined) throw conflict(`cluster is already locked: ${lockedMessage(existing)}`);
      const row = await findClusterById(db, clusterId);
      if (row === undefined) throw notFound(`cluster ${clusterId} not found`);
      const lock: ClusterLockRow = {
        cluster_id: clusterId,
        organization_id: row.organization_id,
        reason: body.reason.trim(),
        owner_name: principalDisplayName(principal),
        ttl_in_days: body.ttl_in_days ?? null,
        locked_at: clock.now().toISOString(),
      };
      // The cluster id is the lock's key: of two concurrent lock requests, the second's insert collides.
      await uniqueOrConflict(
        () =>
          db.transaction().execute(async (trx) => {
            const current = await findLock(trx, clusterId);
            if (current !== undefined && lockIsLive(current, clock.now())) throw conflict('cluster is already locked');
            await replaceLock(trx, lock, current);
          }),
        'cluster is already locked',
      );
      return lockView(lock);
    },

    async unlockCluster(clusterId: string): Promise<void> {
      const lock = await liveLock(db, clusterId);
      if (lock === undefined) throw notFound(`cluster ${clusterId} is not locked`);
      await deleteLock(db, clusterId);
    },

    async listClusterLocks(organizationId: string) {
      const now = clock.now();
      return (await listLocks(db, organizationId)).filter((l) => lockIsLive(l, now)).map(lockView);
    },
  };
}

export type ClusterLocks = ReturnType<typeof createClusterLocks>;
