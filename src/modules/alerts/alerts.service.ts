import type { Kysely } from 'kysely';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { escapeHtml } from '../../mail/mailer.ts';
import { resolvesToNonPublic, urlProblem, type OutboundPolicy } from '../../registry/outbound-http.ts';
import { isPublicAddress } from '../../git/git-addresses.ts';
import { generateWebhookSecret } from '../webhooks/webhooks.signing.ts';
import { isIP } from 'node:net';
import { checkCondition, conditionHolds, forDurationMs, measureTarget, SERVICE_KIND_OF_TARGET, type StoredTargetType } from './alerts.conditions.ts';
import { parseSmarthost, type AlertDelivery, type AlertNotification, type DeliveryResult, type OpenedReceiver } from './alerts.delivery.ts';
import {
  claimEvaluation,
  deleteReceiver,
  deleteRule,
  existingReceiverIds,
  findOpenFiring,
  findReceiver,
  findRule,
  findRuleById,
  firingsOfRules,
  insertFiring,
  insertReceiver,
  insertRule,
  listAllRuleIds,
  listReceivers,
  listRules,
  receiverIdsOfRules,
  receiverOrganization,
  receiversOfRule,
  ruleOrganization,
  setRuleReceivers,
  settleState,
  updateFiring,
  updateReceiver,
  updateRule,
  type FiringRow,
  type ReceiverRow,
  type RuleRow,
} from './alerts.repo.ts';
import type {
  AlertReceiverCreationBody,
  AlertReceiverEditBody,
  AlertRuleConditionBody,
  AlertRuleCreationBody,
  AlertRuleEditBody,
  RuleState,
  WebhookFormat,
} from './alerts.schemas.ts';

export interface AlertsDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  policy: OutboundPolicy;
  delivery: AlertDelivery;
  log?: { warn(object: object, message: string): void };
}

const DEFAULT_TEST_MESSAGE = 'This is a test notification from Slipway: this receiver is set up correctly.';
const PRIVATE_HOST_MESSAGE = 'host resolves to a loopback or private address (allowed only with SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true)';

/** Binds a receiver's sealed values to it: an envelope copied into another row does not open. */
function associatedData(row: { id: string; organization_id: string }, field: string): string {
  return `alert-receivers:${row.organization_id}:${row.id}:${field}`;
}

