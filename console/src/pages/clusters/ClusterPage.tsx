import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { lazy, Suspense, useEffect, useState, type FormEvent } from 'react';
import { Form, Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, messageOf, summaryOf, type components, type paths } from '../../api/client.ts';
import { Breadcrumbs, Button, ErrorMessage, ModalDialog, RelativeTime, SelectField, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { useLiveInterval } from '../live.ts';
import type { ClusterTab } from '../../router.tsx';
import { kindLabel, providerLabel } from './cluster-labels.ts';
import { ClusterAnalyses } from './ClusterAnalyses.tsx';
import { ClusterEnvironments, ClusterEvents, ClusterLogs } from './ClusterInsight.tsx';
import { ClusterNetwork } from './ClusterNetwork.tsx';
import { ClusterOperator } from './ClusterOperator.tsx';
import { ClusterPlatform } from './ClusterPlatform.tsx';

// The settings reuse the service settings' advanced settings form: a chunk of their own, loaded when the tab is opened.
const ClusterSettings = lazy(() => import('./ClusterSettings.tsx').then((module) => ({ default: module.ClusterSettings })));

const route = getRouteApi('/signed-in/organization/$organizationId/clusters/$clusterId');

type Cluster = components['schemas']['Cluster'];
type Bootstrap = components['schemas']['ClusterOperatorBootstrapResponse'];
type Action = 'deploy' | 'stop' | 'restart' | 'upgrade' | 'cancel';

const ACTIONS: readonly { id: Action; label: string; variant: 'primary' | 'secondary' }[] = [
  { id: 'deploy', label: 'Deploy', variant: 'primary' },
  { id: 'restart', label: 'Restart', variant: 'secondary' },
  { id: 'upgrade', label: 'Upgrade', variant: 'secondary' },
  { id: 'stop', label: 'Stop', variant: 'secondary' },
  { id: 'cancel', label: 'Cancel deployment', variant: 'secondary' },
];

const TABS: readonly { id: ClusterTab; label: string }[] = [
  { id: 'overview', label: 'Overview' },
  { id: 'environments', label: 'Environments' },
  { id: 'logs', label: 'Logs' },
  { id: 'events', label: 'Events' },
  { id: 'analyses', label: 'Analyses' },
  { id: 'platform', label: 'Platform' },
  { id: 'network', label: 'Network' },
  { id: 'settings', label: 'Settings' },
  { id: 'operator', label: 'Operator' },
];

/** A cluster: live state, its agent, actions, lock and deletion; its environments, logs, events, analyses, platform, network, settings and operator, one tab each. */
export function ClusterPage() {
  const { organizationId, clusterId } = route.useParams();
  const { tab = 'overview' } = route.useSearch();
  const navigate = useNavigate();
  const path = { params: { path: { organizationId, clusterId } } };
  const cluster = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}', path);
  // While a deletion is asked, the page stops polling what is about to be gone (a poll landing after the delete would 404).
  const [deleting, setDeleting] = useState(false);
  const status = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/status', path, { refetchInterval: useLiveInterval(), enabled: !deleting });
  const organization = api.useQuery('get', '/organization/{organizationId}', { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<'edit' | 'lock' | 'delete' | undefined>();
  const [actionError, setActionError] = useState<string | undefined>();
  const [pending, setPending] = useState<Action | 'unlock' | undefined>();
  const queryClient = useQueryClient();
  useEffect(() => {
    document.title = `${cluster.data?.name ?? 'Cluster'} · Slipway`;
  }, [cluster.data?.name]);

  async function act(action: Action | 'unlock') {
    if (pending !== undefined) return;
    setActionError(undefined);
    setPending(action);
    const url =
      action === 'upgrade' ? `/cluster/${clusterId}/upgrade` : action === 'unlock' ? `/cluster/${clusterId}/lock` : `/organization/${organizationId}/cluster/${clusterId}/${action}`;
    try {
      await apiRequest(action === 'unlock' ? 'DELETE' : 'POST', url);
    } catch (error) {
      setActionError(messageOf(error));
    } finally {
      setPending(undefined);
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/status'] });
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}'] });
    }
  }

  if (cluster.isError) {
    return (
      <main className="page">
        <h1>Cluster</h1>
        <ErrorMessage message={messageOf(cluster.error)} />
        <p>
          <Link to="/organization/$organizationId/clusters" params={{ organizationId }}>
            Back to the clusters
          </Link>
        </p>
      </main>
    );
  }
  const state = status.data?.status ?? cluster.data?.status;
  const lock = status.data?.cluster_lock ?? null;
  return (
    <main className="page wide-page cluster-page">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId" params={{ organizationId }} activeOptions={{ exact: true }}>
            {organization.data?.name ?? 'Organization'}
          </Link>
        </li>
        <li>
          <Link to="/organization/$organizationId/clusters" params={{ organizationId }} activeOptions={{ exact: true }}>
            Clusters
          </Link>
        </li>
        <li aria-current="page">{cluster.data?.name ?? '…'}</li>
      </Breadcrumbs>
      <div className="page-heading with-actions">
        <div>
          <p className="eyebrow">Cluster</p>
          <h1>{cluster.data?.name ?? '…'}</h1>
          {cluster.data?.description ? <p className="muted">{cluster.data.description}</p> : null}
        </div>
        <div className="status-cell" aria-live="polite">
          {state === undefined ? null : <StatusChip state={state} />}
          {lock === null ? null : <span className="tag tag-warning">Locked</span>}
        </div>
      </div>
      {cluster.isPending ? <Spinner label="Loading the cluster…" /> : null}
      {cluster.data === undefined ? null : (
        <Tabs
          selectedKey={tab}
          onSelectionChange={(key) => void navigate({ to: '/organization/$organizationId/clusters/$clusterId', params: { organizationId, clusterId }, search: key === 'overview' ? {} : { tab: key as ClusterTab }, replace: true })}
          className="tabs"
        >
          <TabList aria-label="Cluster" className="tab-list">
            {TABS.map((entry) => (
              <Tab key={entry.id} id={entry.id} className="tab">
                {entry.label}
              </Tab>
            ))}
          </TabList>
          <TabPanel id="overview" className="tab-panel">
            <section aria-labelledby="actions-heading" className="card section">
              <h2 id="actions-heading" className="card-title">
                Actions
              </h2>
              <div className="action-bar">
                {ACTIONS.map((action) => (
                  <Button key={action.id} variant={action.variant} onPress={() => void act(action.id)}>
                    {action.label}
                  </Button>
                ))}
              </div>
              <ErrorMessage message={actionError} />
              {status.data?.message ? <p className="status-message muted">{status.data.message}</p> : null}
              {status.data?.next_k8s_available_version ? <p className="muted">Kubernetes {status.data.next_k8s_available_version} is available: Upgrade installs it.</p> : null}
            </section>

            <div className="overview">
              <section aria-labelledby="facts-heading" className="card">
                <h2 id="facts-heading" className="card-title">
                  Cluster
                </h2>
                <dl className="facts">
                  <div>
                    <dt>Kind</dt>
                    <dd>{kindLabel(cluster.data.kubernetes)}</dd>
                  </div>
                  <div>
                    <dt>Provider</dt>
                    <dd>{providerLabel(cluster.data.cloud_provider)}</dd>
                  </div>
                  <div>
                    <dt>Region</dt>
                    <dd>{cluster.data.region}</dd>
                  </div>
                  <div>
                    <dt>Version</dt>
                    <dd>{cluster.data.version === '' ? <span className="muted">not deployed</span> : cluster.data.version}</dd>
                  </div>
                  <div>
                    <dt>Configuration</dt>
                    <dd>{cluster.data.deployment_status === 'UP_TO_DATE' ? 'Up to date' : cluster.data.deployment_status === 'OUT_OF_DATE' ? 'Changed since the last deployment' : 'Never deployed'}</dd>
                  </div>
                  <div>
                    <dt>Current cost</dt>
                    <dd>
                      <ClusterCost organizationId={organizationId} clusterId={clusterId} />
                    </dd>
                  </div>
                  <div>
                    <dt>Ready for workloads</dt>
                    <dd>
                      <Readiness organizationId={organizationId} clusterId={clusterId} live={!deleting} />
                    </dd>
                  </div>
                  <div>
                    <dt>Last deployment</dt>
                    <dd>
                      <RelativeTime at={status.data?.last_deployment_date} />
                    </dd>
                  </div>
                </dl>
                <div className="form-actions form-actions-start">
                  <Button variant="secondary" onPress={() => setDialog('edit')}>
                    Edit…
                  </Button>
                </div>
              </section>
              <AgentCard organizationId={organizationId} cluster={cluster.data} live={!deleting} />
            </div>

            <section aria-labelledby="lock-heading" className="card section">
              <h2 id="lock-heading" className="card-title">
                Lock
              </h2>
              {lock === null ? (
                <>
                  <p className="muted">A lock refuses every change to the cluster (deploy, upgrade, stop, restart, edit, delete) until it is lifted or expires, with its reason.</p>
                  <Button variant="secondary" onPress={() => setDialog('lock')}>
                    Lock…
                  </Button>
                </>
              ) : (
                <>
                  <p>
                    Locked by <strong>{lock.owner_name}</strong> <RelativeTime at={lock.locked_at} />
                    {lock.ttl_in_days === undefined ? ', until unlocked' : `, for ${lock.ttl_in_days} ${lock.ttl_in_days === 1 ? 'day' : 'days'}`}: “{lock.reason}”
                  </p>
                  <Button variant="secondary" onPress={() => void act('unlock')}>
                    Unlock
                  </Button>
                </>
              )}
            </section>

            <section aria-labelledby="cluster-danger-heading" className="card section danger-zone">
              <h2 id="cluster-danger-heading" className="card-title">
                Danger zone
              </h2>
              <p>Deleting the cluster tears down what it runs. Environments on it must be deleted first.</p>
              <Button variant="danger" onPress={() => setDialog('delete')}>
                Delete cluster…
              </Button>
            </section>
          </TabPanel>
          <TabPanel id="environments" className="tab-panel">
            <ClusterEnvironments organizationId={organizationId} clusterId={clusterId} />
          </TabPanel>
          <TabPanel id="logs" className="tab-panel">
            <ClusterLogs organizationId={organizationId} clusterId={clusterId} />
          </TabPanel>
          <TabPanel id="events" className="tab-panel">
            <ClusterEvents clusterId={clusterId} />
          </TabPanel>
          <TabPanel id="analyses" className="tab-panel">
            <ClusterAnalyses organizationId={organizationId} clusterId={clusterId} />
          </TabPanel>
          <TabPanel id="platform" className="tab-panel">
            <ClusterPlatform organizationId={organizationId} cluster={cluster.data} />
          </TabPanel>
          <TabPanel id="network" className="tab-panel">
            <ClusterNetwork organizationId={organizationId} cluster={cluster.data} />
          </TabPanel>
          <TabPanel id="settings" className="tab-panel">
            <Suspense fallback={<Spinner label="Loading the settings…" />}>
              <ClusterSettings organizationId={organizationId} cluster={cluster.data} />
            </Suspense>
          </TabPanel>
          <TabPanel id="operator" className="tab-panel">
            <ClusterOperator organizationId={organizationId} cluster={cluster.data} />
          </TabPanel>
        </Tabs>
      )}
      {dialog === 'edit' && cluster.data !== undefined ? <EditClusterDialog organizationId={organizationId} cluster={cluster.data} onClose={() => setDialog(undefined)} /> : null}
      {dialog === 'lock' ? <LockDialog clusterId={clusterId} onClose={() => setDialog(undefined)} /> : null}
      {dialog === 'delete' && cluster.data !== undefined ? <DeleteClusterDialog organizationId={organizationId} cluster={cluster.data} onDeleting={setDeleting} onClose={() => setDialog(undefined)} /> : null}
    </main>
  );
}

/** The agent that carries the cluster's work out: connected, reachable, its version; the install command for a self-managed cluster. */
function AgentCard({ organizationId, cluster, live }: { organizationId: string; cluster: Cluster; live: boolean }) {
  const agent = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/agent', { params: { path: { organizationId, clusterId: cluster.id } } }, { refetchInterval: useLiveInterval(), enabled: live });
  const [bootstrap, setBootstrap] = useState<Bootstrap | undefined>();
  const getBootstrap = api.useMutation('get', '/organization/{organizationId}/cluster/{clusterId}/operator/bootstrap', { onSuccess: setBootstrap });
  const data = agent.data;
  const state = data === undefined ? undefined : data.reachable ? 'connected' : data.connected ? 'unreachable' : 'waiting';
  return (
    <section aria-labelledby="agent-heading" className="card">
      <h2 id="agent-heading" className="card-title">
        Agent
      </h2>
      {agent.isPending ? <Spinner label="Loading the agent’s status…" /> : null}
      <ErrorMessage message={agent.isError ? messageOf(agent.error) : undefined} />
      {data === undefined ? null : (
        <dl className="facts" aria-live="polite">
          <div>
            <dt>Status</dt>
            <dd>
              <StatusChip state={state === 'connected' ? 'DEPLOYED' : state === 'unreachable' ? 'DEPLOYMENT_ERROR' : 'QUEUED'} label={state === 'connected' ? 'Connected' : state === 'unreachable' ? 'Not heard from' : 'Waiting for the agent'} />
            </dd>
          </div>
          <div>
            <dt>Version</dt>
            <dd>{data.agent_version ?? <span className="muted">unknown</span>}</dd>
          </div>
          <div>
            <dt>Host</dt>
            <dd>{data.hostname ?? <span className="muted">unknown</span>}{data.driver === null ? null : <span className="kind-label">{data.driver} driver</span>}</dd>
          </div>
          <div>
            <dt>Last seen</dt>
            <dd>
              <RelativeTime at={data.last_seen_at} />
            </dd>
          </div>
          <div>
            <dt>Open tasks</dt>
            <dd>{data.open_tasks}</dd>
          </div>
        </dl>
      )}
      {cluster.kubernetes !== 'SELF_MANAGED' ? null : (
        <div className="bootstrap">
          <p className="muted">Install the agent in your cluster with Helm. The command holds a one-time enrollment token; this page turns to Connected when the agent enrolls.</p>
          {bootstrap === undefined ? (
            <Button variant="secondary" onPress={() => getBootstrap.mutate({ params: { path: { organizationId, clusterId: cluster.id } } })}>
              Show the install command
            </Button>
          ) : (
            <div className="secret-value">
              <label htmlFor="bootstrap-command">Install command (token valid until {new Date(bootstrap.enrollment_token_expires_at).toLocaleString('en-GB')})</label>
              <div className="secret-value-row">
                <textarea id="bootstrap-command" readOnly value={bootstrap.helm_command} rows={4} spellCheck={false} className="code-block" />
                <CopyButton value={bootstrap.helm_command} label="Copy the install command" />
              </div>
            </div>
          )}
          <ErrorMessage message={getBootstrap.isError ? messageOf(getBootstrap.error) : undefined} />
        </div>
      )}
    </section>
  );
}

type ClusterRequest = paths['/organization/{organizationId}/cluster/{clusterId}']['put']['requestBody']['content']['application/json'];

/**
 * What editCluster must be sent again for the cluster to keep it: the API replaces the cluster's definition whole (a
 * field left out goes back to its default, its features and chart parameters are dropped), and the cluster answers
 * them in the request's own shape.
 */
function keptOnEdit(cluster: Cluster): ClusterRequest {
  const kept: Record<string, unknown> = {
    region: cluster.region,
    cloud_provider: cluster.cloud_provider,
    kubernetes: cluster.kubernetes,
    min_running_nodes: cluster.min_running_nodes,
    max_running_nodes: cluster.max_running_nodes,
    disk_size: cluster.disk_size,
    production: cluster.production,
    ssh_keys: cluster.ssh_keys,
    features: cluster.features,
    labels_groups: cluster.labels_groups,
    secret_manager_accesses: cluster.secret_manager_accesses,
  };
  for (const field of ['disk_iops', 'disk_throughput', 'instance_type', 'metrics_parameters', 'infrastructure_charts_parameters', 'keda'] as const) {
    if (cluster[field] !== undefined && cluster[field] !== null) kept[field] = cluster[field];
  }
  return kept as unknown as ClusterRequest;
}

function EditClusterDialog({ organizationId, cluster, onClose }: { organizationId: string; cluster: Cluster; onClose: () => void }) {
  const [name, setName] = useState(cluster.name);
  const [description, setDescription] = useState(cluster.description ?? '');
  const queryClient = useQueryClient();
  const edit = api.useMutation('put', '/organization/{organizationId}/cluster/{clusterId}', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}'] });
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster'] });
      onClose();
    },
  });
  const fields = fieldErrorsOf(edit.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (edit.isPending) return;
    edit.mutate({
      params: { path: { organizationId, clusterId: cluster.id } },
      body: { ...keptOnEdit(cluster), name: name.trim(), description: description.trim() === '' ? null : description.trim() },
    });
  }
  return (
    <ModalDialog title={`Edit ${cluster.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Name" value={name} onChange={(value) => (edit.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={(value) => (edit.reset(), setDescription(value))} maxLength={2000} />
        <ErrorMessage message={edit.isError ? summaryOf(edit.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">Save</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function LockDialog({ clusterId, onClose }: { clusterId: string; onClose: () => void }) {
  const [reason, setReason] = useState('');
  const [ttl, setTtl] = useState('');
  const queryClient = useQueryClient();
  const lock = api.useMutation('post', '/cluster/{clusterId}/lock', {
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster/{clusterId}/status'] });
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/lock'] });
      onClose();
    },
  });
  const fields = fieldErrorsOf(lock.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!lock.isPending) lock.mutate({ params: { path: { clusterId } }, body: { reason: reason.trim(), ttl_in_days: ttl === '' ? null : Number(ttl) } });
  }
  return (
    <ModalDialog title="Lock the cluster" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <TextField label="Reason" value={reason} onChange={(value) => (lock.reset(), setReason(value))} isRequired autoFocus maxLength={1000} errorMessage={fields.get('reason')} description="Shown to whoever tries to change the cluster." />
        <SelectField
          id="lock-ttl"
          label="For"
          value={ttl}
          onChange={setTtl}
          options={[
            { value: '', label: 'Until unlocked' },
            { value: '1', label: '1 day' },
            { value: '7', label: '7 days' },
            { value: '30', label: '30 days' },
          ]}
        />
        <ErrorMessage message={lock.isError ? summaryOf(lock.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">Lock cluster</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

type DeleteMode = components['schemas']['ClusterDeleteMode'];

const DELETE_MODES: readonly { value: DeleteMode; label: string }[] = [
  { value: 'DEFAULT', label: 'The cluster and what Slipway installed' },
  { value: 'DELETE_CLUSTER_AND_PLATFORM_CONFIG', label: 'The cluster and its platform settings' },
  { value: 'DELETE_PLATFORM_CONFIG', label: 'Only its platform settings' },
];

/** Deletion with the API's delete modes, confirmed by the cluster's name typed; the API's refusal (409) shown in the dialog. */
function DeleteClusterDialog({ organizationId, cluster, onDeleting, onClose }: { organizationId: string; cluster: Cluster; onDeleting: (deleting: boolean) => void; onClose: () => void }) {
  const [typed, setTyped] = useState('');
  const [mode, setMode] = useState<DeleteMode>('DEFAULT');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const remove = api.useMutation('delete', '/organization/{organizationId}/cluster/{clusterId}', {
    onMutate: async () => {
      onDeleting(true);
      await queryClient.cancelQueries({ predicate: (query) => String(query.queryKey[1]).startsWith('/organization/{organizationId}/cluster/{clusterId}/') });
    },
    onError: () => onDeleting(false),
    onSuccess: async () => {
      if (mode === 'DELETE_PLATFORM_CONFIG') onDeleting(false);
      await queryClient.invalidateQueries({ queryKey: ['get', '/organization/{organizationId}/cluster'] });
      onClose();
      if (mode !== 'DELETE_PLATFORM_CONFIG') await navigate({ to: '/organization/$organizationId/clusters', params: { organizationId } });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    if (typed !== cluster.name || remove.isPending) return;
    remove.mutate({ params: { path: { organizationId, clusterId: cluster.id }, query: { deleteMode: mode } } });
  }
  return (
    <ModalDialog title={`Delete ${cluster.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <SelectField id="delete-mode" label="What to delete" value={mode} onChange={(value) => (remove.reset(), setMode(value))} options={DELETE_MODES} />
        <p>{mode === 'DELETE_PLATFORM_CONFIG' ? 'The platform template’s configuration of the cluster is removed; the cluster and its environments stay.' : 'This tears down the cluster and what Slipway installed on it. It cannot be undone.'}</p>
        <TextField label={`Type ${cluster.name} to confirm`} value={typed} onChange={setTyped} isRequired autoFocus />
        <div className="form-foot">
          <ErrorMessage message={remove.isError ? messageOf(remove.error) : undefined} />
          <div className="form-actions">
            <Button variant="secondary" onPress={onClose}>
              Cancel
            </Button>
            <Button type="submit" variant="danger" isDisabled={typed !== cluster.name}>
              Delete cluster
            </Button>
          </div>
        </div>
      </Form>
    </ModalDialog>
  );
}

/** What the cluster costs this month so far, as the API estimates it (a range). */
function ClusterCost({ organizationId, clusterId }: { organizationId: string; clusterId: string }) {
  const cost = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/currentCost', { params: { path: { organizationId, clusterId } } });
  if (cost.isError) return <span className="muted">{messageOf(cost.error)}</span>;
  if (cost.data === undefined) return <span className="muted">…</span>;
  const money = (amount: number) => new Intl.NumberFormat('en-GB', { style: 'currency', currency: cost.data.currency_code }).format(amount);
  return <>{cost.data.min_cost === cost.data.max_cost ? money(cost.data.min_cost) : `${money(cost.data.min_cost)} – ${money(cost.data.max_cost)}`}</>;
}

/** Deployed and its agent heartbeating: what the API calls ready. */
function Readiness({ organizationId, clusterId, live }: { organizationId: string; clusterId: string; live: boolean }) {
  const ready = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/isReady', { params: { path: { organizationId, clusterId } } }, { refetchInterval: useLiveInterval(), enabled: live });
  if (ready.isError) return <span className="muted">{messageOf(ready.error)}</span>;
  if (ready.data === undefined) return <span className="muted">…</span>;
  return <>{ready.data.is_ready ? 'Yes' : 'No: it must be deployed, with its agent connected'}</>;
}
