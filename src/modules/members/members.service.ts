import type { Kysely } from 'kysely';
import { covers, grantsOfRole, isBuiltInRole, type BuiltInRole } from '../../auth/permissions.ts';
import type { Access, Principal } from '../../auth/principal.ts';
import { isForeignKeyViolation } from '../../db/db.errors.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors.ts';
import type { RolesService } from '../roles/roles.service.ts';
import {
  deleteOrganizationMembers,
  deleteMemberWithRole,
  findMember,
  findMemberRoleName,
  findMembership,
  findOwners,
  findRoleIdByName,
  hasMemberWithEmail,
  insertMember,
  listMemberOrganizationIds,
  listMembers,
  updateMemberRoleFrom,
  type MemberView,
} from './members.repo.ts';

export interface MembersDeps {
  db: Kysely<DB>;
  clock: Clock;
  roles: Pick<RolesService, 'findRole'>;
}

/** A role as the rules below need it. */
export interface GrantableRole {
  id: string;
  name: string;
}

/**
 * Nobody grants a role above their own: the role's grants must be within the caller's. The OWNER role is never
 * granted at all (exactly one OWNER exists; it passes only by transferOwnership): to the OWNER that is a bad
 * request, to anyone else a role above their own.
 */
export function assertMayGrantRole(access: Access, role: GrantableRole, field: string): void {
  if (role.name === 'OWNER') {
    if (access.roleName === 'OWNER') {
      throw badRequest('the OWNER role is given only by transferring ownership', [{ field, message: 'must not be the OWNER role' }]);
    }
    throw forbidden('nobody can grant a role above their own: only the OWNER holds the OWNER role');
  }
  if (!covers(access.grants, grantsOfRole(role.name))) {
    throw forbidden(`nobody can grant a role above their own: ${role.name} has rights this caller does not have`);
  }
}

/**
 * The reference's `role` (InviteMemberRoleEnum) of a member or an invitation: a built-in role's name, or for a custom
 * role the built-in role its organization-level permission matches (MANAGER → DEVELOPER, VIEWER → VIEWER), since
 * generated clients refuse other values. role_id and role_name name the role itself.
 */
export function answeredRole(roleName: string, customOrganizationPermission: string | null): BuiltInRole {
  if (isBuiltInRole(roleName)) return roleName;
  return customOrganizationPermission === 'MANAGER' ? 'DEVELOPER' : 'VIEWER';
}

function memberView(row: MemberView) {
  return {
    id: row.user_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name ?? undefined,
    email: row.email ?? '',
    profile_picture_url: row.picture ?? undefined,
    role: answeredRole(row.role_name, row.custom_organization_permission),
    role_name: row.role_name,
    role_id: row.role_id,
  };
}

/**
 * Membership of people in organizations. Rules: exactly one OWNER; the OWNER is neither removed nor demoted except by
 * transferring ownership, which makes the old OWNER an ADMIN; nobody grants a role above their own. Every change is
 * conditional on the role the member held when it was checked, so concurrent changes cannot break these rules.
 */
