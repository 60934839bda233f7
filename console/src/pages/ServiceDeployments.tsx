import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { apiRequest, messageOf, type DeploymentState } from '../api/client.ts';
import type { LogLine } from '../services/log-stream.ts';
import { Button, ErrorMessage, RelativeTime, Spinner, StatusChip } from '../ui/controls.tsx';
import { LogView } from '../ui/LogView.tsx';
import { useLiveInterval } from './live.ts';
import type { ServiceContext } from './ServicePage.tsx';

interface HistoryEntry {
  deployment_id: string;
  status: DeploymentState;
  message: string | null;
  total_duration: string;
  status_details: { action: 'DEPLOY' | 'STOP' | 'RESTART'; status: string };
  auditing_data: { created_at: string; triggered_by: string; origin: string };
  details: { commit?: { git_commit_id: string }; tag?: string };
}

/** "PT1M5.2S" → "1 min 5 s". */
export function duration(iso: string): string {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$/.exec(iso);
  if (match === null) return iso;
  const [, hours, minutes, seconds] = match;
  const parts = [hours === undefined ? '' : `${hours} h`, minutes === undefined ? '' : `${minutes} min`, seconds === undefined ? '' : `${Math.round(Number(seconds))} s`].filter((part) => part !== '');
  return parts.length === 0 ? '0 s' : parts.join(' ');
}

export const ACTIONS = { DEPLOY: 'Deploy', STOP: 'Stop', RESTART: 'Restart' } as const;

/** The service's deployments, newest first, each with what it deployed, who asked, how long it took and its log. */
export function ServiceDeployments({ context }: { context: ServiceContext }) {
  const { base } = context;
  const history = useQuery({
    queryKey: ['service-deployments', base],
    queryFn: () => apiRequest<{ results: HistoryEntry[]; next_cursor: string | null }>('GET', `${base}/deploymentHistoryV2?pageSize=30`),
    refetchInterval: useLiveInterval(2),
  });
  const [open, setOpen] = useState<string | undefined>();
  if (history.isPending) return <Spinner label="Loading deployments…" />;
  if (history.isError) return <ErrorMessage message={messageOf(history.error)} />;
  if (history.data.results.length === 0) {
    return (
      <div className="empty card">
        <h2 className="card-title">Not deployed yet</h2>
        <p className="muted">Its deployments appear here, each with its log, once you deploy it (Overview, “Deploy…”).</p>
      </div>
    );
  }
  return (
    <ol className="deployments" aria-label="Deployments">
      {history.data.results.map((entry) => {
        const version = entry.details.commit?.git_commit_id.slice(0, 12) ?? entry.details.tag;
        return (
          <li key={entry.deployment_id} className="card deployment">
            <div className="deployment-main">
              <StatusChip state={entry.status} />
              <span className="deployment-action">{ACTIONS[entry.status_details.action]}</span>
              {version === undefined ? null : <code className="version">{version}</code>}
              <span className="muted">
                <RelativeTime at={entry.auditing_data.created_at} /> · took {duration(entry.total_duration)}
              </span>
              <Button variant="secondary" className="deployment-toggle" aria-expanded={open === entry.deployment_id} onPress={() => setOpen(open === entry.deployment_id ? undefined : entry.deployment_id)}>
                {open === entry.deployment_id ? 'Hide log' : 'Show log'}
              </Button>
            </div>
            {entry.message ? <p className="status-message">{entry.message}</p> : null}
            {open === entry.deployment_id ? <DeploymentLog base={base} deploymentId={entry.deployment_id} /> : null}
          </li>
        );
      })}
    </ol>
  );
}

function DeploymentLog({ base, deploymentId }: { base: string; deploymentId: string }) {
  const log = useQuery({ queryKey: ['deployment-log', base, deploymentId], queryFn: () => apiRequest<{ results: LogLine[] }>('GET', `${base}/log?deploymentId=${deploymentId}`) });
  if (log.isPending) return <Spinner label="Loading the log…" />;
  if (log.isError) return <ErrorMessage message={messageOf(log.error)} />;
  if (log.data.results.length === 0) return <p className="muted">This deployment has no log lines.</p>;
  return <LogView lines={log.data.results} className="log-static" role="region" label={`Log of deployment ${deploymentId.slice(0, 8)}`} />;
}
