import { useEffect, useRef, useState } from 'react';
import { api, messageOf, type paths } from '../../api/client.ts';
import type { LogLine } from '../../services/log-stream.ts';
import { Button, ErrorMessage, RelativeTime, Spinner, StatusChip } from '../../ui/controls.tsx';
import { LogView } from '../../ui/LogView.tsx';
import { useLiveInterval } from '../live.ts';
import { ACTIONS } from '../ServiceDeployments.tsx';

/** Activity entries shown before "Show all": the log lines below stay within reach. */
const FIRST_ENTRIES = 15;

type Activity = paths['/environment/{environmentId}/log']['get']['responses']['200']['content']['application/json']['results'][number];
type RecordedLine = paths['/environment/{environmentId}/logs']['get']['responses']['200']['content']['application/json'][number];

/** A recorded line as the log view shows it: the service that printed it first, an error's message in the error colour. */
function asLogLine(line: RecordedLine): LogLine {
  const text = line.error?.user_log_message ?? line.message?.safe_message ?? '';
  return { id: `${line.deployment_id}:${line.seq}`, created_at: line.timestamp, message: `${line.details.transmitter.name} | ${text}`, deployment_id: line.deployment_id, stream: line.error === null ? 'stdout' : 'stderr', seq: line.seq };
}

/**
 * The environment's logs: its activity (each deploy, stop and restart of it or of one of its services: who asked,
 * how it ended, why it waits or failed), and the lines its services' deployments recorded — of each service's newest
 * deployment, or of one activity's request once chosen.
 */
export function EnvironmentLogs({ environmentId }: { environmentId: string }) {
  const activity = api.useQuery('get', '/environment/{environmentId}/log', { params: { path: { environmentId } } }, { refetchInterval: useLiveInterval(2) });
  const [chosen, setChosen] = useState<Activity | undefined>();
  const [showAll, setShowAll] = useState(false);
  const all = activity.data?.results ?? [];
  const entries = showAll ? all : all.slice(0, FIRST_ENTRIES);
  return (
    <>
      <section aria-labelledby="activity-heading" className="section activity-section">
        <div className="section-heading">
          <h2 id="activity-heading">Activity</h2>
        </div>
        {activity.isPending ? <Spinner label="Loading the activity…" /> : null}
        <ErrorMessage message={activity.isError ? messageOf(activity.error) : undefined} />
        {activity.isSuccess && entries.length === 0 ? <p className="muted">Nothing has been deployed, stopped or restarted here yet.</p> : null}
        {entries.length === 0 ? null : (
          <table className="table activity-table" aria-labelledby="activity-heading">
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">Outcome</th>
                <th scope="col">When</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => {
                const subject = entry.service?.name ?? entry.scope.name;
                return (
                  <tr key={entry.id} aria-current={chosen?.id === entry.id ? 'true' : undefined}>
                    <th scope="row" data-label="Action">
                      {ACTIONS[entry.action]} <span className="muted">{subject}</span>
                    </th>
                    <td data-label="Outcome">
                      <StatusChip state={entry.status} />
                      {entry.message ? <span className="status-message"> {entry.message}</span> : null}
                    </td>
                    <td data-label="When">
                      <RelativeTime at={entry.created_at} />
                    </td>
                    <td className="actions-cell">
                      <Button variant="secondary" aria-label={`Log lines of the ${ACTIONS[entry.action].toLowerCase()} of ${subject}`} aria-pressed={chosen?.id === entry.id} onPress={() => setChosen(entry)}>
                        Log lines
                      </Button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        {all.length > entries.length ? (
          <Button variant="secondary" onPress={() => setShowAll(true)}>
            Show all {all.length} entries
          </Button>
        ) : null}
      </section>
      <RecordedLines environmentId={environmentId} chosen={chosen} onShowNewest={() => setChosen(undefined)} />
    </>
  );
}

function RecordedLines({ environmentId, chosen, onShowNewest }: { environmentId: string; chosen: Activity | undefined; onShowNewest: () => void }) {
  const lines = api.useQuery(
    'get',
    '/environment/{environmentId}/logs',
    { params: { path: { environmentId }, query: chosen === undefined ? {} : { version: chosen.id } } },
    { refetchInterval: useLiveInterval(2) },
  );
  const heading = useRef<HTMLHeadingElement>(null);
  // The lines chosen in the activity are further down the page: the focus moves to them (and the page scrolls there).
  useEffect(() => {
    if (chosen !== undefined) heading.current?.focus();
  }, [chosen]);
  const title = chosen === undefined ? 'Newest deployment of each service' : `${ACTIONS[chosen.action]} of ${chosen.service?.name ?? chosen.scope.name}`;
  return (
    <section aria-labelledby="lines-heading" className="section">
      <div className="section-heading">
        <h2 id="lines-heading" ref={heading} tabIndex={-1}>
          Log lines
        </h2>
        {chosen === undefined ? null : (
          <Button variant="secondary" onPress={onShowNewest}>
            Show the newest of each service
          </Button>
        )}
      </div>
      <p className="muted section-intro">{title} (the last 1,000 lines).</p>
      {lines.isPending ? <Spinner label="Loading the log lines…" /> : null}
      <ErrorMessage message={lines.isError ? messageOf(lines.error) : undefined} />
      {lines.isSuccess ? (
        <LogView lines={lines.data.map(asLogLine)} className="log-static" role="region" label={`Log lines: ${title}`} empty={<p className="log-empty">No line was recorded.</p>} />
      ) : null}
    </section>
  );
}
