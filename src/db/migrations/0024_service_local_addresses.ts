import { sql, type Kysely } from 'kysely';

/**
 * The address an application or a container answers on inside its environment when a local-driver agent runs it
 * (docs/local-engine.md, "Addresses"): one of its own in 127.64.0.0/10, which on Linux is all the loopback interface.
 * The agent listens there on each of the service's internal ports and forwards to the instance serving now, so
 * PLATFORM_APPLICATION_<NAME>_HOSTNAME and the declared port reach it as a cluster-internal Service would. Chosen by
 * the control plane when the service is created, kept for its life, unique. Services that exist already get
 * addresses here, in order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').addColumn('local_address', 'varchar(15)').execute();
  await db.schema.createIndex('services_local_address').unique().on('services').column('local_address').execute();
  const rows = await sql<{ id: string }>`select id from services where kind in ('APPLICATION', 'CONTAINER') order by created_at, id`.execute(db);
  for (const [index, row] of rows.rows.entries()) {
    const address = `127.${64 + Math.floor(index / (256 * 254))}.${Math.floor(index / 254) % 256}.${(index % 254) + 1}`;
    await sql`update services set local_address = ${address} where id = ${row.id}`.execute(db);
  }
}
