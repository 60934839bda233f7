import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fetchClient, messageOf, type components } from '../../api/client.ts';
import { currentSession } from '../../auth/session.ts';
import { ActionsMenu, ConfirmByNameDialog, ErrorMessage, ModalDialog, RelativeTime, SelectField, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';
import { roleLabel } from './roles.ts';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Member = components['schemas']['Member'];
type Invitation = components['schemas']['InviteMember'];
type Role = components['schemas']['OrganizationAvailableRole'];

function nameOf(member: Member): string {
  return member.name ?? member.nickname ?? member.email;
}

/** Members with their roles (change, remove, transfer ownership) and the pending invitations (invite, resend, revoke). */
export function MembersSettings() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const members = api.useQuery('get', '/organization/{organizationId}/member', path);
  const invitations = api.useQuery('get', '/organization/{organizationId}/inviteMember', path);
  const roles = api.useQuery('get', '/organization/{organizationId}/availableRole', path);
  const [dialog, setDialog] = useState<
    { kind: 'invite' } | { kind: 'role'; member: Member } | { kind: 'remove'; member: Member } | { kind: 'transfer'; member: Member } | { kind: 'revoke'; invitation: Invitation } | undefined
  >();
  const [rowError, setRowError] = useState<{ id: string; message: string } | undefined>();
  const [resent, setResent] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const me = currentSession()?.email;
  const roleList = roles.data?.results ?? [];
  const memberList = members.data?.results ?? [];
  const invitationList = invitations.data?.results ?? [];

  /** The API has no resend operation: a new invitation replaces the old one (same e-mail and role, a new link and mail). */
  async function resend(invitation: Invitation) {
    setRowError(undefined);
    setResent(undefined);
    const { error: revokeError } = await fetchInvitation('delete', organizationId, invitation.id);
    if (revokeError !== undefined) return setRowError({ id: invitation.id, message: messageOf(revokeError) });
    const { error } = await fetchInvitation('post', organizationId, undefined, { email: invitation.email, role_id: invitation.role_id });
    await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/inviteMember'] });
    if (error !== undefined) return setRowError({ id: invitation.id, message: messageOf(error) });
    setResent(invitation.email);
  }

  return (
    <>
      <ListSection
        id="members-heading"
        title="Members"
        query={members}
        count={memberList.length}
        loadingLabel="Loading members…"
        create={{ label: 'Invite member', onPress: () => setDialog({ kind: 'invite' }), always: true }}
        columns={['Member', 'Role', 'Joined']}
      >
        {memberList.map((member) => (
          <tr key={member.id}>
            <th scope="row">
              {nameOf(member)}
              {member.email === me ? <span className="tag tag-inline">you</span> : null}
              {nameOf(member) === member.email ? null : <span className="kind-label">{member.email}</span>}
              {rowError?.id === member.id ? <ErrorMessage message={rowError.message} /> : null}
            </th>
            <td data-label="Role">
              <span className={`role role-${member.role.toLowerCase()}`}>{roleLabel(member.role_name)}</span>
            </td>
            <td data-label="Joined">
              <RelativeTime at={member.created_at} />
            </td>
            <td className="actions-cell">
              {/* The owner's role moves only by a transfer, and the owner is not removed: nothing to offer. */}
              {member.role === 'OWNER' ? null : (
              <ActionsMenu
                label={`Actions for ${nameOf(member)}`}
                actions={[
                  { id: 'role', label: 'Change role…' },
                  { id: 'transfer', label: 'Transfer ownership…' },
                  { id: 'remove', label: 'Remove…', danger: true },
                ]}
                onAction={(id) => {
                  setRowError(undefined);
                  setDialog({ kind: id as 'role' | 'transfer' | 'remove', member });
                }}
              />
              )}
            </td>
          </tr>
        ))}
      </ListSection>

      <ListSection
        id="invitations-heading"
        title="Invitations"
        query={invitations}
        count={invitationList.length}
        loadingLabel="Loading invitations…"
        status={
          <p role="status" className="status-message">
            {resent === undefined ? '' : `A new invitation was sent to ${resent}.`}
          </p>
        }
        empty={{ title: 'No pending invitations', text: 'Invite people by e-mail: they get a link to join this organization with the role you choose.' }}
        columns={['E-mail', 'Role', 'Status', 'Expires']}
      >
        {invitationList.map((invitation) => (
          <tr key={invitation.id}>
            <th scope="row">
              {invitation.email}
              <span className="kind-label">invited by {invitation.inviter}</span>
              {rowError?.id === invitation.id ? <ErrorMessage message={rowError.message} /> : null}
            </th>
            <td data-label="Role">{roleLabel(invitation.role_name)}</td>
            <td data-label="Status">
              <span className={`tag${invitation.invitation_status === 'EXPIRED' ? ' tag-warning' : ''}`}>{invitation.invitation_status === 'PENDING' ? 'Pending' : invitation.invitation_status === 'EXPIRED' ? 'Expired' : 'Accepted'}</span>
            </td>
            <td data-label="Expires">
              <time dateTime={invitation.expires_at}>{new Date(invitation.expires_at).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' })}</time>
            </td>
            <td className="actions-cell">
              <CopyButton value={invitation.invitation_link} label={`Copy the invitation link for ${invitation.email}`} text="Copy link" />
              <ActionsMenu
                label={`Actions for the invitation of ${invitation.email}`}
                actions={[
                  { id: 'resend', label: 'Resend' },
                  { id: 'revoke', label: 'Revoke…', danger: true },
                ]}
                onAction={(id) => (id === 'resend' ? void resend(invitation) : setDialog({ kind: 'revoke', invitation }))}
              />
            </td>
          </tr>
        ))}
      </ListSection>

      {dialog?.kind === 'invite' ? <InviteDialog organizationId={organizationId} roles={roleList} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'role' ? <ChangeRoleDialog organizationId={organizationId} member={dialog.member} roles={roleList} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'remove' ? <RemoveMemberDialog organizationId={organizationId} member={dialog.member} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'transfer' ? <TransferOwnershipDialog organizationId={organizationId} member={dialog.member} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'revoke' ? <RevokeInvitationDialog organizationId={organizationId} invitation={dialog.invitation} onClose={() => setDialog(undefined)} /> : null}
    </>
  );
}

async function fetchInvitation(method: 'delete' | 'post', organizationId: string, inviteId: string | undefined, body?: { email: string; role_id: string }): Promise<{ error?: unknown }> {
  try {
    if (method === 'delete') {
      const { error } = await fetchClient.DELETE('/organization/{organizationId}/inviteMember/{inviteId}', { params: { path: { organizationId, inviteId: inviteId as string } } });
      return error === undefined ? {} : { error };
    }
    const { error } = await fetchClient.POST('/organization/{organizationId}/inviteMember', { params: { path: { organizationId } }, body: body as { email: string; role_id: string } });
    return error === undefined ? {} : { error };
  } catch (error) {
    return { error };
  }
}

/** A member's or an invitation's change shows in both lists (an accepted invitation becomes a member). */
const MEMBER_LISTS = ['/organization/{organizationId}/member', '/organization/{organizationId}/inviteMember'] as const;

/** The roles offered: every role but owner (ownership moves by a transfer). */
function roleOptions(roles: readonly Role[]): { value: string; label: string }[] {
  return roles.filter((role) => role.name.toUpperCase() !== 'OWNER').map((role) => ({ value: role.id, label: roleLabel(role.name) }));
}

function InviteDialog({ organizationId, roles, onClose }: { organizationId: string; roles: readonly Role[]; onClose: () => void }) {
  const options = roleOptions(roles);
  const [email, setEmail] = useState('');
  const [roleId, setRoleId] = useState(options.find((option) => option.label.toUpperCase() === 'DEVELOPER')?.value ?? options[0]?.value ?? '');
  const invite = api.useMutation('post', '/organization/{organizationId}/inviteMember', useRefreshThenClose(MEMBER_LISTS, onClose));
  const { fields, summary } = formErrorsOf(invite);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (invite.isPending || roleId === '') return;
    invite.mutate({ params: { path: { organizationId } }, body: { email: email.trim(), role_id: roleId } });
  }
  return (
    <ModalDialog title="Invite a member" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="E-mail" type="text" value={email} onChange={(value) => (invite.reset(), setEmail(value))} isRequired autoFocus maxLength={254} autoComplete="email" errorMessage={fields.get('email')} />
        <SelectField id="invite-role" label="Role" value={roleId} onChange={setRoleId} options={options} description="What they may do in this organization. Custom roles are listed too." />
        <FormActions error={summary} onCancel={onClose} submitLabel="Send invitation" />
      </Form>
    </ModalDialog>
  );
}

