import type { Kysely, Transaction } from 'kysely';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { StoredService } from '../services/services.kinds.ts';
import {
  deleteRestriction,
  findRestriction,
  insertRestriction,
  listRestrictions,
  updateRestriction,
  type DeploymentRestrictionRow,
} from './deployment-restrictions.repo.ts';
import type { DeploymentRestrictionKind } from './deployment-restrictions.kinds.ts';
import { globProblem, pushDeploys } from './deployment-restrictions.rules.ts';

/**
 * Deployment restrictions of the services that deploy from git (the reference's Application, Job, Helm and
 * Terraform Deployment Restriction operations; deployment-restrictions.kinds.ts): path globs that decide whether a
 * git push deploys (deployment-restrictions.rules.ts). The service is looked up through the services module's port
 * and must be of the kind the path names; a restriction is addressed under its service only.
 */

export interface DeploymentRestrictionsDeps {
  db: Kysely<DB>;
  clock: Clock;
  services: { findService(serviceId: string): Promise<StoredService | undefined> };
}

export interface RestrictionBody {
  mode: 'MATCH' | 'EXCLUDE';
  type: 'PATH';
  value: string;
}

function view(row: DeploymentRestrictionRow) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    mode: row.mode as RestrictionBody['mode'],
    type: row.type as RestrictionBody['type'],
    value: row.value,
  };
}

const DUPLICATE = 'the service already has this deployment restriction';

export function createDeploymentRestrictionsService(deps: DeploymentRestrictionsDeps) {
  const { db, clock } = deps;

  async function requireService(kind: DeploymentRestrictionKind, serviceId: string): Promise<StoredService> {
    const service = await deps.services.findService(serviceId);
    if (service === undefined || service.kind !== kind) throw notFound(`${kind.toLowerCase()} ${serviceId} not found`);
    return service;
  }

  function checkedValue(body: RestrictionBody): string {
    const value = body.value.trim();
    const problem = value === '' ? 'must not be blank' : globProblem(value);
    if (problem !== undefined) throw badRequest(`"${body.value}" cannot be a path restriction: ${problem}`, [{ field: '/value', message: problem }]);
    return value;
  }

  async function requireRestriction(serviceId: string, restrictionId: string): Promise<DeploymentRestrictionRow> {
    const row = await findRestriction(db, serviceId, restrictionId);
    if (row === undefined) throw notFound(`deployment restriction ${restrictionId} not found`);
    return row;
  }

  /** A write that may race the service's deletion: the foreign key then says the service is gone. */
  async function writing<T>(service: StoredService, write: () => Promise<T>): Promise<T> {
    try {
      return await uniqueOrConflict(write, DUPLICATE);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`${service.kind.toLowerCase()} ${service.id} not found`);
      throw error;
    }
  }

  return {
    async listDeploymentRestrictions(kind: DeploymentRestrictionKind, serviceId: string) {
      await requireService(kind, serviceId);
      return (await listRestrictions(db, serviceId)).map(view);
    },

    async createDeploymentRestriction(kind: DeploymentRestrictionKind, serviceId: string, body: RestrictionBody) {
      const service = await requireService(kind, serviceId);
      const now = isoTimestamp(clock);
      const row: DeploymentRestrictionRow = { id: newId(), service_id: serviceId, mode: body.mode, type: body.type, value: checkedValue(body), created_at: now, updated_at: now };
      await writing(service, () => insertRestriction(db, row));
      return view(row);
    },

    async editDeploymentRestriction(kind: DeploymentRestrictionKind, serviceId: string, restrictionId: string, body: RestrictionBody) {
      const service = await requireService(kind, serviceId);
      const current = await requireRestriction(serviceId, restrictionId);
      const changes = { mode: body.mode, type: body.type, value: checkedValue(body), updated_at: isoTimestamp(clock) };
      const updated = await writing(service, () => updateRestriction(db, serviceId, restrictionId, changes));
      if (!updated) throw notFound(`deployment restriction ${restrictionId} not found`);
      return view({ ...current, ...changes });
    },

    async deleteDeploymentRestriction(kind: DeploymentRestrictionKind, serviceId: string, restrictionId: string): Promise<void> {
      await requireService(kind, serviceId);
      if (!(await deleteRestriction(db, serviceId, restrictionId))) throw notFound(`deployment restriction ${restrictionId} not found`);
    },

    /** For the services module's clone, inside its transaction: the clone gets the same restrictions, as rows of its own. */
    async copyDeploymentRestrictions(trx: Transaction<DB>, fromServiceId: string, toServiceId: string): Promise<void> {
      const now = isoTimestamp(clock);
      for (const row of await listRestrictions(trx, fromServiceId)) {
        await insertRestriction(trx, { ...row, id: newId(), service_id: toServiceId, created_at: now, updated_at: now });
      }
    },

    /**
     * Whether a git push changing these paths deploys the service, whatever its kind: the one evaluation of
     * restrictions (deployment-restrictions.rules.ts) for whichever handler reacts to pushes. A service without
     * restrictions, or one of a kind that has none, deploys.
     */
    async pushDeploysService(serviceId: string, changedPaths: readonly string[]): Promise<boolean> {
      const rows = await listRestrictions(db, serviceId);
      return pushDeploys(
        rows.map((row) => ({ mode: row.mode as RestrictionBody['mode'], value: row.value })),
        changedPaths,
      );
    },
  };
}

export type DeploymentRestrictionsService = ReturnType<typeof createDeploymentRestrictionsService>;
