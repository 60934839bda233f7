import { useInfiniteQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, apiRequest, messageOf, type paths } from '../../api/client.ts';
import type { Permissions } from '../../auth/permissions.ts';
import { Button, ErrorMessage, RelativeTime, Spinner, StatusChip, humanState } from '../../ui/controls.tsx';
import { PermissionNote } from '../../ui/PermissionNote.tsx';
import { useLiveInterval } from '../live.ts';
import { ACTIONS, duration } from '../ServiceDeployments.tsx';
import { CancelRequestCell, RequestedCell, RequestStatusCell, useDeploymentRequestCancel } from './DeploymentRequestRow.tsx';
import { downloadFile } from './download.ts';

type HistoryPage = paths['/environment/{environmentId}/deploymentHistoryV2']['get']['responses']['200']['content']['application/json'];
type HistoryEntry = HistoryPage['results'][number];
type QueueEntry = paths['/environment/{environmentId}/deploymentQueue']['get']['responses']['200']['content']['application/json']['results'][number];

/** A stage's or a service's progress inside an execution ("Done", "Ongoing", "Success"). */
function Progress({ status }: { status: string }) {
  const state = status === 'DONE' || status === 'SUCCESS' ? 'DEPLOYED' : status === 'ERROR' ? 'DEPLOYMENT_ERROR' : status === 'ONGOING' ? 'DEPLOYING' : status;
  return <StatusChip state={state} label={humanState(status)} />;
}

const HISTORY_PAGE_SIZE = 10;
/** A build usage report lives on the server an hour: long enough to download it again. */
const REPORT_LIFETIME_SECONDS = 3600;

/**
 * The environment's deployments: the queue (requests waiting for the cluster's agent or under way, each cancellable)
 * and the history (V2: each execution with its stages, the services each ran and how each ended, and its build usage
 * report). The V1 history lists the same executions without their services, so V2 is the one shown.
 */
export function EnvironmentDeployments({ environmentId, permissions }: { environmentId: string; permissions: Permissions }) {
  return (
    <>
      <DeploymentQueue environmentId={environmentId} permissions={permissions} />
      <DeploymentHistory environmentId={environmentId} />
    </>
  );
}

function subjectOf(entry: QueueEntry): string {
  const names = entry.stages.flatMap((stage) => stage.services.map((service) => service.identifier.name));
  return names.length === 0 ? 'the environment' : names.join(', ');
}

