import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, fieldErrorsOf, messageOf, summaryOf } from '../../api/client.ts';
import { Breadcrumbs, Button, CheckboxField, ErrorMessage, ModalDialog, RelativeTime, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { LIVE_INTERVAL_MS } from '../live.ts';
import { kindLabel, providerLabel } from './cluster-labels.ts';

const route = getRouteApi('/signed-in/organization/$organizationId/clusters');

/** The organization's clusters with their live state and locks; a new LOCAL cluster. */
export function ClustersPage() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const organization = api.useQuery('get', '/organization/{organizationId}', path);
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', path);
  const statuses = api.useQuery('get', '/organization/{organizationId}/cluster/status', path, { refetchInterval: LIVE_INTERVAL_MS });
  const locks = api.useQuery('get', '/organization/{organizationId}/lock', path, { refetchInterval: LIVE_INTERVAL_MS * 4 });
  const [creating, setCreating] = useState(false);
  useEffect(() => {
    document.title = `Clusters · ${organization.data?.name ?? 'Organization'} · Slipway`;
  }, [organization.data?.name]);
  const statusOf = new Map(statuses.data?.results.map((entry) => [entry.cluster_id, entry.status]));
  const lockOf = new Map(locks.data?.results.map((lock) => [lock.cluster_id, lock]));
  const list = clusters.data?.results ?? [];
  return (
    <main className="page wide-page">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId" params={{ organizationId }} activeOptions={{ exact: true }}>
            {organization.data?.name ?? 'Organization'}
          </Link>
        </li>
        <li aria-current="page">Clusters</li>
      </Breadcrumbs>
      <div className="page-heading with-actions">
        <div>
          <p className="eyebrow">Organization</p>
          <h1>Clusters</h1>
        </div>
        {list.length === 0 ? null : <Button onPress={() => setCreating(true)}>New cluster</Button>}
      </div>
      {clusters.isPending ? <Spinner label="Loading clusters…" /> : null}
      <ErrorMessage message={clusters.isError ? messageOf(clusters.error) : undefined} />
      {clusters.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h2 className="card-title">No clusters yet</h2>
          <p className="muted">Environments run on a cluster: this host (a LOCAL cluster, when the installation’s operator allows it) or your own Kubernetes with the Slipway agent.</p>
          <Button onPress={() => setCreating(true)}>New cluster</Button>
        </div>
      ) : null}
      {list.length === 0 ? null : (
        <table className="table" aria-label="Clusters">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Kind</th>
              <th scope="col">Region</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.map((cluster) => {
              const lock = lockOf.get(cluster.id);
              return (
                <tr key={cluster.id}>
                  <th scope="row">
                    <Link to="/organization/$organizationId/clusters/$clusterId" params={{ organizationId, clusterId: cluster.id }} className="service-name">
                      {cluster.name}
                    </Link>
                    {cluster.is_default ? <span className="tag tag-inline">default</span> : null}
                    {cluster.production ? <span className="tag tag-inline">production</span> : null}
                  </th>
                  <td data-label="Status">
                    <span className="status-cell">
                      <StatusChip state={statusOf.get(cluster.id) ?? cluster.status} />
                      {lock === undefined ? null : (
                        <span className="tag tag-warning" title={lock.reason}>
                          Locked
                        </span>
                      )}
                      {cluster.deployment_status === 'OUT_OF_DATE' ? <span className="tag tag-warning">Out of date</span> : null}
                    </span>
                  </td>
                  <td data-label="Kind">
                    {kindLabel(cluster.kubernetes)}
                    <span className="kind-label">{providerLabel(cluster.cloud_provider)}</span>
                  </td>
                  <td data-label="Region">{cluster.region}</td>
                  <td data-label="Created">
                    <RelativeTime at={cluster.created_at} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {creating ? <NewClusterDialog organizationId={organizationId} onClose={() => setCreating(false)} /> : null}
    </main>
  );
}

/**
 * A LOCAL cluster: this host, which the installation's operator allows per organization (the API's 403 says how).
 * A self-managed cluster needs AWS credentials and a platform template (createSelfManagedCluster): the dialog says so.
 */
function NewClusterDialog({ organizationId, onClose }: { organizationId: string; onClose: () => void }) {
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
  const fields = fieldErrorsOf(create.error);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (create.isPending) return;
    create.mutate({
      params: { path: { organizationId } },
      body: { name: name.trim(), ...(description.trim() === '' ? {} : { description: description.trim() }), region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL', production },
    });
  }
  return (
    <ModalDialog title="New cluster" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={submit} className="form">
        <p className="muted">
          A <strong>LOCAL</strong> cluster runs environments as processes on the host Slipway runs on. Your own Kubernetes cluster (self-managed, on AWS) is created with AWS credentials and a
          platform template through the API or the CLI; its page then shows the agent’s install command.
        </p>
        <TextField label="Name" value={name} onChange={(value) => (create.reset(), setName(value))} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        <TextField label="Description (optional)" value={description} onChange={setDescription} maxLength={2000} />
        <CheckboxField id="cluster-production" label="Production cluster" checked={production} onChange={setProduction} />
        <CheckboxField id="cluster-deploy" label="Deploy it now" checked={deployNow} onChange={setDeployNow} description="Installs what the cluster needs; environments can be created on it once it is deployed." />
        <ErrorMessage message={create.isError ? summaryOf(create.error) : undefined} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">Create cluster</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}
