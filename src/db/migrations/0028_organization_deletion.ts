import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Deleting an organization is two steps (docs/decisions.md "Deleting an organization"): at once, everything a caller
 * could reach it by goes (members, invitations, tokens, projects, whose workloads are handed to the agents to tear
 * down) and `deleted_at` is set; the row, its clusters and their agents stay until the teardowns settled, then a
 * purge job deletes the row and the foreign keys cascade. A deleted organization's name is free again at once.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('deleted_at', types.timestamp).execute();
}
