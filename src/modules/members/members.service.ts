import type { Kysely } from 'kysely';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { findMemberRoleName, findOwners, insertMember, listMemberOrganizationIds } from './members.repo.ts';

export interface MembersDeps {
  db: Kysely<DB>;
  clock: Clock;
}

/** Membership of people in organizations. The member and invitation operations arrive with the identity issue. */
export function createMembersService(deps: MembersDeps) {
  const { db, clock } = deps;
  return {
    async addMember(trx: Queryable, organizationId: string, userId: string, roleId: string): Promise<void> {
      const now = isoTimestamp(clock);
      await insertMember(trx, { organization_id: organizationId, user_id: userId, role_id: roleId, created_at: now, updated_at: now });
    },
    roleOf: (organizationId: string, userId: string) => findMemberRoleName(db, organizationId, userId),
    organizationsOf: (userId: string) => listMemberOrganizationIds(db, userId),
    ownersOf: (organizationIds: string[], trx: Queryable = db) => findOwners(trx, organizationIds),
  };
}

export type MembersService = ReturnType<typeof createMembersService>;
