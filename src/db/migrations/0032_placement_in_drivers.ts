import type { Kysely } from 'kysely';

/**
 * Placement moves to the drivers (docs/decisions.md, "Placement"): the control plane no longer chooses a database's
 * port (0021) or an application's loopback address (0024) on a local-driver host. Built-ins name services by their
 * internal hostname and declared ports; the local driver keeps the addresses in its own state, taking over those its
 * running applications hold, so nothing running moves.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('services_local_port').execute();
  await db.schema.dropIndex('services_local_address').execute();
  await db.schema.alterTable('services').dropColumn('local_port').execute();
  await db.schema.alterTable('services').dropColumn('local_address').execute();
}
