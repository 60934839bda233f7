import type { Kysely } from 'kysely';

/**
 * Indexes for the lists that grow with an organization (issue 26, docs/operations.md "Data at scale"): each list's
 * filter and order are one index range, read in order and stopped at the page's end, with no sort step and no scan
 * of rows the filter drops.
 *
 * - A project's variables (every write's alias-cycle check, the project's listing) are read by key: (project_id, key,
 *   id) replaces the index on project_id alone, which it begins with.
 * - The audit log is read newest first by (organization_id, created_at, id) (0016). A filter on the target, the
 *   project, the environment or the author put in front of the time keeps a page of a rare target as cheap as a page
 *   of the whole log; without it the newest-first walk reads past every other event to find a page's worth. The
 *   `triggeredBy` filter matches the author's id or the name it was triggered by, so both have one (the list reads
 *   each in order and merges them). Event type, target type, origin and outcome have few values each and are read
 *   through the time index.
 *
 * Projects, environments and services are ordered by their name key, unique under the list's filter (the unique
 * constraints of 0001, 0012, 0017): those indexes already give the order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('variables_project_key').on('variables').columns(['project_id', 'key', 'id']).execute();
  await db.schema.dropIndex('variables_project_id').execute();

  for (const column of ['target_id', 'project_id', 'environment_id', 'author_id', 'triggered_by']) {
    await db.schema
      .createIndex(`organization_events_${column}_time`)
      .on('organization_events')
      .columns(['organization_id', column, 'created_at', 'id'])
      .execute();
  }
}
