import type { Insertable, Selectable } from 'kysely';
import type { CustomRoleClustersTable, CustomRoleProjectsTable, CustomRolesTable, Queryable, RolesTable } from '../../db/db.schema.ts';

export type RoleRow = Selectable<RolesTable>;
export type CustomRoleRow = Selectable<CustomRolesTable>;
export type CustomRoleProjectRow = Selectable<CustomRoleProjectsTable>;
export type CustomRoleClusterRow = Selectable<CustomRoleClustersTable>;

export async function insertRoles(db: Queryable, rows: RoleRow[]): Promise<void> {
  await db.insertInto('roles').values(rows).execute();
}

export function listRoles(db: Queryable, organizationId: string): Promise<RoleRow[]> {
  return db.selectFrom('roles').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}

export function findRole(db: Queryable, organizationId: string, roleId: string): Promise<RoleRow | undefined> {
  return db
    .selectFrom('roles')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', roleId)
    .executeTakeFirst();
}

export function findRoleByName(db: Queryable, organizationId: string, name: string): Promise<RoleRow | undefined> {
  return db
    .selectFrom('roles')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** A custom role: its `roles` row with its definition row. */
export type CustomRoleWithName = CustomRoleRow & { name: string; organization_id: string; created_at: string };

function customRoles(db: Queryable) {
  return db
    .selectFrom('roles')
    .innerJoin('custom_roles', 'custom_roles.role_id', 'roles.id')
    .select(['roles.name', 'roles.organization_id', 'roles.created_at'])
    .selectAll('custom_roles');
}

export function listCustomRoles(db: Queryable, organizationId: string): Promise<CustomRoleWithName[]> {
  return customRoles(db).where('roles.organization_id', '=', organizationId).orderBy('roles.created_at').orderBy('roles.id').execute();
}

export function findCustomRole(db: Queryable, organizationId: string, roleId: string): Promise<CustomRoleWithName | undefined> {
  return customRoles(db).where('roles.organization_id', '=', organizationId).where('roles.id', '=', roleId).executeTakeFirst();
}

/** A custom role by id alone: the authorizer's lookup, after membership or the token has named the role. */
export function findCustomRoleById(db: Queryable, roleId: string): Promise<CustomRoleRow | undefined> {
  return db.selectFrom('custom_roles').selectAll().where('role_id', '=', roleId).executeTakeFirst();
}

/** The rule of one project (or cluster) of a role, for the authorizer: one primary-key lookup. */
export function findCustomRoleProject(db: Queryable, roleId: string, projectId: string): Promise<CustomRoleProjectRow | undefined> {
  return db.selectFrom('custom_role_projects').selectAll().where('role_id', '=', roleId).where('project_id', '=', projectId).executeTakeFirst();
}

export function findCustomRoleCluster(db: Queryable, roleId: string, clusterId: string): Promise<CustomRoleClusterRow | undefined> {
  return db.selectFrom('custom_role_clusters').selectAll().where('role_id', '=', roleId).where('cluster_id', '=', clusterId).executeTakeFirst();
}

export function listCustomRoleProjects(db: Queryable, roleIds: string[]): Promise<CustomRoleProjectRow[]> {
  if (roleIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('custom_role_projects').selectAll().where('role_id', 'in', roleIds).execute();
}

export function listCustomRoleClusters(db: Queryable, roleIds: string[]): Promise<CustomRoleClusterRow[]> {
  if (roleIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('custom_role_clusters').selectAll().where('role_id', 'in', roleIds).execute();
}

export async function insertCustomRole(db: Queryable, role: RoleRow, definition: Insertable<CustomRolesTable>): Promise<void> {
  await db.insertInto('roles').values(role).execute();
  await db.insertInto('custom_roles').values(definition).execute();
}

export async function updateCustomRole(
  db: Queryable,
  roleId: string,
  name: string,
  definition: Omit<Insertable<CustomRolesTable>, 'role_id'>,
): Promise<boolean> {
  const renamed = await db.updateTable('roles').set({ name }).where('id', '=', roleId).where('kind', '=', 'CUSTOM').executeTakeFirst();
  if (renamed.numUpdatedRows === 0n) return false;
  await db.updateTable('custom_roles').set(definition).where('role_id', '=', roleId).execute();
  return true;
}

/** Replaces every project and cluster rule of a role. */
export async function replaceCustomRoleRules(
  db: Queryable,
  roleId: string,
  projects: CustomRoleProjectRow[],
  clusters: CustomRoleClusterRow[],
): Promise<void> {
  await db.deleteFrom('custom_role_projects').where('role_id', '=', roleId).execute();
  await db.deleteFrom('custom_role_clusters').where('role_id', '=', roleId).execute();
  if (projects.length > 0) await db.insertInto('custom_role_projects').values(projects).execute();
  if (clusters.length > 0) await db.insertInto('custom_role_clusters').values(clusters).execute();
}

/** Who holds a role: members, API tokens and pending invitations (read from their modules' tables). */
export async function countRoleHolders(db: Queryable, roleId: string, now: string): Promise<{ members: number; apiTokens: number; invitations: number }> {
  const count = async (query: Promise<{ count: string | number | bigint } | undefined>) => Number((await query)?.count ?? 0);
  const [members, apiTokens, invitations] = await Promise.all([
    count(db.selectFrom('members').select((eb) => eb.fn.countAll().as('count')).where('role_id', '=', roleId).executeTakeFirst()),
    count(db.selectFrom('api_tokens').select((eb) => eb.fn.countAll().as('count')).where('role_id', '=', roleId).executeTakeFirst()),
    count(
      db
        .selectFrom('invitations')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('role_id', '=', roleId)
        .where('status', '=', 'PENDING')
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    ),
  ]);
  return { members, apiTokens, invitations };
}

export async function deleteCustomRole(db: Queryable, organizationId: string, roleId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('roles')
    .where('organization_id', '=', organizationId)
    .where('id', '=', roleId)
    .where('kind', '=', 'CUSTOM')
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The organization's projects and live clusters, which a custom role's view lists one by one. */
export function listOrganizationProjects(db: Queryable, organizationId: string): Promise<{ id: string; name: string }[]> {
  return db.selectFrom('projects').select(['id', 'name']).where('organization_id', '=', organizationId).orderBy('name_key').orderBy('id').execute();
}

export function listOrganizationClusters(db: Queryable, organizationId: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('clusters')
    .select(['id', 'name'])
    .where('organization_id', '=', organizationId)
    .where('status', '!=', 'DELETED')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
