import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Fragment, useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { api, apiRequest, messageOf, type components } from '../../api/client.ts';
import { CheckboxGroup } from '../../ui/CheckboxGroup.tsx';
import { ActionsMenu, Button, CheckboxField, ErrorMessage, ModalDialog, RelativeTime, Spinner, StatusChip, TextField } from '../../ui/controls.tsx';
import { createOrEdit, DeleteByNameDialog, FormActions, useRefreshThenClose } from '../../ui/dialogs.tsx';
import { ListSection, ListTable } from '../../ui/ListSection.tsx';
import { SecretShownOnce } from '../../ui/SecretShownOnce.tsx';

const route = getRouteApi('/signed-in/organization/$organizationId/settings');

type Webhook = components['schemas']['OrganizationWebhookResponse'];
type WebhookEvent = components['schemas']['OrganizationWebhookEventEnum'];
type EnvironmentType = 'PRODUCTION' | 'STAGING' | 'DEVELOPMENT' | 'PREVIEW';
type Delivery = components['schemas']['WebhookDeliveryResponse'];
type DeploymentEvent = components['schemas']['WebhookEventResponse'];

const WEBHOOKS = '/organization/{organizationId}/webhook' as const;
const EVENTS: readonly { value: WebhookEvent; label: string }[] = [
  { value: 'DEPLOYMENT_STARTED', label: 'Deployment started' },
  { value: 'DEPLOYMENT_SUCCESSFUL', label: 'Deployment successful' },
  { value: 'DEPLOYMENT_FAILURE', label: 'Deployment failed' },
  { value: 'DEPLOYMENT_CANCELLED', label: 'Deployment cancelled' },
  { value: 'ORGANIZATION_EVENT', label: 'Organization event' },
];
const ENVIRONMENT_TYPES: readonly { value: EnvironmentType; label: string }[] = [
  { value: 'PRODUCTION', label: 'Production' },
  { value: 'STAGING', label: 'Staging' },
  { value: 'DEVELOPMENT', label: 'Development' },
  { value: 'PREVIEW', label: 'Preview' },
];

function eventLabel(event: string): string {
  return EVENTS.find((entry) => entry.value === event)?.label ?? event;
}

