import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryOf, type components } from '../../api/client.ts';
import { Button, ConfirmByNameDialog, ErrorMessage, ModalDialog, RelativeTime, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { roleLabel } from './roles.ts';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type ApiToken = components['schemas']['OrganizationApiToken'];
type Scope = components['schemas']['OrganizationApiTokenScope'];

const SCOPES: readonly { value: Scope | ''; label: string }[] = [
  { value: '', label: 'No scope: what the role allows' },
  { value: 'READ', label: 'Read: reads only' },
  { value: 'DEPLOY', label: 'Deploy: reads, deploys, restarts, stops' },
  { value: 'WRITE', label: 'Write: also creates and edits' },
  { value: 'ADMIN', label: 'Admin: everything the role allows' },
];
const EXPIRIES = [
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: 'never', label: 'Never' },
] as const;

/** API tokens for scripts and CI: a role and/or a scope, an expiry; the value is shown once, at creation. */
export function ApiTokensSettings() {
  const { organizationId } = route.useParams();
  const tokens = api.useQuery('get', '/organization/{organizationId}/apiToken', { params: { path: { organizationId } } });
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ApiToken | undefined>();
  const list = tokens.data?.results ?? [];
  return (
    <section aria-labelledby="tokens-heading" className="section">
      <div className="section-heading">
        <h2 id="tokens-heading">API tokens</h2>
        {list.length === 0 ? null : <Button onPress={() => setCreating(true)}>New API token</Button>}
      </div>
      <p className="muted section-intro">
        A token lets a script, the CLI or a CI job call the API as this organization: send it as <code>Authorization: Bearer &lt;token&gt;</code>. It can never do more than
        its creator.
      </p>
      {tokens.isPending ? <Spinner label="Loading API tokens…" /> : null}
      <ErrorMessage message={tokens.isError ? messageOf(tokens.error) : undefined} />
      {tokens.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h3>No API tokens yet</h3>
          <p className="muted">Create one for each script or pipeline, so that each can be revoked on its own.</p>
          <Button onPress={() => setCreating(true)}>New API token</Button>
        </div>
      ) : null}
      {list.length === 0 ? null : (
        <table className="table" aria-labelledby="tokens-heading">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Access</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((token) => (
              <tr key={token.id}>
                <th scope="row">
                  {token.name}
                  <span className="kind-label">
                    <code>{token.token_start}…</code>
                    {token.description ? ` · ${token.description}` : ''}
                  </span>
                </th>
                <td data-label="Access">
                  {token.role_name === undefined ? 'No role' : roleLabel(token.role_name)}
                  {token.scope === null ? null : <span className="tag tag-inline">{token.scope}</span>}
                </td>
                <td data-label="Created">
                  <RelativeTime at={token.created_at} />
                  {token.creator_name === null ? null : <span className="kind-label">by {token.creator_name}</span>}
                </td>
                <td data-label="Expires">{token.expires_at === null ? <span className="muted">never</span> : <ExpiryDate at={token.expires_at} />}</td>
                <td className="actions-cell">
                  <Button variant="quiet-danger" aria-label={`Delete ${token.name}`} onPress={() => setDeleting(token)}>
                    Delete
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {creating ? <CreateTokenDialog organizationId={organizationId} onClose={() => setCreating(false)} /> : null}
      {deleting === undefined ? null : <DeleteTokenDialog organizationId={organizationId} token={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

function ExpiryDate({ at }: { at: string }) {
  const date = new Date(at);
  const text = date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });
  return date.getTime() < Date.now() ? <span className="tag tag-warning">expired {text}</span> : <time dateTime={at}>{text}</time>;
}

function CreateTokenDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const roles = api.useQuery('get', '/organization/{organizationId}/availableRole', { params: { path: { organizationId } } });
  const roleOptions = [{ value: '', label: 'No role: the scope alone' }, ...(roles.data?.results ?? []).filter((role) => role.name.toUpperCase() !== 'OWNER').map((role) => ({ value: role.id, label: roleLabel(role.name) }))];
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [roleId, setRoleId] = useState<string | undefined>();
  const [scope, setScope] = useState<Scope | ''>('');
  const [expiry, setExpiry] = useState<(typeof EXPIRIES)[number]['value']>('90');
  const queryClient = useQueryClient();
  const create = api.useMutation('post', '/organization/{organizationId}/apiToken', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/apiToken'] }),
  });
  // Until the person picks, the developer role (or the first role) is proposed.
  const chosenRole = roleId ?? roleOptions.find((option) => option.label.toUpperCase() === 'DEVELOPER')?.value ?? roleOptions[1]?.value ?? '';
  const fields = fieldErrorsOf(create.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({
      params: { path: { organizationId } },
      body: {
        name: name.trim(),
        ...(description.trim() === '' ? {} : { description: description.trim() }),
        ...(chosenRole === '' ? {} : { role_id: chosenRole }),
        ...(scope === '' ? {} : { scope }),
        expires_at: expiry === 'never' ? null : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString(),
      },
    });
  }
  if (create.isSuccess) {
    return (
      <ModalDialog title={`API token ${create.data.name} created`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
        <div className="form">
          <p className="notice">Copy the token now: it is shown only once. If it is lost, delete it and create another.</p>
          <div className="secret-value">
            <label htmlFor="new-token-value">Token</label>
            <div className="secret-value-row">
              <input id="new-token-value" readOnly value={create.data.token} onFocus={(event) => event.target.select()} spellCheck={false} />
              <CopyButton value={create.data.token} label="Copy the token" />
            </div>
          </div>
          <div className="form-actions">
            <Button onPress={onClose}>Done</Button>
          </div>
        </div>
      </ModalDialog>
    );
  }
  return (
    <ModalDialog title="New API token" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(value) => (create.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={setDescription} maxLength={2000} />
        <SelectField id="token-role" label="Role" value={chosenRole} onChange={(value) => (create.reset(), setRoleId(value))} options={roleOptions} errorMessage={fields.get('role_id')} description="The token acts with this role's rights, never more than yours." />
        <SelectField id="token-scope" label="Scope" value={scope} onChange={(value) => (create.reset(), setScope(value))} options={SCOPES} errorMessage={fields.get('scope')} />
        <SelectField id="token-expiry" label="Expires after" value={expiry} onChange={setExpiry} options={EXPIRIES} />
        <ErrorMessage message={create.isError ? summaryOf(create.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">Create token</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function DeleteTokenDialog({ organizationId, token, onClose }: { organizationId: string; token: ApiToken; onClose: () => void }) {
  const queryClient = useQueryClient();
  const remove = api.useMutation('delete', '/organization/{organizationId}/apiToken/{apiTokenId}', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/apiToken'] });
      onClose();
    },
  });
  return (
    <ConfirmByNameDialog
      title={`Delete ${token.name}`}
      name={token.name}
      explanation="Every script or pipeline using this token is refused from now on. It cannot be undone."
      confirmLabel="Delete token"
      pending={remove.isPending}
      error={remove.isError ? messageOf(remove.error) : undefined}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, apiTokenId: token.id } } })}
      onClose={onClose}
    />
  );
}
