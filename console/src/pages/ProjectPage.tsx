import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, messageOf, summaryOf, type Cluster, type Environment, type EnvironmentStatus } from '../api/client.ts';
import {
  ActionsMenu,
  Breadcrumbs,
  Button,
  CheckboxField,
  ConfirmByNameDialog,
  ErrorMessage,
  ModalDialog,
  RelativeTime,
  SelectField,
  Spinner,
  StatusChip,
  TextField,
} from '../ui/controls.tsx';
import { useOrganizationPermissions } from '../auth/permissions.ts';
import { PermissionNote } from '../ui/PermissionNote.tsx';
import { plural, useLiveInterval } from './live.ts';
import { providerLabel } from './clusters/cluster-labels.ts';
import { VariablesByScope } from './VariablesByScope.tsx';
import { DeploymentRules } from './project/DeploymentRules.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/project/$projectId');

type Mode = Environment['mode'];
export const MODES: readonly { value: Mode; label: string }[] = [
  { value: 'DEVELOPMENT', label: 'Development' },
  { value: 'STAGING', label: 'Staging' },
  { value: 'PRODUCTION', label: 'Production' },
  { value: 'PREVIEW', label: 'Preview' },
];

/** A project: its environments, each with its live state, and what can be done with them. */
export function ProjectPage() {
  const { organizationId, projectId } = route.useParams();
  const projectPath = { params: { path: { projectId } } };
  const organization = api.useQuery('get', '/organization/{organizationId}', { params: { path: { organizationId } } });
  const project = api.useQuery('get', '/project/{projectId}', projectPath);
  const environments = api.useQuery('get', '/project/{projectId}/environment', projectPath);
  const statuses = api.useQuery('get', '/project/{projectId}/environment/status', projectPath, { refetchInterval: useLiveInterval() });
  const stats = api.useQuery('get', '/project/{projectId}/environment/stats', projectPath);
  const overview = api.useQuery('get', '/project/{projectId}/environment/overview', projectPath);
  const clusters = api.useQuery('get', '/organization/{organizationId}/cluster', { params: { path: { organizationId } } });
  const [creating, setCreating] = useState(false);
  const [cloning, setCloning] = useState<Environment | undefined>();
  const [deleting, setDeleting] = useState<Environment | undefined>();
  const [actionError, setActionError] = useState<{ environmentId: string; message: string } | undefined>();
  const queryClient = useQueryClient();
  const permissions = useOrganizationPermissions(organizationId);
  const cannotWrite = !permissions.can('write');
  const cannotDeploy = !permissions.can('deploy');
  const writeNote = useId();
  const deployNote = useId();
  useEffect(() => {
    document.title = `${project.data?.name ?? 'Project'} · Slipway`;
  }, [project.data?.name]);

  const statusOf = new Map<string, EnvironmentStatus>(statuses.data?.results.map((status) => [status.id, status]));
  const servicesOf = new Map(stats.data?.results.map((entry) => [entry.id, entry.service_total_number]));
  const clusterOf = new Map(overview.data?.results.map((entry) => [entry.id, entry.cluster]));
  const list = environments.data?.results ?? [];
  const clusterList = clusters.data?.results ?? [];

  async function act(environment: Environment, action: string) {
    setActionError(undefined);
    if (action === 'clone') return setCloning(environment);
    if (action === 'delete') return setDeleting(environment);
    const path = action === 'restart' ? `/environment/${environment.id}/service/restart-service` : `/environment/${environment.id}/${action}`;
    try {
      await apiRequest('POST', path, action === 'restart' ? {} : undefined);
    } catch (error) {
      setActionError({ environmentId: environment.id, message: messageOf(error) });
    }
    await queryClient.invalidateQueries({ queryKey: ['get', '/project/{projectId}/environment/status'] });
  }

  if (project.isError) {
    return (
      <main className="page">
        <h1>Project</h1>
        <ErrorMessage message={messageOf(project.error)} />
        <p>
          <Link to="/organization/$organizationId" params={{ organizationId }}>
            Back to the organization’s projects
          </Link>
        </p>
      </main>
    );
  }

  return (
    <main className="page">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId" params={{ organizationId }} activeOptions={{ exact: true }}>
            {organization.data?.name ?? 'Organization'}
          </Link>
        </li>
        <li aria-current="page">{project.data?.name ?? '…'}</li>
      </Breadcrumbs>
      <div className="page-heading">
        <p className="eyebrow">Project</p>
        <h1>{project.data?.name ?? '…'}</h1>
        {project.data?.description ? <p className="muted">{project.data.description}</p> : null}
      </div>
      <section aria-labelledby="environments-heading" className="section">
        <div className="section-heading">
          <h2 id="environments-heading">Environments</h2>
          {list.length === 0 ? null : (
            <Button onPress={() => setCreating(true)} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
              New environment
            </Button>
          )}
        </div>
        <PermissionNote id={writeNote} reason={permissions.reason('write')} />
        <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
        {environments.isPending ? <Spinner label="Loading environments…" /> : null}
        <ErrorMessage message={environments.isError ? messageOf(environments.error) : undefined} />
        {environments.isSuccess && list.length === 0 ? (
          <div className="empty card">
            <h3>No environments yet</h3>
            <p className="muted">An environment runs this project’s services on a cluster: production, staging, one per pull request…</p>
            <Button onPress={() => setCreating(true)} isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
              New environment
            </Button>
          </div>
        ) : null}
        {list.length === 0 ? null : (
          <ul className="row-list" aria-label="Environments">
            {list.map((environment) => {
              const status = statusOf.get(environment.id);
              return (
                <li key={environment.id} className="card row">
                  <div className="row-main">
                    <h3 className="row-name">
                      <Link
                        to="/organization/$organizationId/project/$projectId/environment/$environmentId"
                        params={{ organizationId, projectId, environmentId: environment.id }}
                      >
                        {environment.name}
                      </Link>
                    </h3>
                    <p className="row-facts">
                      <span className="tag">{MODES.find((mode) => mode.value === environment.mode)?.label ?? environment.mode}</span>
                      <span>on {environment.cluster_name ?? clusterList.find((cluster) => cluster.id === environment.cluster_id)?.name ?? 'a cluster'}</span>
                      {clusterOf.has(environment.id) ? <span className="muted">{providerLabel(clusterOf.get(environment.id)?.cloud_provider ?? '')}</span> : null}
                      {clusterOf.get(environment.id)?.is_demo === true ? <span className="tag">Demo cluster</span> : null}
                      {servicesOf.has(environment.id) ? <span>{plural(servicesOf.get(environment.id) ?? 0, 'service', 'services')}</span> : null}
                      {status === undefined || status.last_deployment_date === null ? null : (
                        <span>
                          deployed <RelativeTime at={status.last_deployment_date} />
                        </span>
                      )}
                    </p>
                    {actionError?.environmentId === environment.id ? <ErrorMessage message={actionError.message} /> : null}
                  </div>
                  <div className="row-status">
                    {status === undefined ? <span className="muted">…</span> : <StatusChip state={status.state} />}
                    {status?.deployment_status === 'OUT_OF_DATE' ? <span className="tag tag-warning">Out of date</span> : null}
                  </div>
                  <div className="row-actions">
                    <Button variant="secondary" aria-label={`Deploy ${environment.name}`} onPress={() => void act(environment, 'deploy')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
                      Deploy
                    </Button>
                    <ActionsMenu
                      label={`More actions for ${environment.name}`}
                      actions={[
                        { id: 'restart', label: 'Restart services', isDisabled: cannotDeploy },
                        { id: 'stop', label: 'Stop', isDisabled: cannotDeploy },
                        { id: 'clone', label: 'Clone…', isDisabled: cannotWrite },
                        { id: 'delete', label: 'Delete…', danger: true, isDisabled: cannotWrite },
                      ]}
                      onAction={(action) => void act(environment, action)}
                    />
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </section>
      <VariablesByScope
        level={{
          own: 'PROJECT',
          organizationId,
          projectId,
          importThrough: { unavailable: 'A .env file is imported into the project from an environment’s or a service’s page: the API imports through a service.' },
        }}
      />
      <DeploymentRules organizationId={organizationId} projectId={projectId} />
      {creating ? <EnvironmentDialog projectId={projectId} clusters={clusterList} clustersLoading={clusters.isPending} onClose={() => setCreating(false)} /> : null}
      {cloning === undefined ? null : <EnvironmentDialog projectId={projectId} clusters={clusterList} clustersLoading={clusters.isPending} source={cloning} onClose={() => setCloning(undefined)} />}
      {deleting === undefined ? null : <DeleteEnvironmentDialog projectId={projectId} environment={deleting} services={servicesOf.get(deleting.id) ?? 0} onClose={() => setDeleting(undefined)} />}
    </main>
  );
}

function useRefreshEnvironments(projectId: string) {
  const queryClient = useQueryClient();
  const path = { params: { path: { projectId } } };
  return () =>
    Promise.all(
      (['/project/{projectId}/environment', '/project/{projectId}/environment/status', '/project/{projectId}/environment/stats'] as const).map((key) =>
        queryClient.invalidateQueries({ queryKey: ['get', key, path] }),
      ),
    );
}

/** Create an environment on a cluster, or clone `source` (its services, and its variables if asked). */
function EnvironmentDialog({ projectId, clusters, clustersLoading, source, onClose }: { projectId: string; clusters: Cluster[]; clustersLoading: boolean; source?: Environment; onClose: () => void }) {
  const [name, setName] = useState(source === undefined ? '' : `${source.name}-copy`);
  const [clusterId, setClusterId] = useState(source?.cluster_id ?? clusters.find((cluster) => cluster.is_default === true)?.id ?? clusters[0]?.id ?? '');
  const [mode, setMode] = useState<Mode>(source?.mode ?? 'DEVELOPMENT');
  const [cloneVariables, setCloneVariables] = useState(true);
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshEnvironments(projectId);
  const fields = fieldErrorsOf(error);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      if (source === undefined) await apiRequest('POST', `/project/${projectId}/environment`, { name: name.trim(), mode, ...(clusterId === '' ? {} : { cluster: clusterId }) });
      else await apiRequest('POST', `/environment/${source.id}/clone`, { name: name.trim(), mode, clone_variables: cloneVariables, ...(clusterId === '' ? {} : { cluster_id: clusterId }) });
      await refresh();
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setPending(false);
    }
  }

  const noCluster = !clustersLoading && clusters.length === 0;
  return (
    <ModalDialog title={source === undefined ? 'New environment' : `Clone ${source.name}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form onSubmit={(event) => void submit(event)} className="form">
        {source === undefined ? null : <p className="muted">The copy gets the same services, not yet deployed.</p>}
        <TextField label="Name" value={name} onChange={(value) => { setName(value); setError(undefined); }} isRequired autoFocus maxLength={255} errorMessage={fields.get('name')} />
        {noCluster ? (
          <p className="notice">
            This organization has no cluster yet. Create one with <code>slipway cluster create</code>, then come back.
          </p>
        ) : (
          <SelectField
            id="environment-cluster"
            label="Cluster"
            value={clusterId}
            onChange={setClusterId}
            options={clusters.map((cluster) => ({ value: cluster.id, label: `${cluster.name ?? cluster.id}${cluster.status === undefined ? '' : ` (${cluster.status})`}` }))}
            errorMessage={fields.get('cluster') ?? fields.get('cluster_id')}
          />
        )}
        <SelectField id="environment-mode" label="Mode" value={mode} onChange={setMode} options={MODES} errorMessage={fields.get('mode')} />
        {source === undefined ? null : <CheckboxField id="clone-variables" label="Copy its variables and secrets" checked={cloneVariables} onChange={setCloneVariables} />}
        <ErrorMessage message={error === undefined ? undefined : summaryOf(error)} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit" isDisabled={noCluster}>
            {source === undefined ? 'Create environment' : 'Clone environment'}
          </Button>
        </div>
      </Form>
    </ModalDialog>
  );
}

function DeleteEnvironmentDialog({ projectId, environment, services, onClose }: { projectId: string; environment: Environment; services: number; onClose: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [pending, setPending] = useState(false);
  const refresh = useRefreshEnvironments(projectId);
  async function confirm() {
    setPending(true);
    setError(undefined);
    try {
      await apiRequest('DELETE', `/environment/${environment.id}`);
      await refresh();
      onClose();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setPending(false);
    }
  }
  return (
    <ConfirmByNameDialog
      title={`Delete ${environment.name}`}
      name={environment.name}
      explanation={
        services === 0
          ? 'This deletes the environment. It cannot be undone.'
          : `This stops and deletes the environment with its ${plural(services, 'service', 'services')} and their data. It cannot be undone.`
      }
      confirmLabel="Delete environment"
      pending={pending}
      error={error}
      onConfirm={() => void confirm()}
      onClose={onClose}
    />
  );
}