/** A webhook is named by its URL's host and path: it has no name of its own. */
function webhookName(webhook: Webhook): string {
  return webhook.target_url.replace(/^https?:\/\//, '');
}

/**
 * Webhooks: endpoints Slipway calls, signed, when deployments start, succeed, fail or are cancelled (and on every
 * audit-log entry); each with its delivery log and redelivery. The signing secret is write-only: the list says it is
 * set, a generated one is shown once.
 */
export function WebhooksSettings() {
  const { organizationId } = route.useParams();
  const webhooks = api.useQuery('get', WEBHOOKS, { params: { path: { organizationId } } });
  const [dialog, setDialog] = useState<{ kind: 'new' } | { kind: 'edit' | 'deliveries' | 'events' | 'delete'; webhook: Webhook } | undefined>();
  const list = webhooks.data?.results ?? [];
  return (
    <>
      <ListSection
        id="webhooks-heading"
        title="Webhooks"
        intro="Slipway sends each event to these endpoints as a signed POST (Standard Webhooks), retries failures, and disables an endpoint that keeps failing."
        query={webhooks}
        count={list.length}
        loadingLabel="Loading webhooks…"
        create={{ label: 'New webhook', onPress: () => setDialog({ kind: 'new' }) }}
        empty={{ title: 'No webhooks yet', text: 'Add an endpoint to hear about deployments (say, to post them to chat or to start tests).' }}
        columns={['Endpoint', 'Events', 'Filters', 'State']}
      >
        {list.map((webhook) => (
          <tr key={webhook.id}>
            <th scope="row">
              <span className="url">{webhook.target_url}</span>
              <span className="kind-label">
                {webhook.description ? `${webhook.description} · ` : ''}secret {webhook.target_secret_set ? 'set' : 'not set'}
              </span>
            </th>
            <td data-label="Events">
              <ul className="plain-list">
                {webhook.events.map((event) => (
                  <li key={event}>{eventLabel(event)}</li>
                ))}
              </ul>
            </td>
            <td data-label="Filters">
              {webhook.project_names_filter.length === 0 && webhook.environment_types_filter.length === 0 ? <span className="muted">every project and environment</span> : null}
              {webhook.project_names_filter.length === 0 ? null : <span className="kind-label">projects {webhook.project_names_filter.join(', ')}</span>}
              {webhook.environment_types_filter.length === 0 ? null : <span className="kind-label">{webhook.environment_types_filter.map((type) => type.toLowerCase()).join(', ')}</span>}
            </td>
            <td data-label="State">
              {webhook.enabled ? <StatusChip state="DEPLOYED" label="Enabled" /> : <StatusChip state="STOPPED" label="Disabled" />}
              {webhook.disabled_reason === null ? null : <span className="kind-label">{webhook.disabled_reason}</span>}
            </td>
            <td className="actions-cell">
              <Button variant="secondary" onPress={() => setDialog({ kind: 'deliveries', webhook })}>
                Deliveries<span className="visually-hidden"> of {webhookName(webhook)}</span>
              </Button>{' '}
              <ActionsMenu
                label={`Actions for ${webhookName(webhook)}`}
                actions={[
                  { id: 'edit', label: 'Edit…' },
                  { id: 'events', label: 'Deployment events…' },
                  { id: 'delete', label: 'Delete…', danger: true },
                ]}
                onAction={(id) => setDialog({ kind: id as 'edit' | 'events' | 'delete', webhook })}
              />
            </td>
          </tr>
        ))}
      </ListSection>
      {dialog?.kind === 'new' ? <WebhookDialog organizationId={organizationId} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'edit' ? <WebhookDialog organizationId={organizationId} webhook={dialog.webhook} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'deliveries' ? <DeliveriesDialog organizationId={organizationId} webhook={dialog.webhook} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'events' ? <DeploymentEventsDialog organizationId={organizationId} webhook={dialog.webhook} onClose={() => setDialog(undefined)} /> : null}
      {dialog?.kind === 'delete' ? <DeleteWebhookDialog organizationId={organizationId} webhook={dialog.webhook} onClose={() => setDialog(undefined)} /> : null}
    </>
  );
}

/** "web-*, api" → ["web-*", "api"]. */
function patternsOf(text: string): string[] {
  return text
    .split(',')
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== '');
}

/**
 * Create, or edit. The secret is write-only: empty at creation lets Slipway generate one (then shown once, since the
 * receiver needs it to check signatures); empty at an edit keeps the stored one.
 */
