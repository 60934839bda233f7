import { getRouteApi, Link } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { api, messageOf } from '../../api/client.ts';
import { Breadcrumbs, Button, ErrorMessage, RelativeTime, Spinner, StatusChip } from '../../ui/controls.tsx';
import { LIVE_INTERVAL_MS, useLiveInterval } from '../live.ts';
import { kindLabel, providerLabel } from './cluster-labels.ts';
import { NewClusterDialog } from './NewClusterDialog.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/clusters');

/** The organization's clusters with their live state and locks; a new LOCAL or self-managed cluster. */
export function ClustersPage() {
  const { organizationId } = route.useParams();
  const path = { params: { path: { organizationId } } };
  const organization = api.useQuery('get', '/organization/{organizationId}', path);
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', path);
  const statuses = api.useQuery('get', '/organization/{organizationId}/cluster/status', path, { refetchInterval: useLiveInterval() });
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
