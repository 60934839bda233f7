import { useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { lazy, Suspense, useEffect, useId, useState, type FormEvent } from 'react';
import { Form, Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { api, apiRequest, fieldErrorsOf, messageOf, summaryOf, type Link as ServiceLink, type ServiceStatus } from '../api/client.ts';
import { useOrganizationPermissions } from '../auth/permissions.ts';
import type { ServiceTab } from '../router.tsx';
import { kindNamed, type AnyService, type ServiceKind } from '../services/kinds.ts';
import { Breadcrumbs, Button, ErrorMessage, ModalDialog, RelativeTime, Spinner, StatusChip, TextField, humanState } from '../ui/controls.tsx';
import { PermissionNote } from '../ui/PermissionNote.tsx';
import { useLiveInterval } from './live.ts';
import { ServiceDeployments } from './ServiceDeployments.tsx';
import { ServiceDeploymentQueue } from './environment/ServiceDeploymentQueue.tsx';
import { DeleteServiceDialog } from './service-settings/DeleteServiceDialog.tsx';
import { ServiceDomains } from './service-settings/ServiceDomains.tsx';
import { ServiceOverviewExtras } from './service/ServiceOverviewExtras.tsx';
import { ServiceDeploymentStageFact } from './environment/ServiceDeploymentStage.tsx';
import { ServiceLogs } from './ServiceLogs.tsx';
import { ServiceVariables } from './ServiceVariables.tsx';

// The settings are a chunk of their own, loaded when the tab is first opened.
const ServiceSettings = lazy(() => import('./service-settings/ServiceSettings.tsx').then((module) => ({ default: module.ServiceSettings })));

const route = getRouteApi('/signed-in/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId');

export interface ServiceContext {
  kind: ServiceKind;
  serviceId: string;
  environmentId: string;
  projectId: string;
  organizationId: string;
  /** `/application/<id>`: where the kind's operations are. */
  base: string;
}

/** A service: its state and actions, its deployments, its live output, its variables, its domains and its settings, one tab each. */
export function ServicePage() {
  const { organizationId, projectId, environmentId, kind: kindName, serviceId } = route.useParams();
  const { tab = 'overview' } = route.useSearch();
  const navigate = useNavigate();
  const kind = kindNamed(kindName);
  const base = `/${kind?.name ?? kindName}/${serviceId}`;
  const service = useQuery({ queryKey: ['service', base], queryFn: () => apiRequest<AnyService>('GET', base), enabled: kind !== undefined });
  const project = api.useQuery('get', '/project/{projectId}', { params: { path: { projectId } } });
  const environment = api.useQuery('get', '/environment/{environmentId}', { params: { path: { environmentId } } });
  useEffect(() => {
    document.title = `${service.data?.name ?? 'Service'} · Slipway`;
  }, [service.data?.name]);

  if (kind === undefined || service.isError) {
    return (
      <main className="page">
        <h1>Service</h1>
        <ErrorMessage message={kind === undefined ? `There is no service kind "${kindName}".` : messageOf(service.error)} />
        <p>
          <Link to="/organization/$organizationId/project/$projectId/environment/$environmentId" params={{ organizationId, projectId, environmentId }}>
            Back to the environment’s services
          </Link>
        </p>
      </main>
    );
  }
  const context: ServiceContext = { kind, serviceId, environmentId, projectId, organizationId, base };
  return (
    <main className="page wide-page">
      <Breadcrumbs>
        <li>
          <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId }} activeOptions={{ exact: true }}>
            {project.data?.name ?? 'Project'}
          </Link>
        </li>
        <li>
          <Link to="/organization/$organizationId/project/$projectId/environment/$environmentId" params={{ organizationId, projectId, environmentId }} activeOptions={{ exact: true }}>
            {environment.data?.name ?? 'Environment'}
          </Link>
        </li>
        <li aria-current="page">{service.data?.name ?? '…'}</li>
      </Breadcrumbs>
      <div className="page-heading">
        <p className="eyebrow">{kind.label}</p>
        <h1>{service.data?.name ?? '…'}</h1>
      </div>
      {service.isPending ? <Spinner label="Loading the service…" /> : null}
      <Tabs
        selectedKey={tab}
        onSelectionChange={(key) =>
          void navigate({
            to: '/organization/$organizationId/project/$projectId/environment/$environmentId/$kind/$serviceId',
            params: { organizationId, projectId, environmentId, kind: kind.name, serviceId },
            search: key === 'overview' ? {} : { tab: key as ServiceTab },
            replace: true,
          })
        }
        className="tabs"
      >
        <TabList aria-label="Service" className="tab-list">
          <Tab id="overview" className="tab">
            Overview
          </Tab>
          <Tab id="deployments" className="tab">
            Deployments
          </Tab>
          <Tab id="logs" className="tab">
            Logs
          </Tab>
          {kind.hasVariables ? (
            <Tab id="variables" className="tab">
              Variables
            </Tab>
          ) : null}
          {kind.hasLinks ? (
            <Tab id="domains" className="tab">
              Domains
            </Tab>
          ) : null}
          <Tab id="settings" className="tab">
            Settings
          </Tab>
        </TabList>
        <TabPanel id="overview" className="tab-panel">
          {service.data === undefined ? null : <Overview context={context} service={service.data} organizationId={organizationId} />}
        </TabPanel>
        <TabPanel id="deployments" className="tab-panel">
          <ServiceDeploymentQueue serviceId={serviceId} organizationId={organizationId} />
          <ServiceDeployments context={context} />
        </TabPanel>
        <TabPanel id="logs" className="tab-panel">
          <ServiceLogs context={context} />
        </TabPanel>
        {kind.hasVariables ? (
          <TabPanel id="variables" className="tab-panel">
            <ServiceVariables context={context} />
          </TabPanel>
        ) : null}
        {kind.hasLinks ? (
          <TabPanel id="domains" className="tab-panel">
            <ServiceDomains context={context} />
          </TabPanel>
        ) : null}
        <TabPanel id="settings" className="tab-panel">
          {service.data === undefined ? null : (
            <Suspense fallback={<Spinner label="Loading the settings…" />}>
              <ServiceSettings context={context} service={service.data} />
            </Suspense>
          )}
        </TabPanel>
      </Tabs>
    </main>
  );
}

