import { Type, type Static, type TSchema } from 'typebox';
import { BaseFields, Description, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/**
 * Wire shapes: the reference's Alert Receivers (AlertReceiverCreationRequest, …EditRequest, …Response, validation
 * requests) and Alert Rules (AlertRuleCreationRequest, …EditRequest, AlertRuleResponse, AlertRuleList). Additions,
 * documented in docs/alerts.md: a SLACK receiver's `webhook_format` (SLACK or GENERIC), `signing_secret` (given or
 * generated; answered once, on creation) and `webhook_url_hint`; an EMAIL receiver's `auth_password_set`; a rule's
 * `firings` (its newest firings); and the validation answer's body.
 */

function closed<T extends Record<string, TSchema>>(properties: T, $id: string) {
  return Type.Object(properties, { $id, additionalProperties: false });
}

export const RECEIVER_TYPES = ['SLACK', 'EMAIL'] as const;
export type ReceiverType = (typeof RECEIVER_TYPES)[number];
export const WEBHOOK_FORMATS = ['SLACK', 'GENERIC'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
export const SEVERITIES = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
/** The reference spells its cluster target with a leading space; requests may spell it either way. */
export const TARGET_TYPES = [' CLUSTER', 'CLUSTER', 'ENVIRONMENT', 'APPLICATION', 'CONTAINER', 'JOB', 'CRONJOB', 'HELM', 'TERRAFORM'] as const;
export const ANSWERED_TARGET_TYPES = TARGET_TYPES.filter((type) => type !== 'CLUSTER');
export const CONDITION_KINDS = ['CUSTOM', 'BUILT'] as const;
export const CONDITION_OPERATORS = ['NONE', 'ABOVE', 'BELOW', 'ABOVE_OR_EQUAL', 'BELOW_OR_EQUAL', 'EQUAL'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];
export const CONDITION_FUNCTIONS = ['NONE', 'AVG', 'MAX', 'MIN', 'SUM', 'COUNT'] as const;
export type ConditionFunction = (typeof CONDITION_FUNCTIONS)[number];
export const RULE_STATES = ['UNDEPLOYED', 'OK', 'TRIGGERED', 'PENDING_NOTIFICATION', 'NOTIFIED', 'SUPPRESSED', 'UNROUTED'] as const;
export type RuleState = (typeof RULE_STATES)[number];

const ShortText = Type.String({ maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f]*$' });
const Email = Type.String({ format: 'email', maxLength: 320 });
/** `host` or `host:port` (port 25 unless given; 465 speaks TLS from the start). */
const Smarthost = Type.String({ minLength: 1, maxLength: 300, pattern: '^[^\\s\\x00-\\x1f\\x7f/@]+$' });
const WebhookUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^[^\\x00-\\x1f\\x7f]*$' });

const receiverBase = {
  name: Name,
  description: Description,
  send_resolved: Type.Boolean(),
  owner: Type.Optional(Nullable(ShortText)),
  severity: Type.Optional(Nullable(ShortText)),
};
const slackExtras = {
  webhook_format: Type.Optional(Type.Enum(WEBHOOK_FORMATS, { description: 'SLACK (default): a Slack incoming-webhook message; GENERIC: the signed alert JSON.' })),
  signing_secret: Type.Optional(Type.String({ minLength: 16, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' })),
};

export const SlackAlertReceiverCreationRequest = closed(
  { organization_id: Uuid, ...receiverBase, type: Type.Literal('SLACK'), webhook_url: WebhookUrl, ...slackExtras },
  'SlackAlertReceiverCreationRequest',
);
export const EmailAlertReceiverCreationRequest = closed(
  {
    organization_id: Uuid,
    ...receiverBase,
    type: Type.Literal('EMAIL'),
    to: Email,
    from: Email,
    smarthost: Smarthost,
    auth_username: Type.Optional(Nullable(Type.String({ maxLength: 320, pattern: '^[^\\x00-\\x1f\\x7f]*$' }))),
    auth_password: Type.String({ maxLength: 1024, pattern: '^[^\\x00-\\x1f\\x7f]*$' }),
    require_tls: Type.Boolean(),
  },
  'EmailAlertReceiverCreationRequest',
);
export const AlertReceiverCreationRequest = Type.Union([SlackAlertReceiverCreationRequest, EmailAlertReceiverCreationRequest], { $id: 'AlertReceiverCreationRequest' });
export type AlertReceiverCreationBody = Static<typeof AlertReceiverCreationRequest>;

export const SlackAlertReceiverEditRequest = closed(
  { ...receiverBase, type: Type.Literal('SLACK'), webhook_url: Type.Optional(Nullable(WebhookUrl)), ...slackExtras },
  'SlackAlertReceiverEditRequest',
);
export const EmailAlertReceiverEditRequest = closed(
  {
    ...receiverBase,
    type: Type.Literal('EMAIL'),
    to: Email,
    from: Email,
    smarthost: Smarthost,
    auth_username: Type.Optional(Nullable(Type.String({ maxLength: 320, pattern: '^[^\\x00-\\x1f\\x7f]*$' }))),
    auth_password: Type.Optional(Nullable(Type.String({ maxLength: 1024, pattern: '^[^\\x00-\\x1f\\x7f]*$' }))),
    require_tls: Type.Boolean(),
  },
  'EmailAlertReceiverEditRequest',
);
export const AlertReceiverEditRequest = Type.Union([SlackAlertReceiverEditRequest, EmailAlertReceiverEditRequest], { $id: 'AlertReceiverEditRequest' });
export type AlertReceiverEditBody = Static<typeof AlertReceiverEditRequest>;

const receiverResponseBase = {
  ...BaseFields,
  name: Type.String(),
  description: Type.String(),
  send_resolved: Type.Boolean(),
  owner: Nullable(Type.String()),
  severity: Nullable(Type.String()),
};
export const SlackAlertReceiverResponse = Type.Object(
  {
    ...receiverResponseBase,
    type: Type.Literal('SLACK'),
    webhook_format: Type.Enum(WEBHOOK_FORMATS),
    webhook_url_hint: Type.String({ description: 'The scheme and host of the webhook URL; the rest may carry a token and is never answered.' }),
    signing_secret: Type.Optional(Type.String({ description: 'Only in the answer to the creation.' })),
  },
  { $id: 'SlackAlertReceiverResponse' },
);
export const EmailAlertReceiverResponse = Type.Object(
  {
    ...receiverResponseBase,
    type: Type.Literal('EMAIL'),
    to: Type.String(),
    from: Type.String(),
    smarthost: Type.String(),
    auth_username: Nullable(Type.String()),
    require_tls: Type.Boolean(),
    auth_password_set: Type.Boolean(),
  },
  { $id: 'EmailAlertReceiverResponse' },
);
export const AlertReceiverResponse = Type.Union([SlackAlertReceiverResponse, EmailAlertReceiverResponse], { $id: 'AlertReceiverResponse' });
export const AlertReceiverList = Type.Object({ results: Type.Array(AlertReceiverResponse) }, { $id: 'AlertReceiverList' });

const Message = Type.String({ maxLength: 2000, pattern: '^[^\\x00]*$' });
export const AlertReceiverValidationRequest = closed({ message: Type.Optional(Message) }, 'AlertReceiverValidationRequest');
export const AlertReceiverCreationValidationRequest = closed(
  { alert_receiver: AlertReceiverCreationRequest, message: Type.Optional(Message) },
  'AlertReceiverCreationValidationRequest',
);
export const AlertReceiverValidation = Type.Object(
  {
    delivered: Type.Boolean(),
    message: Type.String({ description: 'What happened: delivered, or why not (a refusal, a timeout, the receiver’s status).' }),
    response_status: Nullable(Type.Integer({ description: 'The webhook receiver’s HTTP status; null for e-mail or when none answered.' })),
  },
  { $id: 'AlertReceiverValidation' },
);

export const AlertRuleCondition = closed(
  {
    kind: Type.Enum(CONDITION_KINDS),
    operator: Type.Optional(Type.Enum(CONDITION_OPERATORS)),
    threshold: Type.Optional(Type.Number()),
    function: Type.Optional(Type.Enum(CONDITION_FUNCTIONS)),
    promql: Type.String({ maxLength: 4000, pattern: '^[^\\x00]*$' }),
  },
  'AlertRuleCondition',
);
export type AlertRuleConditionBody = Static<typeof AlertRuleCondition>;
const AlertPresentation = closed(
  { summary: Type.Optional(Nullable(Type.String({ maxLength: 2000, pattern: '^[^\\x00]*$' }))), runbook_url: Type.Optional(Nullable(WebhookUrl)) },
  'AlertPresentation',
);
const AlertTarget = closed(
  {
    target_type: Type.Enum(TARGET_TYPES),
    target_id: Uuid,
    // The reference's ServiceLightResponse, which clients may echo back: read-only, not used.
    service: Type.Optional(Type.Unknown()),
  },
  'AlertTarget',
);
const ReceiverIds = Type.Array(Uuid, { minItems: 1, maxItems: 50 });
const ForDuration = Type.String({ minLength: 2, maxLength: 64, description: 'ISO 8601 duration, e.g. PT5M; at most 7 days.' });

const ruleSettings = {
  name: Name,
  description: Description,
  tag: ShortText,
  condition: AlertRuleCondition,
  for_duration: ForDuration,
  severity: Type.Enum(SEVERITIES),
  presentation: AlertPresentation,
  enabled: Type.Boolean(),
  alert_receiver_ids: ReceiverIds,
};
export const AlertRuleCreationRequest = closed({ organization_id: Uuid, cluster_id: Uuid, ...ruleSettings, target: AlertTarget }, 'AlertRuleCreationRequest');
export type AlertRuleCreationBody = Static<typeof AlertRuleCreationRequest>;
export const AlertRuleEditRequest = closed(ruleSettings, 'AlertRuleEditRequest');
export type AlertRuleEditBody = Static<typeof AlertRuleEditRequest>;

export const AlertFiring = Type.Object(
  {
    id: Uuid,
    started_at: Timestamp,
    fired_at: Timestamp,
    resolved_at: Nullable(Timestamp),
    value: Type.Number(),
    notified_at: Nullable(Timestamp),
    notification_error: Nullable(Type.String()),
  },
  { $id: 'AlertFiring' },
);
export const AlertRuleResponse = Type.Object(
  {
    ...BaseFields,
    source: Type.Literal('MANAGED'),
    name: Type.String(),
    state: Type.Enum(RULE_STATES),
    organization_id: Uuid,
    cluster_id: Uuid,
    description: Type.String(),
    tag: Type.String(),
    condition: AlertRuleCondition,
    for_duration: Type.String(),
    severity: Type.Enum(SEVERITIES),
    enabled: Type.Boolean(),
    alert_receiver_ids: Type.Array(Uuid),
    presentation: Type.Object({ summary: Nullable(Type.String()), runbook_url: Nullable(Type.String()) }),
    target: Type.Object({ target_type: Type.Enum(ANSWERED_TARGET_TYPES), target_id: Uuid }),
    is_up_to_date: Type.Boolean(),
    starts_at: Type.Optional(Timestamp),
    last_evaluated_at: Nullable(Timestamp),
    firings: Type.Array(AlertFiring, { description: 'The newest firings, newest first (at most 20).' }),
  },
  { $id: 'AlertRuleResponse' },
);
export const AlertRuleList = Type.Object({ results: Type.Array(AlertRuleResponse) }, { $id: 'AlertRuleList' });

export const AlertReceiverParams = Type.Object({ alertReceiverId: Uuid }, { additionalProperties: false });
export const AlertRuleParams = Type.Object({ alertRuleId: Uuid }, { additionalProperties: false });
