import { useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryOf, type paths } from '../api/client.ts';
import { Breadcrumbs, Button, ErrorMessage, Spinner, TextField } from '../ui/controls.tsx';

type Account = paths['/account']['get']['responses'][200]['content']['application/json'];

/**
 * The signed-in person's account (getAccountInformation): the profile the identity provider gave, read-only here, and
 * the communication e-mail Slipway writes to (invitations, invoices, alerts' owners), which they may change.
 */
export function AccountPage() {
  const account = api.useQuery('get', '/account');
  useEffect(() => {
    document.title = 'Your account · Slipway';
  }, []);
  const fullName = [account.data?.first_name, account.data?.last_name].filter((part) => part !== undefined && part !== '').join(' ');
  return (
    <main className="page">
      <Breadcrumbs>
        <li>
          <Link to="/" activeOptions={{ exact: true }}>
            Home
          </Link>
        </li>
        <li aria-current="page">Account</li>
      </Breadcrumbs>
      <div className="page-heading">
        <div>
          <p className="eyebrow">Account</p>
          <h1>{account.data === undefined ? 'Your account' : fullName || account.data.nickname || 'Your account'}</h1>
        </div>
      </div>
      {account.isPending ? <Spinner label="Loading your account…" /> : null}
      <ErrorMessage message={account.isError ? messageOf(account.error) : undefined} />
      {account.data === undefined ? null : (
        <>
          <section aria-labelledby="profile-heading" className="card settings-card">
            <h2 id="profile-heading" className="card-title">
              Profile
            </h2>
            <p className="muted">From your sign-in: change it where you sign in.</p>
            <dl className="facts">
              <div>
                <dt>Name</dt>
                <dd>{fullName === '' ? <span className="muted">not given</span> : fullName}</dd>
              </div>
              <div>
                <dt>Nickname</dt>
                <dd>{account.data.nickname ?? <span className="muted">not given</span>}</dd>
              </div>
              {account.data.profile_picture_url === undefined || account.data.profile_picture_url === '' ? null : (
                <div>
                  <dt>Picture</dt>
                  <dd>
                    <img className="account-picture" src={account.data.profile_picture_url} alt="Your profile picture" width={48} height={48} />
                  </dd>
                </div>
              )}
              <div>
                <dt>Member since</dt>
                <dd>{new Date(account.data.created_at).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric' })}</dd>
              </div>
              <div>
                <dt>Account id</dt>
                <dd>
                  <code>{account.data.id}</code>
                </dd>
              </div>
            </dl>
          </section>
          <section aria-labelledby="communication-heading" className="card settings-card">
            <h2 id="communication-heading" className="card-title">
              Communication e-mail
            </h2>
            <CommunicationEmailForm key={account.data.id} account={account.data} />
          </section>
        </>
      )}
    </main>
  );
}

function CommunicationEmailForm({ account }: { account: Account }) {
  const [email, setEmail] = useState(account.communication_email ?? '');
  const [saved, setSaved] = useState(false);
  const queryClient = useQueryClient();
  const edit = api.useMutation('put', '/account', {
    onSuccess: async (answer) => {
      queryClient.setQueryData(['get', '/account', {}], answer);
      await queryClient.invalidateQueries({ queryKey: ['get', '/account'] });
      setSaved(true);
    },
  });
  useEffect(() => {
    if (!saved) return;
    const timer = setTimeout(() => setSaved(false), 4000);
    return () => clearTimeout(timer);
  }, [saved]);
  const fields = fieldErrorsOf(edit.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    setSaved(false);
    edit.mutate({ body: { communication_email: email.trim() } });
  }
  return (
    <Form onSubmit={submit} className="form">
      <TextField
        label="E-mail for messages from Slipway"
        value={email}
        onChange={(value) => (edit.reset(), setEmail(value))}
        isRequired
        maxLength={320}
        autoComplete="email"
        description="Where Slipway writes to you; your sign-in e-mail does not change."
        errorMessage={fields.get('communication_email')}
      />
      <ErrorMessage message={edit.isError ? summaryOf(edit.error) : undefined} />
      <div className="form-actions form-actions-start">
        <Button type="submit" isDisabled={email.trim() === '' || email.trim() === (account.communication_email ?? '')}>
          Save e-mail
        </Button>
        <span role="status" className="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </Form>
  );
}
