import { Type, type Static } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { jobKind, payloadOf } from '../../jobs/job-kinds.ts';
import { cancelQueuedJob, listUnfinishedJobIds, type ClaimedJob } from '../../jobs/job-queue.ts';
import type { JobHandler, JobOutcome } from '../../jobs/job-worker.ts';
import type { Clock } from '../../lib/clock.ts';
import { deleteOrganization, findOrganizationRecord } from './organizations.repo.ts';

/**
 * The second step of deleting an organization (organizations.service removeOrganization): its row, and with it by
 * cascade its clusters, their agents' credentials and every record beneath, goes once the teardowns of its services
 * settled, so those agents can still take them. It looks again every `recheckMs`; after `patienceMs` (an agent that
 * never comes back) it withdraws what is still queued and purges anyway, saying so in the log.
 */

export const ORGANIZATION_PURGE_JOB = 'organization.purge';

export const OrganizationPurgePayload = Type.Object({
  organizationId: Type.String(),
  /** The services removed with it: their teardown jobs carry `service:<id>` serial keys. */
  serviceIds: Type.Array(Type.String()),
  deletedAt: Type.String(),
});
export type OrganizationPurgePayload = Static<typeof OrganizationPurgePayload>;
export const ORGANIZATION_PURGE = jobKind(ORGANIZATION_PURGE_JOB, OrganizationPurgePayload);

/**
 * The name key a deleted organization keeps until it is purged: `nameKey` trims, so no live name has a leading space,
 * and the id keeps it unique. The name is free again the moment the delete commits.
 */
export function deletedNameKey(organizationId: string): string {
  return ` deleted ${organizationId}`;
}

export interface OrganizationPurgeDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** How often it looks whether the teardowns settled (5 s unless given). */
  recheckMs?: number;
  /** How long it waits for them at most (an hour unless given). */
  patienceMs?: number;
  log?: { warn(object: object, message: string): void };
}

export function createOrganizationPurgeHandler(deps: OrganizationPurgeDeps): JobHandler {
  const { db, clock } = deps;
  const recheckMs = deps.recheckMs ?? 5_000;
  const patienceMs = deps.patienceMs ?? 60 * 60_000;
  return {
    async run(job: ClaimedJob): Promise<JobOutcome> {
      const payload = payloadOf(ORGANIZATION_PURGE, job);
      if ((await findOrganizationRecord(db, payload.organizationId)) === undefined) return;
      const unfinished = await listUnfinishedJobIds(
        db,
        payload.serviceIds.map((serviceId) => `service:${serviceId}`),
      );
      if (unfinished.length > 0) {
        const waited = clock.now().getTime() - Date.parse(payload.deletedAt);
        if (waited < patienceMs) return { deferUntil: new Date(clock.now().getTime() + recheckMs) };
        for (const jobId of unfinished) await cancelQueuedJob(db, clock, jobId);
        deps.log?.warn(
          { organizationId: payload.organizationId, unfinished: unfinished.length },
          `purging deleted organization ${payload.organizationId} with ${unfinished.length} teardown(s) unfinished after ${Math.round(waited / 60_000)} min: their agents never took them`,
        );
      }
      await deleteOrganization(db, payload.organizationId);
    },
  };
}
