import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ReactNode } from 'react';
import { api, apiRequest, messageOf, type components } from '../../api/client.ts';
import { useOrganizationPermissions } from '../../auth/permissions.ts';
import type { AnyService } from '../../services/kinds.ts';
import { Button, ErrorMessage, RelativeTime, Spinner, StatusChip } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import type { ServiceContext } from '../ServicePage.tsx';
import { DatabaseApplications, DatabaseBackups } from './DatabaseBackups.tsx';

type Commit = components['schemas']['Commit'];

/** Whether the service is built from a git repository (what commits, contributors and the git webhook are about). */
export function builtFromGit(service: AnyService): boolean {
  const stored = service as unknown as { git_repository?: unknown; terraform_files_source?: unknown; source?: { docker?: unknown; git?: unknown } | null };
  return Boolean(stored.git_repository ?? stored.terraform_files_source ?? stored.source?.docker ?? stored.source?.git);
}

function isCronJob(service: AnyService): boolean {
  return Boolean((service as { schedule?: { cronjob?: unknown } | null }).schedule?.cronjob);
}

/**
 * The overview's cards beyond the status and settings, each shown where the kind has it: the public route's state
 * (applications, containers, Helm charts), the git webhook and the branch's commits (services built from git), an
 * application's contributors, a Helm chart's Kubernetes Services, a Terraform service's resources, a cron job's
 * failed runs, and a database's backups and connected applications.
 */
export function ServiceOverviewExtras({ context, service }: { context: ServiceContext; service: AnyService }) {
  const { kind } = context;
  const fromGit = builtFromGit(service);
  return (
    <>
      {kind.name === 'application' || kind.name === 'container' || kind.name === 'helm' ? <PublicRouteCard context={context} serviceType={kind.type as 'APPLICATION' | 'CONTAINER' | 'HELM'} /> : null}
      {fromGit ? <GitWebhookCard context={context} /> : null}
      {fromGit && (kind.name === 'application' || kind.name === 'job' || kind.name === 'helm' || kind.name === 'terraform') ? <CommitsCard context={context} /> : null}
      {fromGit && kind.name === 'application' ? <ContributorsCard context={context} /> : null}
      {kind.name === 'helm' ? <HelmServicesCard context={context} /> : null}
      {kind.name === 'terraform' ? <TerraformResourcesCard context={context} /> : null}
      {kind.name === 'job' && isCronJob(service) ? <FailedRunsCard context={context} /> : null}
      {kind.name === 'database' ? (
        <>
          <DatabaseBackups context={context} />
          <DatabaseApplications context={context} />
        </>
      ) : null}
    </>
  );
}

function Card({ id, title, wide, children }: { id: string; title: string; wide?: boolean; children: ReactNode }) {
  return (
    <section aria-labelledby={`${id}-heading`} className={wide === true ? 'card card-wide' : 'card'}>
      <h2 id={`${id}-heading`} className="card-title">
        {title}
      </h2>
      {children}
    </section>
  );
}

const ROUTE_WORDS: Partial<Record<string, string>> = {
  STOPPED: 'Nothing is routed to it: it has no public port, or it is stopped.',
  DEPLOYED: 'The internet reaches it at its public port.',
  READY: 'Not routed yet: the route is deployed with the service.',
};

/** getIngressDeploymentStatus: whether the route from the internet to the service is deployed. */
function PublicRouteCard({ context, serviceType }: { context: ServiceContext; serviceType: 'APPLICATION' | 'CONTAINER' | 'HELM' }) {
  const route = api.useQuery('get', '/{serviceType}/{serviceId}/ingressDeploymentStatus', { params: { path: { serviceType, serviceId: context.serviceId } } });
  return (
    <Card id="public-route" title="Public route">
      {route.isPending ? <Spinner label="Reading the route’s state…" /> : null}
      <ErrorMessage message={route.isError ? messageOf(route.error) : undefined} />
      {route.data === undefined ? null : (
        <p className="row-facts">
          <StatusChip state={route.data.status} />
          <span className="muted">{ROUTE_WORDS[route.data.status] ?? 'The route is deployed with the service and follows its deployment.'}</span>
        </p>
      )}
    </Card>
  );
}

