import type { Selectable, Updateable } from 'kysely';
import type { EnvironmentsTable, Queryable } from '../../db/db.schema.ts';
import { compiledOnce } from '../../db/db.compiled-query.ts';
import { readInIdChunks } from '../../db/db.id-chunks.ts';

export type EnvironmentRow = Selectable<EnvironmentsTable>;

export async function insertEnvironment(db: Queryable, row: Omit<EnvironmentRow, 'config_revision'> & Partial<EnvironmentRow>): Promise<void> {
  await db.insertInto('environments').values(row).execute();
}

export function findEnvironment(db: Queryable, id: string): Promise<EnvironmentRow | undefined> {
  return db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The names of the environments among `ids` that exist (the audit log's pages name many at once). */
export async function findEnvironmentNames(db: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('environments').select(['id', 'name']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

export function listEnvironments(db: Queryable, projectId: string): Promise<EnvironmentRow[]> {
  // The name key is unique in a project: the unique index (project_id, name_key) gives the order, with no sort step.
  return db.selectFrom('environments').selectAll().where('project_id', '=', projectId).orderBy('name_key').execute();
}

export async function countEnvironmentsByProject(db: Queryable, projectIds: string[]): Promise<Map<string, number>> {
  const rows = await readInIdChunks(projectIds, (chunk) =>
    db
      .selectFrom('environments')
      .select(['project_id', (eb) => eb.fn.countAll<string | number>().as('count')])
      .where('project_id', 'in', chunk)
      .groupBy('project_id')
      .execute(),
  );
  return new Map(rows.map((r) => [r.project_id, Number(r.count)]));
}

const environmentCountsOfOrganization = compiledOnce((db, organizationId) =>
  db
    .selectFrom('environments')
    .select(['project_id', (eb) => eb.fn.countAll<string | number>().as('count')])
    .where('organization_id', '=', organizationId)
    .groupBy('project_id'),
);

/** How many environments each project of the organization has (projects without any are absent). */
export async function countEnvironmentsOfOrganization(db: Queryable, organizationId: string): Promise<Map<string, number>> {
  return new Map((await environmentCountsOfOrganization(db, organizationId)).map((r) => [r.project_id, Number(r.count)]));
}

export async function updateEnvironment(db: Queryable, id: string, changes: Updateable<EnvironmentsTable>): Promise<boolean> {
  const result = await db.updateTable('environments').set(changes).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Changes an environment only if it is still in `expectedStatus`: every state change is a compare-and-set, so two
 * requests (or a request and the agent) racing on one environment cannot both move it.
 */
export async function updateEnvironmentInStatus(
  db: Queryable,
  id: string,
  expectedStatus: string,
  changes: Updateable<EnvironmentsTable>,
): Promise<boolean> {
  const result = await db.updateTable('environments').set(changes).where('id', '=', id).where('status', '=', expectedStatus).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Bumps the configuration revision of one environment, or of every environment of a project: what a deployed
 * environment runs no longer matches what it would be deployed with, so it reads OUT_OF_DATE until redeployed.
 */
export async function bumpConfigRevision(db: Queryable, scope: { projectId: string; environmentId: string | null }, now: string): Promise<void> {
  let query = db
    .updateTable('environments')
    .set((eb) => ({ config_revision: eb('config_revision', '+', 1), updated_at: now }))
    .where('project_id', '=', scope.projectId);
  if (scope.environmentId !== null) query = query.where('id', '=', scope.environmentId);
  await query.execute();
}

export async function deleteEnvironmentRow(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('environments').where('id', '=', id).execute();
}
