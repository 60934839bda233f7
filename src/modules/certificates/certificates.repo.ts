import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AcmeAccountsTable, CertificatesTable, InstallationCaTable, Queryable } from '../../db/db.schema.ts';

export type CertificateRow = Selectable<CertificatesTable>;
export type AcmeAccountRow = Selectable<AcmeAccountsTable>;

export function findAccount(db: Queryable, directoryUrl: string): Promise<AcmeAccountRow | undefined> {
  return db.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirst();
}

/** Inserts the account unless one exists for the directory (two replicas racing keep the first). */
export async function insertAccount(db: Queryable, row: Insertable<AcmeAccountsTable>): Promise<void> {
  await db.insertInto('acme_accounts').values(row).onConflict((oc) => oc.column('directory_url').doNothing()).execute();
}

export function findInstallationRoot(db: Queryable): Promise<Selectable<InstallationCaTable> | undefined> {
  return db.selectFrom('installation_ca').selectAll().where('id', '=', 'root').executeTakeFirst();
}

/** Inserts the root unless one exists (two replicas racing keep the first). */
export async function insertInstallationRoot(db: Queryable, row: Insertable<InstallationCaTable>): Promise<void> {
  await db.insertInto('installation_ca').values(row).onConflict((oc) => oc.column('id').doNothing()).execute();
}

export async function setAccountUrl(db: Queryable, directoryUrl: string, accountUrl: string): Promise<void> {
  await db.updateTable('acme_accounts').set({ account_url: accountUrl }).where('directory_url', '=', directoryUrl).execute();
}

export function findCertificateOfDomain(db: Queryable, customDomainId: string): Promise<CertificateRow | undefined> {
  return db.selectFrom('certificates').selectAll().where('custom_domain_id', '=', customDomainId).executeTakeFirst();
}

export function findCertificateOfService(db: Queryable, serviceId: string): Promise<CertificateRow | undefined> {
  return db.selectFrom('certificates').selectAll().where('service_id', '=', serviceId).executeTakeFirst();
}

/** The services' own host names whose certificate's next order is due (renewals, retries after backoff). */
export function listServiceCertificatesDue(db: Queryable, now: string, limit: number): Promise<Array<{ service_id: string | null }>> {
  return db
    .selectFrom('certificates')
    .select('service_id')
    .where('service_id', 'is not', null)
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
    .orderBy((eb) => eb.fn.coalesce('next_attempt_at', 'created_at'))
    .limit(limit)
    .execute();
}

export function listCertificatesOfDomains(db: Queryable, customDomainIds: readonly string[]): Promise<CertificateRow[]> {
  if (customDomainIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('certificates').selectAll().where('custom_domain_id', 'in', [...customDomainIds]).execute();
}

export async function insertCertificate(db: Queryable, row: Insertable<CertificatesTable>): Promise<void> {
  await db.insertInto('certificates').values(row).execute();
}

export async function updateCertificate(db: Queryable, id: string, changes: Updateable<CertificatesTable>): Promise<void> {
  await db.updateTable('certificates').set(changes).where('id', '=', id).execute();
}

export async function deleteCertificate(db: Queryable, id: string): Promise<void> {
  await db.deleteFrom('certificates').where('id', '=', id).execute();
}

/** Which of these host names have a certificate being served. */
export async function listServedHostnames(db: Queryable, hostnames: readonly string[], now: string): Promise<string[]> {
  if (hostnames.length === 0) return [];
  const rows = await db.selectFrom('certificates').select('hostname').where('hostname', 'in', [...hostnames]).where('chain_pem', 'is not', null).where('not_after', '>', now).execute();
  return rows.map((row) => row.hostname);
}

/** The certificates whose chain has expired: no longer served. */
export function listExpiredCertificates(db: Queryable, now: string): Promise<CertificateRow[]> {
  return db.selectFrom('certificates').selectAll().where('chain_pem', 'is not', null).where('not_after', '<=', now).execute();
}

/** Every certificate with a chain that has not expired: what the apps proxy serves. */
export function listServableCertificates(db: Queryable, now: string): Promise<CertificateRow[]> {
  return db.selectFrom('certificates').selectAll().where('chain_pem', 'is not', null).where('not_after', '>', now).orderBy('hostname').execute();
}

/**
 * The verified custom domains asking for a certificate whose next order is due: none yet, or one whose renewal time
 * (or backoff) has come. The oldest due first.
 */
export function listDomainsDueForCertificate(db: Queryable, now: string, limit: number): Promise<Array<{ id: string }>> {
  return db
    .selectFrom('service_custom_domains as d')
    .leftJoin('certificates as c', 'c.custom_domain_id', 'd.id')
    .select('d.id')
    .where('d.status', '=', 'VALIDATED')
    .where('d.generate_certificate', '=', 1)
    .where((eb) => eb.or([eb('c.id', 'is', null), eb('c.next_attempt_at', 'is', null), eb('c.next_attempt_at', '<=', now)]))
    .orderBy((eb) => eb.fn.coalesce('c.next_attempt_at', 'd.created_at'))
    .limit(limit)
    .execute();
}
