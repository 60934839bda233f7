import { useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useState } from 'react';
import { Button as AriaButton, Menu, MenuItem, MenuTrigger, Popover, Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { api, apiRequest, messageOf, type Link as ServiceLink, type ServiceStatus } from '../api/client.ts';
import { KINDS, type AnyService, type ServiceKind } from '../services/kinds.ts';
import { ActionsMenu, Breadcrumbs, Button, ErrorMessage, RelativeTime, Spinner, StatusChip } from '../ui/controls.tsx';
import { useOrganizationPermissions } from '../auth/permissions.ts';
import { PermissionNote } from '../ui/PermissionNote.tsx';
import { LIVE_INTERVAL_MS, useLiveInterval } from './live.ts';
import { VariablesByScope } from './VariablesByScope.tsx';
import type { EnvironmentTab } from '../router.tsx';
import { EnvironmentDeployments } from './environment/EnvironmentDeployments.tsx';
import { EnvironmentLogs } from './environment/EnvironmentLogs.tsx';
import { EnvironmentSettings } from './environment/EnvironmentSettings.tsx';
import { ServiceStageNote, useServiceStages } from './environment/ServiceStage.tsx';
import { BulkServiceActions, SelectAllServices, SelectService, useServiceSelection } from './environment/ServiceSelection.tsx';
import { DeploymentStages } from './environment/DeploymentStages.tsx';
import { EnvironmentDeploymentRule } from './environment/EnvironmentDeploymentRule.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/project/$projectId/environment/$environmentId');

interface Row {
  kind: ServiceKind;
  service: AnyService;
  status: ServiceStatus | undefined;
  url: string | undefined;
}

/** The services of every kind the console knows, read together (one query per kind, as the API lists them). */
export function useEnvironmentServices(environmentId: string) {
  return useQuery({
    queryKey: ['environment-services', environmentId],
    queryFn: async () => {
      const lists = await Promise.all(KINDS.map((kind) => apiRequest<{ results: AnyService[] }>('GET', `/environment/${environmentId}/${kind.name}`)));
      return KINDS.flatMap((kind, index) => (lists[index]?.results ?? []).map((service) => ({ kind, service })));
    },
  });
}

