import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, type components } from '../../api/client.ts';
import { Button, CheckboxField, ErrorMessage, ModalDialog, SelectField, StatusChip, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { formErrorsOf } from '../../ui/dialogs.tsx';
import { useLiveInterval } from '../live.ts';
import { configurationOf, EMPTY_CHOICE, PlatformConfigurationFields, type PlatformChoice } from './PlatformConfigurationFields.tsx';

type Bootstrap = components['schemas']['ClusterOperatorBootstrapResponse'];
type Kind = 'LOCAL' | 'SELF_MANAGED';

/**
 * A new cluster, in two kinds:
 * - LOCAL: this host, which the installation's operator allows per organization (the API's 403 says how);
 * - SELF_MANAGED: your own Kubernetes (on AWS) running the Slipway agent. createSelfManagedCluster checks the AWS
 *   credential and stores the platform template's configuration; its answer holds the agent's one-time enrollment
 *   token, so the dialog's second step shows the install commands and waits, polling the agent's status, until the
 *   agent enrolls and heartbeats.
 * MANAGED clusters (Slipway creating the Kubernetes cluster in the cloud account) are not served by the API.
 */
export function NewClusterDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [kind, setKind] = useState<Kind>('LOCAL');
  const [created, setCreated] = useState<{ id: string; name: string; bootstrap: Bootstrap } | undefined>();
  const title = created === undefined ? 'New cluster' : `Install the agent on ${created.name}`;
  return (
    <ModalDialog title={title} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide={created !== undefined || kind === 'SELF_MANAGED'}>
      {created !== undefined ? (
        <AgentInstallStep organizationId={organizationId} clusterId={created.id} bootstrap={created.bootstrap} onClose={onClose} />
      ) : (
        <>
          <SelectField
            id="cluster-kind"
            label="Kind"
            value={kind}
            onChange={setKind}
            options={[
              { value: 'LOCAL', label: 'Local: this host' },
              { value: 'SELF_MANAGED', label: 'Self-managed: your Kubernetes on AWS, with the Slipway agent' },
            ]}
          />
          {kind === 'LOCAL' ? (
            <LocalClusterForm organizationId={organizationId} onClose={onClose} />
          ) : (
            <SelfManagedClusterForm organizationId={organizationId} onClose={onClose} onCreated={setCreated} />
          )}
        </>
      )}
    </ModalDialog>
  );
}

