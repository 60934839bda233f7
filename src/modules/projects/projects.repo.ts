import type { Selectable } from 'kysely';
import type { ProjectsTable, Queryable } from '../../db/db.schema.ts';
import { compiledOnce } from '../../db/db.compiled-query.ts';

export type ProjectRow = Selectable<ProjectsTable>;

export async function insertProject(db: Queryable, row: ProjectRow): Promise<void> {
  await db.insertInto('projects').values(row).execute();
}

export function findProject(db: Queryable, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The owning organization of a project: the authorizer's lookup for routes addressed by project id. */
export async function findProjectOrganizationId(db: Queryable, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('projects').select('organization_id').where('id', '=', id).executeTakeFirst();
  return row?.organization_id;
}

/** The names of the projects among `ids` that exist (the audit log's pages name many at once). */
export async function findProjectNames(db: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('projects').select(['id', 'name']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** A project as lists show it: its name key only orders the list, so it is not read (every text column costs). */
export type ProjectListRow = Omit<ProjectRow, 'name_key'>;

/** Built and compiled once per database handle: it runs on every project list (docs/benchmarks.md, issue 26). */
const projectsOfOrganization = compiledOnce((db, organizationId) =>
  db
    .selectFrom('projects')
    .select(['id', 'organization_id', 'name', 'description', 'created_at', 'updated_at'])
    .where('organization_id', '=', organizationId)
    // The name key is unique in an organization: the unique index (organization_id, name_key) gives the order.
    .orderBy('name_key'),
);

export function listProjects(db: Queryable, organizationId: string): Promise<ProjectListRow[]> {
  return projectsOfOrganization(db, organizationId);
}

export async function updateProject(
  db: Queryable,
  id: string,
  fields: Partial<Pick<ProjectRow, 'name' | 'name_key' | 'description' | 'updated_at'>>,
): Promise<boolean> {
  const result = await db.updateTable('projects').set(fields).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteProject(db: Queryable, id: string): Promise<boolean> {
  const result = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
