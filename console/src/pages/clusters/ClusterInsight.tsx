import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, messageOf, summaryOf } from '../../api/client.ts';
import { Button, ErrorMessage, RelativeTime, SelectField, Spinner, TextField } from '../../ui/controls.tsx';
import { useLiveInterval } from '../live.ts';
import { ClusterCard } from './ClusterCard.tsx';

const SERVICE_TYPES: Record<string, string> = { APPLICATION: 'application', CONTAINER: 'container', DATABASE: 'database', JOB: 'job', HELM: 'helm', TERRAFORM: 'terraform' };

/** The environments placed on the cluster that the person may read, with their project and services. */
export function ClusterEnvironments({ organizationId, clusterId }: { organizationId: string; clusterId: string }) {
  const environments = api.useQuery('get', '/cluster/{clusterId}/environments', { params: { path: { clusterId } } });
  return (
    <div className="cluster-tab">
      <ClusterCard id="cluster-environments" title="Environments on this cluster">
        {environments.isPending ? <Spinner label="Loading the environments…" /> : null}
        <ErrorMessage message={environments.isError ? messageOf(environments.error) : undefined} />
        {environments.data?.results.length === 0 ? <p className="muted">No environment you can read runs on this cluster.</p> : null}
        {environments.data === undefined || environments.data.results.length === 0 ? null : (
          <table className="table" aria-labelledby="cluster-environments-heading">
            <thead>
              <tr>
                <th scope="col">Environment</th>
                <th scope="col">Project</th>
                <th scope="col">Services</th>
              </tr>
            </thead>
            <tbody>
              {environments.data.results.map((environment) => (
                <tr key={environment.environment_id}>
                  <th scope="row" data-label="Environment">
                    <Link to="/organization/$organizationId/project/$projectId/environment/$environmentId" params={{ organizationId, projectId: environment.project_id, environmentId: environment.environment_id }}>
                      {environment.environment_name}
                    </Link>
                  </th>
                  <td data-label="Project">
                    <Link to="/organization/$organizationId/project/$projectId" params={{ organizationId, projectId: environment.project_id }}>
                      {environment.project_name}
                    </Link>
                  </td>
                  <td data-label="Services">
                    {environment.services.length === 0 ? <span className="muted">none</span> : environment.services.map((service) => `${service.name} (${SERVICE_TYPES[service.type] ?? service.type})`).join(', ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ClusterCard>
    </div>
  );
}

/** The cluster's log lines (its deployments, its agent, operator updates), and queries over them in Loki's language. */
export function ClusterLogs({ organizationId, clusterId }: { organizationId: string; clusterId: string }) {
  const logs = api.useQuery('get', '/organization/{organizationId}/cluster/{clusterId}/logs', { params: { path: { organizationId, clusterId } } }, { refetchInterval: useLiveInterval() });
  const lines = [...(logs.data?.results ?? [])].reverse();
  return (
    <div className="cluster-tab">
      <ClusterCard id="cluster-log" title="Log" intro="What happened to the cluster, newest first: its deployments, its agent’s reports, operator updates.">
        {logs.isPending ? <Spinner label="Loading the log…" /> : null}
        <ErrorMessage message={logs.isError ? messageOf(logs.error) : undefined} />
        {logs.data?.results.length === 0 ? <p className="muted">No log lines yet: the cluster has not been deployed and its agent has reported nothing.</p> : null}
        {lines.length === 0 ? null : (
          <table className="table" aria-labelledby="cluster-log-heading">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Level</th>
                <th scope="col">Step</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {lines.slice(0, 200).map((line, index) => (
                <tr key={`${line.timestamp}-${index}`}>
                  <td data-label="When">
                    <RelativeTime at={line.timestamp} />
                  </td>
                  <td data-label="Level">{line.type}</td>
                  <td data-label="Step">{line.step}</td>
                  <td data-label="Message" className="wrap-anywhere">
                    {line.message.safe_message}
                    {line.error === undefined ? null : <span className="field-error"> {line.error.user_log_message}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ClusterCard>
      <LogQuery clusterId={clusterId} />
      <MetricsQuery clusterId={clusterId} />
    </div>
  );
}

interface LokiAnswer {
  data?: { result?: { stream?: Record<string, string>; values?: [string, string][] }[] };
}

function LogQuery({ clusterId }: { clusterId: string }) {
  const [query, setQuery] = useState('{}');
  const [since, setSince] = useState('1h');
  const search = api.useMutation('get', '/cluster/{clusterId}/logs');
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!search.isPending) search.mutate({ params: { path: { clusterId }, query: { endpoint: 'query_range', query: query.trim(), since, limit: '500' } } });
  }
  let found: { at: string; line: string; labels: string }[] = [];
  if (search.data !== undefined) {
    const answer = JSON.parse(search.data.response) as LokiAnswer;
    found = (answer.data?.result ?? []).flatMap((stream) =>
      (stream.values ?? []).map(([nanoseconds, line]) => ({
        at: new Date(Number(BigInt(nanoseconds) / 1_000_000n)).toISOString(),
        line,
        labels: Object.entries(stream.stream ?? {})
          .map(([key, value]) => `${key}=${value}`)
          .join(' '),
      })),
    );
  }
  return (
    <ClusterCard id="cluster-log-query" title="Search the log" intro={'A LogQL stream selector over the labels source (worker, agent, api), type and step, then line filters: {type="error"} |= "timeout".'}>
      <Form className="form inline-form" onSubmit={submit}>
        <TextField label="Query" value={query} onChange={(value) => (search.reset(), setQuery(value))} isRequired maxLength={4096} errorMessage={search.isError ? summaryOf(search.error) : undefined} />
        <SelectField
          id="cluster-log-since"
          label="Over the last"
          value={since}
          onChange={(value) => (search.reset(), setSince(value))}
          options={[
            { value: '1h', label: 'hour' },
            { value: '24h', label: '24 hours' },
            { value: '168h', label: '7 days' },
          ]}
        />
        <div className="form-actions form-actions-start">
          <Button type="submit">Search</Button>
        </div>
      </Form>
      {search.data === undefined ? null : (
        <div role="status">
          <p className="muted">
            {found.length} {found.length === 1 ? 'line' : 'lines'} found.
          </p>
          {found.length === 0 ? null : (
            <ul className="log-query-results">
              {found.map((entry, index) => (
                <li key={`${entry.at}-${index}`}>
                  <code>{entry.at}</code> <span className="muted">{entry.labels}</span> {entry.line}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </ClusterCard>
  );
}

interface PrometheusAnswer {
  data?: { resultType?: string; result?: unknown[] };
}

function MetricsQuery({ clusterId }: { clusterId: string }) {
  const [query, setQuery] = useState('up');
  const search = api.useMutation('get', '/cluster/{clusterId}/metrics');
  function submit(event: FormEvent) {
    event.preventDefault();
    if (!search.isPending) search.mutate({ params: { path: { clusterId }, query: { endpoint: 'query', query: query.trim() } } });
  }
  const answer = search.data === undefined ? undefined : (JSON.parse(search.data.metrics) as PrometheusAnswer);
  return (
    <ClusterCard id="cluster-metrics" title="Metrics" intro="A Prometheus query over the cluster’s metrics. No driver reports metrics yet, so every query answers an empty result rather than an error.">
      <Form className="form inline-form" onSubmit={submit}>
        <TextField label="PromQL query" value={query} onChange={(value) => (search.reset(), setQuery(value))} isRequired maxLength={4096} errorMessage={search.isError ? summaryOf(search.error) : undefined} />
        <div className="form-actions form-actions-start">
          <Button type="submit">Query</Button>
        </div>
      </Form>
      {answer === undefined ? null : (
        <p role="status">
          {(answer.data?.result ?? []).length} series ({answer.data?.resultType ?? 'no result type'}).
        </p>
      )}
    </ClusterCard>
  );
}

/** A datetime-local input's value for a moment, in the browser's time zone. */
function localInput(date: Date): string {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

/** The Kubernetes events the cluster's agent reported, over a time range, filtered by pod, node or component. */
export function ClusterEvents({ clusterId }: { clusterId: string }) {
  const [from, setFrom] = useState(() => localInput(new Date(Date.now() - 24 * 3600_000)));
  const [to, setTo] = useState(() => localInput(new Date(Date.now() + 3600_000)));
  const [pod, setPod] = useState('');
  const [node, setNode] = useState('');
  const [component, setComponent] = useState('');
  const [applied, setApplied] = useState({ from, to, pod, node, component });
  const events = api.useQuery('get', '/cluster/{clusterId}/events', {
    params: {
      path: { clusterId },
      query: {
        from_date_time: new Date(applied.from).toISOString(),
        to_date_time: new Date(applied.to).toISOString(),
        ...(applied.pod === '' ? {} : { pod_name: applied.pod }),
        ...(applied.node === '' ? {} : { node_name: applied.node }),
        ...(applied.component === '' ? {} : { reporting_component: applied.component }),
      },
    },
  });
  const valid = !Number.isNaN(new Date(from).getTime()) && !Number.isNaN(new Date(to).getTime());
  function submit(event: FormEvent) {
    event.preventDefault();
    if (valid) setApplied({ from, to, pod: pod.trim(), node: node.trim(), component: component.trim() });
  }
  return (
    <div className="cluster-tab">
      <ClusterCard id="cluster-events" title="Kubernetes events" intro="The events of the namespaces Slipway made, as the cluster’s Kubernetes agent reports them every 15 seconds. A LOCAL cluster reports none: its workloads’ health shows on their services.">
        <Form className="form filter-form" onSubmit={submit}>
          <div className="field">
            <label htmlFor="events-from">From</label>
            <input id="events-from" type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} required />
          </div>
          <div className="field">
            <label htmlFor="events-to">To</label>
            <input id="events-to" type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} required />
          </div>
          <TextField label="Pod (optional)" value={pod} onChange={setPod} maxLength={253} />
          <TextField label="Node (optional)" value={node} onChange={setNode} maxLength={253} />
          <TextField label="Reporting component (optional)" value={component} onChange={setComponent} maxLength={253} placeholder="kubelet" />
          <div className="form-actions form-actions-start">
            <Button type="submit" isDisabled={!valid}>
              Show events
            </Button>
          </div>
        </Form>
        {events.isPending ? <Spinner label="Loading the events…" /> : null}
        <ErrorMessage message={events.isError ? messageOf(events.error) : undefined} />
        {events.data?.results.length === 0 ? (
          <p className="muted" role="status">
            No events in this range.
          </p>
        ) : null}
        {events.data === undefined || events.data.results.length === 0 ? null : (
          <table className="table" aria-labelledby="cluster-events-heading">
            <thead>
              <tr>
                <th scope="col">Last seen</th>
                <th scope="col">Type</th>
                <th scope="col">Object</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
                <th scope="col">Count</th>
              </tr>
            </thead>
            <tbody>
              {events.data.results.map((event, index) => (
                <tr key={`${event.namespace}/${event.name}/${event.last_occurrence}/${index}`}>
                  <td data-label="Last seen">
                    <RelativeTime at={event.last_occurrence} />
                  </td>
                  <td data-label="Type">{event.type}</td>
                  <td data-label="Object" className="wrap-anywhere">
                    {event.kind} {event.namespace}/{event.name}
                  </td>
                  <td data-label="Reason">{event.reason}</td>
                  <td data-label="Message" className="wrap-anywhere">
                    {event.message}
                    <span className="muted"> ({event.reporting_component})</span>
                  </td>
                  <td data-label="Count">{event.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ClusterCard>
    </div>
  );
}