function ChangeRoleDialog({ organizationId, member, roles, onClose }: { organizationId: string; member: Member; roles: readonly Role[]; onClose: () => void }) {
  const options = roleOptions(roles);
  const [roleId, setRoleId] = useState(member.role_id);
  const edit = api.useMutation('put', '/organization/{organizationId}/member', useRefreshThenClose(MEMBER_LISTS, onClose));
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!edit.isPending) edit.mutate({ params: { path: { organizationId } }, body: { user_id: member.id, role_id: roleId } });
  }
  return (
    <ModalDialog title={`Change the role of ${nameOf(member)}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <SelectField id="member-role" label="Role" value={roleId} onChange={(value) => (edit.reset(), setRoleId(value))} options={options} />
        <FormActions error={edit.isError ? messageOf(edit.error) : undefined} onCancel={onClose} submitLabel="Change role" submitDisabled={roleId === member.role_id} />
      </Form>
    </ModalDialog>
  );
}

function RemoveMemberDialog({ organizationId, member, onClose }: { organizationId: string; member: Member; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/member', useRefreshThenClose(MEMBER_LISTS, onClose));
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!remove.isPending) remove.mutate({ params: { path: { organizationId } }, body: { user_id: member.id } });
  }
  return (
    <ModalDialog title={`Remove ${nameOf(member)}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <p>
          {nameOf(member)} ({member.email}) loses access to this organization at once. Their API tokens stop working. You can invite them again later.
        </p>
        <FormActions error={remove.isError ? messageOf(remove.error) : undefined} onCancel={onClose} submitLabel="Remove member" danger />
      </Form>
    </ModalDialog>
  );
}