function DeploymentQueue({ environmentId, permissions }: { environmentId: string; permissions: Permissions }) {
  const queue = api.useQuery('get', '/environment/{environmentId}/deploymentQueue', { params: { path: { environmentId } } }, { refetchInterval: useLiveInterval() });
  const cannotDeploy = !permissions.can('deploy');
  const deployNote = useId();
  const cancel = useDeploymentRequestCancel([
    ['get', '/environment/{environmentId}/deploymentQueue'],
    ['get', '/environment/{environmentId}/statuses'],
    ['environment-history', environmentId],
  ]);
  const entries = queue.data?.results ?? [];
  return (
    <section aria-labelledby="queue-heading" className="section environment-queue">
      <div className="section-heading">
        <h2 id="queue-heading">Deployment queue</h2>
      </div>
      <p className="muted section-intro">Requests waiting for the cluster’s agent or under way, oldest first. A queued request is cancelled at once; one under way stops at the agent’s next step.</p>
      {queue.isPending ? <Spinner label="Loading the queue…" /> : null}
      <ErrorMessage message={queue.isError ? messageOf(queue.error) : undefined} />
      <PermissionNote id={deployNote} reason={permissions.reason('deploy')} />
      {queue.isSuccess && entries.length === 0 ? <p className="muted" role="status">Nothing is queued.</p> : null}
      {entries.length === 0 ? null : (
        <table className="table queue-table" aria-labelledby="queue-heading">
          <thead>
            <tr>
              <th scope="col">Action</th>
              <th scope="col">Status</th>
              <th scope="col">Services by stage</th>
              <th scope="col">Requested</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => {
              const id = entry.identifier.deployment_request_id;
              return (
                <tr key={id}>
                  <th scope="row" data-label="Action">
                    {ACTIONS[entry.trigger_action]} <span className="muted">{subjectOf(entry)}</span>
                  </th>
                  <RequestStatusCell entry={entry} cancel={cancel} />
                  <td data-label="Services by stage">
                    <ul className="stage-list">
                      {entry.stages.map((stage) => (
                        <li key={stage.name}>
                          <span className="stage-name">{stage.name.toLowerCase()}</span>{' '}
                          {stage.services.map((service) => (
                            <span key={service.identifier.service_id} className="stage-service">
                              {service.identifier.name} <Progress status={service.status} />
                            </span>
                          ))}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <RequestedCell entry={entry} />
                  <CancelRequestCell
                    entry={entry}
                    cancel={cancel}
                    label={`Cancel the ${ACTIONS[entry.trigger_action].toLowerCase()} of ${subjectOf(entry)}`}
                    permissionNote={cannotDeploy ? deployNote : undefined}
                  />
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function DeploymentHistory({ environmentId }: { environmentId: string }) {
  const history = useInfiniteQuery({
    queryKey: ['environment-history', environmentId],
    queryFn: ({ pageParam }) => apiRequest<HistoryPage>('GET', `/environment/${environmentId}/deploymentHistoryV2?pageSize=${HISTORY_PAGE_SIZE}${pageParam === undefined ? '' : `&cursor=${pageParam}`}`),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    refetchInterval: useLiveInterval(2),
  });
  const entries = history.data?.pages.flatMap((page) => page.results) ?? [];
  return (
    <section aria-labelledby="history-heading" className="section">
      <div className="section-heading">
        <h2 id="history-heading">Deployment history</h2>
      </div>
      {history.isPending ? <Spinner label="Loading the history…" /> : null}
      <ErrorMessage message={history.isError ? messageOf(history.error) : undefined} />
      {history.isSuccess && entries.length === 0 ? (
        <div className="empty card">
          <h3>Not deployed yet</h3>
          <p className="muted">Each deployment, stop or restart of the environment or of one of its services appears here with how each service ended.</p>
        </div>
      ) : null}
      {entries.length === 0 ? null : (
        <ol className="deployments" aria-labelledby="history-heading">
          {entries.map((entry) => (
            <HistoryItem key={entry.identifier.execution_id} environmentId={environmentId} entry={entry} />
          ))}
        </ol>
      )}
      {history.hasNextPage ? (
        <Button variant="secondary" onPress={() => void history.fetchNextPage()}>
          Show older deployments
        </Button>
      ) : null}
    </section>
  );
}

function HistoryItem({ environmentId, entry }: { environmentId: string; entry: HistoryEntry }) {
  const headingId = useId();
  const services = entry.stages.flatMap((stage) => stage.services.map((service) => ({ stage: stage.name, service })));
  return (
    <li className="card deployment history-entry" aria-labelledby={headingId}>
      <div className="deployment-main">
        <StatusChip state={entry.status} />
        <h3 id={headingId} className="deployment-action">
          {ACTIONS[entry.trigger_action]} {services.length === 1 ? (services[0]?.service.identifier.name ?? '') : `of ${services.length} services`}
        </h3>
        <span className="muted">
          <RelativeTime at={entry.auditing_data.created_at} /> by {entry.auditing_data.triggered_by} · took {duration(entry.total_duration)}
        </span>
      </div>
      {entry.message ? <p className="status-message">{entry.message}</p> : null}
      {services.length === 0 ? null : (
        <ul className="history-services" aria-label="Services of this deployment">
          {services.map(({ stage, service }) => {
            const version = service.details.commit?.git_commit_id.slice(0, 12) ?? service.details.tag;
            return (
              <li key={`${stage}-${service.identifier.service_id}`}>
                <span className="history-service-name">{service.identifier.name}</span>
                <StatusChip state={service.status} />
                {version === undefined ? null : <code className="version">{version}</code>}
                <span className="muted">
                  {stage.toLowerCase()} · {duration(service.total_duration)}
                </span>
                {service.message && service.message !== entry.message ? <span className="status-message">{service.message}</span> : null}
              </li>
            );
          })}
        </ul>
      )}
      <BuildUsageReport environmentId={environmentId} executionId={entry.identifier.execution_id} />
    </li>
  );
}

/** The execution's build usage report: written on demand, downloaded as CSV, deleted before it expires. */
function BuildUsageReport({ environmentId, executionId }: { environmentId: string; executionId: string }) {
  const [reportPath, setReportPath] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [note, setNote] = useState<string | undefined>();
  const generate = api.useMutation('post', '/environment/{environmentId}/deploymentBuildUsageReport', {
    onSuccess: (answer) => {
      setReportPath(new URL(answer.report_url, location.origin).pathname);
      setNote('Report ready: it is kept for an hour.');
    },
    onError: (caught) => setError(messageOf(caught)),
  });
  const remove = api.useMutation('delete', '/environment/{environmentId}/deploymentBuildUsageReport/{reportId}', {
    onSuccess: () => {
      setReportPath(undefined);
      setNote('Report deleted.');
    },
    onError: (caught) => setError(messageOf(caught)),
  });
  const reportId = reportPath?.split('/').pop();
  async function download(path: string) {
    setError(undefined);
    try {
      await downloadFile(path, `build-usage-${executionId}.csv`);
    } catch (caught) {
      setError(messageOf(caught));
    }
  }
  return (
    <div className="report-actions">
      {reportPath === undefined || reportId === undefined ? (
        <Button
          variant="secondary"
          onPress={() => {
            if (generate.isPending) return;
            setError(undefined);
            setNote(undefined);
            generate.mutate({ params: { path: { environmentId } }, body: { execution_id: executionId, report_expiration_in_seconds: REPORT_LIFETIME_SECONDS } });
          }}
        >
          Build usage report
        </Button>
      ) : (
        <>
          <Button variant="secondary" onPress={() => void download(reportPath)}>
            Download report (CSV)
          </Button>
          <Button variant="quiet-danger" onPress={() => (setError(undefined), remove.mutate({ params: { path: { environmentId, reportId } } }))}>
            Delete report
          </Button>
        </>
      )}
      <span role="status" className="saved-note">
        {note ?? ''}
      </span>
      <ErrorMessage message={error} />
    </div>
  );
}
