import type { Kysely } from 'kysely';
import { newId } from '../../lib/ids.ts';
import { nameKey } from '../../lib/names.ts';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Deployment stages (docs/deployment-stages.md): an environment's deploy starts its services stage after stage. Every
 * environment has two default stages — "DATABASE DEFAULT" first, where databases land, and "SERVICE DEFAULT" after
 * it, where every other kind lands — which is the order deploys followed before stages existed (databases first), so
 * existing environments and services are placed there and deploy as they did. Service deployments record the stage
 * they were requested in, for the environment's history.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('deployment_stages')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('environment_id', 'varchar(36)', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('deployment_order', 'integer', (c) => c.notNull())
    .addColumn('default_for', 'varchar(16)')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('deployment_stages_environment_name_key', ['environment_id', 'name_key'])
    // At most one default stage per group: NULLs (user stages) are distinct on both dialects.
    .addUniqueConstraint('deployment_stages_environment_default', ['environment_id', 'default_for'])
    .execute();

  await db.schema
    .createTable('deployment_stage_services')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().unique().references('services.id').onDelete('cascade'))
    .addColumn('stage_id', 'varchar(36)', (c) => c.notNull().references('deployment_stages.id').onDelete('cascade'))
    .addColumn('is_skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deployment_stage_services_stage').on('deployment_stage_services').column('stage_id').execute();

  // A service deployment records the environment action that requested it and the stage its service was in then, so
  // an environment's history shows its stages as they were (one column per statement: SQLite alters one at a time).
  await db.schema.alterTable('service_deployments').addColumn('environment_deployment_id', 'varchar(36)').execute();
  await db.schema.alterTable('service_deployments').addColumn('deployment_stage_name', 'text').execute();
  await db.schema.alterTable('service_deployments').addColumn('deployment_stage_order', 'integer').execute();
  await db.schema.createIndex('service_deployments_environment_deployment').on('service_deployments').column('environment_deployment_id').execute();

  await placeInDefaultStages(db);
}

/**
 * Gives each environment without stages its default stages, and its services the default stage of their kind: what
 * the environments and services that exist when stages arrive get.
 */
export async function placeInDefaultStages(db: Kysely<unknown>): Promise<void> {
  const raw = db as Kysely<MigrationTables>;
  const now = new Date().toISOString();
  const environments = await raw
    .selectFrom('environments')
    .select('id')
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('deployment_stages').select('deployment_stages.id').whereRef('deployment_stages.environment_id', '=', 'environments.id'))))
    .execute();
  for (const environment of environments) {
    const databaseStage = { id: newId(), name: 'DATABASE DEFAULT', order: 0, defaultFor: 'DATABASE', description: 'New databases land here; they start before the services of later stages.' };
    const serviceStage = { id: newId(), name: 'SERVICE DEFAULT', order: 1, defaultFor: 'SERVICE', description: 'New applications, containers, jobs, Helm charts and Terraform services land here.' };
    for (const stage of [databaseStage, serviceStage]) {
      await raw
        .insertInto('deployment_stages')
        .values({
          id: stage.id,
          environment_id: environment.id,
          name: stage.name,
          name_key: nameKey(stage.name),
          description: stage.description,
          deployment_order: stage.order,
          default_for: stage.defaultFor,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    const services = await raw.selectFrom('services').select(['id', 'kind']).where('environment_id', '=', environment.id).execute();
    for (const service of services) {
      await raw
        .insertInto('deployment_stage_services')
        .values({
          id: newId(),
          service_id: service.id,
          stage_id: service.kind === 'DATABASE' ? databaseStage.id : serviceStage.id,
          is_skipped: 0,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
  }
}

/** The tables as this migration knows them (the schema types of later versions may differ). */
interface MigrationTables {
  environments: { id: string };
  services: { id: string; kind: string; environment_id: string };
  deployment_stages: {
    id: string;
    environment_id: string;
    name: string;
    name_key: string;
    description: string | null;
    deployment_order: number;
    default_for: string | null;
    created_at: string;
    updated_at: string;
  };
  deployment_stage_services: { id: string; service_id: string; stage_id: string; is_skipped: number; created_at: string; updated_at: string };
}