/** Ownership moves to another member; the current owner becomes an admin. Typed confirmation: it cannot be taken back. */
function TransferOwnershipDialog({ organizationId, member, onClose }: { organizationId: string; member: Member; onClose: () => void }) {
  const transfer = api.useMutation('post', '/organization/{organizationId}/transferOwnership', useRefreshThenClose(MEMBER_LISTS, onClose));
  return (
    <ConfirmByNameDialog
      title={`Transfer ownership to ${nameOf(member)}`}
      name={member.email}
      explanation={`${nameOf(member)} becomes the owner of this organization. You keep an admin role, and only the new owner can give ownership back.`}
      confirmLabel="Transfer ownership"
      pending={transfer.isPending}
      error={transfer.isError ? messageOf(transfer.error) : undefined}
      onConfirm={() => transfer.mutate({ params: { path: { organizationId } }, body: { user_id: member.id } })}
      onClose={onClose}
    />
  );
}

function RevokeInvitationDialog({ organizationId, invitation, onClose }: { organizationId: string; invitation: Invitation; onClose: () => void }) {
  const revoke = api.useMutation('delete', '/organization/{organizationId}/inviteMember/{inviteId}', useRefreshThenClose(MEMBER_LISTS, onClose));
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!revoke.isPending) revoke.mutate({ params: { path: { organizationId, inviteId: invitation.id } } });
  }
  return (
    <ModalDialog title={`Revoke the invitation of ${invitation.email}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <p>The invitation link stops working. You can invite {invitation.email} again later.</p>
        <FormActions error={revoke.isError ? messageOf(revoke.error) : undefined} onCancel={onClose} submitLabel="Revoke invitation" danger />
      </Form>
    </ModalDialog>
  );
}
