import type { Kysely } from 'kysely';
import { principalDisplayName, type Access, type Principal } from '../../auth/principal.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { escapeHtml, type Mailer, type MailMessage } from '../../mail/mailer.ts';
import { answeredRole, assertMayGrantRole, type GrantableRole, type MembersService } from '../members/members.service.ts';
import type { RolesService } from '../roles/roles.service.ts';
import type { UsersService } from '../users/users.service.ts';
import {
  deleteOrganizationInvitations,
  deleteExpiredInvitations,
  deleteInvitation,
  findInvitation,
  insertInvitation,
  listOpenInvitations,
  markInvitationAccepted,
  pendingInvitationExists,
  type InvitationWithContext,
} from './invitations.repo.ts';

/** DESIGN.md §6: an invitation expires after 7 days. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/** The role an invitation gives when the request names none: the least one. */
const DEFAULT_ROLE = 'VIEWER';

export interface InvitationsDeps {
  db: Kysely<DB>;
  clock: Clock;
  mailer: Mailer;
  /** Where people reach this installation; acceptance links start with it. */
  publicUrl: string;
  roles: Pick<RolesService, 'findRole' | 'listAvailableRoles'>;
  members: Pick<MembersService, 'addMember' | 'roleOf' | 'hasMemberWithEmail'>;
  users: Pick<UsersService, 'verifiedEmailOf'>;
}

export interface InvitationInput {
  email: string;
  role?: string | undefined;
  role_id?: string | undefined;
}

/**
 * Invitations of people into an organization by e-mail. At most one pending invitation per address (a unique index
 * on pending rows, so concurrent duplicates collide); only the signed-in person whose verified e-mail is the invited
 * address can see it without being a member, and only they can accept it, which makes them a member with the
 * invited role in the same transaction.
 */