function WebhookDialog({ organizationId, webhook, onClose }: { organizationId: string; webhook?: Webhook; onClose: () => void }) {
  const [url, setUrl] = useState(webhook?.target_url ?? '');
  const [description, setDescription] = useState(webhook?.description ?? '');
  const [events, setEvents] = useState<WebhookEvent[]>(webhook?.events ?? ['DEPLOYMENT_SUCCESSFUL', 'DEPLOYMENT_FAILURE']);
  const [projects, setProjects] = useState((webhook?.project_names_filter ?? []).join(', '));
  const [environmentTypes, setEnvironmentTypes] = useState<EnvironmentType[]>((webhook?.environment_types_filter ?? []) as EnvironmentType[]);
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [secret, setSecret] = useState('');
  const [generated, setGenerated] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const refreshThenClose = useRefreshThenClose([WEBHOOKS], onClose);
  const create = api.useMutation('post', WEBHOOKS, {
    // A generated secret is shown before the dialog closes (the list refreshed behind it); a typed one is known already.
    onSuccess: async (created) => {
      if (secret.trim() !== '') return refreshThenClose.onSuccess();
      await queryClient.invalidateQueries({ queryKey: ['get', WEBHOOKS] });
      setGenerated(created.target_secret);
    },
  });
  const edit = api.useMutation('put', '/organization/{organizationId}/webhook/{webhookId}', refreshThenClose);
  const { fields, summary, isPending, reset } = createOrEdit(create, edit, webhook !== undefined);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (isPending) return;
    const body = {
      kind: 'STANDARD' as const,
      target_url: url.trim(),
      description: description.trim() === '' ? null : description.trim(),
      enabled,
      events,
      project_names_filter: patternsOf(projects),
      environment_types_filter: environmentTypes,
      ...(secret.trim() === '' ? {} : { target_secret: secret.trim() }),
    };
    if (webhook === undefined) create.mutate({ params: { path: { organizationId } }, body });
    else edit.mutate({ params: { path: { organizationId, webhookId: webhook.id } }, body });
  }
  if (generated !== undefined) {
    return (
      <SecretShownOnce
        title="Webhook created"
        notice="Slipway generated this signing secret. Copy it to the receiver now: it is shown only once (a new one can be set by editing the webhook)."
        label="Signing secret"
        value={generated}
        copyLabel="Copy the signing secret"
        onClose={onClose}
      />
    );
  }
  return (
    <ModalDialog title={webhook === undefined ? 'New webhook' : `Edit ${webhookName(webhook)}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <Form onSubmit={submit} className="form">
        <TextField label="URL" type="url" value={url} onChange={(next) => (reset(), setUrl(next))} isRequired autoFocus maxLength={2048} placeholder="https://hooks.example.com/slipway" errorMessage={fields.get('target_url')} />
        <TextField label="Description (optional)" value={description} onChange={(next) => (reset(), setDescription(next))} maxLength={2000} errorMessage={fields.get('description')} />
        <CheckboxGroup id="webhook-events" legend="Events" description="An organization event is any entry of the audit log." options={EVENTS} selected={events} onChange={(next) => (reset(), setEvents(next))} errorMessage={fields.get('events')} />
        <TextField
          label="Projects (optional)"
          value={projects}
          onChange={(next) => (reset(), setProjects(next))}
          maxLength={4000}
          description="Names or patterns separated by commas (web-*); empty for every project. A filtered webhook hears no cluster events."
          errorMessage={[...fields.entries()].find(([field]) => field.startsWith('project_names_filter'))?.[1]}
        />
        <CheckboxGroup
          id="webhook-environment-types"
          legend="Environment types (optional)"
          description="None checked: every environment."
          options={ENVIRONMENT_TYPES}
          selected={environmentTypes}
          onChange={(next) => (reset(), setEnvironmentTypes(next))}
          errorMessage={fields.get('environment_types_filter')}
        />
        <TextField
          label={webhook === undefined ? 'Signing secret (optional)' : 'New signing secret (optional)'}
          type="password"
          value={secret}
          onChange={(next) => (reset(), setSecret(next))}
          maxLength={512}
          description={webhook === undefined ? 'Empty: Slipway generates one and shows it once.' : `A secret is ${webhook.target_secret_set ? 'set' : 'not set'}; leave empty to keep it.`}
          errorMessage={fields.get('target_secret')}
        />
        <CheckboxField id="webhook-enabled" label="Enabled" checked={enabled} onChange={(next) => (reset(), setEnabled(next))} description={webhook?.disabled_reason ?? 'A disabled webhook is sent nothing; enabling it clears its failure count.'} />
        <FormActions error={summary} onCancel={onClose} submitLabel={webhook === undefined ? 'Create webhook' : 'Save'} />
      </Form>
    </ModalDialog>
  );
}

/** The delivery log, newest first, one row per attempt; each can be sent again (a new attempt with the same webhook-id). */
function DeliveriesDialog({ organizationId, webhook, onClose }: { organizationId: string; webhook: Webhook; onClose: () => void }) {
  const deliveries = api.useQuery('get', '/organization/{organizationId}/webhook/{webhookId}/delivery', { params: { path: { organizationId, webhookId: webhook.id }, query: { pageSize: 20 } } });
  const [redelivered, setRedelivered] = useState<{ id: string; message: string } | undefined>();
  const redeliver = api.useMutation('post', '/organization/{organizationId}/webhook/{webhookId}/delivery/{deliveryId}/redeliver', {
    onSuccess: (_answer, variables) => setRedelivered({ id: variables.params.path.deliveryId, message: 'Queued: it appears here once sent.' }),
    onError: (error, variables) => setRedelivered({ id: variables.params.path.deliveryId, message: messageOf(error) }),
  });
  // Older pages are read on demand from the previous page's next_cursor and kept below the newest; Refresh drops them.
  const [older, setOlder] = useState<{ rows: Delivery[]; cursor: string | null }>({ rows: [], cursor: null });
  const [olderError, setOlderError] = useState<string | undefined>();
  const [loadingOlder, setLoadingOlder] = useState(false);
  const list = [...(deliveries.data?.results ?? []), ...older.rows];
  const nextCursor = older.rows.length === 0 ? (deliveries.data?.next_cursor ?? null) : older.cursor;
  async function loadOlder() {
    if (nextCursor === null || loadingOlder) return;
    setLoadingOlder(true);
    setOlderError(undefined);
    try {
      const page = await apiRequest<{ results: Delivery[]; next_cursor: string | null }>('GET', `/organization/${organizationId}/webhook/${webhook.id}/delivery?pageSize=20&cursor=${encodeURIComponent(nextCursor)}`);
      setOlder((current) => ({ rows: [...current.rows, ...page.results], cursor: page.next_cursor }));
    } catch (error) {
      setOlderError(messageOf(error));
    } finally {
      setLoadingOlder(false);
    }
  }
  function refresh() {
    setOlder({ rows: [], cursor: null });
    setOlderError(undefined);
    void deliveries.refetch();
  }
  return (
    <ModalDialog title={`Deliveries to ${webhookName(webhook)}`} isOpen onOpenChange={(open) => (open ? undefined : onClose())} wide>
      <div className="form">
        <div className="section-heading">
          <p className="muted">{older.rows.length === 0 ? 'The 20 newest attempts.' : `The ${list.length} newest attempts.`}</p>
          <Button variant="secondary" onPress={refresh}>
            Refresh
          </Button>
        </div>
        {deliveries.isPending ? <Spinner label="Loading deliveries…" /> : null}
        <ErrorMessage message={deliveries.isError ? messageOf(deliveries.error) : undefined} />
        {deliveries.isSuccess && list.length === 0 ? <p className="muted">Nothing sent yet: the first matching event is delivered within seconds.</p> : null}
        {list.length === 0 ? null : (
          <ListTable label="Deliveries" columns={['Event', 'Result', 'Sent']}>
            {list.map((delivery) => (
              <tr key={delivery.id}>
                <th scope="row">
                  {eventLabel(delivery.event)}
                  <span className="kind-label">
                    attempt {delivery.attempt}
                    {delivery.trigger === 'REDELIVERY' ? ' · redelivery' : ''}
                  </span>
                </th>
                <td data-label="Result">
                  <DeliveryResult delivery={delivery} />
                </td>
                <td data-label="Sent">
                  <RelativeTime at={delivery.created_at} />
                </td>
                <td className="actions-cell" aria-live="polite">
                  <Button variant="secondary" onPress={() => redeliver.mutate({ params: { path: { organizationId, webhookId: webhook.id, deliveryId: delivery.id } } })}>
                    Redeliver<span className="visually-hidden"> attempt {delivery.attempt} of {eventLabel(delivery.event)}</span>
                  </Button>
                  {redelivered?.id === delivery.id ? <span className="kind-label">{redelivered.message}</span> : null}
                </td>
              </tr>
            ))}
          </ListTable>
        )}
        <ErrorMessage message={olderError} />
        {nextCursor === null ? null : (
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => void loadOlder()}>
              {loadingOlder ? 'Loading older attempts…' : 'Older attempts'}
            </Button>
          </div>
        )}
        <div className="form-actions">
          <Button onPress={onClose}>Close</Button>
        </div>
      </div>
    </ModalDialog>
  );
}

function DeliveryResult({ delivery }: { delivery: Delivery }) {
  return (
    <>
      <StatusChip state={delivery.succeeded ? 'DEPLOYED' : 'DEPLOYMENT_ERROR'} label={delivery.succeeded ? 'Delivered' : 'Failed'} />
      <span className="kind-label">
        {delivery.response_status === null ? 'no answer' : `HTTP ${delivery.response_status}`} · {delivery.latency_ms} ms
      </span>
      {delivery.error === null ? null : <span className="kind-label">{delivery.error}</span>}
    </>
  );
}

/**
 * The deployment events sent to the webhook (listWebhookEvent: the newest 100 attempts, audit-log events left out):
 * which event, the receiver's answer, and the body sent, opened on demand.
 */
function DeploymentEventsDialog({ organizationId, webhook, onClose }: { organizationId: string; webhook: Webhook; onClose: () => void }) {
  const events = api.useQuery('get', '/organization/{organizationId}/webhook/{webhookId}/event', { params: { path: { organizationId, webhookId: webhook.id } } });
  const [open, setOpen] = useState<string | undefined>();
  const list = events.data?.results ?? [];
  return (
    <ModalDialog title={`Deployment events sent to ${webhookName(webhook)}`} isOpen onOpenChange={(next) => (next ? undefined : onClose())} wide>
      <div className="form">
        <p className="muted">The newest 100 attempts at sending deployment events; the deliveries list every attempt, organization events included.</p>
        {events.isPending ? <Spinner label="Loading deployment events…" /> : null}
        <ErrorMessage message={events.isError ? messageOf(events.error) : undefined} />
        {events.isSuccess && list.length === 0 ? <p className="muted">No deployment event sent yet.</p> : null}
        {list.length === 0 ? null : (
          <ListTable label="Deployment events" columns={['Event', 'Answer', 'Sent']}>
            {list.map((event: DeploymentEvent) => (
              <Fragment key={event.id}>
                <tr>
                  <th scope="row">
                    {eventLabel(event.matched_event)}
                    {event.target_url_used === webhook.target_url ? null : <span className="kind-label">sent to {event.target_url_used}</span>}
                  </th>
                  <td data-label="Answer">
                    <StatusChip
                      state={event.target_response_status_code >= 200 && event.target_response_status_code < 300 ? 'DEPLOYED' : 'DEPLOYMENT_ERROR'}
                      label={event.target_response_status_code === 0 ? 'No answer' : `HTTP ${event.target_response_status_code}`}
                    />
                    {event.target_response_body === null || event.target_response_body === '' ? null : <span className="kind-label">{event.target_response_body.slice(0, 200)}</span>}
                  </td>
                  <td data-label="Sent">
                    <RelativeTime at={event.created_at} />
                  </td>
                  <td className="actions-cell">
                    <Button variant="secondary" aria-expanded={open === event.id} aria-controls={`webhook-event-${event.id}`} onPress={() => setOpen(open === event.id ? undefined : event.id)}>
                      {open === event.id ? 'Hide body' : 'Body'}
                      <span className="visually-hidden"> of {eventLabel(event.matched_event)}</span>
                    </Button>
                  </td>
                </tr>
                {open === event.id ? (
                  <tr id={`webhook-event-${event.id}`}>
                    <td colSpan={4}>
                      {/* A region that takes the focus: a long body scrolls sideways, and the keyboard must reach it. */}
                      <pre className="change" role="region" aria-label={`Body sent: ${eventLabel(event.matched_event)}`} tabIndex={0}>
                        {JSON.stringify(event.request, null, 2)}
                      </pre>
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </ListTable>
        )}
        <div className="form-actions">
          <Button onPress={onClose}>Close</Button>
        </div>
      </div>
    </ModalDialog>
  );
}

function DeleteWebhookDialog({ organizationId, webhook, onClose }: { organizationId: string; webhook: Webhook; onClose: () => void }) {
  const remove = api.useMutation('delete', '/organization/{organizationId}/webhook/{webhookId}', useRefreshThenClose([WEBHOOKS], onClose));
  return (
    <DeleteByNameDialog
      name={webhookName(webhook)}
      explanation="Nothing more is sent to this endpoint; its delivery log goes with it."
      confirmLabel="Delete webhook"
      mutation={remove}
      onConfirm={() => remove.mutate({ params: { path: { organizationId, webhookId: webhook.id } } })}
      onClose={onClose}
    />
  );
}
