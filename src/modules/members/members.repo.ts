import type { Selectable } from 'kysely';
import type { MembersTable, Queryable } from '../../db/db.schema.ts';

export type MemberRow = Selectable<MembersTable>;

export async function insertMember(db: Queryable, row: MemberRow): Promise<void> {
  await db.insertInto('members').values(row).execute();
}

/** The role name of a user in an organization; one indexed join, run on every authorized request. */
export async function findMemberRoleName(db: Queryable, organizationId: string, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('members')
    .innerJoin('roles', 'roles.id', 'members.role_id')
    .select('roles.name')
    .where('members.organization_id', '=', organizationId)
    .where('members.user_id', '=', userId)
    .executeTakeFirst();
  return row?.name;
}

/** The organization ids a user belongs to. */
export async function listMemberOrganizationIds(db: Queryable, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('members').select('organization_id').where('user_id', '=', userId).execute();
  return rows.map((row) => row.organization_id);
}

/** The OWNER of each given organization. */
export async function findOwners(db: Queryable, organizationIds: string[]): Promise<Map<string, string>> {
  if (organizationIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('members')
    .innerJoin('roles', 'roles.id', 'members.role_id')
    .select(['members.organization_id', 'members.user_id'])
    .where('roles.name', '=', 'OWNER')
    .where('members.organization_id', 'in', organizationIds)
    .execute();
  return new Map(rows.map((row) => [row.organization_id, row.user_id]));
}
