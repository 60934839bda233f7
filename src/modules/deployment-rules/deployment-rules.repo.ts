import type { Insertable, Selectable, Updateable } from 'kysely';
import type { EnvironmentDeploymentRulesTable, ProjectDeploymentRulesTable, Queryable } from '../../db/db.schema.ts';

export type ProjectDeploymentRuleRow = Selectable<ProjectDeploymentRulesTable>;
export type EnvironmentDeploymentRuleRow = Selectable<EnvironmentDeploymentRulesTable>;

/** A project's rules in the order they are tried. */
export function listProjectRules(db: Queryable, projectId: string): Promise<ProjectDeploymentRuleRow[]> {
  return db
    .selectFrom('project_deployment_rules')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('priority_index')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findProjectRule(db: Queryable, projectId: string, id: string): Promise<ProjectDeploymentRuleRow | undefined> {
  return db.selectFrom('project_deployment_rules').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

/** The priority a new rule takes: after every existing one. */
export async function nextPriorityIndex(db: Queryable, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('project_deployment_rules')
    .select((eb) => eb.fn.max('priority_index').as('highest'))
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  const highest = row?.highest;
  return highest === null || highest === undefined ? 0 : Number(highest) + 1;
}

export async function insertProjectRule(db: Queryable, row: Insertable<ProjectDeploymentRulesTable>): Promise<void> {
  await db.insertInto('project_deployment_rules').values(row).execute();
}

export async function updateProjectRule(db: Queryable, projectId: string, id: string, changes: Updateable<ProjectDeploymentRulesTable>): Promise<boolean> {
  const result = await db.updateTable('project_deployment_rules').set(changes).where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteProjectRule(db: Queryable, projectId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('project_deployment_rules').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function findEnvironmentRule(db: Queryable, environmentId: string): Promise<EnvironmentDeploymentRuleRow | undefined> {
  return db.selectFrom('environment_deployment_rules').selectAll().where('environment_id', '=', environmentId).executeTakeFirst();
}

/** Writes an environment's rule unless it has one already (two first reads racing leave one). */
export async function insertEnvironmentRuleUnlessPresent(db: Queryable, row: Insertable<EnvironmentDeploymentRulesTable>): Promise<void> {
  await db
    .insertInto('environment_deployment_rules')
    .values(row)
    .onConflict((conflict) => conflict.column('environment_id').doNothing())
    .execute();
}

export async function updateEnvironmentRule(db: Queryable, environmentId: string, id: string, changes: Updateable<EnvironmentDeploymentRulesTable>): Promise<boolean> {
  const result = await db.updateTable('environment_deployment_rules').set(changes).where('environment_id', '=', environmentId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The rules the schedule acts on: those that stop and start their environment. */
export function listAutoStopRules(db: Queryable): Promise<EnvironmentDeploymentRuleRow[]> {
  return db.selectFrom('environment_deployment_rules').selectAll().where('auto_stop', '=', 1).orderBy('id').execute();
}

/**
 * Moves a rule's `schedule_applied_until` from what the sweep read to `until`: true for the one sweep that moved it,
 * false when another did first (or the rule was edited meanwhile, which moves it too).
 */
export async function claimScheduleUntil(db: Queryable, id: string, readUntil: string, until: string): Promise<boolean> {
  const result = await db
    .updateTable('environment_deployment_rules')
    .set({ schedule_applied_until: until })
    .where('id', '=', id)
    .where('schedule_applied_until', '=', readUntil)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
