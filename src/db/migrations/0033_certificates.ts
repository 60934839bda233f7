import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Automatic HTTPS (docs/https.md): the installation's ACME account per directory, its key sealed at rest, and one
 * certificate per host name the apps proxy serves over TLS: a verified custom domain whose `generate_certificate`
 * is on (the row goes with the domain). The certificate chain is public and stored as PEM; its private key is sealed
 * (lib/secret-box.ts, bound to the row's id), so a copy of the database alone serves nobody's HTTPS.
 *
 * `status` is the state the custom domain shows: PENDING (ordered, not issued yet), ISSUED, ERROR (with
 * `last_error`); a certificate that was issued keeps its chain and key through later failed renewals, and serves
 * until it expires. `failures` and `next_attempt_at` are the backoff of the renewal schedule.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('acme_accounts')
    .addColumn('directory_url', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text')
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('account_url', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('certificates')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('hostname', 'text', (c) => c.notNull().unique())
    .addColumn('custom_domain_id', 'varchar(36)', (c) => c.references('service_custom_domains.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('chain_pem', 'text')
    .addColumn('key_sealed', 'text')
    .addColumn('not_before', types.timestamp)
    .addColumn('not_after', types.timestamp)
    .addColumn('issued_at', types.timestamp)
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('certificates_custom_domain').on('certificates').column('custom_domain_id').execute();
}
