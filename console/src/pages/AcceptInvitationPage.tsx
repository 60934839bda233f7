import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { api, messageOf } from '../api/client.ts';
import { signOut } from '../auth/oidc.ts';
import { currentSession } from '../auth/session.ts';
import { Button, ErrorMessage, Spinner } from '../ui/controls.tsx';
import { roleLabel } from './settings/roles.ts';

const route = getRouteApi('/signed-in/invitations/$invitationOrganizationId/$invitationId');

function formatDate(at: string): string {
  return new Date(at).toLocaleString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * Where the invitation e-mail's link lands (the server sends a browser from the link, the invitation's API path, here;
 * a person without a session signs in first and comes back). Shows who invites them, to which organization, with
 * which role, until when; Accept joins (then the organization opens). The API has no refusal of an invitation by the
 * invitee: Decline leaves it unused (it expires; the organization's admins can withdraw it) and says so.
 */
export function AcceptInvitationPage() {
  const { invitationOrganizationId: organizationId, invitationId: inviteId } = route.useParams();
  const params = { params: { path: { organizationId, inviteId } } };
  const invitation = api.useQuery('get', '/organization/{organizationId}/inviteMember/{inviteId}', params, { retry: false });
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [declined, setDeclined] = useState(false);
  const accept = api.useMutation('post', '/organization/{organizationId}/inviteMember/{inviteId}', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization'] });
      await navigate({ to: '/organization/$organizationId', params: { organizationId } });
    },
  });
  const session = currentSession();
  const data = invitation.data;
  useEffect(() => {
    document.title = `Invitation${data === undefined ? '' : ` to ${data.organization_name}`} · Slipway`;
  }, [data]);

  if (invitation.isPending) return <Spinner label="Loading the invitation…" />;
  if (invitation.isError || data === undefined) {
    return (
      <main className="page narrow">
        <h1>Invitation not found</h1>
        <ErrorMessage message={messageOf(invitation.error)} />
        <p>
          It may have been withdrawn, or sent to another address than the one you are signed in with ({session?.email}). Sign in with the address the
          invitation was sent to, or ask the organization for a new one.
        </p>
        <div className="form-actions form-actions-start">
          <Button variant="secondary" onPress={() => void signOut(session)}>
            Sign in with another address
          </Button>
          <Link to="/" className="button button-secondary">
            Go to your organizations
          </Link>
        </div>
      </main>
    );
  }

  const role = roleLabel(data.role_name);
  return (
    <main className="page narrow">
      <div className="page-heading">
        <p className="eyebrow">Invitation</p>
        <h1>Join {data.organization_name}</h1>
      </div>
      <section className="card invitation" aria-labelledby="invitation-summary">
        <p id="invitation-summary">
          <strong>{data.inviter}</strong> invited you to join <strong>{data.organization_name}</strong> as <strong>{role}</strong>.
        </p>
        <dl className="invitation-facts">
          <div>
            <dt>Organization</dt>
            <dd>{data.organization_name}</dd>
          </div>
          <div>
            <dt>Role</dt>
            <dd>{role}</dd>
          </div>
          <div>
            <dt>Invited by</dt>
            <dd>{data.inviter}</dd>
          </div>
          <div>
            <dt>Sent to</dt>
            <dd>{data.email}</dd>
          </div>
          <div>
            <dt>{data.invitation_status === 'EXPIRED' ? 'Expired' : 'Expires'}</dt>
            <dd>
              <time dateTime={data.expires_at}>{formatDate(data.expires_at)}</time>
            </dd>
          </div>
        </dl>
        {data.invitation_status === 'ACCEPTED' ? (
          <>
            <p className="notice" role="status">
              This invitation has been accepted.
            </p>
            <Link to="/organization/$organizationId" params={{ organizationId }} className="button button-primary">
              Open {data.organization_name}
            </Link>
          </>
        ) : data.invitation_status === 'EXPIRED' ? (
          <p className="error-message" role="alert">
            This invitation has expired. Ask {data.inviter} for a new one.
          </p>
        ) : data.email.toLowerCase() !== session?.email?.toLowerCase() ? (
          <>
            <p className="notice" role="status">
              This invitation is for {data.email}; you are signed in as {session?.email}. Only {data.email} can accept it.
            </p>
            <Button variant="secondary" onPress={() => void signOut(session)}>
              Sign in with another address
            </Button>
          </>
        ) : declined ? (
          <>
            <p className="notice" role="status">
              You declined: you did not join {data.organization_name}. The invitation stays unused until it expires; you can still accept it from the e-mail&apos;s link
              until then.
            </p>
            <Link to="/" className="button button-secondary">
              Go to your organizations
            </Link>
          </>
        ) : (
          <>
            <ErrorMessage message={accept.isError ? messageOf(accept.error) : undefined} />
            <div className="form-actions form-actions-start">
              <Button onPress={() => (accept.isPending ? undefined : accept.mutate(params))}>Accept and join</Button>
              <Button variant="secondary" onPress={() => setDeclined(true)}>
                Decline
              </Button>
            </div>
          </>
        )}
      </section>
    </main>
  );
}
