import type { Selectable } from 'kysely';
import type { Queryable, RolesTable } from '../../db/db.schema.ts';

export type RoleRow = Selectable<RolesTable>;

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
