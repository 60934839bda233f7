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

/** The role a user holds in an organization, as the authorizer needs it (a custom role answers by its id). */
export async function findMembership(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<{ roleId: string; roleName: string; roleKind: string } | undefined> {
  return db
    .selectFrom('members')
    .innerJoin('roles', 'roles.id', 'members.role_id')
    .select(['roles.id as roleId', 'roles.name as roleName', 'roles.kind as roleKind'])
    .where('members.organization_id', '=', organizationId)
    .where('members.user_id', '=', userId)
    .executeTakeFirst();
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

/** A member with their user profile and role, as listings show them. */
export interface MemberView {
  user_id: string;
  role_id: string;
  role_name: string;
  /** A custom role's organization-level permission (VIEWER or MANAGER); null for a built-in role. */
  custom_organization_permission: string | null;
  email: string | null;
  name: string | null;
  picture: string | null;
  created_at: string;
  updated_at: string;
}

function memberViews(db: Queryable, organizationId: string) {
  return db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .innerJoin('roles', 'roles.id', 'members.role_id')
    .leftJoin('custom_roles', 'custom_roles.role_id', 'members.role_id')
    .select([
      'members.user_id',
      'members.role_id',
      'roles.name as role_name',
      'custom_roles.organization_permission as custom_organization_permission',
      'users.email',
      'users.name',
      'users.picture',
      'members.created_at',
      'members.updated_at',
    ])
    .where('members.organization_id', '=', organizationId);
}

export function listMembers(db: Queryable, organizationId: string): Promise<MemberView[]> {
  return memberViews(db, organizationId).orderBy('members.created_at').orderBy('members.user_id').execute();
}

export function findMember(db: Queryable, organizationId: string, userId: string): Promise<MemberView | undefined> {
  return memberViews(db, organizationId).where('members.user_id', '=', userId).executeTakeFirst();
}

/** Whether someone with this e-mail (compared in lower case) is already a member. */
export async function hasMemberWithEmail(db: Queryable, organizationId: string, emailKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select('members.user_id')
    .where('members.organization_id', '=', organizationId)
    .where((eb) => eb(eb.fn('lower', ['users.email']), '=', emailKey))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Changes a member's role only while they hold `expectedRoleId`, so two concurrent changes (a transfer and a
 * demotion, two transfers) cannot both act on the same state: the second finds the role moved and changes nothing.
 */
export async function updateMemberRoleFrom(
  db: Queryable,
  key: { organizationId: string; userId: string; expectedRoleId: string },
  roleId: string,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('members')
    .set({ role_id: roleId, updated_at: now })
    .where('organization_id', '=', key.organizationId)
    .where('user_id', '=', key.userId)
    .where('role_id', '=', key.expectedRoleId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes a member only while they hold `expectedRoleId` (never the OWNER, whose role the caller checked). */
export async function deleteMemberWithRole(db: Queryable, organizationId: string, userId: string, expectedRoleId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('members')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .where('role_id', '=', expectedRoleId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The id of a built-in role of an organization (read only: roles are the roles module's rows). */
export async function findRoleIdByName(db: Queryable, organizationId: string, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('roles').select('id').where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
  return row?.id;
}

/** Every row of the organization: its deletion takes every way in away at once (organizations.service removeOrganization). */
export async function deleteOrganizationMembers(db: Queryable, organizationId: string): Promise<void> {
  await db.deleteFrom('members').where('organization_id', '=', organizationId).execute();
}
