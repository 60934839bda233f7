import type { Kysely } from 'kysely';

/**
 * Every audited write asks which of its organization's webhooks are enabled, in id order (the order their deliveries
 * are queued in). On `organization_id` alone the database sorted the answer each time — on SQLite a sorter costs
 * about 12 µs even for no rows, most organizations having no webhook; with the id in the index the range is already
 * in order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhooks_organization').execute();
  await db.schema.createIndex('webhooks_organization').on('webhooks').columns(['organization_id', 'id']).execute();
}