function LocalClusterForm({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [production, setProduction] = useState(false);
  const [deployNow, setDeployNow] = useState(true);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const deploy = api.useMutation('post', '/organization/{organizationId}/cluster/{clusterId}/deploy');
  const create = api.useMutation('post', '/organization/{organizationId}/cluster', {
    onSuccess: async (cluster) => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster'] });
      if (deployNow) await deploy.mutateAsync({ params: { path: { organizationId, clusterId: cluster.id } } }).catch(() => undefined);
      onClose();
      await navigate({ to: '/organization/$organizationId/clusters/$clusterId', params: { organizationId, clusterId: cluster.id } });
    },
  });
  const { fields, summary } = formErrorsOf(create);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({
      params: { path: { organizationId } },
      body: { name: name.trim(), ...(description.trim() === '' ? {} : { description: description.trim() }), region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL', production },
    });
  }
  return (
    <Form onSubmit={submit} className="form">
      <p className="muted">
        A <strong>LOCAL</strong> cluster runs environments as processes on the host Slipway runs on.
      </p>
      <TextField label="Name" value={name} onChange={(value) => (create.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
      <TextField label="Description (optional)" value={description} onChange={setDescription} maxLength={2000} />
      <CheckboxField id="cluster-production" label="Production cluster" checked={production} onChange={setProduction} />
      <CheckboxField id="cluster-deploy" label="Deploy it now" checked={deployNow} onChange={setDeployNow} description="Installs what the cluster needs; environments can be created on it once it is deployed." />
      <ErrorMessage message={summary} />
      <div className="form-actions">
        <Button variant="secondary" onPress={onClose}>
          Cancel
        </Button>
        <Button type="submit">Create cluster</Button>
      </div>
    </Form>
  );
}

/** What the credential list answers that the form reads (the kinds differ in their other fields). */
interface CredentialChoice {
  id: string;
  name: string;
}

function SelfManagedClusterForm({ organizationId, onClose, onCreated }: { organizationId: string; onClose: () => void; onCreated: (created: { id: string; name: string; bootstrap: Bootstrap }) => void }) {
  const path = { params: { path: { organizationId } } };
  const credentials = api.useQuery('get', '/organization/{organizationId}/aws/credentials', path);
  const templates = api.useQuery('get', '/organization/{organizationId}/platformTemplate', path);
  // The regions AWS offers, from the provider catalog: the table self-managed clusters are checked against.
  const regions = api.useQuery('get', '/aws/region');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [region, setRegion] = useState('eu-west-3');
  const [credentialId, setCredentialId] = useState('');
  const [template, setTemplate] = useState('');
  const [production, setProduction] = useState(false);
  const [choice, setChoice] = useState<PlatformChoice>(EMPTY_CHOICE);
  const queryClient = useQueryClient();
  const create = api.useMutation('post', '/v1/organization/{organizationId}/selfManagedCluster', {
    onSuccess: async (cluster) => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster'] });
      onCreated({ id: cluster.id, name: cluster.name, bootstrap: cluster.operator_bootstrap });
    },
  });
  const credentialChoices = ((credentials.data?.results ?? []) as unknown as CredentialChoice[]).map((credential) => ({ value: credential.id, label: credential.name }));
  const published = (templates.data?.results ?? []).filter((entry) => entry.status !== 'DEPRECATED');
  const templateChoices = published.map((entry) => ({ value: `${entry.key}@${entry.version}`, label: `${entry.key} ${entry.version}${entry.status === 'DRAFT' ? ' (draft)' : ''}` }));
  const chosenCredential = credentialId === '' ? (credentialChoices[0]?.value ?? '') : credentialId;
  const chosenTemplate = template === '' ? (templateChoices[0]?.value ?? '') : template;
  const chosenRelease = published.find((entry) => `${entry.key}@${entry.version}` === chosenTemplate);
  const templateDescription = chosenRelease?.description ?? undefined;
  const { fields, summary } = formErrorsOf(create);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending || chosenCredential === '' || chosenRelease === undefined) return;
    create.mutate({
      params: { path: { organizationId } },
      body: {
        name: name.trim(),
        ...(description.trim() === '' ? {} : { description: description.trim() }),
        region: region.trim(),
        cloud_provider: 'AWS',
        cloud_provider_credentials: { cloud_provider: 'AWS', credentials: { id: chosenCredential }, region: region.trim() },
        production,
        platform_configuration: { templateKey: chosenRelease.key, templateVersion: chosenRelease.version, ...configurationOf(chosenRelease, choice) },
      },
    });
  }
  const reset = () => create.reset();
  return (
    <Form onSubmit={submit} className="form">
      <p className="muted">
        A <strong>self-managed</strong> cluster is your own Kubernetes cluster on AWS. Slipway checks the AWS credential, then gives you the agent’s install command: the cluster is ready once the agent
        runs in it and enrolls.
      </p>
      <TextField label="Name" value={name} onChange={(value) => (reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
      <TextField label="Description (optional)" value={description} onChange={(value) => (reset(), setDescription(value))} maxLength={2000} errorMessage={fields.get('description')} />
      <SelectField
        id="cluster-region"
        label="AWS region"
        value={region}
        onChange={(value) => (reset(), setRegion(value))}
        options={(regions.data?.results ?? [{ name: region, city: '', country: '' }]).map((entry) => ({ value: entry.name, label: entry.city === '' ? entry.name : `${entry.name} (${entry.city}, ${entry.country})` }))}
        errorMessage={fields.get('region')}
      />
      <ErrorMessage message={regions.isError ? messageOf(regions.error) : undefined} />
      {credentials.isSuccess && credentialChoices.length === 0 ? (
        <p className="notice">
          This organization has no AWS credential yet. Register one (<code>POST /organization/{'{id}'}/aws/credentials</code>, or <code>slipway</code> on the command line), then come back.
        </p>
      ) : (
        <SelectField id="cluster-credential" label="AWS credential" value={chosenCredential} onChange={(value) => (reset(), setCredentialId(value))} options={credentialChoices} errorMessage={fields.get('cloud_provider_credentials')} />
      )}
      <ErrorMessage message={credentials.isError ? messageOf(credentials.error) : undefined} />
      <SelectField
        id="cluster-template"
        label="Platform template"
        value={chosenTemplate}
        onChange={(value) => (reset(), setChoice(EMPTY_CHOICE), setTemplate(value))}
        options={templateChoices}
        description={templateDescription ?? 'What Slipway installs beside your workloads (ingress, certificates, DNS, metrics), as a versioned template.'}
        errorMessage={fields.get('platform_configuration')}
      />
      <ErrorMessage message={templates.isError ? messageOf(templates.error) : undefined} />
      {chosenRelease === undefined ? null : <PlatformConfigurationFields organizationId={organizationId} template={chosenRelease} choice={choice} onChange={(next) => (reset(), setChoice(next))} />}
      <CheckboxField id="cluster-production" label="Production cluster" checked={production} onChange={setProduction} />
      <ErrorMessage message={summary} />
      <div className="form-actions">
        <Button variant="secondary" onPress={onClose}>
          Cancel
        </Button>
        <Button type="submit" isDisabled={chosenCredential === '' || chosenTemplate === ''}>
          Create cluster
        </Button>
      </div>
    </Form>
  );
}

/**
 * One command to copy: its label and the Copy button on one line, the whole command below at the dialog's full width,
 * wrapped anywhere (a token or a URL is one long word) and grown to its text, so a phone shows all of it and the
 * button stays in reach. A read-only text box rather than a <pre>: where the clipboard is refused, the person selects
 * the text in it and copies it by hand.
 */
function InstallCommand({ id, label, command, copyLabel }: { id: string; label: string; command: string; copyLabel: string }) {
  return (
    <div className="install-command">
      <div className="install-command-head">
        <label htmlFor={id}>{label}</label>
        <CopyButton value={command} label={copyLabel} />
      </div>
      <textarea id={id} readOnly value={command} rows={3} spellCheck={false} className="install-command-text" />
    </div>
  );
}

/**
 * The second step of a self-managed cluster: the agent's install commands with the one-time enrollment token (Helm in
 * the cluster, or `slipway agent` on a host), and the agent's status polled until it enrolls and heartbeats.
 */
function AgentInstallStep({ organizationId, clusterId, bootstrap, onClose }: { organizationId: string; clusterId: string; bootstrap: Bootstrap; onClose: () => void }) {
  const agent = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/agent', { params: { path: { organizationId, clusterId } } }, { refetchInterval: useLiveInterval() });
  const connected = agent.data?.connected === true;
  const agentCommand = `slipway agent --control-plane ${bootstrap.values.controlPlaneUrl} --enrollment-token ${bootstrap.values.enrollmentToken}`;
  return (
    <div className="form">
      <p className="muted">
        The commands hold a one-time enrollment token, valid until {new Date(bootstrap.enrollment_token_expires_at).toLocaleString('en-GB')}. It is shown here once; the cluster’s page can make a new one.
      </p>
      <InstallCommand id="install-helm" label="In the Kubernetes cluster, with Helm" command={bootstrap.helm_command} copyLabel="Copy the Helm command" />
      <InstallCommand id="install-agent" label="Or on a host, with the Slipway CLI" command={agentCommand} copyLabel="Copy the agent command" />
      <div className="agent-wait" aria-live="polite">
        {connected ? (
          <p>
            <StatusChip state="DEPLOYED" label="Connected" /> The agent enrolled{agent.data?.hostname ? ` from ${agent.data.hostname}` : ''}
            {agent.data?.agent_version ? ` (version ${agent.data.agent_version})` : ''}: the cluster is ready.
          </p>
        ) : (
          <p>
            <StatusChip state="QUEUED" label="Waiting for the agent" /> This page turns when the agent enrolls.
          </p>
        )}
      </div>
      <ErrorMessage message={agent.isError ? messageOf(agent.error) : undefined} />
      <div className="form-actions">
        <Button variant="secondary" onPress={onClose}>
          Close
        </Button>
        <Link className="button button-primary" to="/organization/$organizationId/clusters/$clusterId" params={{ organizationId, clusterId }} onClick={onClose}>
          Open the cluster
        </Link>
      </div>
    </div>
  );
}
