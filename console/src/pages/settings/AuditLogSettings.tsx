import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Fragment, useState } from 'react';
import { api, apiRequest, messageOf, type components } from '../../api/client.ts';
import { Button, ErrorMessage, SelectField, Spinner, TextField } from '../../ui/controls.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Event = components['schemas']['OrganizationEventResponse'];
interface Page {
  events: Event[];
  links: { previous?: string; next?: string };
}

const TARGETS: readonly Event['target_type'][] = ['ORGANIZATION', 'MEMBERS_AND_ROLES', 'PROJECT', 'ENVIRONMENT', 'APPLICATION', 'CONTAINER', 'DATABASE', 'JOB', 'HELM', 'TERRAFORM', 'CLUSTER', 'CONTAINER_REGISTRY', 'WEBHOOK'];
const EVENTS: readonly Event['event_type'][] = ['CREATE', 'UPDATE', 'DELETE', 'ACCEPT', 'CLONE', 'TRIGGER_DEPLOY', 'TRIGGER_STOP', 'TRIGGER_RESTART', 'TRIGGER_DELETE', 'TRIGGER_CANCEL', 'TRIGGER_REDEPLOY', 'DEPLOYED', 'DEPLOY_FAILED', 'LOCK', 'UNLOCK'];
const ORIGINS: readonly Event['origin'][] = ['CONSOLE', 'API', 'CLI', 'GIT', 'PLATFORM_INTERNAL', 'TERRAFORM_PROVIDER'];

