import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { ConnectionCell, useConnectionChecks } from '../../ui/ConnectionCheck.tsx';
import { ActionsMenu, Button, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';
import { AssociatedServicesDialog } from './AssociatedServicesDialog.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Registry = components['schemas']['ContainerRegistryResponse'];
type Kind = components['schemas']['ContainerRegistryKindEnum'];
type Config = components['schemas']['ContainerRegistryRequestConfig'];

const REGISTRIES = '/organization/{organizationId}/containerRegistry' as const;

/** How people call each kind, and the hosted registry a kind means when no URL is given (the API's defaults). */
const KIND_NAMES: Record<Kind, { label: string; defaultUrl?: string }> = {
  GENERIC_CR: { label: 'Any OCI registry' },
  DOCKER_HUB: { label: 'Docker Hub', defaultUrl: 'https://docker.io' },
  GITHUB_CR: { label: 'GitHub Container Registry', defaultUrl: 'https://ghcr.io' },
  GITHUB_ENTERPRISE_CR: { label: 'GitHub Enterprise registry' },
  GITLAB_CR: { label: 'GitLab Container Registry', defaultUrl: 'https://registry.gitlab.com' },
  PUBLIC_ECR: { label: 'Amazon ECR Public', defaultUrl: 'https://public.ecr.aws' },
  ECR: { label: 'Amazon ECR (with an AWS credential)' },
  DOCR: { label: 'DigitalOcean registry' },
  SCALEWAY_CR: { label: 'Scaleway Container Registry' },
  GCP_ARTIFACT_REGISTRY: { label: 'Google Artifact Registry' },
  AZURE_CR: { label: 'Azure Container Registry' },
};

/** The labels of the config fields a kind may require (listAvailableContainerRegistry names them); secrets are write-only. */
const CONFIG_FIELDS: Partial<Record<keyof Config, { label: string; secret: boolean }>> = {
  aws_credentials_id: { label: 'AWS credential', secret: false },
  region: { label: 'Region', secret: false },
  scaleway_secret_key: { label: 'Scaleway secret key', secret: true },
  json_credentials: { label: 'Service account JSON key', secret: true },
};

function kindLabel(kind: Kind): string {
  return KIND_NAMES[kind].label;
}

function servicesLabel(count: number): string {
  return count === 1 ? '1 service' : `${count} services`;
}

type Dialog = { kind: 'new' } | { kind: 'edit' | 'images' | 'services' | 'delete'; registry: Registry };

/** Container registries: where containers' images come from; each checked, browsed and edited on demand. */
export function RegistriesSettings() {
  const { organizationId } = route.useParams();
  const registries = api.useQuery('get', REGISTRIES, { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<Dialog | undefined>();
  const checks = useConnectionChecks();
  const check = api.useMutation('post', '/organization/{organizationId}/containerRegistry/{containerRegistryId}/check');
  const list = registries.data?.results ?? [];
  const close = () => setDialog(undefined);
  function run(registry: Registry) {
    return checks.run(registry.id, () => check.mutateAsync({ params: { path: { organizationId, containerRegistryId: registry.id } } }));
  }
  return (
    <>
      <ListSection
        id="registries-heading"
        title="Container registries"
        intro="Containers and jobs run images from these. Passwords and keys are write-only."
        query={registries}
        count={list.length}
        loadingLabel="Loading container registries…"
        create={{ label: 'New registry', onPress: () => setDialog({ kind: 'new' }) }}
        empty={{ title: 'No container registries yet', text: 'Add the registry your images are pushed to; a container service then picks an image from it.' }}
        columns={['Name', 'Registry', 'Used by', 'Connection']}
      >
        {list.map((registry) => (
          <tr key={registry.id}>
            <th scope="row">
              {registry.name}
              {registry.description ? <span className="kind-label">{registry.description}</span> : null}
            </th>
            <td data-label="Registry">
              {kindLabel(registry.kind)}
              <span className="kind-label url">
                {registry.url}
                {registry.config.username === undefined ? '' : ` · as ${registry.config.username}`}
                {registry.config.region === undefined ? '' : ` · ${registry.config.region}`}
              </span>
            </td>
            <td data-label="Used by">
              {registry.associated_services_count === 0 ? (
                <span className="muted">no service</span>
              ) : (
                <Button variant="secondary" onPress={() => setDialog({ kind: 'services', registry })}>
                  {servicesLabel(registry.associated_services_count)}
                  <span className="visually-hidden"> using {registry.name}</span>
                </Button>
              )}
            </td>
            <ConnectionCell state={checks.stateOf(registry.id)} />
            <td className="actions-cell">
              <div className="row-actions">
                <Button variant="secondary" onPress={() => void run(registry)}>
                  Check<span className="visually-hidden"> {registry.name}</span>
                </Button>
                <ActionsMenu
                  label={`Actions for ${registry.name}`}
                  actions={[
                    { id: 'images', label: 'Images…' },
                    { id: 'edit', label: 'Edit…' },
                  ]}
                  onAction={(id) => setDialog({ kind: id as 'images' | 'edit', registry })}
                />
                <Button variant="quiet-danger" aria-label={`Delete ${registry.name}`} onPress={() => setDialog({ kind: 'delete', registry })}>
                  Delete
                </Button>
              </div>
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new' ? <RegistryDialog organizationId={organizationId} onClose={close} /> : null}
      {dialog?.kind === 'edit' ? <RegistryDialog organizationId={organizationId} registry={dialog.registry} onClose={close} /> : null}
      {dialog?.kind === 'images' ? <RegistryImagesDialog organizationId={organizationId} registry={dialog.registry} onClose={close} /> : null}
      {dialog?.kind === 'services' ? <RegistryServicesDialog organizationId={organizationId} registry={dialog.registry} onClose={close} /> : null}
      {dialog?.kind === 'delete' ? <DeleteRegistryDialog organizationId={organizationId} registry={dialog.registry} onClose={close} /> : null}
    </>
  );
}

/**
 * Create, or edit. The kinds offered are the API's (listAvailableContainerRegistry), each with the configuration it
 * requires; a kind requiring none takes an optional user name and password. Secrets are write-only: at an edit, a
 * secret left empty keeps the stored one (the API keeps a secret config field that is left out).
 */
function RegistryDialog({ organizationId, registry, onClose }: { organizationId: string; registry?: Registry; onClose: () => void }) {
  const available = api.useQuery('get', '/availableContainerRegistry');
  const [name, setName] = useState(registry?.name ?? '');
  const [kind, setKind] = useState<Kind>(registry?.kind ?? 'GENERIC_CR');
  const [url, setUrl] = useState(registry?.url ?? '');
  const [description, setDescription] = useState(registry?.description ?? '');
  const [config, setConfig] = useState<Record<string, string>>({ username: registry?.config.username ?? '', region: registry?.config.region ?? '', aws_credentials_id: registry?.config.aws_credentials_id ?? '' });
  const kinds = available.data?.results ?? [];
  const required = Object.entries(kinds.find((entry) => entry.kind === kind)?.required_config ?? {}).map(([key, what]) => ({ key: key as keyof Config, what: String(what) }));
  const awsCredentials = api.useQuery('get', '/organization/{organizationId}/aws/credentials', { params: { path: { organizationId } } }, { enabled: required.some((field) => field.key === 'aws_credentials_id') });
  const done = useRefreshThenClose([REGISTRIES], onClose);
  const create = api.useMutation('post', REGISTRIES, done);
  const edit = api.useMutation('put', '/organization/{organizationId}/containerRegistry/{containerRegistryId}', done);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, registry !== undefined);
  const defaultUrl = KIND_NAMES[kind].defaultUrl;
  const setField = (key: string) => (value: string) => (reset(), setConfig((current) => ({ ...current, [key]: value })));
  const keep = registry === undefined ? '' : ' Leave empty to keep the stored one.';

  function configOf(): Config | undefined {
    const keys: string[] = required.length === 0 ? ['username', 'password'] : required.map((field) => field.key);
    const entries = keys.map((key) => [key, (config[key] ?? '').trim()] as const).filter(([, value]) => value !== '');
    return entries.length === 0 ? undefined : (Object.fromEntries(entries) as Config);
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const settings = configOf();
    const body = {
      name: name.trim(),
      kind,
      description: description.trim() === '' ? null : description.trim(),
      ...(url.trim() === '' ? {} : { url: url.trim() }),
      ...(settings === undefined ? {} : { config: settings }),
    };
    if (registry === undefined) create.mutate({ params: { path: { organizationId } }, body });
    else edit.mutate({ params: { path: { organizationId, containerRegistryId: registry.id } }, body });
  }
  return (
    <ModalDialog title={registry === undefined ? 'New container registry' : `Edit ${registry.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(value) => (reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        {available.isPending ? <Spinner label="Loading the registry kinds…" /> : null}
        <ErrorMessage message={available.isError ? messageOf(available.error) : undefined} />
        <SelectField
          id="registry-kind"
          label="Kind"
          value={kind}
          onChange={(value) => (reset(), setKind(value))}
          options={(kinds.length === 0 ? [{ kind }] : kinds).map((entry) => ({ value: entry.kind, label: kindLabel(entry.kind) }))}
          errorMessage={fields.get('kind')}
        />
        <TextField
          label={defaultUrl === undefined ? 'URL' : 'URL (optional)'}
          value={url}
          onChange={(value) => (reset(), setUrl(value))}
          isRequired={defaultUrl === undefined}
          maxLength={2048}
          placeholder={defaultUrl ?? 'https://registry.example.com'}
          description={defaultUrl === undefined ? undefined : `Empty: ${defaultUrl}.`}
          errorMessage={fields.get('url')}
        />
        <TextField label="Description (optional)" value={description} onChange={(value) => (reset(), setDescription(value))} maxLength={2000} errorMessage={fields.get('description')} />
        {required.length === 0 ? (
          <div className="field-row">
            <TextField label="User name (optional)" value={config.username ?? ''} onChange={setField('username')} maxLength={255} errorMessage={fields.get('config/username')} />
            <TextField
              label="Password or token (optional)"
              type="password"
              value={config.password ?? ''}
              onChange={setField('password')}
              maxLength={4096}
              description={`Both or neither; without them the registry is read anonymously.${keep}`}
              errorMessage={fields.get('config/password')}
            />
          </div>
        ) : (
          <div className="field-row">
            {required.map(({ key, what }) => {
              const field = CONFIG_FIELDS[key] ?? { label: key.replaceAll('_', ' '), secret: false };
              const description = `${what.charAt(0).toUpperCase()}${what.slice(1)}.${field.secret ? keep : ''}`;
              return key === 'aws_credentials_id' ? (
                <SelectField
                  key={key}
                  id="registry-aws-credentials"
                  label={field.label}
                  value={config[key] ?? ''}
                  onChange={setField(key)}
                  options={[{ value: '', label: awsCredentials.isPending ? 'Loading…' : 'Choose a credential' }, ...(awsCredentials.data?.results ?? []).map((credential) => ({ value: credential.id, label: credential.name }))]}
                  description={`${description} Registered under cloud credentials.`}
                  errorMessage={fields.get(`config/${key}`)}
                />
              ) : (
                <TextField
                  key={key}
                  label={field.label}
                  type={field.secret ? 'password' : 'text'}
                  value={config[key] ?? ''}
                  onChange={setField(key)}
                  isRequired={!field.secret || registry === undefined}
                  maxLength={field.secret ? 16384 : 255}
                  description={description}
                  errorMessage={fields.get(`config/${key}`)}
                />
              );
            })}
          </div>
        )}
        <FormActions error={summary} onCancel={onClose} submitLabel={registry === undefined ? 'Add registry' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

/**
 * A registry's images (getContainerVersions): its catalog filtered by a search, or one image's tags when named
 * (registries without a catalog, such as Docker Hub, need the name).
 */
function RegistryImagesDialog({ organizationId, registry, onClose }: { organizationId: string; registry: Registry; onClose: () => void }) {
  const [search, setSearch] = useState('');
  const [imageName, setImageName] = useState('');
  const [asked, setAsked] = useState<{ search: string; imageName: string } | undefined>();
  const images = api.useQuery(
    'get',
    '/organization/{organizationId}/containerRegistry/{containerRegistryId}/images',
    {
      params: {
        path: { organizationId, containerRegistryId: registry.id },
        query: { ...(asked?.imageName ? { image_name: asked.imageName } : {}), ...(asked?.search ? { search: asked.search } : {}) },
      },
    },
    { enabled: asked !== undefined, retry: false },
  );
  function submit(event: FormEvent) {
    event.preventDefault();
    setAsked({ search: search.trim(), imageName: imageName.trim() });
  }
  const results = images.data?.results;
  return (
    <ModalDialog title={`Images of ${registry.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <div className="field-row">
          <TextField label="Search (optional)" value={search} onChange={setSearch} maxLength={255} autoFocus description="Part of an image’s name." />
          <TextField label="Image name (optional)" value={imageName} onChange={setImageName} maxLength={255} placeholder="library/nginx" description="Its tags only; needed where the registry has no catalog." />
        </div>
        <div className="form-actions form-actions-start">
          <Button type="submit" variant="secondary">
            List images
          </Button>
        </div>
      </Form>
      {asked !== undefined && images.isFetching ? <Spinner label="Reading the registry…" /> : null}
      <ErrorMessage message={images.isError ? messageOf(images.error) : undefined} />
      {results === undefined || images.isError ? null : results.length === 0 ? (
        <p className="muted">No image matches.</p>
      ) : (
        <table className="table" aria-label={`Images of ${registry.name}`}>
          <thead>
            <tr>
              <th scope="col">Image</th>
              <th scope="col">Tags</th>
            </tr>
          </thead>
          <tbody>
            {results.map((image) => (
              <tr key={image.image_name}>
                <th scope="row">
                  <code>{image.image_name}</code>
                </th>
                <td data-label="Tags">
                  {image.versions.length === 0 ? (
                    <span className="muted">no tag</span>
                  ) : (
                    <ul className="tag-list">
                      {image.versions.map((version) => (
                        <li key={version}>
                          <code>{version}</code>
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="form-actions">
        <Button onPress={onClose}>Close</Button>
      </div>
    </ModalDialog>
  );
}

function RegistryServicesDialog({ organizationId, registry, onClose }: { organizationId: string; registry: Registry; onClose: () => void }) {
  const services = api.useQuery('get', '/organization/{organizationId}/containerRegistry/{containerRegistryId}/associatedServices', { params: { path: { organizationId, containerRegistryId: registry.id } } });
  return <AssociatedServicesDialog organizationId={organizationId} title={`Services using ${registry.name}`} query={services} onClose={onClose} />;
}

function DeleteRegistryDialog({ organizationId, registry, onClose }: { organizationId: string; registry: Registry; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/containerRegistry/{containerRegistryId}', useRefreshThenClose([REGISTRIES], onClose));
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
