import type { Kysely } from 'kysely';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import type { ChangeSignals } from '../../db/db.signals.ts';
import { enqueueJob } from '../../jobs/job-queue.ts';
import { JOBS_SIGNAL_CHANNEL } from '../../jobs/job-worker.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { escapeHtml, type Mailer } from '../../mail/mailer.ts';
import { resolvesToNonPublic, urlProblem, type OutboundPolicy } from '../../registry/outbound-http.ts';
import type { EventPublisher, PublishedEvent, WebhookEventType } from './webhooks.events.ts';
import {
  countFailure,
  deleteWebhook,
  disableWebhook,
  findDelivery,
  findMessage,
  findWebhook,
  findWebhookById,
  insertDelivery,
  insertMessage,
  insertWebhook,
  listDeliveriesPage,
  listDeliveriesWithMessages,
  listEnabledWebhooks,
  listWebhooks,
  resetFailures,
  updateWebhook,
  type WebhookDeliveryRow,
  type WebhookRow,
} from './webhooks.repo.ts';
import type { WebhookCreateInput } from './webhooks.schemas.ts';
import type { WebhookSender } from './webhooks.sender.ts';
import { generateWebhookSecret, signWebhook } from './webhooks.signing.ts';

export const WEBHOOK_DELIVERY_JOB = 'webhook.delivery';
/** Attempts of one delivery, spaced by the worker's exponential backoff (2 s, 4 s, … with the default base). */
export const WEBHOOK_DELIVERY_MAX_ATTEMPTS = 8;
/** Failed attempts in a row after which a webhook is disabled, with a notice. */
export const DEFAULT_DISABLE_AFTER_FAILURES = 20;
/** The original product's header carrying the secret itself, for receivers that compare it as it is. */
export const PLAIN_SECRET_HEADER = 'slipway-signature';
const DEFAULT_PAGE_SIZE = 20;
/** The event types the reference's webhook events can match (OrganizationWebhookEventEnum), and how many are listed. */
const DEPLOYMENT_EVENT_TYPES = ['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL', 'DEPLOYMENT_FAILURE', 'DEPLOYMENT_CANCELLED'] as const;
const WEBHOOK_EVENTS_LISTED = 100;

export interface WebhookDeliveryPayload {
  webhookId: string;
  messageId: string;
  trigger: 'EVENT' | 'REDELIVERY';
}

export interface WebhooksDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  policy: OutboundPolicy;
  sender: WebhookSender;
  /** Called after a transaction that enqueued deliveries commits. */
  wakeWorkers: () => void;
  /**
   * Events are published inside their callers' transactions, which this module cannot wake workers after: with change
   * signals (db.signals.ts), the deliveries' wake-up rides on that transaction and reaches every worker on its commit.
   */
  signals?: Pick<ChangeSignals, 'publishIn'> | undefined;
  disableAfterFailures?: number;
  /** Who hears that a webhook was disabled: the organization owner's verified e-mail, through the mailer port. */
  mailer: Mailer;
  ownerEmail: (organizationId: string) => Promise<string | undefined>;
  /**
   * The server's log. A receiver that is down fails every attempt of every event until it is back, and its attempts
   * are the organization's to see (listWebhookDeliveries), so the log says when a webhook starts failing, when it
   * succeeds again and when it is disabled — once each — and every other failed attempt at debug only.
   */
  log?: {
    debug(object: object, message: string): void;
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

/** The receiver's host, as log lines name it: a target's path or query may carry a token of the receiver's. */
function hostOf(targetUrl: string): string {
  try {
    return new URL(targetUrl).host;
  } catch {
    return 'an invalid URL';
  }
}

/** Binds a sealed secret to its webhook: an envelope copied into another row does not open. */
function associatedData(row: Pick<WebhookRow, 'id' | 'organization_id'>): string {
  return `webhooks:${row.organization_id}:${row.id}`;
}

function view(row: WebhookRow) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    kind: 'STANDARD' as const,
    target_url: row.target_url,
    target_secret_set: true,
    // Not nullable in the reference: a webhook without a description leaves the field out.
    ...(row.description === null ? {} : { description: row.description }),
    enabled: row.enabled === 1,
    events: readJson<WebhookEventType[]>(row.events),
    project_names_filter: readJson<string[]>(row.project_names_filter),
    environment_types_filter: readJson<string[]>(row.environment_types_filter),
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at,
  };
}

function deliveryView(row: WebhookDeliveryRow) {
  return {
    id: row.id,
    created_at: row.created_at,
    webhook_id: row.webhook_id,
    message_id: row.message_id,
    event: row.event_type as WebhookEventType,
    attempt: row.attempt,
    trigger: row.trigger as 'EVENT' | 'REDELIVERY',
    succeeded: row.succeeded === 1,
    response_status: row.response_status,
    latency_ms: row.latency_ms,
    error: row.error,
  };
}

