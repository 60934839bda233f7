import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * A cluster's advanced settings (docs/clusters.md, "Advanced settings"): the keys it sets away from their defaults,
 * a JSON object; null while it sets none. A column of its own rather than a part of `settings`, which editCluster
 * replaces whole with the rest of its request: the two operations must not undo each other.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('clusters').addColumn('advanced_settings', types.json).execute();
}