function describe(kind: ServiceKind, service: AnyService): [string, string][] {
  const facts: [string, string][] = [];
  if ('git_repository' in service && service.git_repository !== undefined && service.git_repository !== null) {
    facts.push(['Repository', service.git_repository.url], ['Branch', service.git_repository.branch], ['Root path', service.git_repository.root_path || '/']);
  }
  if ('terraform_files_source' in service) {
    const git = service.terraform_files_source.git_repository;
    facts.push(['Repository', git.url], ['Branch', git.branch], ['Root path', git.root_path || '/'], ['Engine', service.engine]);
  }
  if (kind.name === 'helm' && 'source' in service && 'repository' in service.source && service.source.repository !== undefined) {
    const chart = service.source.repository;
    facts.push(['Chart', `${chart.chart_name} ${chart.chart_version}`], ['Helm repository', chart.repository.name ?? chart.repository.id]);
  }
  if ('instructions' in service) facts.push(['Model', `${service.model.provider} ${service.model.model}`]);
  if ('image_name' in service) facts.push(['Image', `${service.image_name}:${service.tag}`]);
  if (kind.name === 'database' && 'type' in service) facts.push(['Database', `${service.type} ${service.version}`], ['Mode', service.mode], ['Reachable from', service.accessibility === 'PUBLIC' ? 'the internet' : 'this environment']);
  if ('schedule' in service) {
    const cron = (service.schedule as { cronjob?: { scheduled_at?: string; timezone?: string }; scheduled_at?: string; timezone?: string } | null) ?? undefined;
    const at = cron?.cronjob ?? cron;
    facts.push(['Runs', at?.scheduled_at === undefined ? (kind.name === 'job' ? 'at lifecycle events' : 'when deployed') : `${at.scheduled_at} (${at.timezone ?? 'UTC'})`]);
  }
  if ('ports' in service) facts.push(['Ports', service.ports.length === 0 ? 'none' : service.ports.map((port) => `${port.internal_port}${'publicly_accessible' in port && port.publicly_accessible ? ' (public)' : ''}`).join(', ')]);
  if ('min_running_instances' in service) facts.push(['Instances', `${service.min_running_instances}–${service.max_running_instances}`]);
  if ('cpu' in service) facts.push(['Resources', `${service.cpu} millicores, ${service.memory} MiB`]);
  return facts;
}