const PROVIDER_NAMES = { GITHUB: 'GitHub', GITLAB: 'GitLab', BITBUCKET: 'Bitbucket' } as const;

type WebhookState = 'ACTIVE' | 'NOT_CONFIGURED' | 'MISCONFIGURED' | 'UNABLE_TO_VERIFY';

const WEBHOOK_WORDS: Record<WebhookState, { label: string; state: string; explanation: string }> = {
  ACTIVE: { label: 'Active', state: 'DEPLOYED', explanation: 'A push to its branch deploys it; a pull request gets a preview environment.' },
  NOT_CONFIGURED: { label: 'Not configured', state: 'STOPPED', explanation: 'The repository has no hook for this service: set it up to deploy on push.' },
  MISCONFIGURED: { label: 'Misconfigured', state: 'DEPLOYMENT_ERROR', explanation: 'The hook is inactive or misses events: set it up again.' },
  UNABLE_TO_VERIFY: { label: 'Cannot verify', state: 'QUEUED', explanation: 'The git host could not be asked (no git token, or unreachable).' },
};

/** getServiceGitWebhookStatus and syncServiceGitWebhook: the repository's hook that deploys the service on push. */
function GitWebhookCard({ context }: { context: ServiceContext }) {
  const path = { params: { path: { serviceId: context.serviceId } } };
  const status = api.useQuery('get', '/service/{serviceId}/gitWebhookStatus', path);
  const queryClient = useQueryClient();
  const sync = api.useMutation('post', '/service/{serviceId}/gitWebhook/sync', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['get', '/service/{serviceId}/gitWebhookStatus'] }),
  });
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotWrite = !permissions.can('write');
  const note = useId();
  const shown = sync.data ?? status.data;
  const words = shown === undefined ? undefined : WEBHOOK_WORDS[shown.status];
  return (
    <Card id="git-webhook" title="Git webhook">
      {status.isPending ? <Spinner label="Asking the git host…" /> : null}
      <ErrorMessage message={status.isError ? messageOf(status.error) : undefined} />
      {shown === undefined || words === undefined ? null : (
        <>
          <p className="row-facts" aria-live="polite">
            <StatusChip state={words.state} label={words.label} />
            <span className="tag">{PROVIDER_NAMES[shown.provider]}</span>
          </p>
          <p className="muted">{words.explanation}</p>
          {shown.status !== 'MISCONFIGURED' || shown.missing_events.length === 0 ? null : <p>Missing events: {shown.missing_events.join(', ')}</p>}
        </>
      )}
      <div className="action-bar">
        <Button variant="secondary" onPress={() => sync.mutate(path)} isDisabled={cannotWrite || sync.isPending} aria-describedby={cannotWrite ? note : undefined}>
          {sync.isPending ? 'Setting up…' : 'Set up the webhook'}
        </Button>
      </div>
      <PermissionNote id={note} reason={permissions.reason('write')} />
      <ErrorMessage message={sync.isError ? messageOf(sync.error) : undefined} />
    </Card>
  );
}

/**
 * Reading a branch's history goes to the git provider (slow, and refused without access to the repository), so the
 * cards that need it read it when asked rather than with every overview.
 */
function ReadOnRequest({ what, onRead }: { what: string; onRead: () => void }) {
  return (
    <div className="action-bar">
      <Button variant="secondary" onPress={onRead}>
        Read the {what}
      </Button>
    </div>
  );
}