export function createMembersService(deps: MembersDeps) {
  const { db, clock } = deps;

  async function memberOrNotFound(trx: Queryable, organizationId: string, userId: string): Promise<MemberView> {
    const member = await findMember(trx, organizationId, userId);
    if (member === undefined) throw notFound(`user ${userId} is not a member of this organization`);
    return member;
  }

  async function builtInRoleId(trx: Queryable, organizationId: string, name: 'OWNER' | 'ADMIN'): Promise<string> {
    const id = await findRoleIdByName(trx, organizationId, name);
    if (id === undefined) throw new Error(`organization ${organizationId} has no ${name} role`);
    return id;
  }

  async function listOrganizationMembers(organizationId: string) {
    return (await listMembers(db, organizationId)).map(memberView);
  }

  async function changeMemberRole(access: Access, input: { user_id: string; role_id: string }): Promise<void> {
    const organizationId = access.organizationId;
    const member = await memberOrNotFound(db, organizationId, input.user_id);
    const role = await deps.roles.findRole(organizationId, input.role_id);
    if (role === undefined) throw badRequest('unknown role', [{ field: '/role_id', message: 'is not a role of this organization' }]);
    assertMayGrantRole(access, role, '/role_id');
    if (member.role_name === 'OWNER') throw forbidden("the OWNER's role changes only by transferring ownership");
    if (member.role_id === role.id) return;
    const changed = await updateMemberRoleFrom(
      db,
      { organizationId, userId: member.user_id, expectedRoleId: member.role_id },
      role.id,
      isoTimestamp(clock),
    ).catch((error: unknown) => {
      // A custom role deleted since it was read.
      if (isForeignKeyViolation(error)) throw badRequest('unknown role', [{ field: '/role_id', message: 'is not a role of this organization' }]);
      throw error;
    });
    if (!changed) throw conflict("the member's role changed or the member left meanwhile; read the members again");
  }

  async function removeMember(access: Access, userId: string): Promise<void> {
    const member = await memberOrNotFound(db, access.organizationId, userId);
    if (member.role_name === 'OWNER') throw forbidden('the OWNER cannot be removed; transfer ownership first');
    const removed = await deleteMemberWithRole(db, access.organizationId, userId, member.role_id);
    if (!removed) throw conflict("the member's role changed or the member left meanwhile; read the members again");
  }

  async function transferOwnership(principal: Principal, access: Access, userId: string): Promise<void> {
    if (principal.kind !== 'user' || access.roleName !== 'OWNER') throw forbidden('only the OWNER can transfer ownership');
    const organizationId = access.organizationId;
    if (userId === principal.userId) {
      throw badRequest('the caller already owns this organization', [{ field: '/user_id', message: 'must be another member' }]);
    }
    await db.transaction().execute(async (trx) => {
      const member = await memberOrNotFound(trx, organizationId, userId);
      const ownerRoleId = await builtInRoleId(trx, organizationId, 'OWNER');
      const adminRoleId = await builtInRoleId(trx, organizationId, 'ADMIN');
      const now = isoTimestamp(clock);
      // Demote first and only if still the OWNER: of two concurrent transfers, the second finds no OWNER to demote.
      const demoted = await updateMemberRoleFrom(trx, { organizationId, userId: principal.userId, expectedRoleId: ownerRoleId }, adminRoleId, now);
      if (!demoted) throw forbidden('only the OWNER can transfer ownership');
      const promoted = await updateMemberRoleFrom(trx, { organizationId, userId, expectedRoleId: member.role_id }, ownerRoleId, now);
      if (!promoted) throw conflict("the member's role changed or the member left meanwhile; read the members again");
    });
  }

  return {
    async addMember(trx: Queryable, organizationId: string, userId: string, roleId: string): Promise<void> {
      const now = isoTimestamp(clock);
      await insertMember(trx, { organization_id: organizationId, user_id: userId, role_id: roleId, created_at: now, updated_at: now });
    },
    roleOf: (organizationId: string, userId: string) => findMemberRoleName(db, organizationId, userId),
    membershipOf: (organizationId: string, userId: string) => findMembership(db, organizationId, userId),
    organizationsOf: (userId: string) => listMemberOrganizationIds(db, userId),
    ownersOf: (organizationIds: string[], trx: Queryable = db) => findOwners(trx, organizationIds),
    hasMemberWithEmail: (organizationId: string, email: string, trx: Queryable = db) => hasMemberWithEmail(trx, organizationId, email.toLowerCase()),
    listOrganizationMembers,
    changeMemberRole,
    removeMember,
    transferOwnership,
    removeOrganizationMembers: (trx: Queryable, organizationId: string) => deleteOrganizationMembers(trx, organizationId),
  };
}

export type MembersService = ReturnType<typeof createMembersService>;
