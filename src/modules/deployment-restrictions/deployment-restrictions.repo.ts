import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { DB, ServiceDeploymentRestrictionsTable } from '../../db/db.schema.ts';

type Queryable = Kysely<DB> | Transaction<DB>;
export type DeploymentRestrictionRow = Selectable<ServiceDeploymentRestrictionsTable>;

export function listRestrictions(db: Queryable, serviceId: string): Promise<DeploymentRestrictionRow[]> {
  return db.selectFrom('service_deployment_restrictions').selectAll().where('service_id', '=', serviceId).orderBy('created_at').orderBy('id').execute();
}

export function findRestriction(db: Queryable, serviceId: string, id: string): Promise<DeploymentRestrictionRow | undefined> {
  return db.selectFrom('service_deployment_restrictions').selectAll().where('service_id', '=', serviceId).where('id', '=', id).executeTakeFirst();
}

export async function insertRestriction(db: Queryable, row: Insertable<ServiceDeploymentRestrictionsTable>): Promise<void> {
  await db.insertInto('service_deployment_restrictions').values(row).execute();
}

export async function updateRestriction(db: Queryable, serviceId: string, id: string, changes: Updateable<ServiceDeploymentRestrictionsTable>): Promise<boolean> {
  const result = await db.updateTable('service_deployment_restrictions').set(changes).where('service_id', '=', serviceId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteRestriction(db: Queryable, serviceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('service_deployment_restrictions').where('service_id', '=', serviceId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
