import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { DB, ServiceCustomDomainsTable } from '../../db/db.schema.ts';

type Queryable = Kysely<DB> | Transaction<DB>;
export type CustomDomainRow = Selectable<ServiceCustomDomainsTable>;

export function listDomains(db: Queryable, serviceId: string): Promise<CustomDomainRow[]> {
  return db.selectFrom('service_custom_domains').selectAll().where('service_id', '=', serviceId).orderBy('created_at').orderBy('id').execute();
}

export function findDomain(db: Queryable, serviceId: string, id: string): Promise<CustomDomainRow | undefined> {
  return db.selectFrom('service_custom_domains').selectAll().where('service_id', '=', serviceId).where('id', '=', id).executeTakeFirst();
}

/** A domain by its id alone (the certificates module knows no service id). */
export function findDomainById(db: Queryable, id: string): Promise<CustomDomainRow | undefined> {
  return db.selectFrom('service_custom_domains').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countDomains(db: Queryable, serviceId: string): Promise<number> {
  const row = await db.selectFrom('service_custom_domains').select((eb) => eb.fn.countAll<string | number>().as('count')).where('service_id', '=', serviceId).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertDomain(db: Queryable, row: Insertable<ServiceCustomDomainsTable>): Promise<void> {
  await db.insertInto('service_custom_domains').values(row).execute();
}

export async function updateDomain(db: Queryable, serviceId: string, id: string, changes: Updateable<ServiceCustomDomainsTable>): Promise<boolean> {
  const result = await db.updateTable('service_custom_domains').set(changes).where('service_id', '=', serviceId).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteDomain(db: Queryable, serviceId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('service_custom_domains').where('service_id', '=', serviceId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Domains still waiting to pass their DNS check (pending or failed), added since `createdSince`: those least recently
 * checked first.
 */
export function listDomainsToRecheck(db: Queryable, createdSince: string, limit: number): Promise<CustomDomainRow[]> {
  return db
    .selectFrom('service_custom_domains')
    .selectAll()
    .where('status', 'in', ['VALIDATION_PENDING', 'VALIDATION_FAILED'])
    .where('created_at', '>=', createdSince)
    .orderBy((eb) => eb.fn.coalesce('checked_at', 'created_at'))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The VALIDATED domains of a service, for the reverse proxy's routing table. */
export function listValidatedDomains(db: Queryable, serviceId: string): Promise<Pick<CustomDomainRow, 'domain'>[]> {
  return db.selectFrom('service_custom_domains').select('domain').where('service_id', '=', serviceId).where('status', '=', 'VALIDATED').orderBy('domain').execute();
}
