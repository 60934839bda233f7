import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, type components } from '../../api/client.ts';
import { ActionsMenu, Button, ModalDialog, RelativeTime, SelectField, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';
import { AssociatedServicesDialog } from './AssociatedServicesDialog.tsx';
import { GitHubAppSection } from './GitHubAppSection.tsx';
import { RepositoryDirectoryPicker } from './RepositoryDirectoryPicker.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type GitToken = components['schemas']['GitTokenResponse'];
type Provider = components['schemas']['GitProviderEnum'];
const PROVIDERS: readonly { value: Provider; label: string }[] = [
  { value: 'GITHUB', label: 'GitHub' },
  { value: 'GITLAB', label: 'GitLab' },
  { value: 'BITBUCKET', label: 'Bitbucket' },
];

/**
 * Git tokens: the organization's credentials for its git hosts (the value is write-only), with the services using each,
 * and a repository's directories browsed with each.
 */
export function GitTokensSettings() {
  const { organizationId } = route.useParams();
  const tokens = api.useQuery('get', '/organization/{organizationId}/gitToken', { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'edit' | 'services' | 'browse' | 'delete'; token: GitToken } | undefined>();
  const list = tokens.data?.results ?? [];
  return (
    <>
      <ListSection
        id="git-tokens-heading"
        title="Git tokens"
        intro="Slipway reads private repositories with these: applications and jobs built from git name one. The value is never shown again."
        query={tokens}
        count={list.length}
        loadingLabel="Loading git tokens…"
        create={{ label: 'New git token', onPress: () => setDialog({ kind: 'new' }) }}
        empty={{ title: 'No git tokens yet', text: 'Public repositories need none. For a private one, create a token at your git host with read access to its code.' }}
        columns={['Name', 'Host', 'Used by', 'Created']}
      >
        {list.map((token) => (
          <tr key={token.id}>
            <th scope="row">
              {token.name}
              {token.description ? <span className="kind-label">{token.description}</span> : null}
            </th>
            <td data-label="Host">
              {PROVIDERS.find((provider) => provider.value === token.type)?.label ?? token.type}
              {token.workspace ? <span className="kind-label">{token.workspace}</span> : null}
              {token.git_api_url ? <span className="kind-label">{token.git_api_url}</span> : null}
            </td>
            <td data-label="Used by">
              {token.associated_services_count === 0 ? (
                <span className="muted">no service</span>
              ) : (
                <Button variant="secondary" onPress={() => setDialog({ kind: 'services', token })}>
                  {token.associated_services_count === 1 ? '1 service' : `${token.associated_services_count} services`}
                  <span className="visually-hidden"> using {token.name}</span>
                </Button>
              )}
            </td>
            <td data-label="Created">
              <RelativeTime at={token.created_at} />
            </td>
            <td className="actions-cell">
              <div className="row-actions">
                <Button variant="secondary" onPress={() => setDialog({ kind: 'browse', token })}>
                  Browse<span className="visually-hidden"> a repository with {token.name}</span>
                </Button>
                <ActionsMenu
                  label={`Actions for ${token.name}`}
                  actions={[
                    { id: 'edit', label: 'Edit or replace…' },
                    { id: 'delete', label: 'Delete…', danger: true },
                  ]}
                  onAction={(id) => setDialog({ kind: id as 'edit' | 'delete', token })}
                />
              </div>
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new' ? <GitTokenDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit' ? <GitTokenDialog organizationId={organizationId} token={dialog.token} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'services' ? <GitTokenServicesDialog organizationId={organizationId} token={dialog.token} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'browse' ? (
        <RepositoryDirectoryPicker organizationId={organizationId} title={`Browse a repository with ${dialog.token.name}`} provider={dialog.token.type} gitTokenId={dialog.token.id} onClose={() => setDialog(undefined)} />
      ) : null}
      {dialog?.kind === 'delete' ? <DeleteGitTokenDialog organizationId={organizationId} token={dialog.token} onClose={() => setDialog(undefined)} /> : null}
      <GitHubAppSection organizationId={organizationId} />
    </>
  );
}

/** Create, or edit (an empty value keeps the stored one). */
function GitTokenDialog({ organizationId, token, onClose }: { organizationId: string; token?: GitToken; onClose: () => void }) {
  const [name, setName] = useState(token?.name ?? '');
  const [description, setDescription] = useState(token?.description ?? '');
  const [type, setType] = useState<Provider>(token?.type ?? 'GITHUB');
  const [workspace, setWorkspace] = useState(token?.workspace ?? '');
  const [apiUrl, setApiUrl] = useState(token?.git_api_url ?? '');
  const [value, setValue] = useState('');
  const done = useRefreshThenClose(['/organization/{organizationId}/gitToken'], onClose);
  const create = api.useMutation('post', '/organization/{organizationId}/gitToken', done);
  const edit = api.useMutation('put', '/organization/{organizationId}/gitToken/{gitTokenId}', done);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, token !== undefined);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = {
      name: name.trim(),
      description: description.trim() === '' ? null : description.trim(),
      type,
      workspace: workspace.trim() === '' ? null : workspace.trim(),
      git_api_url: apiUrl.trim() === '' ? null : apiUrl.trim(),
    };
    if (token === undefined) create.mutate({ params: { path: { organizationId } }, body: { ...body, token: value.trim() } });
    else edit.mutate({ params: { path: { organizationId, gitTokenId: token.id } }, body: { ...body, ...(value.trim() === '' ? {} : { token: value.trim() }) } });
  }
  return (
    <ModalDialog title={token === undefined ? 'New git token' : `Edit ${token.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(next) => (reset(), setName(next))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={setDescription} maxLength={2000} />
        <SelectField id="git-token-type" label="Git host" value={type} onChange={(next) => (reset(), setType(next))} options={PROVIDERS} errorMessage={fields.get('type')} />
        <TextField label="Workspace (optional)" value={workspace} onChange={setWorkspace} maxLength={255} description="Bitbucket's workspace, or the GitHub organization or GitLab group." errorMessage={fields.get('workspace')} />
        <TextField label="API URL (optional)" type="url" value={apiUrl} onChange={(next) => (reset(), setApiUrl(next))} maxLength={2048} description="For a self-hosted host only." errorMessage={fields.get('git_api_url')} />
        <TextField
          label={token === undefined ? 'Token' : 'New token value (optional)'}
          type="password"
          value={value}
          onChange={(next) => (reset(), setValue(next))}
          isRequired={token === undefined}
          maxLength={4096}
          description={token === undefined ? 'Stored encrypted; never shown again.' : 'Leave empty to keep the stored value.'}
          errorMessage={fields.get('token')}
        />
        <FormActions error={summary} onCancel={onClose} submitLabel={token === undefined ? 'Create git token' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

function GitTokenServicesDialog({ organizationId, token, onClose }: { organizationId: string; token: GitToken; onClose: () => void }) {
  const services = api.useQuery('get', '/organization/{organizationId}/gitToken/{gitTokenId}/associatedServices', { params: { path: { organizationId, gitTokenId: token.id } } });
  return <AssociatedServicesDialog organizationId={organizationId} title={`Services using ${token.name}`} query={services} onClose={onClose} />;
}

function DeleteGitTokenDialog({ organizationId, token, onClose }: { organizationId: string; token: GitToken; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/gitToken/{gitTokenId}', useRefreshThenClose(['/organization/{organizationId}/gitToken'], onClose));
  return (
    <DeleteByNameDialog
      name={token.name}
      explanation="Slipway forgets the token. The API refuses while services still use it: point them at another token first."
      confirmLabel="Delete git token"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, gitTokenId: token.id } } })}
      onClose={onClose}
    />
  );
}