function Overview({ context, service, organizationId }: { context: ServiceContext; service: AnyService; organizationId: string }) {
  const { kind, base } = context;
  const status = useQuery({ queryKey: ['service-status', base], queryFn: () => apiRequest<ServiceStatus>('GET', `${base}/status`), refetchInterval: useLiveInterval() });
  const links = useQuery({ queryKey: ['service-links', base], queryFn: () => apiRequest<{ results: ServiceLink[] }>('GET', `${base}/link`), enabled: kind.hasLinks });
  const [actionError, setActionError] = useState<string | undefined>();
  const [deploying, setDeploying] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const queryClient = useQueryClient();
  const url = links.data?.results.find((link) => link.is_default)?.url ?? links.data?.results[0]?.url;
  const state = status.data?.state;
  const permissions = useOrganizationPermissions(organizationId);
  const cannotDeploy = !permissions.can('deploy');
  const cannotWrite = !permissions.can('write');
  const deployNote = useId();
  const deleteNote = useId();

  async function act(action: 'redeploy' | 'restart-service' | 'stop' | 'cancelDeployment') {
    setActionError(undefined);
    try {
      await apiRequest('POST', `${base}/${action}`);
    } catch (error) {
      setActionError(messageOf(error));
    }
    await queryClient.invalidateQueries({ queryKey: ['service-status', base] });
  }
  const busy = state !== undefined && ['QUEUED', 'BUILDING', 'DEPLOYING', 'STOPPING', 'RESTARTING', 'CANCELING'].includes(state);

  return (
    <div className="overview">
      <section aria-labelledby="status-heading" className="card">
        <h2 id="status-heading" className="card-title">
          Status
        </h2>
        {status.isPending ? <Spinner label="Reading its status…" /> : null}
        <ErrorMessage message={status.isError ? messageOf(status.error) : undefined} />
        {status.data === undefined ? null : (
          <>
            <p className="row-facts" aria-live="polite">
              <StatusChip state={status.data.state} />
              {status.data.service_deployment_status === 'OUT_OF_DATE' ? <span className="tag tag-warning">Out of date</span> : null}
              {status.data.service_deployment_status === 'NEVER_DEPLOYED' ? <span className="tag">Never deployed</span> : null}
              {status.data.workload !== undefined && status.data.workload !== null ? (
                <span className={`tag${status.data.workload.health === 'RUNNING' ? '' : ' tag-danger'}`}>
                  {humanState(status.data.workload.health)}
                  {status.data.workload.restarts > 0 ? `, ${status.data.workload.restarts} restarts` : ''}
                </span>
              ) : null}
            </p>
            {status.data.message ? <p className="status-message">{status.data.message}</p> : null}
            <dl className="facts">
              <div>
                <dt>Last deployment</dt>
                <dd>
                  <RelativeTime at={status.data.last_deployment_date} />
                </dd>
              </div>
              {kind.hasLinks ? (
                <div>
                  <dt>URL</dt>
                  <dd>
                    {url === undefined ? (
                      <span className="muted">none (no public port)</span>
                    ) : (
                      <a href={url} target="_blank" rel="noreferrer" className="url" data-volatile="">
                        {url}
                      </a>
                    )}
                  </dd>
                </div>
              ) : null}
            </dl>
          </>
        )}
        <div className="action-bar">
          <Button onPress={() => setDeploying(true)} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
            Deploy…
          </Button>
          <Button variant="secondary" onPress={() => void act('redeploy')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
            Redeploy
          </Button>
          <Button variant="secondary" onPress={() => void act('restart-service')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
            Restart
          </Button>
          <Button variant="secondary" onPress={() => void act('stop')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
            Stop
          </Button>
          {busy ? (
            <Button variant="secondary" onPress={() => void act('cancelDeployment')} isDisabled={cannotDeploy} aria-describedby={cannotDeploy ? deployNote : undefined}>
              Cancel deployment
            </Button>
          ) : null}
        </div>
        <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
        <ErrorMessage message={actionError} />
      </section>
      <section aria-labelledby="settings-heading" className="card">
        <h2 id="settings-heading" className="card-title">
          Settings
        </h2>
        <dl className="facts">
          {describe(kind, service).map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd className="break">{value}</dd>
            </div>
          ))}
          <ServiceDeploymentStageFact serviceId={context.serviceId} />
        </dl>
        <div className="action-bar">
          <Button variant="quiet-danger" onPress={() => setDeleting(true)} isDisabled={cannotWrite} aria-describedby={cannotWrite ? deleteNote : undefined}>
            Delete {kind.label.toLowerCase()}…
          </Button>
        </div>
        <PermissionNote id={deleteNote} reason={permissions.reason('write')} />
      </section>
      <ServiceOverviewExtras context={context} service={service} />
      {deploying ? <DeployDialog context={context} byTag={kind.name === 'container' || ('source' in service && 'image' in service.source && service.source.image !== undefined && service.source.image !== null)} onClose={() => setDeploying(false)} /> : null}
      {deleting ? <DeleteServiceDialog context={context} name={service.name} onClose={() => setDeleting(false)} /> : null}
    </div>
  );
}

/** Deploy the branch's head or the configured tag, or a given commit or tag. */
function DeployDialog({ context, byTag, onClose }: { context: ServiceContext; byTag: boolean; onClose: () => void }) {
  const { kind, base } = context;
  const [version, setVersion] = useState('');
  const [error, setError] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const queryClient = useQueryClient();
  const field = byTag ? 'image_tag' : 'git_commit_id';
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(undefined);
    try {
      await apiRequest('POST', `${base}/deploy`, version.trim() === '' || kind.name === 'database' ? {} : { [field]: version.trim() });
      await queryClient.invalidateQueries({ queryKey: ['service-status', base] });
      await queryClient.invalidateQueries({ queryKey: ['service-deployments', base] });
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setPending(false);
    }
  }
  return (
    <ModalDialog title="Deploy" isOpen onOpenChange={(open) => (open ? undefined : onClose())}>
      <Form className="form" onSubmit={(event) => void submit(event)}>
        {kind.name === 'database' ? (
          <p>Deploys the database with its current settings.</p>
        ) : (
          <TextField
            label={byTag ? 'Image tag (optional)' : 'Commit (optional)'}
            value={version}
            onChange={(value) => {
              setVersion(value);
              setError(undefined);
            }}
            autoFocus
            errorMessage={fieldErrorsOf(error).get(field)}
            description={byTag ? 'Empty: the tag in its settings.' : 'The full commit id (40 characters). Empty: the head of its branch.'}
          />
        )}
        <ErrorMessage message={error === undefined ? undefined : summaryOf(error)} />
        <div className="form-actions">
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
          <Button type="submit">Deploy</Button>
        </div>
      </Form>
    </ModalDialog>
  );
}