/** What is shown of a webhook URL: its scheme and host (Slack's carry the token in the path). */
function urlHint(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}/…`;
}

function receiverView(row: ReceiverRow) {
  const base = {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    description: row.description,
    send_resolved: row.send_resolved === 1,
    owner: row.owner,
    severity: row.severity,
  };
  if (row.type === 'SLACK') {
    return { ...base, type: 'SLACK' as const, webhook_format: (row.webhook_format ?? 'SLACK') as WebhookFormat, webhook_url_hint: row.webhook_url_hint ?? '' };
  }
  return {
    ...base,
    type: 'EMAIL' as const,
    to: row.email_to ?? '',
    from: row.email_from ?? '',
    smarthost: row.smarthost ?? '',
    auth_username: row.auth_username,
    require_tls: row.require_tls === 1,
    auth_password_set: row.auth_password_envelope !== null,
  };
}

function answeredTargetType(stored: string) {
  return (stored === 'CLUSTER' ? ' CLUSTER' : stored) as ' CLUSTER' | 'ENVIRONMENT' | 'APPLICATION' | 'CONTAINER' | 'JOB' | 'CRONJOB' | 'HELM' | 'TERRAFORM';
}

function firingView(row: FiringRow) {
  return {
    id: row.id,
    started_at: row.started_at,
    fired_at: row.fired_at,
    resolved_at: row.resolved_at,
    value: Number(row.value),
    notified_at: row.notified_at,
    notification_error: row.notification_error,
  };
}

function ruleView(row: RuleRow, receiverIds: string[], firings: FiringRow[]) {
  const presentation = readJson<{ summary?: string | null; runbook_url?: string | null }>(row.presentation);
  const open = firings.find((firing) => firing.resolved_at === null);
  const startsAt = open?.started_at ?? row.condition_since ?? undefined;
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    source: 'MANAGED' as const,
    name: row.name,
    state: row.state as RuleState,
    organization_id: row.organization_id,
    cluster_id: row.cluster_id,
    description: row.description,
    tag: row.tag,
    condition: readJson<AlertRuleConditionBody>(row.condition),
    for_duration: row.for_duration,
    severity: row.severity as 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL',
    enabled: row.enabled === 1,
    alert_receiver_ids: receiverIds,
    presentation: { summary: presentation.summary ?? null, runbook_url: presentation.runbook_url ?? null },
    target: { target_type: answeredTargetType(row.target_type), target_id: row.target_id },
    // Rules are evaluated by Slipway itself: there is no external rule set to bring up to date.
    is_up_to_date: true,
    ...(startsAt === undefined ? {} : { starts_at: startsAt }),
    last_evaluated_at: row.last_evaluated_at,
    firings: firings.map(firingView),
  };
}

function storedTargetType(type: string): StoredTargetType {
  return (type.trim() === 'CLUSTER' ? 'CLUSTER' : type) as StoredTargetType;
}

/**
 * Alerting (docs/alerts.md): receivers (where notifications go, secrets sealed) and rules (a condition over what
 * Slipway records, held for a duration before it fires), evaluated by the `alerts` schedule. Each evaluation of a
 * rule claims the rule's row by compare-and-set before it notifies anyone, so however many workers (or direct
 * calls) evaluate at once, a firing is announced once and its resolution once.
 */
export function createAlertsService(deps: AlertsDeps) {
  const { db, clock, secrets } = deps;

  async function requireReceiver(organizationId: string, id: string): Promise<ReceiverRow> {
    const row = await findReceiver(db, organizationId, id);
    if (row === undefined) throw notFound(`alert receiver ${id} not found`);
    return row;
  }

  async function requireRule(organizationId: string, id: string): Promise<RuleRow> {
    const row = await findRule(db, organizationId, id);
    if (row === undefined) throw notFound(`alert rule ${id} not found`);
    return row;
  }

  async function checkWebhookUrl(target: string, field: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw badRequest('invalid webhook_url', [{ field, message: 'must be an absolute URL' }]);
    }
    const problem = urlProblem(url, deps.policy);
    if (problem !== undefined) throw badRequest(`invalid webhook_url: ${problem}`, [{ field, message: problem }]);
    if (await resolvesToNonPublic(url.hostname, deps.policy)) throw badRequest(`invalid webhook_url: ${PRIVATE_HOST_MESSAGE}`, [{ field, message: PRIVATE_HOST_MESSAGE }]);
    return url.href;
  }

  async function checkSmarthost(smarthost: string, field: string): Promise<void> {
    const parsed = parseSmarthost(smarthost);
    if (parsed === undefined) throw badRequest('invalid smarthost', [{ field, message: 'must be host or host:port' }]);
    if (deps.policy.allowPrivateHosts) return;
    const literalPrivate = isIP(parsed.host) !== 0 && !isPublicAddress(parsed.host);
    if (literalPrivate || parsed.host === 'localhost' || (await resolvesToNonPublic(parsed.host, deps.policy))) {
      throw badRequest(`invalid smarthost: ${PRIVATE_HOST_MESSAGE}`, [{ field, message: PRIVATE_HOST_MESSAGE }]);
    }
  }

  /** A receiver as a request describes it, checked, ready to send to (validateNewAlertReceiver). */
  async function openedFromRequest(body: AlertReceiverCreationBody, prefix: string): Promise<OpenedReceiver> {
    if (body.type === 'SLACK') {
      const url = await checkWebhookUrl(body.webhook_url, `${prefix}/webhook_url`);
      return { type: 'SLACK', format: body.webhook_format ?? 'SLACK', url, signingSecret: body.signing_secret ?? generateWebhookSecret() };
    }
    await checkSmarthost(body.smarthost, `${prefix}/smarthost`);
    return { type: 'EMAIL', to: body.to, from: body.from, smarthost: body.smarthost, username: body.auth_username ?? null, password: body.auth_password, requireTls: body.require_tls };
  }

  /** A stored receiver with its secrets opened; undefined when they no longer open (the server's key changed). */
  function openStored(row: ReceiverRow): OpenedReceiver | undefined {
    try {
      if (row.type === 'SLACK') {
        if (row.webhook_url_envelope === null || row.signing_secret_envelope === null) return undefined;
        return {
          type: 'SLACK',
          format: (row.webhook_format ?? 'SLACK') as WebhookFormat,
          url: secrets.open(row.webhook_url_envelope, associatedData(row, 'webhook_url')),
          signingSecret: secrets.open(row.signing_secret_envelope, associatedData(row, 'signing_secret')),
        };
      }
      return {
        type: 'EMAIL',
        to: row.email_to ?? '',
        from: row.email_from ?? '',
        smarthost: row.smarthost ?? '',
        username: row.auth_username,
        password: row.auth_password_envelope === null ? null : secrets.open(row.auth_password_envelope, associatedData(row, 'auth_password')),
        requireTls: row.require_tls === 1,
      };
    } catch {
      return undefined;
    }
  }

  async function deliverTo(row: ReceiverRow, notification: AlertNotification): Promise<DeliveryResult> {
    const opened = openStored(row);
    if (opened === undefined) {
      return { delivered: false, message: "the receiver's secrets can no longer be decrypted (the server's secret key changed); edit the receiver to set them again", responseStatus: null };
    }
    return deps.delivery.deliver(opened, notification, row.organization_id);
  }

  function testNotification(message: string | undefined): AlertNotification {
    const text = message ?? DEFAULT_TEST_MESSAGE;
    return {
      kind: 'TEST',
      subject: '[TEST] Slipway alert receiver check',
      text,
      html: `<p>${escapeHtml(text)}</p>`,
      payload: { message: text },
    };
  }

  async function checkRuleReferences(organizationId: string, body: { alert_receiver_ids: string[] }): Promise<void> {
    const found = await existingReceiverIds(db, organizationId, body.alert_receiver_ids);
    const missing = body.alert_receiver_ids.findIndex((id) => !found.has(id));
    if (missing !== -1) {
      throw badRequest('unknown alert receiver', [{ field: `/alert_receiver_ids/${missing}`, message: 'names no alert receiver of the organization' }]);
    }
  }

  /** The target must exist in the organization, on the rule's cluster. */
  async function checkTarget(organizationId: string, clusterId: string, type: StoredTargetType, targetId: string): Promise<void> {
    const cluster = await db.selectFrom('clusters').select('id').where('id', '=', clusterId).where('organization_id', '=', organizationId).executeTakeFirst();
    if (cluster === undefined) throw badRequest('unknown cluster', [{ field: '/cluster_id', message: 'names no cluster of the organization' }]);
    const refuse = (message: string) => badRequest(`invalid target: ${message}`, [{ field: '/target/target_id', message }]);
    if (type === 'CLUSTER') {
      if (targetId !== clusterId) throw refuse('a cluster target is the rule’s cluster_id');
      return;
    }
    if (type === 'ENVIRONMENT') {
      const environment = await db.selectFrom('environments').select('cluster_id').where('id', '=', targetId).where('organization_id', '=', organizationId).executeTakeFirst();
      if (environment === undefined) throw refuse('names no environment of the organization');
      if (environment.cluster_id !== clusterId) throw refuse('the environment is not on the rule’s cluster');
      return;
    }
    const service = await db
      .selectFrom('services')
      .innerJoin('environments', 'environments.id', 'services.environment_id')
      .select(['services.kind', 'environments.cluster_id'])
      .where('services.id', '=', targetId)
      .where('services.organization_id', '=', organizationId)
      .executeTakeFirst();
    if (service === undefined || service.kind !== SERVICE_KIND_OF_TARGET[type]) throw refuse(`names no ${type.toLowerCase()} of the organization`);
    if (service.cluster_id !== clusterId) throw refuse('the service is not on the rule’s cluster');
  }

  function ruleSettings(body: AlertRuleEditBody, targetType: StoredTargetType) {
    checkCondition(body.condition, targetType);
    return {
      name: cleanName(body.name),
      name_key: nameKey(body.name),
      description: body.description,
      tag: body.tag,
      condition: writeJson(body.condition),
      for_duration: body.for_duration,
      for_duration_ms: forDurationMs(body.for_duration),
      severity: body.severity,
      presentation: writeJson({ summary: body.presentation.summary ?? null, runbook_url: body.presentation.runbook_url ?? null }),
      enabled: body.enabled ? 1 : 0,
    };
  }

  async function ruleViewOf(row: RuleRow) {
    const [receivers, firings] = await Promise.all([receiverIdsOfRules(db, [row.id]), firingsOfRules(db, [row.id])]);
    return ruleView(row, receivers.get(row.id) ?? [], firings.get(row.id) ?? []);
  }

  function alertNotification(rule: RuleRow, kind: 'FIRING' | 'RESOLVED', firing: FiringRow): AlertNotification {
    const presentation = readJson<{ summary?: string | null; runbook_url?: string | null }>(rule.presentation);
    const condition = readJson<AlertRuleConditionBody>(rule.condition);
    const target = `${rule.target_type} ${rule.target_id}`;
    const lines = [
      kind === 'FIRING' ? `[FIRING] ${rule.name} (${rule.severity})` : `[RESOLVED] ${rule.name} (${rule.severity})`,
      ...(presentation.summary ? [presentation.summary] : []),
      ...(rule.description === '' ? [] : [rule.description]),
      `Condition: ${condition.promql.trim()} = ${Number(firing.value)} on ${target}`,
      `Since: ${firing.started_at}${firing.resolved_at === null ? '' : `, resolved ${firing.resolved_at}`}`,
      ...(presentation.runbook_url ? [`Runbook: ${presentation.runbook_url}`] : []),
    ];
    const text = lines.join('\n');
    return {
      kind,
      subject: `[${kind}:${rule.severity}] ${rule.name}`,
      text,
      html: lines.map((line) => `<p>${escapeHtml(line)}</p>`).join(''),
      payload: {
        alert: {
          rule_id: rule.id,
          firing_id: firing.id,
          name: rule.name,
          severity: rule.severity,
          tag: rule.tag,
          status: kind,
          summary: presentation.summary ?? null,
          runbook_url: presentation.runbook_url ?? null,
          condition: condition.promql.trim(),
          value: Number(firing.value),
          target: { target_type: answeredTargetType(rule.target_type), target_id: rule.target_id },
          started_at: firing.started_at,
          fired_at: firing.fired_at,
          resolved_at: firing.resolved_at,
        },
      },
    };
  }

  /** Sends to every receiver (those that want resolutions, for one) and says whether any took it, and why not. */
  async function notifyReceivers(rule: RuleRow, kind: 'FIRING' | 'RESOLVED', firing: FiringRow): Promise<{ routed: boolean; delivered: boolean; error: string | null }> {
    const receivers = (await receiversOfRule(db, rule.id)).filter((row) => kind === 'FIRING' || row.send_resolved === 1);
    if (receivers.length === 0) return { routed: false, delivered: false, error: kind === 'FIRING' ? 'the rule has no receiver' : null };
    const notification = alertNotification(rule, kind, firing);
    const results = await Promise.all(receivers.map(async (receiver) => ({ receiver, result: await deliverTo(receiver, notification) })));
    const failures = results.filter(({ result }) => !result.delivered);
    for (const { receiver, result } of failures) {
      deps.log?.warn({ alertRule: rule.id, alertReceiver: receiver.id }, `alert notification not delivered: ${result.message}`);
    }
    const error = failures.length === 0 ? null : failures.map(({ receiver, result }) => `${receiver.name}: ${result.message}`).join('; ');
    return { routed: true, delivered: failures.length < results.length, error };
  }

  /**
   * One evaluation of one rule: measures its target, decides, claims the rule's row (compare-and-set on
   * evaluation_seq, the firing written in the same transaction), and only then notifies. A firing nobody took is
   * announced again at the next evaluation while it lasts; a resolution is announced once, to the receivers that
   * asked for resolutions, and only for a firing someone was told of.
   */
  async function evaluateRule(ruleId: string): Promise<void> {
    const rule = await findRuleById(db, ruleId);
    if (rule === undefined) return;
    const now = clock.now();
    const nowIso = now.toISOString();
    const open = await findOpenFiring(db, rule.id);
    let holds = false;
    let value = 0;
    if (rule.enabled === 1) {
      const condition = checkCondition(readJson<AlertRuleConditionBody>(rule.condition), rule.target_type as StoredTargetType);
      const measured = await measureTarget(db, rule, condition);
      value = measured ?? 0;
      holds = measured !== undefined && conditionHolds(condition, measured);
    }
    const since = holds ? (rule.condition_since ?? nowIso) : null;
    const due = since !== null && now.getTime() - Date.parse(since) >= Number(rule.for_duration_ms);

    let action: { kind: 'FIRE'; firing: FiringRow } | { kind: 'RESOLVE'; firing: FiringRow } | { kind: 'NONE' } = { kind: 'NONE' };
    let state: RuleState;
    if (rule.enabled !== 1) {
      state = 'SUPPRESSED';
      // Disabling a rule ends its firing without a resolution notice: the condition was not seen to clear.
      if (open !== undefined) action = { kind: 'NONE' };
    } else if (holds && open !== undefined) {
      state = rule.state as RuleState;
      if (open.notified_at === null) action = { kind: 'FIRE', firing: open };
    } else if (holds && due) {
      state = 'PENDING_NOTIFICATION';
      action = {
        kind: 'FIRE',
        firing: { id: newId(), rule_id: rule.id, started_at: since ?? nowIso, fired_at: nowIso, resolved_at: null, value, notified_at: null, notification_error: null },
      };
    } else if (holds) {
      state = 'TRIGGERED';
    } else {
      state = 'OK';
      if (open !== undefined) action = { kind: 'RESOLVE', firing: { ...open, resolved_at: nowIso } };
    }

    const claimed = await db.transaction().execute(async (trx) => {
      const won = await claimEvaluation(trx, rule.id, rule.evaluation_seq, { state, condition_since: since, last_evaluated_at: nowIso });
      if (!won) return false;
      if (action.kind === 'FIRE' && action.firing !== open) await insertFiring(trx, action.firing);
      if (action.kind === 'RESOLVE' || (rule.enabled !== 1 && open !== undefined)) await updateFiring(trx, open?.id ?? '', { resolved_at: nowIso });
      return true;
    });
    if (!claimed) return;
    const seq = rule.evaluation_seq + 1;

    if (action.kind === 'FIRE') {
      const outcome = await notifyReceivers(rule, 'FIRING', action.firing);
      await updateFiring(db, action.firing.id, { notified_at: outcome.delivered ? isoTimestamp(clock) : null, notification_error: outcome.error });
      await settleState(db, rule.id, seq, !outcome.routed ? 'UNROUTED' : outcome.delivered ? 'NOTIFIED' : 'PENDING_NOTIFICATION');
    } else if (action.kind === 'RESOLVE' && action.firing.notified_at !== null) {
      const outcome = await notifyReceivers(rule, 'RESOLVED', action.firing);
      if (outcome.error !== null) await updateFiring(db, action.firing.id, { notification_error: outcome.error });
    }
  }

  return {
    receiverOrganization: (id: string) => receiverOrganization(db, id),
    ruleOrganization: (id: string) => ruleOrganization(db, id),

    async getAlertReceivers(organizationId: string) {
      return { results: (await listReceivers(db, organizationId)).map(receiverView) };
    },

    async getAlertReceiver(organizationId: string, id: string) {
      return receiverView(await requireReceiver(organizationId, id));
    },

    async createAlertReceiver(organizationId: string, body: AlertReceiverCreationBody) {
      const opened = await openedFromRequest(body, '');
      const id = newId();
      const now = isoTimestamp(clock);
      const seal = (value: string, field: string) => secrets.seal(value, associatedData({ id, organization_id: organizationId }, field));
      const row: ReceiverRow = {
        id,
        organization_id: organizationId,
        name: cleanName(body.name),
        name_key: nameKey(body.name),
        description: body.description,
        type: body.type,
        send_resolved: body.send_resolved ? 1 : 0,
        owner: body.owner ?? null,
        severity: body.severity ?? null,
        webhook_format: opened.type === 'SLACK' ? opened.format : null,
        webhook_url_envelope: opened.type === 'SLACK' ? seal(opened.url, 'webhook_url') : null,
        webhook_url_hint: opened.type === 'SLACK' ? urlHint(opened.url) : null,
        signing_secret_envelope: opened.type === 'SLACK' ? seal(opened.signingSecret, 'signing_secret') : null,
        email_to: opened.type === 'EMAIL' ? opened.to : null,
        email_from: opened.type === 'EMAIL' ? opened.from : null,
        smarthost: opened.type === 'EMAIL' ? opened.smarthost : null,
        auth_username: opened.type === 'EMAIL' ? opened.username : null,
        // An empty password is no password (the reference requires the field even for relays without authentication).
        auth_password_envelope: opened.type === 'EMAIL' && opened.password !== null && opened.password !== '' ? seal(opened.password, 'auth_password') : null,
        require_tls: opened.type === 'EMAIL' ? (opened.requireTls ? 1 : 0) : null,
        created_at: now,
        updated_at: now,
      };
      await uniqueOrConflict(() => insertReceiver(db, row), `an alert receiver named "${row.name}" already exists in this organization`);
      const view = receiverView(row);
      return opened.type === 'SLACK' ? { ...view, signing_secret: opened.signingSecret } : view;
    },

    async editAlertReceiver(organizationId: string, id: string, body: AlertReceiverEditBody) {
      const row = await requireReceiver(organizationId, id);
      if (body.type !== row.type) {
        throw badRequest('the type of an alert receiver cannot change', [{ field: '/type', message: `must be ${row.type}; create a new receiver for another type` }]);
      }
      const seal = (value: string, field: string) => secrets.seal(value, associatedData(row, field));
      const common = {
        name: cleanName(body.name),
        name_key: nameKey(body.name),
        description: body.description,
        send_resolved: body.send_resolved ? 1 : 0,
        owner: body.owner ?? null,
        severity: body.severity ?? null,
        updated_at: isoTimestamp(clock),
      };
      let changes;
      if (body.type === 'SLACK') {
        const url = body.webhook_url === undefined || body.webhook_url === null ? undefined : await checkWebhookUrl(body.webhook_url, '/webhook_url');
        changes = {
          ...common,
          webhook_format: body.webhook_format ?? row.webhook_format ?? 'SLACK',
          ...(url === undefined ? {} : { webhook_url_envelope: seal(url, 'webhook_url'), webhook_url_hint: urlHint(url) }),
          ...(body.signing_secret === undefined ? {} : { signing_secret_envelope: seal(body.signing_secret, 'signing_secret') }),
        };
      } else {
        await checkSmarthost(body.smarthost, '/smarthost');
        const password = body.auth_password;
        changes = {
          ...common,
          email_to: body.to,
          email_from: body.from,
          smarthost: body.smarthost,
          auth_username: body.auth_username ?? null,
          // Absent or null keeps the stored password; an empty one removes it.
          ...(password === undefined || password === null ? {} : { auth_password_envelope: password === '' ? null : seal(password, 'auth_password') }),
          require_tls: body.require_tls ? 1 : 0,
        };
      }
      const updated = await uniqueOrConflict(() => updateReceiver(db, organizationId, id, changes), `an alert receiver named "${common.name}" already exists in this organization`);
      if (!updated) throw notFound(`alert receiver ${id} not found`);
      return receiverView({ ...row, ...changes });
    },

    async deleteAlertReceiver(organizationId: string, id: string): Promise<void> {
      if (!(await deleteReceiver(db, organizationId, id))) throw notFound(`alert receiver ${id} not found`);
    },

    async validateExistingAlertReceiver(organizationId: string, id: string, message: string | undefined) {
      const row = await requireReceiver(organizationId, id);
      const result = await deliverTo(row, testNotification(message));
      return { delivered: result.delivered, message: result.message, response_status: result.responseStatus };
    },

    async validateNewAlertReceiver(organizationId: string, body: AlertReceiverCreationBody, message: string | undefined) {
      const opened = await openedFromRequest(body, '/alert_receiver');
      const result = await deps.delivery.deliver(opened, testNotification(message), organizationId);
      return { delivered: result.delivered, message: result.message, response_status: result.responseStatus };
    },

    async getAlertRules(organizationId: string) {
      const rows = await listRules(db, organizationId);
      const ids = rows.map((row) => row.id);
      const [receivers, firings] = await Promise.all([receiverIdsOfRules(db, ids), firingsOfRules(db, ids)]);
      return { results: rows.map((row) => ruleView(row, receivers.get(row.id) ?? [], firings.get(row.id) ?? [])) };
    },

    async getAlertRule(organizationId: string, id: string) {
      return ruleViewOf(await requireRule(organizationId, id));
    },

    async createAlertRule(organizationId: string, body: AlertRuleCreationBody) {
      const targetType = storedTargetType(body.target.target_type);
      const settings = ruleSettings(body, targetType);
      await checkTarget(organizationId, body.cluster_id, targetType, body.target.target_id);
      await checkRuleReferences(organizationId, body);
      const now = isoTimestamp(clock);
      const row: RuleRow = {
        id: newId(),
        organization_id: organizationId,
        cluster_id: body.cluster_id,
        ...settings,
        target_type: targetType,
        target_id: body.target.target_id,
        state: body.enabled ? 'UNDEPLOYED' : 'SUPPRESSED',
        condition_since: null,
        evaluation_seq: 0,
        last_evaluated_at: null,
        created_at: now,
        updated_at: now,
      };
      await uniqueOrConflict(
        () => db.transaction().execute((trx) => insertRule(trx, row, body.alert_receiver_ids)),
        `an alert rule named "${row.name}" already exists in this organization`,
      );
      return ruleViewOf(row);
    },

    async editAlertRule(organizationId: string, id: string, body: AlertRuleEditBody) {
      const row = await requireRule(organizationId, id);
      const settings = ruleSettings(body, row.target_type as StoredTargetType);
      await checkRuleReferences(organizationId, body);
      // A changed condition or duration is judged afresh from the next evaluation (its streak starts again).
      const changes = { ...settings, condition_since: null, ...(body.enabled ? {} : { state: 'SUPPRESSED' }), updated_at: isoTimestamp(clock) };
      const updated = await uniqueOrConflict(
        () =>
          db.transaction().execute(async (trx) => {
            if (!(await updateRule(trx, organizationId, id, changes))) return false;
            await setRuleReceivers(trx, id, body.alert_receiver_ids);
            return true;
          }),
        `an alert rule named "${settings.name}" already exists in this organization`,
      );
      if (!updated) throw notFound(`alert rule ${id} not found`);
      return ruleViewOf(await requireRule(organizationId, id));
    },

    async deleteAlertRule(organizationId: string, id: string): Promise<void> {
      if (!(await deleteRule(db, organizationId, id))) throw notFound(`alert rule ${id} not found`);
    },

    evaluateRule,

    /** Every rule of the installation, each on its own: one that cannot be evaluated does not stop the others. */
    async evaluateRules(): Promise<void> {
      for (const { id } of await listAllRuleIds(db)) {
        try {
          await evaluateRule(id);
        } catch (error) {
          deps.log?.warn({ err: error, alertRule: id }, 'alert rule not evaluated');
        }
      }
    },
  };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
