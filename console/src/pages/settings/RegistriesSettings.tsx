import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryOf, type components } from '../../api/client.ts';
import { Button, ConfirmByNameDialog, ErrorMessage, ModalDialog, SelectField, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Registry = components['schemas']['ContainerRegistryResponse'];
type Kind = components['schemas']['ContainerRegistryKindEnum'];
type Check = { reachable: boolean; authenticated: boolean; message: string };

/** The kinds that take a URL and an optional user name and password (the cloud kinds need credentials: the API or CLI). */
const KINDS: readonly { value: Kind; label: string; url?: string }[] = [
  { value: 'GENERIC_CR', label: 'Any OCI registry' },
  { value: 'DOCKER_HUB', label: 'Docker Hub', url: 'https://docker.io' },
  { value: 'GITHUB_CR', label: 'GitHub Container Registry', url: 'https://ghcr.io' },
  { value: 'GITLAB_CR', label: 'GitLab Container Registry', url: 'https://registry.gitlab.com' },
  { value: 'GITHUB_ENTERPRISE_CR', label: 'GitHub Enterprise registry' },
  { value: 'DOCR', label: 'DigitalOcean registry' },
  { value: 'PUBLIC_ECR', label: 'Amazon ECR Public' },
];

function kindLabel(kind: string): string {
  return KINDS.find((entry) => entry.value === kind)?.label ?? kind.replaceAll('_', ' ');
}

/** Container registries: where containers' images come from; each checked against the registry on demand. */
export function RegistriesSettings() {
  const { organizationId } = route.useParams();
  const registries = api.useQuery('get', '/organization/{organizationId}/containerRegistry', { params: { path: { organizationId } } });
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Registry | undefined>();
  const [checks, setChecks] = useState<Record<string, Check | { error: string } | 'checking'>>({});
  const check = api.useMutation('post', '/organization/{organizationId}/containerRegistry/{containerRegistryId}/check');
  const list = registries.data?.results ?? [];
  async function run(registry: Registry) {
    setChecks((current) => ({ ...current, [registry.id]: 'checking' }));
    try {
      const result = await check.mutateAsync({ params: { path: { organizationId, containerRegistryId: registry.id } } });
      setChecks((current) => ({ ...current, [registry.id]: result as Check }));
    } catch (error) {
      setChecks((current) => ({ ...current, [registry.id]: { error: messageOf(error) } }));
    }
  }
  return (
    <section aria-labelledby="registries-heading" className="section">
      <div className="section-heading">
        <h2 id="registries-heading">Container registries</h2>
        {list.length === 0 ? null : <Button onPress={() => setCreating(true)}>New registry</Button>}
      </div>
      <p className="muted section-intro">Containers run images from these. Passwords are write-only.</p>
      {registries.isPending ? <Spinner label="Loading container registries…" /> : null}
      <ErrorMessage message={registries.isError ? messageOf(registries.error) : undefined} />
      {registries.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h3>No container registries yet</h3>
          <p className="muted">Add the registry your images are pushed to; a container service then picks an image from it.</p>
          <Button onPress={() => setCreating(true)}>New registry</Button>
        </div>
      ) : null}
      {list.length === 0 ? null : (
        <table className="table" aria-labelledby="registries-heading">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Registry</th>
              <th scope="col">Connection</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((registry) => {
              const result = checks[registry.id];
              return (
                <tr key={registry.id}>
                  <th scope="row">
                    {registry.name}
                    <span className="kind-label">{registry.associated_services_count === 1 ? '1 service' : `${registry.associated_services_count} services`}</span>
                  </th>
                  <td data-label="Registry">
                    {kindLabel(registry.kind)}
                    <span className="kind-label url">
                      {registry.url}
                      {registry.config.username === undefined ? ' · anonymous' : ` · as ${registry.config.username}`}
                    </span>
                  </td>
                  <td data-label="Connection" aria-live="polite">
                    {result === undefined ? (
                      <span className="muted">not checked</span>
                    ) : result === 'checking' ? (
                      <StatusChip state="QUEUED" label="Checking…" />
                    ) : 'error' in result ? (
                      <ErrorMessage message={result.error} />
                    ) : (
                      <>
                        <StatusChip state={result.reachable && result.authenticated ? 'DEPLOYED' : 'DEPLOYMENT_ERROR'} label={result.reachable ? (result.authenticated ? 'Connected' : 'Access refused') : 'Unreachable'} />
                        <span className="kind-label">{result.message}</span>
                      </>
                    )}
                  </td>
                  <td className="actions-cell">
                    <Button variant="secondary" onPress={() => void run(registry)}>
                      Check<span className="visually-hidden"> {registry.name}</span>
                    </Button>{' '}
                    <Button variant="quiet-danger" aria-label={`Delete ${registry.name}`} onPress={() => setDeleting(registry)}>
                      Delete
                    </Button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {creating ? <NewRegistryDialog organizationId={organizationId} onClose={() => setCreating(false)} /> : null}
      {deleting === undefined ? null : <DeleteRegistryDialog organizationId={organizationId} registry={deleting} onClose={() => setDeleting(undefined)} />}
    </section>
  );
}

function NewRegistryDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('GENERIC_CR');
  const [url, setUrl] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const queryClient = useQueryClient();
  const create = api.useMutation('post', '/organization/{organizationId}/containerRegistry', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/containerRegistry'] });
      onClose();
    },
  });
  const fixedUrl = KINDS.find((entry) => entry.value === kind)?.url;
  const fields = fieldErrorsOf(create.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({
      params: { path: { organizationId } },
      body: {
        name: name.trim(),
        kind,
        url: fixedUrl ?? url.trim(),
        ...(username.trim() === '' && password === '' ? {} : { config: { username: username.trim(), password } }),
      },
    });
  }
  return (
    <ModalDialog title="New container registry" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(value) => (create.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <SelectField id="registry-kind" label="Kind" value={kind} onChange={(value) => (create.reset(), setKind(value))} options={KINDS} />
        {fixedUrl === undefined ? (
          <TextField label="URL" value={url} onChange={(value) => (create.reset(), setUrl(value))} isRequired maxLength={2048} placeholder="https://registry.example.com" errorMessage={fields.get('url')} />
        ) : (
          <p className="muted">URL: {fixedUrl}</p>
        )}
        <TextField label="User name (optional)" value={username} onChange={(value) => (create.reset(), setUsername(value))} maxLength={255} errorMessage={fields.get('config/username')} />
        <TextField label="Password or token (optional)" type="password" value={password} onChange={(value) => (create.reset(), setPassword(value))} maxLength={4096} description="Both or neither; without them the registry is read anonymously." errorMessage={fields.get('config/password')} />
        <ErrorMessage message={create.isError ? summaryOf(create.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">Add registry</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function DeleteRegistryDialog({ organizationId, registry, onClose }: { organizationId: string; registry: Registry; onClose: () => void }) {
  const queryClient = useQueryClient();
  const remove = api.useMutation('delete', '/organization/{organizationId}/containerRegistry/{containerRegistryId}', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/containerRegistry'] });
      onClose();
    },
  });
  return (
    <ConfirmByNameDialog
      title={`Delete ${registry.name}`}
      name={registry.name}
      explanation="Slipway forgets the registry and its credentials. The API refuses while services still use it."
      confirmLabel="Delete registry"
      pending={remove.isPending}
      error={remove.isError ? messageOf(remove.error) : undefined}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, containerRegistryId: registry.id } } })}
      onClose={onClose}
    />
  );
}