export function createInvitationsService(deps: InvitationsDeps) {
  const { db, clock } = deps;
  const baseUrl = deps.publicUrl.replace(/\/+$/, '');

  function linkOf(row: { organization_id: string; id: string }): string {
    return `${baseUrl}/organization/${row.organization_id}/inviteMember/${row.id}`;
  }

  function statusOf(row: InvitationWithContext, now: string): 'PENDING' | 'EXPIRED' | 'ACCEPTED' {
    if (row.status === 'ACCEPTED') return 'ACCEPTED';
    return row.expires_at <= now ? 'EXPIRED' : 'PENDING';
  }

  function view(row: InvitationWithContext, now: string) {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      email: row.email,
      role: answeredRole(row.role_name, row.custom_organization_permission),
      role_id: row.role_id,
      role_name: row.role_name,
      invitation_link: linkOf(row),
      invitation_status: statusOf(row, now),
      organization_name: row.organization_name,
      inviter: row.inviter_name,
      expires_at: row.expires_at,
      ...(row.logo_url === null ? {} : { logo_url: row.logo_url }),
    };
  }

  function invitationMessage(row: InvitationWithContext): MailMessage {
    const link = linkOf(row);
    const inviter = row.inviter_name;
    const organization = row.organization_name;
    return {
      to: row.email,
      subject: `${inviter} invited you to ${organization} on Slipway`,
      text: [
        `${inviter} invited you to join the organization ${organization} on Slipway as ${row.role_name}.`,
        '',
        `Accept the invitation: ${link}`,
        '',
        `The invitation expires at ${row.expires_at}. Sign in with this e-mail address (${row.email}) to accept it.`,
      ].join('\n'),
      html: [
        `<p>${escapeHtml(inviter)} invited you to join the organization <strong>${escapeHtml(organization)}</strong> on Slipway as ${escapeHtml(row.role_name)}.</p>`,
        `<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>`,
        `<p>The invitation expires at ${escapeHtml(row.expires_at)}. Sign in with this e-mail address (${escapeHtml(row.email)}) to accept it.</p>`,
      ].join('\n'),
    };
  }

  async function invitedRole(organizationId: string, input: InvitationInput): Promise<{ role: GrantableRole; field: string }> {
    if (input.role_id !== undefined) {
      const role = await deps.roles.findRole(organizationId, input.role_id);
      if (role === undefined) throw badRequest('unknown role', [{ field: '/role_id', message: 'is not a role of this organization' }]);
      if (input.role !== undefined && input.role !== role.name) {
        throw badRequest('role and role_id name different roles', [{ field: '/role', message: `must be ${role.name} or left out` }]);
      }
      return { role, field: '/role_id' };
    }
    const name = input.role ?? DEFAULT_ROLE;
    const role = (await deps.roles.listAvailableRoles(organizationId)).find((candidate) => candidate.name === name);
    if (role === undefined) throw badRequest('unknown role', [{ field: '/role', message: 'is not a role of this organization' }]);
    return { role, field: '/role' };
  }

  async function inviteMember(principal: Principal, access: Access, input: InvitationInput) {
    const organizationId = access.organizationId;
    const email = input.email.trim();
    const emailKey = email.toLowerCase();
    const { role, field } = await invitedRole(organizationId, input);
    assertMayGrantRole(access, role, field);
    if (await deps.members.hasMemberWithEmail(organizationId, emailKey)) throw conflict(`${email} is already a member of this organization`);

    const nowMs = clock.now().getTime();
    const now = new Date(nowMs).toISOString();
    const id = newId();
    await uniqueOrConflict(async () => {
      await db.transaction().execute(async (trx) => {
        await deleteExpiredInvitations(trx, organizationId, emailKey, now);
        await insertInvitation(trx, {
          id,
          organization_id: organizationId,
          email,
          email_key: emailKey,
          role_id: role.id,
          inviter_user_id: principal.kind === 'user' ? principal.userId : null,
          inviter_name: principalDisplayName(principal),
          status: 'PENDING',
          expires_at: new Date(nowMs + INVITATION_LIFETIME_MS).toISOString(),
          accepted_by_user_id: null,
          accepted_at: null,
          created_at: now,
          updated_at: now,
        });
      });
    }, `${email} already has a pending invitation to this organization`);
    const created = await findInvitation(db, organizationId, id);
    if (created === undefined) throw notFound(`invitation ${id} not found`);
    try {
      await deps.mailer.send(invitationMessage(created));
    } catch {
      // An invitation nobody was told about would block the address for a week: take it back and say so.
      await deleteInvitation(db, organizationId, id);
      throw new AppError('unavailable', 'the invitation e-mail could not be sent; nothing was saved, try again later');
    }
    return view(created, now);
  }

  async function listInvitations(organizationId: string) {
    const now = isoTimestamp(clock);
    return (await listOpenInvitations(db, organizationId)).map((row) => view(row, now));
  }

  /** Whether the signed-in person is the one invited, by the e-mail their identity provider verified. */
  async function isInvitee(principal: Principal, row: InvitationWithContext): Promise<boolean> {
    if (principal.kind !== 'user') return false;
    return (await deps.users.verifiedEmailOf(principal.userId)) === row.email_key;
  }

  /** Members (and the organization's own tokens) may see its invitations; so may the invitee. Anyone else: not found. */
  async function mayView(principal: Principal, row: InvitationWithContext): Promise<boolean> {
    if (principal.kind !== 'user') return principal.organizationId === row.organization_id;
    if ((await deps.members.roleOf(row.organization_id, principal.userId)) !== undefined) return true;
    return isInvitee(principal, row);
  }

  async function getInvitation(principal: Principal, organizationId: string, invitationId: string) {
    const row = await findInvitation(db, organizationId, invitationId);
    if (row === undefined || !(await mayView(principal, row))) throw notFound(`invitation ${invitationId} not found`);
    return view(row, isoTimestamp(clock));
  }

  async function acceptInvitation(principal: Principal, organizationId: string, invitationId: string) {
    if (principal.kind !== 'user') throw forbidden('only the invited person can accept an invitation');
    const row = await findInvitation(db, organizationId, invitationId);
    if (row === undefined) throw notFound(`invitation ${invitationId} not found`);
    if (!(await isInvitee(principal, row))) {
      throw forbidden('this invitation is for another e-mail address; sign in with the invited, verified address to accept it');
    }
    const now = isoTimestamp(clock);
    const status = statusOf(row, now);
    if (status === 'ACCEPTED') throw conflict('this invitation has already been accepted');
    if (status === 'EXPIRED') throw badRequest(`this invitation expired at ${row.expires_at}; ask for a new one`);
    await uniqueOrConflict(async () => {
      await db.transaction().execute(async (trx) => {
        if (!(await markInvitationAccepted(trx, row.id, principal.userId, now))) {
          throw conflict('this invitation has already been accepted, was withdrawn or has expired');
        }
        await deps.members.addMember(trx, organizationId, principal.userId, row.role_id);
      });
    }, 'you are already a member of this organization');
    return view({ ...row, status: 'ACCEPTED', accepted_by_user_id: principal.userId, accepted_at: now, updated_at: now }, now);
  }

  async function withdrawInvitation(organizationId: string, invitationId: string): Promise<void> {
    if (!(await deleteInvitation(db, organizationId, invitationId))) throw notFound(`invitation ${invitationId} not found`);
  }

  /**
   * Whether some organization waits for this address: a pending invitation, neither expired nor withdrawn. The
   * built-in identity provider asks it before creating an account when sign-up needs an invitation (SLIPWAY_SIGNUP).
   */
  async function hasPendingInvitation(email: string): Promise<boolean> {
    return pendingInvitationExists(db, email.trim().toLowerCase(), isoTimestamp(clock));
  }

  return {
    inviteMember,
    listInvitations,
    getInvitation,
    acceptInvitation,
    withdrawInvitation,
    hasPendingInvitation,
    removeOrganizationInvitations: (trx: Queryable, organizationId: string) => deleteOrganizationInvitations(trx, organizationId),
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
