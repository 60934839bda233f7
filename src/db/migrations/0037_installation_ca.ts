import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The installation's own certificate authority (docs/https.md, "Private names"): one root, which signs the
 * certificates of names no public CA issues for. Its certificate is public (the API gives it out); its private key
 * is sealed with the installation's secret key, as the ACME account's is.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('installation_ca')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('certificate_pem', 'text', (c) => c.notNull())
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('not_after', types.timestamp, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
}
