import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, type components } from '../../api/client.ts';
import { Button, ModalDialog, RelativeTime, SelectField, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';
import { SecretShownOnce } from '../../ui/SecretShownOnce.tsx';
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
    <>
      <ListSection
        id="tokens-heading"
        title="API tokens"
        intro={
          <>
            A token lets a script, the CLI or a CI job call the API as this organization: send it as <code>Authorization: Bearer &lt;token&gt;</code>. It can never do more than
            its creator.
          </>
        }
        query={tokens}
        count={list.length}
        loadingLabel="Loading API tokens…"
        create={{ label: 'New API token', onPress: () => setCreating(true) }}
        empty={{ title: 'No API tokens yet', text: 'Create one for each script or pipeline, so that each can be revoked on its own.' }}
        columns={['Name', 'Access', 'Created', 'Expires']}
      >
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
      </ListSection>
      {creating ? <CreateTokenDialog organizationId={organizationId} onClose={() => setCreating(false)} /> : null}
      {deleting === undefined ? null : <DeleteTokenDialog organizationId={organizationId} token={deleting} onClose={() => setDeleting(undefined)} />}
    </>
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
  const { fields, summary } = formErrorsOf(create);
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
      <SecretShownOnce
        title={`API token ${create.data.name} created`}
        notice="Copy the token now: it is shown only once. If it is lost, delete it and create another."
        label="Token"
        value={create.data.token}
        copyLabel="Copy the token"
        onClose={onClose}
      />
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
        <FormActions error={summary} onCancel={onClose} submitLabel="Create token" />
      </Form>
    </ModalDialog>
  );
}

function DeleteTokenDialog({ organizationId, token, onClose }: { organizationId: string; token: ApiToken; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/apiToken/{apiTokenId}', useRefreshThenClose(['/organization/{organizationId}/apiToken'], onClose));
  return (
    <DeleteByNameDialog
      name={token.name}
      explanation="Every script or pipeline using this token is refused from now on. It cannot be undone."
      confirmLabel="Delete token"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, apiTokenId: token.id } } })}
      onClose={onClose}
    />
  );
}
