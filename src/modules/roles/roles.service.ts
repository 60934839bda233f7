import type { Kysely } from 'kysely';
import { BUILT_IN_ROLES, type BuiltInRole } from '../../auth/permissions.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { findRole, insertRoles, listRoles, type RoleRow } from './roles.repo.ts';

export interface RolesDeps {
  db: Kysely<DB>;
  clock: Clock;
}

/** Roles are rows per organization: the four built-in ones are created with the organization. */
export function createRolesService(deps: RolesDeps) {
  const { db, clock } = deps;

  /** Creates the built-in roles of a new organization inside the caller's transaction. */
  async function createBuiltInRoles(trx: Queryable, organizationId: string): Promise<Record<BuiltInRole, RoleRow>> {
    const now = isoTimestamp(clock);
    const rows = BUILT_IN_ROLES.map((name) => ({
      id: newId(),
      organization_id: organizationId,
      name,
      kind: 'BUILT_IN',
      created_at: now,
    }));
    await insertRoles(trx, rows);
    return Object.fromEntries(rows.map((row) => [row.name, row])) as Record<BuiltInRole, RoleRow>;
  }

  return {
    createBuiltInRoles,
    listAvailableRoles: (organizationId: string) => listRoles(db, organizationId),
    findRole: (organizationId: string, roleId: string) => findRole(db, organizationId, roleId),
  };
}

export type RolesService = ReturnType<typeof createRolesService>;
