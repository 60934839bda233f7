import type { Kysely } from 'kysely';
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
import { globProblem, pushDeploys } from './deployment-restrictions.rules.ts';

/**
 * Deployment restrictions of applications (the reference's Application Deployment Restriction operations): path
 * globs that decide whether a git push deploys (deployment-restrictions.rules.ts). The application is looked up
 * through the services module's port; a restriction is addressed under its application only.
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

const DUPLICATE = 'the application already has this deployment restriction';

export function createDeploymentRestrictionsService(deps: DeploymentRestrictionsDeps) {
  const { db, clock } = deps;

  async function requireApplication(applicationId: string): Promise<StoredService> {
    const service = await deps.services.findService(applicationId);
    if (service === undefined || service.kind !== 'APPLICATION') throw notFound(`application ${applicationId} not found`);
    return service;
  }

  function checkedValue(body: RestrictionBody): string {
    const value = body.value.trim();
    const problem = value === '' ? 'must not be blank' : globProblem(value);
    if (problem !== undefined) throw badRequest(`"${body.value}" cannot be a path restriction: ${problem}`, [{ field: '/value', message: problem }]);
    return value;
  }

  async function requireRestriction(applicationId: string, restrictionId: string): Promise<DeploymentRestrictionRow> {
    const row = await findRestriction(db, applicationId, restrictionId);
    if (row === undefined) throw notFound(`deployment restriction ${restrictionId} not found`);
    return row;
  }

  /** A write that may race the application's deletion: the foreign key then says the application is gone. */
  async function writing<T>(applicationId: string, write: () => Promise<T>): Promise<T> {
    try {
      return await uniqueOrConflict(write, DUPLICATE);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`application ${applicationId} not found`);
      throw error;
    }
  }

  return {
    async getApplicationDeploymentRestrictions(applicationId: string) {
      await requireApplication(applicationId);
      return (await listRestrictions(db, applicationId)).map(view);
    },

    async createApplicationDeploymentRestriction(applicationId: string, body: RestrictionBody) {
      await requireApplication(applicationId);
      const now = isoTimestamp(clock);
      const row: DeploymentRestrictionRow = { id: newId(), service_id: applicationId, mode: body.mode, type: body.type, value: checkedValue(body), created_at: now, updated_at: now };
      await writing(applicationId, () => insertRestriction(db, row));
      return view(row);
    },

    async editApplicationDeploymentRestriction(applicationId: string, restrictionId: string, body: RestrictionBody) {
      await requireApplication(applicationId);
      const current = await requireRestriction(applicationId, restrictionId);
      const changes = { mode: body.mode, type: body.type, value: checkedValue(body), updated_at: isoTimestamp(clock) };
      const updated = await writing(applicationId, () => updateRestriction(db, applicationId, restrictionId, changes));
      if (!updated) throw notFound(`deployment restriction ${restrictionId} not found`);
      return view({ ...current, ...changes });
    },

    async deleteApplicationDeploymentRestriction(applicationId: string, restrictionId: string): Promise<void> {
      await requireApplication(applicationId);
      if (!(await deleteRestriction(db, applicationId, restrictionId))) throw notFound(`deployment restriction ${restrictionId} not found`);
    },

    /** For the git push handler (issue 9): whether a push changing these paths deploys the application. */
    async pushDeploysApplication(applicationId: string, changedPaths: readonly string[]): Promise<boolean> {
      const rows = await listRestrictions(db, applicationId);
      return pushDeploys(
        rows.map((row) => ({ mode: row.mode as RestrictionBody['mode'], value: row.value })),
        changedPaths,
      );
    },
  };
}

export type DeploymentRestrictionsService = ReturnType<typeof createDeploymentRestrictionsService>;
