import type { ChangeSignals } from '../../db/db.signals.ts';
import type { Queryable } from '../../db/db.schema.ts';
import type { OrganizationChangeEventBody } from './organization-changes.schemas.ts';

/**
 * "Look again" about what an open page shows (issue 20): a service's state or deployment, an environment's state, a
 * cluster's status or its agent's connection changed. The writers publish inside their own transaction, through the
 * change signals (db.signals.ts), so every process sharing the database hears it when the change commits and never
 * when it rolls back; each process's organization streams (organization-changes.service.ts) hear it and tell their
 * readers which id to read again. A signal carries ids only: where the changed thing lives (its organization, and
 * for a service or an environment its project and environment), read in the writer's transaction.
 */

/** One change as a stream tells it: what to read again, and where it lives. */
export type OrganizationChange = OrganizationChangeEventBody;

/** `change` undefined: signals may have been missed (the listener reconnected); everything may have changed. */
export type OrganizationChangeListener = (organizationId: string | undefined, change: OrganizationChange | undefined) => void;

/** The signal channel of "something an organization's pages show changed": its payload is OrganizationChangeSignal. */
export const ORGANIZATION_CHANGES_SIGNAL_CHANNEL = 'organization_changes';

/** The wire form of one change: short keys, ids only. */
interface OrganizationChangeSignal {
  o: string;
  t: OrganizationChange['type'];
  i: string;
  e?: string;
  p?: string;
}

const TYPES: ReadonlySet<string> = new Set(['service', 'environment', 'cluster']);

function parsed(payload: string): { organizationId: string; change: OrganizationChange } | undefined {
  try {
    const signal = JSON.parse(payload) as Partial<OrganizationChangeSignal>;
    if (typeof signal.o !== 'string' || typeof signal.i !== 'string' || typeof signal.t !== 'string' || !TYPES.has(signal.t)) return undefined;
    return {
      organizationId: signal.o,
      change: {
        type: signal.t,
        id: signal.i,
        ...(typeof signal.e === 'string' ? { environment_id: signal.e } : {}),
        ...(typeof signal.p === 'string' ? { project_id: signal.p } : {}),
      },
    };
  } catch {
    return undefined;
  }
}

export function createOrganizationChanges(signals: Pick<ChangeSignals, 'publishIn' | 'subscribe'>) {
  async function publish(executor: Queryable, signal: OrganizationChangeSignal): Promise<void> {
    await signals.publishIn(executor, ORGANIZATION_CHANGES_SIGNAL_CHANNEL, JSON.stringify(signal));
  }

  return {
    /** A service's state, deployment or workload health changed in `executor`'s transaction. */
    async serviceChanged(executor: Queryable, serviceId: string): Promise<void> {
      const where = await executor
        .selectFrom('services')
        .innerJoin('environments', 'environments.id', 'services.environment_id')
        .innerJoin('projects', 'projects.id', 'environments.project_id')
        .select(['services.environment_id', 'environments.project_id', 'projects.organization_id'])
        .where('services.id', '=', serviceId)
        .executeTakeFirst();
      if (where === undefined) return;
      await publish(executor, { o: where.organization_id, t: 'service', i: serviceId, e: where.environment_id, p: where.project_id });
    },

    /** An environment's state changed in `executor`'s transaction. */
    async environmentChanged(executor: Queryable, environmentId: string): Promise<void> {
      const where = await executor
        .selectFrom('environments')
        .innerJoin('projects', 'projects.id', 'environments.project_id')
        .select(['environments.project_id', 'projects.organization_id'])
        .where('environments.id', '=', environmentId)
        .executeTakeFirst();
      if (where === undefined) return;
      await publish(executor, { o: where.organization_id, t: 'environment', i: environmentId, e: environmentId, p: where.project_id });
    },

    /** A cluster's status, or its agent's connection, changed in `executor`'s transaction (or outside any). */
    async clusterChanged(executor: Queryable, clusterId: string): Promise<void> {
      const where = await executor.selectFrom('clusters').select('organization_id').where('id', '=', clusterId).executeTakeFirst();
      if (where === undefined) return;
      await publish(executor, { o: where.organization_id, t: 'cluster', i: clusterId });
    },

    /** Listens to every organization's changes of this installation; the answer stops listening. */
    subscribe(listener: OrganizationChangeListener): () => void {
      return signals.subscribe(ORGANIZATION_CHANGES_SIGNAL_CHANNEL, (payload) => {
        if (payload === undefined) return listener(undefined, undefined);
        const heard = parsed(payload);
        if (heard !== undefined) listener(heard.organizationId, heard.change);
      });
    },
  };
}

export type OrganizationChanges = ReturnType<typeof createOrganizationChanges>;

/** What the writers of states publish through (a port each module declares the part of it it uses). */
export type StateChangePublisher = Pick<OrganizationChanges, 'serviceChanged' | 'environmentChanged' | 'clusterChanged'>;
