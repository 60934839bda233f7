import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, type components } from '../../api/client.ts';
import { Button, ModalDialog, SelectField, TextField } from '../../ui/controls.tsx';
import { DeleteByNameDialog, FormActions, formErrorsOf, type MutationState } from '../../ui/dialogs.tsx';
import { ListSection } from '../../ui/ListSection.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Credential = components['schemas']['ClusterCredentials'];

/** One way to give Slipway access to a cloud account: the API path of its provider, the body's `type`, its fields. */
interface CredentialKind {
  value: string;
  label: string;
  /** The provider's path segment: `/organization/{id}/<provider>/credentials`. */
  provider: 'aws' | 'gcp' | 'azure' | 'scaleway' | 'onPremise';
  /** The `object_type` the API answers for a credential of this kind. */
  objectType: Credential['object_type'];
  /** Extra fields of the body that say which kind it is. */
  marker: Record<string, string>;
  fields: readonly CredentialField[];
}
interface CredentialField {
  key: string;
  label: string;
  secret?: boolean;
  optional?: boolean;
  multiline?: boolean;
  description?: string;
}

const KINDS: readonly CredentialKind[] = [
  {
    value: 'AWS_STATIC',
    label: 'AWS: access key',
    provider: 'aws',
    objectType: 'AWS',
    marker: { type: 'AWS_STATIC' },
    fields: [
      { key: 'access_key_id', label: 'Access key ID' },
      { key: 'secret_access_key', label: 'Secret access key', secret: true },
    ],
  },
  { value: 'AWS_ROLE', label: 'AWS: role to assume', provider: 'aws', objectType: 'AWS_ROLE', marker: { type: 'AWS_ROLE' }, fields: [{ key: 'role_arn', label: 'Role ARN', description: 'arn:aws:iam::<account>:role/<name>' }] },
  {
    value: 'GCP_KEY',
    label: 'GCP: service account key',
    provider: 'gcp',
    objectType: 'GCP',
    marker: { credential_type: 'SERVICE_ACCOUNT_KEY' },
    fields: [{ key: 'gcp_credentials', label: 'Service account key (JSON)', secret: true, multiline: true }],
  },
  {
    value: 'GCP_WIF',
    label: 'GCP: workload identity federation',
    provider: 'gcp',
    objectType: 'GCP_WORKLOAD_IDENTITY_FEDERATION',
    marker: { credential_type: 'WORKLOAD_IDENTITY_FEDERATION' },
    fields: [
      { key: 'service_account_email', label: 'Service account e-mail' },
      { key: 'workload_identity_provider_resource', label: 'Workload identity provider', description: 'projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>' },
    ],
  },
  {
    value: 'AZURE',
    label: 'Azure',
    provider: 'azure',
    objectType: 'AZURE',
    marker: {},
    fields: [
      { key: 'azure_subscription_id', label: 'Subscription ID' },
      { key: 'azure_tenant_id', label: 'Tenant ID' },
      { key: 'azure_application_id', label: 'Application (client) ID', optional: true },
      { key: 'azure_application_object_id', label: 'Application object ID', optional: true },
      { key: 'azure_client_secret', label: 'Client secret', secret: true, optional: true, description: 'Needs the application ID.' },
    ],
  },
  {
    value: 'SCW',
    label: 'Scaleway',
    provider: 'scaleway',
    objectType: 'SCW',
    marker: {},
    fields: [
      { key: 'scaleway_access_key', label: 'Access key' },
      { key: 'scaleway_secret_key', label: 'Secret key', secret: true },
      { key: 'scaleway_project_id', label: 'Project ID' },
      { key: 'scaleway_organization_id', label: 'Organization ID' },
    ],
  },
  { value: 'ON_PREMISE', label: 'On premise (a name only)', provider: 'onPremise', objectType: 'OTHER', marker: {}, fields: [] },
];

