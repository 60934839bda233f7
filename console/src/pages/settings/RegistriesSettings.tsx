import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, type components } from '../../api/client.ts';
import { ConnectionCell, useConnectionChecks } from '../../ui/ConnectionCheck.tsx';
import { Button, ModalDialog, SelectField, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, FormActions, formErrorsOf, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Registry = components['schemas']['ContainerRegistryResponse'];
type Kind = components['schemas']['ContainerRegistryKindEnum'];

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
  const checks = useConnectionChecks();
  const check = api.useMutation('post', '/organization/{organizationId}/containerRegistry/{containerRegistryId}/check');
  const list = registries.data?.results ?? [];
  function run(registry: Registry) {
    return checks.run(registry.id, () => check.mutateAsync({ params: { path: { organizationId, containerRegistryId: registry.id } } }));
  }
  return (
    <>
      <ListSection
        id="registries-heading"
        title="Container registries"
        intro="Containers run images from these. Passwords are write-only."
        query={registries}
        count={list.length}
        loadingLabel="Loading container registries…"
        create={{ label: 'New registry', onPress: () => setCreating(true) }}
        empty={{ title: 'No container registries yet', text: 'Add the registry your images are pushed to; a container service then picks an image from it.' }}
        columns={['Name', 'Registry', 'Connection']}
      >
        {list.map((registry) => (
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
            <ConnectionCell state={checks.stateOf(registry.id)} />
            <td className="actions-cell">
              <Button variant="secondary" onPress={() => void run(registry)}>
                Check<span className="visually-hidden"> {registry.name}</span>
              </Button>{' '}
              <Button variant="quiet-danger" aria-label={`Delete ${registry.name}`} onPress={() => setDeleting(registry)}>
                Delete
              </Button>
            </td>
          </tr>
        ))}
      </ListSection>
      {creating ? <NewRegistryDialog organizationId={organizationId} onClose={() => setCreating(false)} /> : null}
      {deleting === undefined ? null : <DeleteRegistryDialog organizationId={organizationId} registry={deleting} onClose={() => setDeleting(undefined)} />}
    </>
  );
}

function NewRegistryDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('GENERIC_CR');
  const [url, setUrl] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const create = api.useMutation('post', '/organization/{organizationId}/containerRegistry', useRefreshThenClose(['/organization/{organizationId}/containerRegistry'], onClose));
  const fixedUrl = KINDS.find((entry) => entry.value === kind)?.url;
  const { fields, summary } = formErrorsOf(create);
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
        <FormActions error={summary} onCancel={onClose} submitLabel="Add registry" />
      </Form>
    </ModalDialog>
  );
}

function DeleteRegistryDialog({ organizationId, registry, onClose }: { organizationId: string; registry: Registry; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/containerRegistry/{containerRegistryId}', useRefreshThenClose(['/organization/{organizationId}/containerRegistry'], onClose));
  return (
    <DeleteByNameDialog
      name={registry.name}
      explanation="Slipway forgets the registry and its credentials. The API refuses while services still use it."
      confirmLabel="Delete registry"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, containerRegistryId: registry.id } } })}
      onClose={onClose}
    />
  );
}
