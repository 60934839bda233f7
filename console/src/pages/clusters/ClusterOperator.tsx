import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fetchClient, fieldErrorsOf, messageOf, summaryOf, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import { Button, CheckboxField, ErrorMessage, RelativeTime, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { useLiveInterval } from '../live.ts';
import { ClusterCard, SaveFoot } from './ClusterCard.tsx';

type Cluster = components['schemas']['Cluster'];
type OperatorStatus = components['schemas']['ClusterOperatorFleetStatus'];

const STATUS: Record<OperatorStatus, { chip: string; label: string }> = {
  NOT_ATTACHED: { chip: 'READY', label: 'Not attached' },
  DISCONNECTED: { chip: 'DEPLOYMENT_ERROR', label: 'Disconnected' },
  TARGET_UNKNOWN: { chip: 'QUEUED', label: 'Target unknown' },
  REPORTED_VERSION_UNKNOWN: { chip: 'QUEUED', label: 'Version not reported' },
  CURRENT: { chip: 'DEPLOYED', label: 'Current' },
  OUTDATED_IMAGE: { chip: 'QUEUED', label: 'Outdated image' },
  OUTDATED_CHART: { chip: 'QUEUED', label: 'Outdated chart' },
  OUTDATED_IMAGE_AND_CHART: { chip: 'QUEUED', label: 'Outdated image and chart' },
};

/** The cluster's operator (its agent: attached, connected, its versions and the target ones) and a self-managed cluster's kubeconfig. */
export function ClusterOperator({ organizationId, cluster }: { organizationId: string; cluster: Cluster }) {
  return (
    <div className="cluster-tab">
      <Operator organizationId={organizationId} cluster={cluster} />
      {cluster.kubernetes === 'SELF_MANAGED' ? <Kubeconfig organizationId={organizationId} cluster={cluster} /> : null}
    </div>
  );
}

function Operator({ organizationId, cluster }: { organizationId: string; cluster: Cluster }) {
  const path = { params: { path: { organizationId, clusterId: cluster.id } } };
  const status = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/operator/status', path, { refetchInterval: useLiveInterval() });
  const permissions = useOrganizationPermissions(organizationId);
  const noteId = useId();
  const readOnly = !permissions.can('admin');
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/operator/status'] });
  const attach = api.useMutation('post', '/organization/{organizationId}/cluster/{clusterId}/operator/attach', { onSuccess: refresh });
  const [chart, setChart] = useState('');
  const [image, setImage] = useState('');
  const update = api.useMutation('post', '/organization/{organizationId}/cluster/{clusterId}/operator/update', { onSuccess: refresh });
  const fields = fieldErrorsOf(update.error);
  const data = status.data;
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!update.isPending) update.mutate({ ...path, body: { chart_version: chart.trim(), image_version: image.trim() === '' ? null : image.trim() } });
  }
  return (
    <ClusterCard id="operator" title="Operator" intro="The cluster’s agent, which carries Slipway’s work out in it. Slipway does not upgrade a self-managed cluster’s agent itself: after an update, run the install command with the new version; the status reads Current once the agent reports it.">
      <PermissionNote id={noteId} reason={permissions.reason('admin')} />
      {status.isPending ? <Spinner label="Loading the operator’s status…" /> : null}
      <ErrorMessage message={status.isError ? messageOf(status.error) : undefined} />
      {data === undefined ? null : (
        <dl className="facts" aria-live="polite">
          <div>
            <dt>Status</dt>
            <dd>
              <StatusChip state={STATUS[data.status].chip} label={STATUS[data.status].label} />
            </dd>
          </div>
          <div>
            <dt>Connected</dt>
            <dd>{data.operator_connected ? 'Yes' : 'No'}</dd>
          </div>
          <div>
            <dt>Last heartbeat</dt>
            <dd>
              <RelativeTime at={data.last_heartbeat} />
            </dd>
          </div>
          <div>
            <dt>Running version</dt>
            <dd>{data.operator_version ?? <span className="muted">not reported</span>}</dd>
          </div>
          <div>
            <dt>Target image</dt>
            <dd>{data.desired_image_version ?? <span className="muted">unknown</span>}</dd>
          </div>
          <div>
            <dt>Target chart</dt>
            <dd>{data.desired_chart_version ?? <span className="muted">unknown</span>}</dd>
          </div>
          <div>
            <dt>Protocol</dt>
            <dd>{data.request_schema_version ?? <span className="muted">unknown</span>}</dd>
          </div>
        </dl>
      )}
      {data?.status !== 'NOT_ATTACHED' ? null : (
        <div className="form-actions form-actions-start">
          <Button variant="secondary" onPress={() => attach.mutate(path)} isDisabled={readOnly} aria-describedby={readOnly ? noteId : undefined}>
            Attach the operator
          </Button>
        </div>
      )}
      <ErrorMessage message={attach.isError ? messageOf(attach.error) : undefined} />
      {data === undefined || data.status === 'NOT_ATTACHED' ? null : (
        <Form className="form" onSubmit={submit}>
          <h3 className="subsection-title">Update the operator</h3>
          <TextField label="Chart version" value={chart} onChange={(value) => (update.reset(), setChart(value))} isRequired maxLength={128} placeholder={data.desired_chart_version ?? ''} errorMessage={fields.get('chart_version')} />
          <TextField label="Image version (optional)" value={image} onChange={(value) => (update.reset(), setImage(value))} maxLength={128} description="Empty: the control plane’s own version." errorMessage={fields.get('image_version')} />
          {update.data === undefined ? null : (
            <p role="status">
              Update to chart {update.data.chart_version}, image {update.data.image_version} recorded (execution {update.data.execution_id}).
            </p>
          )}
          <SaveFoot label="Record the update" error={update.error} fieldCount={fields.size} saved={false} disabled={readOnly} noteId={readOnly ? noteId : undefined} />
        </Form>
      )}
    </ClusterCard>
  );
}