function kindOf(credential: Credential): CredentialKind | undefined {
  return KINDS.find((kind) => kind.objectType === credential.object_type);
}

/** What the list shows of a credential: its public identifiers, never a secret (the API answers none). */
function summaryOf(credential: Credential): string {
  const values = credential as unknown as Record<string, unknown>;
  const shown = ['access_key_id', 'role_arn', 'service_account_email', 'azure_subscription_id', 'scaleway_access_key', 'scaleway_project_id'];
  return shown
    .map((key) => values[key])
    .filter((value): value is string => typeof value === 'string' && value !== '')
    .join(' · ');
}

const LIST_KEYS = ['/organization/{organizationId}/credentials'] as const;

/**
 * Cloud credentials: what Slipway uses to reach an organization's cloud accounts (managed clusters, ECR registries),
 * per provider. Secrets are write-only: the API never answers them, and an edit replaces the credential, so the
 * secret is typed again.
 */
export function CloudCredentialsSettings() {
  const { organizationId } = route.useParams();
  const credentials = api.useQuery('get', '/organization/{organizationId}/credentials', { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'edit' | 'delete'; credential: Credential } | undefined>();
  const list = credentials.data?.results ?? [];
  return (
    <>
      <ListSection
        id="cloud-credentials-heading"
        title="Cloud credentials"
        intro="Access to your cloud accounts, for managed clusters and cloud registries. Secrets are stored encrypted and never shown again."
        query={credentials}
        count={list.length}
        loadingLabel="Loading cloud credentials…"
        create={{ label: 'New credentials', onPress: () => setDialog({ kind: 'new' }) }}
        empty={{ title: 'No cloud credentials yet', text: 'Add the credentials of an AWS, GCP, Azure or Scaleway account before creating a managed cluster on it.' }}
        columns={['Name', 'Provider', 'Clusters']}
      >
        {list.map(({ credential, clusters }) => (
          <tr key={credential.id}>
            <th scope="row">
              {credential.name}
              <span className="kind-label">{summaryOf(credential)}</span>
            </th>
            <td data-label="Provider">{kindOf(credential)?.label ?? credential.object_type}</td>
            <td data-label="Clusters">{clusters.length === 0 ? <span className="muted">none</span> : clusters.map((cluster) => cluster.name).join(', ')}</td>
            <td className="actions-cell">
              <div className="row-actions">
                {kindOf(credential) === undefined ? null : (
                  <Button variant="secondary" onPress={() => setDialog({ kind: 'edit', credential })}>
                    Edit<span className="visually-hidden"> {credential.name}</span>
                  </Button>
                )}
                <Button variant="quiet-danger" aria-label={`Delete ${credential.name}`} onPress={() => setDialog({ kind: 'delete', credential })}>
                  Delete
                </Button>
              </div>
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new' ? <CredentialDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit' ? <CredentialDialog organizationId={organizationId} credential={dialog.credential} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeleteCredentialDialog organizationId={organizationId} credential={dialog.credential} onClose={() => setDialog(undefined)} /> : null}
    </>
  );
}

/** The provider paths are chosen at run time, so requests go through `apiRequest`; the list is refreshed after each. */
function useCredentialRequest(onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ method, path, body }: { method: 'POST' | 'PUT' | 'DELETE'; path: string; body?: unknown }) => apiRequest<unknown>(method, path, body),
    onSuccess: async () => {
      await Promise.all(LIST_KEYS.map((key) => queryClient.invalidateQueries({ queryKey: ['get', key] })));
      onDone();
    },
  });
}

