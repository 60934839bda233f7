import type { Kysely } from 'kysely';

/**
 * The project list counts each project's environments. It named every project's id (`project_id IN (…)`, a statement
 * built anew for each list and growing with the organization); it now counts the organization's environments by
 * project in one range of this index, with the organization as the only parameter.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('environments_organization_project').on('environments').columns(['organization_id', 'project_id']).execute();
}
