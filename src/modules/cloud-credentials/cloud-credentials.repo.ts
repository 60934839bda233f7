import type { Selectable, Updateable } from 'kysely';
import type { CloudCredentialsTable, Queryable } from '../../db/db.schema.ts';

export type CloudCredentialsRow = Selectable<CloudCredentialsTable>;

export async function insertCloudCredentials(db: Queryable, row: CloudCredentialsRow): Promise<void> {
  await db.insertInto('cloud_credentials').values(row).execute();
}

export function findCloudCredentials(db: Queryable, organizationId: string, id: string): Promise<CloudCredentialsRow | undefined> {
  return db.selectFrom('cloud_credentials').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function listCloudCredentials(db: Queryable, organizationId: string, cloudProvider: string): Promise<CloudCredentialsRow[]> {
  return db
    .selectFrom('cloud_credentials')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('cloud_provider', '=', cloudProvider)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateCloudCredentials(
  db: Queryable,
  organizationId: string,
  id: string,
  cloudProvider: string,
  changes: Updateable<CloudCredentialsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('cloud_credentials')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where('cloud_provider', '=', cloudProvider)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteCloudCredentials(db: Queryable, organizationId: string, id: string, cloudProvider: string): Promise<boolean> {
  const result = await db
    .deleteFrom('cloud_credentials')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where('cloud_provider', '=', cloudProvider)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Names of the clusters created on a credential (clusters keep its id without a foreign key). */
export async function clusterNamesUsing(db: Queryable, organizationId: string, credentialsId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('clusters')
    .select('name')
    .where('organization_id', '=', organizationId)
    .where('credentials_id', '=', credentialsId)
    .orderBy('name_key')
    .execute();
  return rows.map((row) => row.name);
}

/** Every credential of the organization, whatever its provider (listOrganizationCredentials). */
export function listAllCloudCredentials(db: Queryable, organizationId: string): Promise<CloudCredentialsRow[]> {
  return db.selectFrom('cloud_credentials').selectAll().where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

/** The organization's clusters created on any of its credentials. */
export function listClustersOnCredentials(db: Queryable, organizationId: string) {
  return db
    .selectFrom('clusters')
    .select(['id', 'name', 'cloud_provider', 'credentials_id'])
    .where('organization_id', '=', organizationId)
    .where('credentials_id', 'is not', null)
    .orderBy('name_key')
    .orderBy('id')
    .execute();
}