/** An environment: its services with their live state, URL and last deployment, and the actions on each. */
export function EnvironmentPage() {
  const { organizationId, projectId, environmentId } = route.useParams();
  const { tab = 'services' } = route.useSearch();
  const environmentPath = { params: { path: { environmentId } } };
  const organization = api.useQuery('get', '/organization/{organizationId}', { params: { path: { organizationId } } });
  const project = api.useQuery('get', '/project/{projectId}', { params: { path: { projectId } } });
  const environment = api.useQuery('get', '/environment/{environmentId}', environmentPath);
  const services = useEnvironmentServices(environmentId);
  const statuses = api.useQuery('get', '/environment/{environmentId}/statuses', environmentPath, { refetchInterval: useLiveInterval() });
  const links = api.useQuery('get', '/environment/{environmentId}/link', environmentPath, { refetchInterval: LIVE_INTERVAL_MS * 4 });
  const [actionError, setActionError] = useState<{ id: string; message: string } | undefined>();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const permissions = useOrganizationPermissions(organizationId);
  const cannotWrite = !permissions.can('write');
  const cannotDeploy = !permissions.can('deploy');
  const writeNote = useId();
  const deployNote = useId();
  useEffect(() => {
    document.title = `${environment.data?.name ?? 'Environment'} · Slipway`;
  }, [environment.data?.name]);

  const statusOf = new Map<string, ServiceStatus>();
  for (const kind of KINDS) for (const status of statuses.data?.[kind.statusKey] ?? []) statusOf.set(status.id, status as ServiceStatus);
  const urlOf = new Map<string, ServiceLink>();
  for (const link of links.data?.results ?? []) if (link.is_default || !urlOf.has(link.service_id)) urlOf.set(link.service_id, link);
  const rows: Row[] = (services.data ?? []).map(({ kind, service }) => ({ kind, service, status: statusOf.get(service.id), url: urlOf.get(service.id)?.url }));
  const environmentStatus = statuses.data?.environment;
  const selection = useServiceSelection(rows);
  const stages = useServiceStages(environmentId);

  async function act(id: string, path: string, body?: unknown) {
    setActionError(undefined);
    try {
      await apiRequest('POST', path, body);
    } catch (error) {
      setActionError({ id, message: messageOf(error) });
    }
    await queryClient.invalidateQueries({ queryKey: ['get', '/environment/{environmentId}/statuses'] });
  }

  if (environment.isError) {
    return (
      <main className="page">
        <h1>Environment</h1>
        <ErrorMessage message={messageOf(environment.error)} />
        <p>
          <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId }}>
            Back to the project’s environments
          </Link>
        </p>
      </main>
    );
  }
  const newService = (kind: string) =>
    void navigate({ to: '/organization/$organizationId/project/$projectId/environment/$environmentId/new/$kind', params: { organizationId, projectId, environmentId, kind } });

  return (
    <main className="page wide-page">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId" params={{ organizationId }} activeOptions={{ exact: true }}>
            {organization.data?.name ?? 'Organization'}
          </Link>
        </li>
        <li>
          <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId }} activeOptions={{ exact: true }}>
            {project.data?.name ?? 'Project'}
          </Link>
        </li>
        <li aria-current="page">{environment.data?.name ?? '…'}</li>
      </Breadcrumbs>
      <div className="page-heading with-actions">
        <div>
          <p className="eyebrow">Environment</p>
          <h1>{environment.data?.name ?? '…'}</h1>
          <p className="row-facts">
            {environmentStatus === undefined ? null : <StatusChip state={environmentStatus.state} />}
            {environmentStatus?.deployment_status === 'OUT_OF_DATE' ? <span className="tag tag-warning">Out of date</span> : null}
            {environment.data === undefined ? null : <span>on {environment.data.cluster_name ?? 'its cluster'}</span>}
          </p>
        </div>
        <div className="heading-actions">
          <Button variant="secondary" onPress={() => void act('environment', `/environment/${environmentId}/deploy`)} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
            Deploy all
          </Button>
          <ActionsMenu
            label="More actions for this environment"
            actions={[
              { id: 'redeploy', label: 'Redeploy', isDisabled: cannotDeploy },
              { id: 'restart', label: 'Restart all', isDisabled: cannotDeploy },
              { id: 'stop', label: 'Stop all', isDisabled: cannotDeploy },
              { id: 'cancelDeployment', label: 'Cancel deployment', isDisabled: cannotDeploy },
            ]}
            onAction={(action) =>
              void act('environment', action === 'restart' ? `/environment/${environmentId}/service/restart-service` : `/environment/${environmentId}/${action}`, action === 'restart' ? {} : undefined)
            }
          />
        </div>
      </div>
      <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
      {actionError?.id === 'environment' ? <ErrorMessage message={actionError.message} /> : null}
      <Tabs
        selectedKey={tab}
        onSelectionChange={(key) =>
          void navigate({
            to: '/organization/$organizationId/project/$projectId/environment/$environmentId',
            params: { organizationId, projectId, environmentId },
            search: key === 'services' ? {} : { tab: key as EnvironmentTab },
            replace: true,
          })
        }
        className="tabs"
      >
        <TabList aria-label="Environment" className="tab-list">
          <Tab id="services" className="tab">
            Services
          </Tab>
          <Tab id="deployments" className="tab">
            Deployments
          </Tab>
          <Tab id="logs" className="tab">
            Logs
          </Tab>
          <Tab id="variables" className="tab">
            Variables
          </Tab>
          <Tab id="settings" className="tab">
            Settings
          </Tab>
        </TabList>
        <TabPanel id="services" className="tab-panel">
      <section aria-labelledby="services-heading" className="section">
        <div className="section-heading">
          <h2 id="services-heading">Services</h2>
          {rows.length === 0 ? null : (
            <MenuTrigger>
              <AriaButton className="button button-primary" isDisabled={cannotWrite} aria-describedby={cannotWrite ? writeNote : undefined}>
                New service <span aria-hidden="true">▾</span>
              </AriaButton>
              <Popover className="popover" placement="bottom end">
                <Menu className="menu" aria-label="Kind of service" onAction={(key) => newService(String(key))}>
                  {KINDS.map((kind) => (
                    <MenuItem key={kind.name} id={kind.name} className="menu-item" textValue={kind.label}>
                      {kind.label}
                    </MenuItem>
                  ))}
                </Menu>
              </Popover>
            </MenuTrigger>
          )}
        </div>
        <PermissionNote id={writeNote} reason={permissions.reason('write')} />
        {services.isPending ? <Spinner label="Loading services…" /> : null}
        <ErrorMessage message={services.isError ? messageOf(services.error) : undefined} />
        <ErrorMessage message={statuses.isError ? `Live status unavailable: ${messageOf(statuses.error)}` : undefined} />
        {services.isSuccess && rows.length === 0 && cannotWrite ? (
          <div className="empty card">
            <h3>No services yet</h3>
          </div>
        ) : null}
        {services.isSuccess && rows.length === 0 && !cannotWrite ? (
          <div className="empty card">
            <h3>No services yet</h3>
            <p className="muted">Add what this environment runs:</p>
            <ul className="kind-choices" aria-label="Kinds of service">
              {KINDS.map((kind) => (
                <li key={kind.name}>
                  <Link
                    className="kind-choice"
                    to="/organization/$organizationId/project/$projectId/environment/$environmentId/new/$kind"
                    params={{ organizationId, projectId, environmentId, kind: kind.name }}
                  >
                    <strong>New {kind.label.toLowerCase()}</strong>
                    <span className="muted">{kind.description}</span>
                  </Link>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {rows.length === 0 ? null : <BulkServiceActions environmentId={environmentId} rows={rows} selection={selection} permissions={permissions} />}
        {rows.length === 0 ? null : (
          <table className="table services-table" aria-labelledby="services-heading">
            <thead>
              <tr>
                <th scope="col" className="select-cell">
                  <SelectAllServices rows={rows} selection={selection} />
                </th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">URL</th>
                <th scope="col">Last deployment</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ kind, service, status, url }) => (
                <tr key={service.id}>
                  <td className="select-cell">
                    <SelectService row={{ kind, service }} selection={selection} />
                  </td>
                  <th scope="row" data-label="Name">
                    <Link
                      to="/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId"
                      params={{ organizationId, projectId, environmentId, kind: kind.name, serviceId: service.id }}
                      className="service-name"
                    >
                      {service.name}
                    </Link>
                    <span className="kind-label">{kind.label}</span>
                  </th>
                  <td data-label="Status">
                    <span className="status-cell">
                      {status === undefined ? <span className="muted">…</span> : <StatusChip state={status.state} />}
                      {status?.service_deployment_status === 'OUT_OF_DATE' ? <span className="tag tag-warning">Out of date</span> : null}
                      {status?.workload !== undefined && status.workload !== null && status.workload.health !== 'RUNNING' ? <span className="tag tag-danger">{status.workload.health === 'FAILED' ? 'Crashed' : 'Restarting'}</span> : null}
                    </span>
                    <ServiceStageNote stage={stages.get(service.id)} />
                    {actionError?.id === service.id ? <ErrorMessage message={actionError.message} /> : null}
                  </td>
                  <td data-label="URL" className="url-cell">
                    {url === undefined ? (
                      <span className="muted">—</span>
                    ) : (
                      <a href={url} target="_blank" rel="noreferrer" className="url" data-volatile="">
                        {url.replace(/^https?:\/\//, '')}
                      </a>
                    )}
                  </td>
                  <td data-label="Last deployment">
                    <RelativeTime at={status?.last_deployment_date} />
                  </td>
                  <td className="actions-cell">
                    <Button variant="secondary" aria-label={`Deploy ${service.name}`} onPress={() => void act(service.id, `/${kind.name}/${service.id}/deploy`, {})} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
                      Deploy
                    </Button>
                    <ActionsMenu
                      label={`More actions for ${service.name}`}
                      actions={[
                        { id: 'restart-service', label: 'Restart', isDisabled: cannotDeploy },
                        { id: 'stop', label: 'Stop', isDisabled: cannotDeploy },
                      ]}
                      onAction={(action) => void act(service.id, `/${kind.name}/${service.id}/${action}`)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
        </TabPanel>
        <TabPanel id="deployments" className="tab-panel">
          <EnvironmentDeployments environmentId={environmentId} permissions={permissions} />
        </TabPanel>
        <TabPanel id="logs" className="tab-panel">
          <EnvironmentLogs environmentId={environmentId} />
        </TabPanel>
        <TabPanel id="variables" className="tab-panel">
          <EnvironmentVariables organizationId={organizationId} projectId={projectId} environmentId={environmentId} services={rows} />
        </TabPanel>
        <TabPanel id="settings" className="tab-panel">
          {environment.data === undefined ? (
            <Spinner label="Loading the environment…" />
          ) : (
            <EnvironmentSettings environment={environment.data} permissions={permissions}>
              <DeploymentStages organizationId={organizationId} environmentId={environmentId} services={rows} />
              <EnvironmentDeploymentRule organizationId={organizationId} environmentId={environmentId} />
            </EnvironmentSettings>
          )}
        </TabPanel>
      </Tabs>
    </main>
  );
}

/** The environment's variables and its project's (VariablesByScope); a .env file is imported through one of its services. */
function EnvironmentVariables({ organizationId, projectId, environmentId, services }: { organizationId: string; projectId: string; environmentId: string; services: Row[] }) {
  const importer = services.find(({ kind }) => kind.hasVariables);
  return (
    <VariablesByScope
      level={{
        own: 'ENVIRONMENT',
        organizationId,
        projectId,
        environmentId,
        importThrough:
          importer === undefined
            ? { unavailable: 'Importing a .env file needs a service in this environment: the API imports through one.' }
            : { path: `/${importer.kind.name}/${importer.service.id}/environmentVariable/import`, serviceScope: importer.kind.type },
      }}
    />
  );
}