/** UPDATE → "Update", MEMBERS_AND_ROLES → "Members and roles". */
function words(value: string): string {
  const text = value.toLowerCase().replaceAll('_', ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function options<Value extends string>(values: readonly Value[], any: string): { value: Value | ''; label: string }[] {
  return [{ value: '', label: any }, ...values.map((value) => ({ value, label: words(value) }))];
}

/** The change as the API recorded it (JSON text, secrets already masked as ********), indented when it parses. */
function pretty(change: string): string {
  try {
    return JSON.stringify(JSON.parse(change), null, 2);
  } catch {
    return change;
  }
}

/**
 * The organization's audit log: newest first, filtered by target (its type, then one of the targets the log has
 * events about: getOrganizationEventTargets under the other filters), action, origin, author and time range, a page
 * at a time (the API's `links`), each entry expandable to its change and request.
 */
export function AuditLogSettings() {
  const { organizationId } = route.useParams();
  const [target, setTarget] = useState<Event['target_type'] | ''>('');
  const [targetId, setTargetId] = useState('');
  const [action, setAction] = useState<Event['event_type'] | ''>('');
  const [origin, setOrigin] = useState<Event['origin'] | ''>('');
  const [author, setAuthor] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [page, setPage] = useState<string | undefined>();
  const [open, setOpen] = useState<string | undefined>();
  const query = new URLSearchParams({ pageSize: '20' });
  if (target !== '') query.set('targetType', target);
  if (action !== '') query.set('eventType', action);
  if (origin !== '') query.set('origin', origin);
  if (author.trim() !== '') query.set('triggeredBy', author.trim());
  if (from !== '') query.set('fromTimestamp', new Date(`${from}T00:00:00`).toISOString());
  if (to !== '') query.set('toTimestamp', new Date(`${to}T23:59:59.999`).toISOString());
  // The targets the log names under the other filters; the chosen one narrows the events only.
  const targetFilters = Object.fromEntries([...query.entries()].filter(([key]) => key !== 'pageSize'));
  const targets = api.useQuery('get', '/organization/{organizationId}/targets', { params: { path: { organizationId }, query: targetFilters } }, { placeholderData: keepPreviousData });
  if (targetId !== '') query.set('targetId', targetId);
  const path = page ?? `/organization/${organizationId}/events?${query.toString()}`;
  const events = useQuery({ queryKey: ['organization-events', path], queryFn: () => apiRequest<Page>('GET', path), placeholderData: keepPreviousData });

  /** A filter changed: back to the newest page. */
  function filter<Value>(set: (value: Value) => void): (value: Value) => void {
    return (value) => {
      set(value);
      setPage(undefined);
      setOpen(undefined);
    };
  }
  const list = events.data?.events ?? [];
  return (
    <section aria-labelledby="audit-heading" className="section">
      <div className="section-heading">
        <h2 id="audit-heading">Audit log</h2>
      </div>
      <p className="muted section-intro">Every change made to this organization and what it holds, by whom, from where. Secret values are masked.</p>
      <div className="card filters" role="search" aria-label="Filter the audit log">
        <SelectField id="audit-target" label="Target" value={target} onChange={filter((next: Event['target_type'] | '') => (setTarget(next), setTargetId('')))} options={options(TARGETS, 'Any target')} />
        <SelectField
          id="audit-target-name"
          label="Name"
          value={targetId}
          onChange={filter(setTargetId)}
          options={[
            { value: '', label: target === '' ? 'Any name' : `Any ${words(target).toLowerCase()}` },
            ...(targets.data?.targets ?? []).map((entry) => ({ value: entry.id, label: entry.name === '' ? `${entry.id.slice(0, 8)}…` : entry.name })),
            // Kept while the list no longer holds it (another filter changed), so the select still says what filters.
            ...(targetId === '' || (targets.data?.targets ?? []).some((entry) => entry.id === targetId) ? [] : [{ value: targetId, label: `${targetId.slice(0, 8)}…` }]),
          ]}
          {...(targets.isError ? { errorMessage: messageOf(targets.error) } : {})}
        />
        <SelectField id="audit-action" label="Action" value={action} onChange={filter(setAction)} options={options(EVENTS, 'Any action')} />
        <SelectField id="audit-origin" label="Origin" value={origin} onChange={filter(setOrigin)} options={options(ORIGINS, 'Any origin')} />
        <TextField label="Author" value={author} onChange={filter(setAuthor)} placeholder="e-mail or token name" />
        <DateField id="audit-from" label="From" value={from} onChange={filter(setFrom)} />
        <DateField id="audit-to" label="To" value={to} onChange={filter(setTo)} />
      </div>
      {events.isPending ? <Spinner label="Loading the audit log…" /> : null}
      <ErrorMessage message={events.isError ? messageOf(events.error) : undefined} />
      {events.isSuccess && list.length === 0 ? (
        <div className="empty card">
          <h3>No events</h3>
          <p className="muted">{page === undefined ? 'Nothing matches these filters.' : 'No more events.'}</p>
        </div>
      ) : null}
      {list.length === 0 ? null : (
        <table className="table audit-table" aria-labelledby="audit-heading" aria-busy={events.isFetching}>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Author</th>
              <th scope="col">
                <span className="visually-hidden">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((event) => {
              const expanded = open === event.id;
              const targetName = event.target_name ?? '';
              return (
                <Fragment key={event.id}>
                  <tr>
                    <td data-label="When">
                      <time dateTime={event.timestamp}>{new Date(event.timestamp).toLocaleString('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit' })}</time>
                    </td>
                    <td data-label="Action">
                      {words(event.event_type)}
                      {event.outcome === 'FAILURE' ? <span className="tag tag-danger tag-inline">failed</span> : null}
                    </td>
                    <th scope="row" data-label="Target">
                      {words(event.sub_target_type ?? event.target_type)}{' '}
                      {event.target_name !== undefined ? (
                        <strong>{event.target_name}</strong>
                      ) : event.target_id === null ? null : (
                        // No name any more (deleted since, or a person): the id, shortened; whole in the details.
                        <code className="muted" title={event.target_id}>
                          {event.target_id.slice(0, 8)}…
                        </code>
                      )}
                      {event.project_name === undefined ? null : (
                        <span className="kind-label">
                          in {event.project_name}
                          {event.environment_name === undefined ? '' : ` › ${event.environment_name}`}
                        </span>
                      )}
                    </th>
                    <td data-label="Author">
                      {event.author.name}
                      <span className="kind-label">
                        {event.author.type === 'USER' ? '' : `${words(event.author.type)} · `}
                        {words(event.origin)}
                      </span>
                    </td>
                    <td className="actions-cell">
                      <Button variant="secondary" aria-expanded={expanded} aria-controls={`event-${event.id}`} onPress={() => setOpen(expanded ? undefined : event.id)}>
                        {expanded ? 'Hide' : 'Details'}
                        <span className="visually-hidden"> of {words(event.event_type).toLowerCase()} {targetName}</span>
                      </Button>
                    </td>
                  </tr>
                  {expanded ? (
                    <tr className="event-details" id={`event-${event.id}`}>
                      <td colSpan={5}>
                        <dl className="facts">
                          <div>
                            <dt>Operation</dt>
                            <dd>
                              <code>{event.operation_id}</code>
                              {event.status_code === null ? null : ` → ${event.status_code}`}
                            </dd>
                          </div>
                          {event.target_id === null ? null : (
                            <div>
                              <dt>Target id</dt>
                              <dd>
                                <code>{event.target_id}</code>
                              </dd>
                            </div>
                          )}
                          <div>
                            <dt>Request</dt>
                            <dd>
                              <code>{event.request_id}</code>
                            </dd>
                          </div>
                          <div>
                            <dt>From</dt>
                            <dd>
                              {event.ip ?? 'unknown address'}
                              {event.user_agent === null ? null : <span className="kind-label">{event.user_agent}</span>}
                            </dd>
                          </div>
                        </dl>
                        {event.change === undefined || event.change === '' ? <p className="muted">No change recorded.</p> : <pre className="change">{pretty(event.change)}</pre>}
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      )}
      <div className="pager">
        <Button variant="secondary" isDisabled={events.data?.links.previous === undefined} onPress={() => (setPage(events.data?.links.previous), setOpen(undefined))}>
          Newer
        </Button>
        <Button variant="secondary" isDisabled={events.data?.links.next === undefined} onPress={() => (setPage(events.data?.links.next), setOpen(undefined))}>
          Older
        </Button>
      </div>
    </section>
  );
}

function DateField({ id, label, value, onChange }: { id: string; label: string; value: string; onChange: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="date" value={value} onChange={(event) => onChange(event.target.value)} />
    </div>
  );
}
