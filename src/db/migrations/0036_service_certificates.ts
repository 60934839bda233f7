import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Certificates for the services' own host names (docs/https.md, "Service host names"): when the installation serves
 * HTTPS and its apps domain is a public one, a deployed service with a public port gets a certificate for
 * `<label>.<SLIPWAY_APPS_DOMAIN>` as a verified custom domain does. Such a row names its service instead of a custom
 * domain, and goes with it.
 */
export async function up(db: Kysely<unknown>, _types: ColumnTypes): Promise<void> {
  await db.schema
    .alterTable('certificates')
    .addColumn('service_id', 'varchar(36)', (c) => c.references('services.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('certificates_service').on('certificates').column('service_id').execute();
}
