import type { Kysely } from 'kysely';

/**
 * The port a database service listens on when a local-driver agent runs it (docs/local-engine.md, "Addresses").
 * The control plane chooses it when the database is created and keeps it for the service's life, so the built-in
 * PLATFORM_DATABASE_<NAME>_PORT / _CONNECTION_URI of every deployment name the real address before the database
 * has ever run — the local analogue of a cluster's stable service DNS name. Unique: two databases never share one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').addColumn('local_port', 'integer').execute();
  await db.schema.createIndex('services_local_port').unique().on('services').column('local_port').execute();
}