function CredentialDialog({ organizationId, credential, onClose }: { organizationId: string; credential?: Credential; onClose: () => void }) {
  const editing = credential === undefined ? undefined : kindOf(credential);
  const [kindValue, setKindValue] = useState(editing?.value ?? KINDS[0]?.value ?? '');
  const kind = KINDS.find((entry) => entry.value === kindValue) ?? KINDS[0];
  const stored = (credential ?? {}) as unknown as Record<string, unknown>;
  const [name, setName] = useState(credential?.name ?? '');
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(KINDS.flatMap((entry) => entry.fields).map((field) => [field.key, field.secret === true || typeof stored[field.key] !== 'string' ? '' : (stored[field.key] as string)])),
  );
  const request = useCredentialRequest(onClose);
  const { fields, summary } = formErrorsOf(request);
  if (kind === undefined) return null;
  function submit(event: FormEvent) {
    event.preventDefault();
    if (request.isPending || kind === undefined) return;
    const body: Record<string, string> = { ...kind.marker, name: name.trim() };
    for (const field of kind.fields) {
      const value = field.multiline === true ? (values[field.key] ?? '') : (values[field.key] ?? '').trim();
      if (value !== '') body[field.key] = value;
    }
    const base = `/organization/${organizationId}/${kind.provider}/credentials`;
    request.mutate(credential === undefined ? { method: 'POST', path: base, body } : { method: 'PUT', path: `${base}/${credential.id}`, body });
  }
  return (
    <ModalDialog title={credential === undefined ? 'New cloud credentials' : `Edit ${credential.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        {credential === undefined ? (
          <SelectField id="credential-kind" label="Provider" value={kindValue} onChange={(value) => (request.reset(), setKindValue(value))} options={KINDS.map(({ value, label }) => ({ value, label }))} />
        ) : (
          <p className="muted">
            {kind.label}. Saving replaces the stored credentials{kind.fields.some((field) => field.secret === true) ? ': type the secret again (it is never shown)' : ''}.
          </p>
        )}
        <TextField label="Name" value={name} onChange={(value) => (request.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        {kind.fields.map((field) =>
          field.multiline === true ? (
            <div className="field" key={`${kind.value}-${field.key}`}>
              <label htmlFor={`credential-${field.key}`}>{field.label}</label>
              <textarea
                id={`credential-${field.key}`}
                className="code-input"
                rows={6}
                value={values[field.key] ?? ''}
                onChange={(event) => (request.reset(), setValues((current) => ({ ...current, [field.key]: event.target.value })))}
                required={field.optional !== true}
                spellCheck={false}
                autoComplete="off"
                aria-invalid={fields.has(field.key) ? true : undefined}
                aria-describedby={fields.has(field.key) ? `credential-${field.key}-error` : undefined}
              />
              {fields.has(field.key) ? (
                <span id={`credential-${field.key}-error`} className="field-error">
                  {fields.get(field.key)}
                </span>
              ) : null}
            </div>
          ) : (
            <TextField
              key={`${kind.value}-${field.key}`}
              label={field.optional === true ? `${field.label} (optional)` : field.label}
              type={field.secret === true ? 'password' : 'text'}
              value={values[field.key] ?? ''}
              onChange={(value) => (request.reset(), setValues((current) => ({ ...current, [field.key]: value })))}
              isRequired={field.optional !== true}
              description={field.secret === true && credential !== undefined && field.optional === true ? 'Left empty, the credentials are saved without it.' : field.description}
              errorMessage={fields.get(field.key)}
            />
          ),
        )}
        <FormActions error={summary} onCancel={onClose} submitLabel={credential === undefined ? 'Add credentials' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

function DeleteCredentialDialog({ organizationId, credential, onClose }: { organizationId: string; credential: Credential; onClose: () => void }) {
  const request = useCredentialRequest(onClose);
  const provider = kindOf(credential)?.provider ?? 'onPremise';
  return (
    <DeleteByNameDialog
      name={credential.name}
      explanation="Slipway can no longer reach this account. Credentials that clusters or registries still use are not deleted."
      confirmLabel="Delete credentials"
      mutation={request as MutationState}
      onConfirm={() => request.mutate({ method: 'DELETE', path: `/organization/${organizationId}/${provider}/credentials/${credential.id}` })}
      onClose={onClose}
    />
  );
}
