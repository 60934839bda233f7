import type { Selectable } from 'kysely';
import type { InvitationsTable, Queryable } from '../../db/db.schema.ts';

export type InvitationRow = Selectable<InvitationsTable>;

/** An invitation with what its view shows of its role and organization (read from their modules' tables). */
export interface InvitationWithContext extends InvitationRow {
  role_name: string;
  /** A custom role's organization-level permission (VIEWER or MANAGER); null for a built-in role. */
  custom_organization_permission: string | null;
  organization_name: string;
  logo_url: string | null;
}

function invitationsWithContext(db: Queryable, organizationId: string) {
  return db
    .selectFrom('invitations')
    .innerJoin('roles', 'roles.id', 'invitations.role_id')
    .innerJoin('organizations', 'organizations.id', 'invitations.organization_id')
    .leftJoin('custom_roles', 'custom_roles.role_id', 'invitations.role_id')
    .selectAll('invitations')
    .select([
      'roles.name as role_name',
      'custom_roles.organization_permission as custom_organization_permission',
      'organizations.name as organization_name',
      'organizations.logo_url',
    ])
    .where('invitations.organization_id', '=', organizationId);
}

export async function insertInvitation(db: Queryable, row: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

export function findInvitation(db: Queryable, organizationId: string, id: string): Promise<InvitationWithContext | undefined> {
  return invitationsWithContext(db, organizationId).where('invitations.id', '=', id).executeTakeFirst();
}

/** Invitations not yet accepted (pending or expired), oldest first. */
export function listOpenInvitations(db: Queryable, organizationId: string): Promise<InvitationWithContext[]> {
  return invitationsWithContext(db, organizationId)
    .where('invitations.status', '=', 'PENDING')
    .orderBy('invitations.created_at')
    .orderBy('invitations.id')
    .execute();
}

/** Whether a pending invitation to any organization, unexpired at `now`, names the address (`emailKey`, lower case). */
export async function pendingInvitationExists(db: Queryable, emailKey: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('invitations')
    .select('id')
    .where('email_key', '=', emailKey)
    .where('status', '=', 'PENDING')
    .where('expires_at', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes expired, never accepted invitations of an address, so it can be invited again. */
export async function deleteExpiredInvitations(db: Queryable, organizationId: string, emailKey: string, now: string): Promise<void> {
  await db
    .deleteFrom('invitations')
    .where('organization_id', '=', organizationId)
    .where('email_key', '=', emailKey)
    .where('status', '=', 'PENDING')
    .where('expires_at', '<=', now)
    .execute();
}

export async function deleteInvitation(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('invitations').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Marks a pending, unexpired invitation accepted; of two concurrent acceptances exactly one succeeds. */
export async function markInvitationAccepted(db: Queryable, id: string, userId: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ status: 'ACCEPTED', accepted_by_user_id: userId, accepted_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Every row of the organization: its deletion takes every way in away at once (organizations.service removeOrganization). */
export async function deleteOrganizationInvitations(db: Queryable, organizationId: string): Promise<void> {
  await db.deleteFrom('invitations').where('organization_id', '=', organizationId).execute();
}
