import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { ConnectionCell, useConnectionChecks } from '../../ui/ConnectionCheck.tsx';
import { ActionsMenu, Button, CheckboxField, ErrorMessage, ModalDialog, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';
import { AssociatedServicesDialog } from './AssociatedServicesDialog.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type HelmRepository = components['schemas']['HelmRepositoryResponse'];
type Kind = components['schemas']['HelmRepositoryKindEnum'];
type Config = components['schemas']['HelmRepositoryRequestConfig'];

const HELM_REPOSITORIES = '/organization/{organizationId}/helmRepository' as const;

/** Every kind the API takes, with the credentials each asks for and the URL it proposes. */
const KINDS: readonly { value: Kind; label: string; credentials: 'basic' | 'aws' | 'scaleway' | 'none'; placeholder: string }[] = [
  { value: 'HTTPS', label: 'HTTPS chart repository', credentials: 'basic', placeholder: 'https://charts.example.com' },
  { value: 'OCI_GENERIC_CR', label: 'Any OCI registry', credentials: 'basic', placeholder: 'oci://registry.example.com/charts' },
  { value: 'OCI_DOCKER_HUB', label: 'Docker Hub (OCI)', credentials: 'basic', placeholder: 'oci://registry-1.docker.io/bitnamicharts' },
  { value: 'OCI_GITHUB_CR', label: 'GitHub Container Registry (OCI)', credentials: 'basic', placeholder: 'oci://ghcr.io/owner' },
  { value: 'OCI_GITLAB_CR', label: 'GitLab Container Registry (OCI)', credentials: 'basic', placeholder: 'oci://registry.gitlab.com/group' },
  { value: 'OCI_PUBLIC_ECR', label: 'Amazon ECR Public (OCI)', credentials: 'none', placeholder: 'oci://public.ecr.aws/namespace' },
  { value: 'OCI_ECR', label: 'Amazon ECR (OCI, with an AWS credential)', credentials: 'aws', placeholder: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com' },
  { value: 'OCI_SCALEWAY_CR', label: 'Scaleway Container Registry (OCI)', credentials: 'scaleway', placeholder: 'oci://rg.fr-par.scw.cloud/namespace' },
];

function kindOf(kind: Kind) {
  return KINDS.find((entry) => entry.value === kind);
}

/** Helm repositories: where Helm services' charts come from; each checked against the repository on demand. */
export function HelmRepositoriesSettings() {
  const { organizationId } = route.useParams();
  const repositories = api.useQuery('get', HELM_REPOSITORIES, { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'edit' | 'services' | 'delete'; repository: HelmRepository } | undefined>();
  const checks = useConnectionChecks();
  const check = api.useMutation('post', '/organization/{organizationId}/helmRepository/{helmRepositoryId}/check');
  const list = repositories.data?.results ?? [];
  function run(repository: HelmRepository) {
    return checks.run(repository.id, () => check.mutateAsync({ params: { path: { organizationId, helmRepositoryId: repository.id } } }));
  }
  return (
    <>
      <ListSection
        id="helm-repositories-heading"
        title="Helm repositories"
        intro="Helm services install charts from these: HTTPS chart repositories or OCI registries. Passwords and keys are write-only."
        query={repositories}
        count={list.length}
        loadingLabel="Loading Helm repositories…"
        create={{ label: 'New Helm repository', onPress: () => setDialog({ kind: 'new' }) }}
        empty={{ title: 'No Helm repositories yet', text: 'Add the repository your charts are published to; a Helm service then picks a chart and version from it.' }}
        columns={['Name', 'Repository', 'Connection']}
      >
        {list.map((repository) => (
          <tr key={repository.id}>
            <th scope="row">
              {repository.name}
              <span className="kind-label">
                {repository.associated_services_count === 1 ? '1 service' : `${repository.associated_services_count} services`}
                {repository.description ? ` · ${repository.description}` : ''}
              </span>
            </th>
            <td data-label="Repository">
              {kindOf(repository.kind)?.label ?? repository.kind}
              <span className="kind-label url">
                {repository.url}
                {repository.config.username === undefined ? '' : ` · as ${repository.config.username}`}
                {repository.skip_tls_verification ? ' · TLS not verified' : ''}
              </span>
            </td>
            <ConnectionCell state={checks.stateOf(repository.id)} />
            <td className="actions-cell">
              <Button variant="secondary" onPress={() => void run(repository)}>
                Check<span className="visually-hidden"> {repository.name}</span>
              </Button>{' '}
              <ActionsMenu
                label={`Actions for ${repository.name}`}
                actions={[
                  { id: 'services', label: 'Services using it…' },
                  { id: 'edit', label: 'Edit…' },
                  { id: 'delete', label: 'Delete…', danger: true },
                ]}
                onAction={(id) => setDialog({ kind: id as 'services' | 'edit' | 'delete', repository })}
              />
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new' ? <HelmRepositoryDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit' ? <HelmRepositoryDialog organizationId={organizationId} repository={dialog.repository} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'services' ? <HelmRepositoryServicesDialog organizationId={organizationId} repository={dialog.repository} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeleteHelmRepositoryDialog organizationId={organizationId} repository={dialog.repository} onClose={() => setDialog(undefined)} /> : null}
    </>
  );
}

/**
 * Create, or edit. Secrets are write-only: at an edit, a secret left empty keeps the stored one (the API keeps a
 * secret config field that is left out), while the non-secret fields are sent as shown.
 */
function HelmRepositoryDialog({ organizationId, repository, onClose }: { organizationId: string; repository?: HelmRepository; onClose: () => void }) {
  const [name, setName] = useState(repository?.name ?? '');
  const [kind, setKind] = useState<Kind>(repository?.kind ?? 'HTTPS');
  const [url, setUrl] = useState(repository?.url ?? '');
  const [description, setDescription] = useState(repository?.description ?? '');
  const [skipTls, setSkipTls] = useState(repository?.skip_tls_verification ?? false);
  const [username, setUsername] = useState(repository?.config.username ?? '');
  const [password, setPassword] = useState('');
  const [region, setRegion] = useState(repository?.config.region ?? '');
  const [awsCredentialsId, setAwsCredentialsId] = useState(repository?.config.aws_credentials_id ?? '');
  const [scalewayAccessKey, setScalewayAccessKey] = useState(repository?.config.scaleway_access_key ?? '');
  const [scalewaySecretKey, setScalewaySecretKey] = useState('');
  const [scalewayProjectId, setScalewayProjectId] = useState(repository?.config.scaleway_project_id ?? '');
  const available = api.useQuery('get', '/availableHelmRepository');
  const offered = available.data?.results ?? [];
  const required = offered.find((entry) => entry.kind === kind)?.required_config ?? {};
  const requiredSentence = Object.values(required).map(String).join('; ');
  const credentials = kindOf(kind)?.credentials ?? 'basic';
  const awsCredentials = api.useQuery('get', '/organization/{organizationId}/aws/credentials', { params: { path: { organizationId } } }, { enabled: credentials === 'aws' });
  const done = useRefreshThenClose([HELM_REPOSITORIES], onClose);
  const create = api.useMutation('post', HELM_REPOSITORIES, done);
  const edit = api.useMutation('put', '/organization/{organizationId}/helmRepository/{helmRepositoryId}', done);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, repository !== undefined);
  function configOf(): Config | undefined {
    const filled = (entries: Record<string, string>) => Object.fromEntries(Object.entries(entries).filter(([, value]) => value.trim() !== '').map(([key, value]) => [key, value.trim()]));
    const config: Config =
      credentials === 'basic'
        ? filled({ username, password })
        : credentials === 'aws'
          ? filled({ region, aws_credentials_id: awsCredentialsId })
          : credentials === 'scaleway'
            ? filled({ region, scaleway_access_key: scalewayAccessKey, scaleway_secret_key: scalewaySecretKey, scaleway_project_id: scalewayProjectId })
            : {};
    return Object.keys(config).length === 0 ? undefined : config;
  }
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const config = configOf();
    const body = {
      name: name.trim(),
      kind,
      url: url.trim(),
      description: description.trim() === '' ? null : description.trim(),
      skip_tls_verification: skipTls,
      ...(config === undefined ? {} : { config }),
    };
    if (repository === undefined) create.mutate({ params: { path: { organizationId } }, body });
    else edit.mutate({ params: { path: { organizationId, helmRepositoryId: repository.id } }, body });
  }
  const keep = repository === undefined ? '' : ' Leave empty to keep the stored one.';
  return (
    <ModalDialog title={repository === undefined ? 'New Helm repository' : `Edit ${repository.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(next) => (reset(), setName(next))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        {available.isPending ? <Spinner label="Loading the repository kinds…" /> : null}
        <ErrorMessage message={available.isError ? messageOf(available.error) : undefined} />
        <SelectField
          id="helm-repository-kind"
          label="Kind"
          value={kind}
          onChange={(next) => (reset(), setKind(next))}
          options={KINDS.filter((entry) => entry.value === kind || offered.some((candidate) => candidate.kind === entry.value))}
          description={requiredSentence === '' ? undefined : `Requires ${requiredSentence}.`}
          errorMessage={fields.get('kind')}
        />
        <TextField label="URL" value={url} onChange={(next) => (reset(), setUrl(next))} isRequired maxLength={2048} placeholder={kindOf(kind)?.placeholder} errorMessage={fields.get('url')} />
        <TextField label="Description (optional)" value={description} onChange={(next) => (reset(), setDescription(next))} maxLength={2000} errorMessage={fields.get('description')} />
        {credentials === 'basic' ? (
          <div className="field-row">
            <TextField label="User name (optional)" value={username} onChange={(next) => (reset(), setUsername(next))} maxLength={255} errorMessage={fields.get('config/username')} />
            <TextField label="Password or token (optional)" type="password" value={password} onChange={(next) => (reset(), setPassword(next))} maxLength={4096} description={`Without them the repository is read anonymously.${keep}`} errorMessage={fields.get('config/password')} />
          </div>
        ) : null}
        {credentials === 'aws' ? (
          <div className="field-row">
            <TextField label="Region" value={region} onChange={(next) => (reset(), setRegion(next))} isRequired maxLength={64} placeholder="eu-west-1" errorMessage={fields.get('config/region')} />
            <SelectField
              id="helm-repository-aws-credentials"
              label="AWS credential"
              value={awsCredentialsId}
              onChange={(next) => (reset(), setAwsCredentialsId(next))}
              options={[{ value: '', label: awsCredentials.isPending ? 'Loading…' : 'Choose a credential' }, ...(awsCredentials.data?.results ?? []).map((credential) => ({ value: credential.id, label: credential.name }))]}
              description="Registered under cloud credentials."
              errorMessage={fields.get('config/aws_credentials_id')}
            />
          </div>
        ) : null}
        {credentials === 'scaleway' ? (
          <div className="field-row">
            <TextField label="Region" value={region} onChange={(next) => (reset(), setRegion(next))} isRequired maxLength={64} placeholder="fr-par" errorMessage={fields.get('config/region')} />
            <TextField label="Project id" value={scalewayProjectId} onChange={(next) => (reset(), setScalewayProjectId(next))} maxLength={255} errorMessage={fields.get('config/scaleway_project_id')} />
            <TextField label="Access key" value={scalewayAccessKey} onChange={(next) => (reset(), setScalewayAccessKey(next))} maxLength={255} errorMessage={fields.get('config/scaleway_access_key')} />
            <TextField label="Secret key" type="password" value={scalewaySecretKey} onChange={(next) => (reset(), setScalewaySecretKey(next))} maxLength={4096} description={keep === '' ? undefined : keep.trim()} errorMessage={fields.get('config/scaleway_secret_key')} />
          </div>
        ) : null}
        <CheckboxField id="helm-repository-skip-tls" label="Skip TLS verification" checked={skipTls} onChange={(next) => (reset(), setSkipTls(next))} description="Only for a repository with a self-signed certificate you trust." />
        <FormActions error={summary} onCancel={onClose} submitLabel={repository === undefined ? 'Add Helm repository' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

function HelmRepositoryServicesDialog({ organizationId, repository, onClose }: { organizationId: string; repository: HelmRepository; onClose: () => void }) {
  const services = api.useQuery('get', '/organization/{organizationId}/helmRepository/{helmRepositoryId}/associatedServices', { params: { path: { organizationId, helmRepositoryId: repository.id } } });
  return <AssociatedServicesDialog organizationId={organizationId} title={`Services using ${repository.name}`} query={services} onClose={onClose} />;
}

function DeleteHelmRepositoryDialog({ organizationId, repository, onClose }: { organizationId: string; repository: HelmRepository; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/helmRepository/{helmRepositoryId}', useRefreshThenClose([HELM_REPOSITORIES], onClose));
  return (
    <DeleteByNameDialog
      name={repository.name}
      explanation="Slipway forgets the repository and its credentials. The API refuses while Helm services still use it."
      confirmLabel="Delete Helm repository"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, helmRepositoryId: repository.id } } })}
      onClose={onClose}
    />
  );
}