/** The branch's commits, newest first, 20 a page; each can be deployed. */
function CommitsCard({ context }: { context: ServiceContext }) {
  const { base } = context;
  const [asked, setAsked] = useState(false);
  const [pages, setPages] = useState<string[]>([]);
  const startId = pages.at(-1);
  const commits = useQuery({
    queryKey: ['service-commits', base, startId],
    queryFn: () => apiRequest<{ results: Commit[] }>('GET', `${base}/commit${startId === undefined ? '' : `?startId=${startId}`}`),
    enabled: asked,
  });
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotDeploy = !permissions.can('deploy');
  const note = useId();
  const queryClient = useQueryClient();
  const [deploying, setDeploying] = useState<string | undefined>();
  const [result, setResult] = useState<{ id: string; message: string; failed: boolean } | undefined>();
  async function deploy(commit: Commit) {
    if (deploying !== undefined) return;
    setDeploying(commit.git_commit_id);
    setResult(undefined);
    try {
      await apiRequest('POST', `${base}/deploy`, { git_commit_id: commit.git_commit_id });
      setResult({ id: commit.git_commit_id, message: `Deploying ${commit.git_commit_id.slice(0, 7)}.`, failed: false });
      await queryClient.invalidateQueries({ queryKey: ['service-status', base] });
      await queryClient.invalidateQueries({ queryKey: ['service-deployments', base] });
    } catch (error) {
      setResult({ id: commit.git_commit_id, message: messageOf(error), failed: true });
    } finally {
      setDeploying(undefined);
    }
  }
  const list = commits.data?.results ?? [];
  return (
    <Card id="commits" title="Commits" wide>
      {asked ? null : <ReadOnRequest what="branch’s commits" onRead={() => setAsked(true)} />}
      {asked && commits.isPending ? <Spinner label="Reading the branch’s commits…" /> : null}
      <ErrorMessage message={commits.isError ? messageOf(commits.error) : undefined} />
      {commits.isSuccess && list.length === 0 ? <p className="muted">No commits.</p> : null}
      {list.length === 0 ? null : (
        <table className="table" aria-label="Commits">
          <thead>
            <tr>
              <th scope="col">Commit</th>
              <th scope="col">Message</th>
              <th scope="col">Author</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((commit) => (
              <tr key={commit.git_commit_id}>
                <td data-label="Commit">
                  {commit.commit_page_url ? (
                    <a href={commit.commit_page_url} target="_blank" rel="noreferrer">
                      <code>{commit.git_commit_id.slice(0, 7)}</code>
                    </a>
                  ) : (
                    <code>{commit.git_commit_id.slice(0, 7)}</code>
                  )}
                  {commit.tag ? <span className="tag">{commit.tag}</span> : null}
                </td>
                <td data-label="Message" className="break">
                  {commit.message.split('\n')[0]}
                  {result?.id === commit.git_commit_id ? result.failed ? <ErrorMessage message={result.message} /> : <span role="status" className="saved-note commit-note">{result.message}</span> : null}
                </td>
                <td data-label="Author">
                  {commit.author_name} <RelativeTime at={commit.created_at} />
                </td>
                <td className="actions-cell">
                  <Button variant="secondary" onPress={() => void deploy(commit)} isDisabled={cannotDeploy || deploying !== undefined} aria-label={`Deploy ${commit.git_commit_id.slice(0, 7)}`} aria-describedby={cannotDeploy ? note : undefined}>
                    {deploying === commit.git_commit_id ? 'Deploying…' : 'Deploy'}
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PermissionNote id={note} reason={permissions.reason('deploy')} />
      <div className="action-bar">
        {pages.length === 0 ? null : (
          <Button variant="secondary" onPress={() => setPages((previous) => previous.slice(0, -1))}>
            Newer commits
          </Button>
        )}
        {list.length < 20 ? null : (
          <Button variant="secondary" onPress={() => setPages((previous) => [...previous, list.at(-1)?.git_commit_id ?? ''])}>
            Older commits
          </Button>
        )}
      </div>
    </Card>
  );
}

/** listApplicationContributor: who committed to the branch, most commits first. */
function ContributorsCard({ context }: { context: ServiceContext }) {
  const [asked, setAsked] = useState(false);
  const contributors = api.useQuery('get', '/application/{applicationId}/contributor', { params: { path: { applicationId: context.serviceId } } }, { enabled: asked });
  const list = [...(contributors.data?.results ?? [])].sort((left, right) => right.commits - left.commits);
  return (
    <Card id="contributors" title="Contributors">
      {asked ? null : <ReadOnRequest what="contributors" onRead={() => setAsked(true)} />}
      {asked && contributors.isPending ? <Spinner label="Reading the contributors…" /> : null}
      <ErrorMessage message={contributors.isError ? messageOf(contributors.error) : undefined} />
      {contributors.isSuccess && list.length === 0 ? <p className="muted">No contributors.</p> : null}
      {list.length === 0 ? null : (
        <table className="table" aria-label="Contributors">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Commits</th>
              <th scope="col">Latest</th>
            </tr>
          </thead>
          <tbody>
            {list.map((person) => (
              <tr key={person.id}>
                <td data-label="Name">{`${person.first_name} ${person.last_name}`.trim()}</td>
                <td data-label="Commits">{person.commits}</td>
                <td data-label="Latest">
                  <RelativeTime at={person.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted">Among the branch’s last 500 commits.</p>
    </Card>
  );
}

/** getHelmKubernetesServices: the Services the chart's declared ports name, with their ports. */
function HelmServicesCard({ context }: { context: ServiceContext }) {
  const services = api.useQuery('get', '/helm/{helmId}/listServices', { params: { path: { helmId: context.serviceId } } });
  const list = services.data?.results ?? [];
  return (
    <Card id="kubernetes-services" title="Kubernetes Services">
      {services.isPending ? <Spinner label="Reading the chart’s Services…" /> : null}
      <ErrorMessage message={services.isError ? messageOf(services.error) : undefined} />
      {services.isSuccess && list.length === 0 ? <p className="muted">No Services: the chart declares no ports.</p> : null}
      {list.length === 0 ? null : (
        <table className="table" aria-label="Kubernetes Services">
          <thead>
            <tr>
              <th scope="col">Service</th>
              <th scope="col">Ports</th>
            </tr>
          </thead>
          <tbody>
            {list.map((entry) => (
              <tr key={entry.metadata.name}>
                <td data-label="Service">
                  <code>{entry.metadata.name}</code>
                </td>
                <td data-label="Ports">{entry.service_spec.ports.map((port) => (port.name ? `${port.port} (${port.name})` : String(port.port))).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted">As the chart’s ports declare them in its settings.</p>
    </Card>
  );
}

/** getTerraformResources: what the last apply's state holds. */
function TerraformResourcesCard({ context }: { context: ServiceContext }) {
  const resources = api.useQuery('get', '/terraform/{terraformId}/terraformResources', { params: { path: { terraformId: context.serviceId } } });
  const list = resources.data?.results ?? [];
  return (
    <Card id="terraform-resources" title="Resources" wide>
      {resources.isPending ? <Spinner label="Reading the resources…" /> : null}
      <ErrorMessage message={resources.isError ? messageOf(resources.error) : undefined} />
      {resources.isSuccess && list.length === 0 ? <p className="muted">No resources yet: they are read from the state after an apply.</p> : null}
      {list.length === 0 ? null : (
        <table className="table" aria-label="Terraform resources">
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Type</th>
              <th scope="col">Provider</th>
            </tr>
          </thead>
          <tbody>
            {list.map((resource) => (
              <tr key={resource.id}>
                <td data-label="Address" className="break">
                  <code>{resource.address}</code>
                  {resource.mode === 'data' ? <span className="tag">data</span> : null}
                </td>
                <td data-label="Type">{resource.resource_type}</td>
                <td data-label="Provider" className="break">
                  {resource.provider}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}

/** cleanFailedJob: forget a cron job's failed last run (and its Kubernetes Jobs). */
function FailedRunsCard({ context }: { context: ServiceContext }) {
  const queryClient = useQueryClient();
  const clean = api.useMutation('post', '/job/{jobId}/cleanFailedJob', {
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['service-status', context.base] }),
  });
  const permissions = useOrganizationPermissions(context.organizationId);
  const cannotDeploy = !permissions.can('deploy');
  const note = useId();
  const removed = clean.data?.clean_kubernetes_jobs;
  return (
    <Card id="failed-runs" title="Failed runs">
      <p className="muted">A failed run stays on the cluster and in the job’s status until it is cleaned or the next run succeeds.</p>
      <div className="action-bar">
        <Button variant="secondary" onPress={() => clean.mutate({ params: { path: { jobId: context.serviceId } } })} isDisabled={cannotDeploy || clean.isPending} aria-describedby={cannotDeploy ? note : undefined}>
          {clean.isPending ? 'Cleaning…' : 'Clean failed runs'}
        </Button>
        <span role="status" className="saved-note">
          {removed === undefined ? '' : removed.length === 0 ? 'Nothing to clean: the last run did not fail.' : `Cleaned: ${removed.join(', ')}.`}
        </span>
      </div>
      <PermissionNote id={note} reason={permissions.reason('deploy')} />
      <ErrorMessage message={clean.isError ? messageOf(clean.error) : undefined} />
    </Card>
  );
}