/**
 * `product*` style patterns, case-insensitive, as the original product's project_names_filter. Matched by the
 * classic two-pointer wildcard walk (at most pattern × name steps), not a regular expression a pattern of many stars
 * could make backtrack for a very long time.
 */
export function nameMatches(pattern: string, name: string): boolean {
  const p = pattern.toLowerCase();
  const n = name.toLowerCase();
  let pi = 0;
  let ni = 0;
  let star = -1;
  let resume = 0;
  while (ni < n.length) {
    if (pi < p.length && p[pi] !== '*' && p[pi] === n[ni]) {
      pi += 1;
      ni += 1;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi;
      resume = ni;
      pi += 1;
    } else if (star !== -1) {
      pi = star + 1;
      resume += 1;
      ni = resume;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi += 1;
  return pi === p.length;
}

/** Whether a webhook wants an event: subscribed to its type, and its filters (if any) match where it comes from. */
function subscribes(row: WebhookRow, event: PublishedEvent): boolean {
  if (!readJson<string[]>(row.events).includes(event.type)) return false;
  const projects = readJson<string[]>(row.project_names_filter);
  if (projects.length > 0 && (event.project === undefined || !projects.some((pattern) => nameMatches(pattern, event.project?.name ?? '')))) return false;
  const modes = readJson<string[]>(row.environment_types_filter);
  if (modes.length > 0 && (event.environmentMode === undefined || !modes.includes(event.environmentMode))) return false;
  return true;
}

/**
 * Webhooks (docs/webhooks.md): per-organization endpoints that receive signed deployment events. A published event
 * becomes one message and one delivery job per subscribed webhook, in the transaction of the change; the job POSTs
 * it, logs the attempt, and throws on failure so the worker retries it with backoff. Failed attempts in a row
 * disable the webhook.
 */
export function createWebhooksService(deps: WebhooksDeps) {
  const { db, clock, secrets } = deps;
  const disableAfter = deps.disableAfterFailures ?? DEFAULT_DISABLE_AFTER_FAILURES;

  async function requireWebhook(organizationId: string, webhookId: string): Promise<WebhookRow> {
    const row = await findWebhook(db, organizationId, webhookId);
    if (row === undefined) throw notFound(`webhook ${webhookId} not found`);
    return row;
  }

  /** https (http only where private hosts are allowed), no credentials in it, and not a private address. */
  async function checkTargetUrl(target: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw badRequest('invalid target_url', [{ field: '/target_url', message: 'must be an absolute URL' }]);
    }
    const problem = urlProblem(url, deps.policy);
    if (problem !== undefined) throw badRequest(`invalid target_url: ${problem}`, [{ field: '/target_url', message: problem }]);
    if (await resolvesToNonPublic(url.hostname, deps.policy)) {
      const message = 'host resolves to a loopback or private address (allowed only with SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true)';
      throw badRequest(`invalid target_url: ${message}`, [{ field: '/target_url', message }]);
    }
    return url.href;
  }

  function settings(input: WebhookCreateInput, targetUrl: string) {
    return {
      kind: input.kind ?? 'STANDARD',
      target_url: targetUrl,
      description: input.description ?? null,
      events: writeJson(input.events),
      project_names_filter: writeJson(input.project_names_filter ?? []),
      environment_types_filter: writeJson(input.environment_types_filter ?? []),
    };
  }

  async function enqueueDelivery(executor: Queryable, payload: WebhookDeliveryPayload): Promise<void> {
    await enqueueJob(executor, clock, { kind: WEBHOOK_DELIVERY_JOB, payload: { ...payload }, maxAttempts: WEBHOOK_DELIVERY_MAX_ATTEMPTS });
  }

  async function noticeDisabled(row: WebhookRow, reason: string): Promise<void> {
    const to = await deps.ownerEmail(row.organization_id);
    if (to === undefined) return;
    await deps.mailer.send({
      to,
      subject: 'A webhook was disabled after failed deliveries',
      text: `Slipway disabled the webhook to ${row.target_url}: ${reason}\nFix the receiver, then enable the webhook again (editOrganizationWebhook with "enabled": true).\n`,
      html: `<p>Slipway disabled the webhook to <code>${escapeHtml(row.target_url)}</code>: ${escapeHtml(reason)}</p><p>Fix the receiver, then enable the webhook again.</p>`,
    });
  }

  const publisher: EventPublisher = {
    async publish(executor, event) {
      const hooks = (await listEnabledWebhooks(executor, event.organizationId)).filter((row) => subscribes(row, event));
      const now = isoTimestamp(clock);
      for (const hook of hooks) {
        const messageId = newId();
        const body = JSON.stringify({
          id: messageId,
          type: event.type,
          timestamp: now,
          organization_id: event.organizationId,
          resource: event.resource,
          ...(event.project === undefined ? {} : { project: event.project }),
          ...(event.environmentMode === undefined ? {} : { environment_mode: event.environmentMode }),
          data: event.data,
        });
        await insertMessage(executor, { id: messageId, webhook_id: hook.id, event_type: event.type, body, created_at: now });
        await enqueueDelivery(executor, { webhookId: hook.id, messageId, trigger: 'EVENT' });
      }
      if (hooks.length > 0) await deps.signals?.publishIn(executor, JOBS_SIGNAL_CHANNEL, '');
      return hooks.length;
    },
  };

  return {
    publish: publisher.publish,

    async listOrganizationWebHooks(organizationId: string) {
      return (await listWebhooks(db, organizationId)).map(view);
    },

    async getOrganizationWebhook(organizationId: string, webhookId: string) {
      return view(await requireWebhook(organizationId, webhookId));
    },

    async createOrganizationWebhook(organizationId: string, input: WebhookCreateInput) {
      const targetUrl = await checkTargetUrl(input.target_url);
      const secret = input.target_secret ?? generateWebhookSecret();
      const now = isoTimestamp(clock);
      const id = newId();
      const row: WebhookRow = {
        id,
        organization_id: organizationId,
        ...settings(input, targetUrl),
        enabled: input.enabled === false ? 0 : 1,
        secret_envelope: secrets.seal(secret, associatedData({ id, organization_id: organizationId })),
        consecutive_failures: 0,
        disabled_reason: null,
        disabled_at: null,
        created_at: now,
        updated_at: now,
      };
      await insertWebhook(db, row);
      return { ...view(row), target_secret: secret };
    },

    async editOrganizationWebhook(organizationId: string, webhookId: string, input: WebhookCreateInput) {
      const row = await requireWebhook(organizationId, webhookId);
      const targetUrl = await checkTargetUrl(input.target_url);
      const enabled = input.enabled ?? row.enabled === 1;
      const reenabled = enabled && row.enabled === 0;
      const changes = {
        ...settings(input, targetUrl),
        enabled: enabled ? 1 : 0,
        secret_envelope: input.target_secret === undefined ? row.secret_envelope : secrets.seal(input.target_secret, associatedData(row)),
        // Enabling again starts a new count; the notice stays only while the webhook is disabled by Slipway.
        consecutive_failures: reenabled ? 0 : row.consecutive_failures,
        disabled_reason: enabled ? null : row.disabled_reason,
        disabled_at: enabled ? null : row.disabled_at,
        updated_at: isoTimestamp(clock),
      };
      if (!(await updateWebhook(db, organizationId, webhookId, changes))) throw notFound(`webhook ${webhookId} not found`);
      return view({ ...row, ...changes });
    },

    async deleteOrganizationWebhook(organizationId: string, webhookId: string): Promise<void> {
      if (!(await deleteWebhook(db, organizationId, webhookId))) throw notFound(`webhook ${webhookId} not found`);
    },

    async listWebhookDeliveries(organizationId: string, webhookId: string, query: { cursor?: string | undefined; pageSize?: number | undefined }) {
      await requireWebhook(organizationId, webhookId);
      const size = query.pageSize ?? DEFAULT_PAGE_SIZE;
      if (query.cursor !== undefined && (await findDelivery(db, webhookId, query.cursor)) === undefined) {
        throw badRequest('invalid cursor', [{ field: '/cursor', message: 'names no delivery of this webhook' }]);
      }
      const rows = await listDeliveriesPage(db, webhookId, size + 1, query.cursor);
      const page = rows.slice(0, size);
      return { results: page.map(deliveryView), next_cursor: rows.length > size ? (page[page.length - 1]?.id ?? null) : null };
    },

    /**
     * The reference's webhook events (listWebhookEvent): the newest attempts at the deployment events, each with the
     * body it sent and the receiver's status (0 when none answered). The audit log's ORGANIZATION_EVENT deliveries are
     * not among the reference's matched events; listWebhookDeliveries has every attempt.
     */
    async listWebhookEvents(organizationId: string, webhookId: string) {
      const webhook = await requireWebhook(organizationId, webhookId);
      const rows = await listDeliveriesWithMessages(db, webhookId, DEPLOYMENT_EVENT_TYPES, WEBHOOK_EVENTS_LISTED);
      return rows.map((row) => ({
        id: row.id,
        created_at: row.created_at,
        kind: 'STANDARD' as const,
        matched_event: row.event_type as (typeof DEPLOYMENT_EVENT_TYPES)[number],
        // Deliveries keep no URL of their own: the webhook's, which an edit may have changed since.
        target_url_used: webhook.target_url,
        request: readJson<Record<string, unknown>>(row.message_body),
        target_response_status_code: row.response_status ?? 0,
        target_response_body: row.error,
      }));
    },

    /** Sends the delivery's event again, as a new job (its attempts logged like any other). */
    async redeliverWebhookDelivery(organizationId: string, webhookId: string, deliveryId: string) {
      const row = await requireWebhook(organizationId, webhookId);
      const delivery = await findDelivery(db, webhookId, deliveryId);
      if (delivery === undefined) throw notFound(`delivery ${deliveryId} not found`);
      if (row.enabled !== 1) throw conflict('webhook is disabled; enable it (editOrganizationWebhook) before redelivering');
      await db.transaction().execute((trx) => enqueueDelivery(trx, { webhookId, messageId: delivery.message_id, trigger: 'REDELIVERY' }));
      deps.wakeWorkers();
      return { message_id: delivery.message_id, event: delivery.event_type as WebhookEventType, status: 'QUEUED' as const };
    },

    /**
     * One attempt of a delivery job: POSTs the message, logs the attempt, and answers the error to retry with, or
     * undefined when there is nothing more to do (delivered, the webhook gone or disabled, or disabled just now).
     */
    async attemptDelivery(payload: WebhookDeliveryPayload, attempt: number): Promise<string | undefined> {
      const hook = await findWebhookById(db, payload.webhookId);
      if (hook === undefined || hook.enabled !== 1) return undefined;
      const message = await findMessage(db, hook.id, payload.messageId);
      if (message === undefined) return undefined;
      let secret: string | undefined;
      try {
        secret = secrets.open(hook.secret_envelope, associatedData(hook));
      } catch {
        // Sealed under another key (SLIPWAY_SECRET_KEY changed): nothing can be signed until a new secret is set.
        secret = undefined;
      }
      const started = performance.now();
      const timestamp = Math.floor(clock.now().getTime() / 1000);
      const result =
        secret === undefined
          ? { status: null, error: "the webhook's secret can no longer be decrypted (the server's secret key changed); set a new target_secret" }
          : await deps.sender.send(
              hook.target_url,
              {
                'content-type': 'application/json',
                'user-agent': 'Slipway-Webhooks/1',
                'webhook-id': message.id,
                'webhook-timestamp': String(timestamp),
                'webhook-signature': signWebhook(secret, message.id, timestamp, message.body),
                [PLAIN_SECRET_HEADER]: secret,
              },
              message.body,
            );
      const latencyMs = Math.round(performance.now() - started);
      const succeeded = result.status !== null && result.status >= 200 && result.status < 300;
      const error = succeeded ? null : (result.error ?? `the receiver answered ${result.status}`);
      const now = isoTimestamp(clock);
      const disabledReason = `${disableAfter} deliveries in a row failed (the last: ${error})`;
      const outcome = await db.transaction().execute(async (trx): Promise<{ failures: number; recovered: boolean; disabledNow: boolean }> => {
        await insertDelivery(trx, {
          id: newId(),
          webhook_id: hook.id,
          message_id: message.id,
          event_type: message.event_type,
          attempt,
          trigger: payload.trigger,
          succeeded: succeeded ? 1 : 0,
          response_status: result.status,
          latency_ms: latencyMs,
          error,
          created_at: now,
        });
        if (succeeded) return { failures: 0, recovered: await resetFailures(trx, hook.id), disabledNow: false };
        const failures = await countFailure(trx, hook.id);
        return { failures, recovered: false, disabledNow: failures >= disableAfter && (await disableWebhook(trx, hook.id, disabledReason, now)) };
      });
      const fields = { webhook: hook.id, organization: hook.organization_id, target: hostOf(hook.target_url) };
      if (outcome.recovered) deps.log?.info(fields, 'webhook deliveries succeed again');
      if (outcome.disabledNow) deps.log?.warn(fields, `webhook disabled: ${disabledReason}`);
      else if (outcome.failures === 1) deps.log?.warn(fields, `webhook deliveries fail: ${error}; retried with backoff, the next failures logged at debug until one succeeds`);
      else if (error !== null) deps.log?.debug({ ...fields, attempt, failures: outcome.failures }, `webhook delivery failed: ${error}`);
      if (outcome.disabledNow) {
        await noticeDisabled(hook, disabledReason).catch((mailError: unknown) => deps.log?.warn({ err: mailError, webhook: hook.id }, 'webhook disabled notice not sent'));
        return undefined;
      }
      return error ?? undefined;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
