import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Custom domains and deployment restrictions of services (docs/service-kinds.md, "Custom domains" and "Deployment
 * restrictions"). A domain belongs to one service in the whole installation (the reverse proxy routes a host name to
 * one place), so `domain` is unique across all rows; its verification status is the last DNS check's verdict. A
 * restriction is a path glob that decides whether a git push deploys; the same (mode, value) twice on one service is
 * refused. Both go with their service.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('service_custom_domains')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('generate_certificate', 'integer', (c) => c.notNull())
    .addColumn('use_cdn', 'integer', (c) => c.notNull())
    .addColumn('verification_token', 'varchar(64)', (c) => c.notNull())
    .addColumn('status', 'varchar(32)', (c) => c.notNull())
    .addColumn('check_status', 'varchar(48)')
    .addColumn('check_details', 'text')
    .addColumn('checked_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('service_custom_domains_service').on('service_custom_domains').column('service_id').execute();

  await db.schema
    .createTable('service_deployment_restrictions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('service_deployment_restrictions_unique', ['service_id', 'mode', 'type', 'value'])
    .execute();
}