/**
 * The kubeconfig Slipway keeps for a self-managed cluster (sealed; every read is audited): shown on request, either
 * whole or without credentials (kubectl then asks Slipway for a token with the person's API token), and replaced.
 */
function Kubeconfig({ organizationId, cluster }: { organizationId: string; cluster: Cluster }) {
  const path = { path: { organizationId, clusterId: cluster.id } };
  const permissions = useOrganizationPermissions(organizationId);
  const noteId = useId();
  const readOnly = !permissions.can('admin');
  const [withoutCredentials, setWithoutCredentials] = useState(true);
  const [shown, setShown] = useState<string | undefined>();
  const [editing, setEditing] = useState(false);
  const [yaml, setYaml] = useState('');
  const read = useMutation({
    mutationFn: async () => {
      const { data, error } = await fetchClient.GET('/organization/{organizationId}/cluster/{clusterId}/kubeconfig', { params: { ...path, query: { with_token_from_cli: withoutCredentials } }, parseAs: 'text' });
      if (error !== undefined) throw error;
      return data as unknown as string;
    },
    onSuccess: setShown,
  });
  const save = useMutation({
    mutationFn: async () => {
      const { error } = await fetchClient.PUT('/organization/{organizationId}/cluster/{clusterId}/kubeconfig', { params: path, body: yaml, bodySerializer: (body) => body, headers: { 'content-type': 'application/x-yaml' } });
      if (error !== undefined) throw error;
    },
    onSuccess: () => (setEditing(false), setShown(undefined), setYaml('')),
  });
  const fields = fieldErrorsOf(save.error);
  const notGiven = read.error !== null && typeof read.error === 'object' && 'status' in read.error && read.error.status === 404;
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!save.isPending) save.mutate();
  }
  return (
    <ClusterCard id="kubeconfig" title="Kubeconfig" intro="The cluster’s key, kept sealed. Reading it needs the Admin role and is recorded in the audit log.">
      <PermissionNote id={noteId} reason={permissions.reason('admin')} />
      {editing ? (
        <Form className="form" onSubmit={submit}>
          <div className="field">
            <label htmlFor="kubeconfig-yaml">Kubeconfig (YAML)</label>
            <textarea id="kubeconfig-yaml" className="code-block" rows={12} value={yaml} onChange={(event) => (save.reset(), setYaml(event.target.value))} spellCheck={false} required aria-invalid={save.isError ? true : undefined} aria-describedby={save.isError ? 'kubeconfig-yaml-error' : undefined} />
            {save.isError ? (
              <span id="kubeconfig-yaml-error" className="field-error">
                {fields.size === 0
                  ? summaryOf(save.error)
                  : [...fields]
                      .map(([field, message]) => `${field}: ${message}`)
                      .join('; ')}
              </span>
            ) : null}
          </div>
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => (save.reset(), setEditing(false))}>
              Cancel
            </Button>
            <Button type="submit" isDisabled={readOnly || yaml.trim() === ''}>
              Save the kubeconfig
            </Button>
          </div>
        </Form>
      ) : (
        <>
          <CheckboxField id="kubeconfig-without-credentials" label="Without credentials" checked={withoutCredentials} onChange={(checked) => (setWithoutCredentials(checked), setShown(undefined))} description="Each user runs curl with $SLIPWAY_API_TOKEN to get a 10-minute token from Slipway: the file holds no secret." />
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => read.mutate()} isDisabled={readOnly} aria-describedby={readOnly ? noteId : undefined}>
              Show the kubeconfig
            </Button>
            <Button variant="secondary" onPress={() => (save.reset(), setEditing(true))} isDisabled={readOnly} aria-describedby={readOnly ? noteId : undefined}>
              Replace the kubeconfig…
            </Button>
            <span role="status" className="saved-note">
              {save.isSuccess ? 'Saved.' : ''}
            </span>
          </div>
          {notGiven ? <p className="muted">No kubeconfig has been given for this cluster yet.</p> : <ErrorMessage message={read.isError ? messageOf(read.error) : undefined} />}
          {shown === undefined ? null : (
            <div className="secret-value">
              <label htmlFor="kubeconfig-shown">Kubeconfig{withoutCredentials ? ' (without credentials)' : ''}</label>
              <div className="secret-value-row">
                <textarea id="kubeconfig-shown" readOnly value={shown} rows={10} spellCheck={false} className="code-block" />
                <CopyButton value={shown} label="Copy the kubeconfig" />
              </div>
              <div className="form-actions form-actions-start">
                <a className="button button-secondary" href={`data:application/x-yaml;charset=utf-8,${encodeURIComponent(shown)}`} download={`${cluster.name}-kubeconfig.yaml`}>
                  Download
                </a>
                <Button variant="secondary" onPress={() => setShown(undefined)}>
                  Hide
                </Button>
              </div>
            </div>
          )}
        </>
      )}
    </ClusterCard>
  );
}
