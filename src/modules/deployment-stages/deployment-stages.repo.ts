import type { Insertable, Selectable } from 'kysely';
import type { DeploymentStagesTable, DeploymentStageServicesTable, Queryable } from '../../db/db.schema.ts';

/** The deployment-stages module's tables: deployment_stages and deployment_stage_services (one row per service). */

export type DeploymentStageRow = Selectable<DeploymentStagesTable>;
export type StageMembershipRow = Selectable<DeploymentStageServicesTable>;

export function listStagesOfEnvironment(db: Queryable, environmentId: string): Promise<DeploymentStageRow[]> {
  return db.selectFrom('deployment_stages').selectAll().where('environment_id', '=', environmentId).orderBy('deployment_order').orderBy('id').execute();
}

export function findStage(db: Queryable, stageId: string): Promise<DeploymentStageRow | undefined> {
  return db.selectFrom('deployment_stages').selectAll().where('id', '=', stageId).executeTakeFirst();
}

/** Inserts stages; one that exists already (a default stage another request placed first) is left as it is. */
export async function insertStagesUnlessPresent(db: Queryable, rows: Array<Insertable<DeploymentStagesTable>>): Promise<void> {
  if (rows.length > 0) await db.insertInto('deployment_stages').values(rows).onConflict((oc) => oc.doNothing()).execute();
}

export async function insertStage(db: Queryable, row: Insertable<DeploymentStagesTable>): Promise<void> {
  await db.insertInto('deployment_stages').values(row).execute();
}

export async function updateStage(db: Queryable, stageId: string, changes: Pick<DeploymentStageRow, 'name' | 'name_key' | 'description' | 'updated_at'>): Promise<boolean> {
  const result = await db.updateTable('deployment_stages').set(changes).where('id', '=', stageId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Touches every stage of the environment inside the caller's transaction: on PostgreSQL the row locks make writers
 * that rewrite the order (create, move, delete) of one environment wait for each other, so two moves never interleave
 * their rewrites; SQLite serialises write transactions anyway.
 */
export async function lockStagesOfEnvironment(db: Queryable, environmentId: string, now: string): Promise<void> {
  await db.updateTable('deployment_stages').set({ updated_at: now }).where('environment_id', '=', environmentId).execute();
}

export async function setStageOrder(db: Queryable, stageId: string, order: number): Promise<void> {
  await db.updateTable('deployment_stages').set({ deployment_order: order }).where('id', '=', stageId).execute();
}

/** Deletes the stage only while no service belongs to it (one statement: an attach racing the delete cannot be lost). */
export async function deleteEmptyStage(db: Queryable, stageId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('deployment_stages')
    .where('id', '=', stageId)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('deployment_stage_services').select('id').where('stage_id', '=', stageId))))
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The memberships of the environment's services (through their stages). */
export function listMembershipsOfEnvironment(db: Queryable, environmentId: string): Promise<StageMembershipRow[]> {
  return db
    .selectFrom('deployment_stage_services')
    .innerJoin('deployment_stages', 'deployment_stages.id', 'deployment_stage_services.stage_id')
    .selectAll('deployment_stage_services')
    .where('deployment_stages.environment_id', '=', environmentId)
    .orderBy('deployment_stage_services.created_at')
    .orderBy('deployment_stage_services.id')
    .execute();
}

/** Places services that have no stage yet; a service placed meanwhile by another request keeps its place. */
export async function insertMembershipsUnlessPresent(db: Queryable, rows: StageMembershipRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('deployment_stage_services').values(rows).onConflict((oc) => oc.doNothing()).execute();
}

/** Moves a service (already placed) into a stage and sets whether the environment's deploy skips it. */
export async function updateMembership(db: Queryable, serviceId: string, changes: Pick<StageMembershipRow, 'stage_id' | 'is_skipped' | 'updated_at'>): Promise<boolean> {
  const result = await db.updateTable('deployment_stage_services').set(changes).where('service_id', '=', serviceId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Copies the stages of one environment into a new one (a clone), with new ids, in the caller's transaction. */
export async function copyStages(db: Queryable, rows: DeploymentStageRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('deployment_stages').values(rows).execute();
}
