/**
 * Alerting (migrations/0047_alerts.ts, docs/alerts.md): where alerts go (receivers), what raises them (rules), which
 * receivers each rule notifies, and every time a rule fired.
 */

/** A destination of notifications: an SMTP smarthost (EMAIL) or an incoming webhook (SLACK, Slack's or generic body). */
export interface AlertReceiversTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string;
  /** SLACK or EMAIL. */
  type: string;
  send_resolved: number;
  owner: string | null;
  severity: string | null;
  /** SLACK receivers: the body posted, SLACK (Slack's incoming-webhook message) or GENERIC (the signed alert JSON). */
  webhook_format: string | null;
  /** SLACK receivers: the URL, sealed (Slack's carry their token in the path); `webhook_url_hint` is what is shown of it. */
  webhook_url_envelope: string | null;
  webhook_url_hint: string | null;
  /** SLACK receivers: the Standard Webhooks signing secret, sealed. */
  signing_secret_envelope: string | null;
  email_to: string | null;
  email_from: string | null;
  smarthost: string | null;
  auth_username: string | null;
  /** EMAIL receivers: the SMTP password, sealed; null when none was given. */
  auth_password_envelope: string | null;
  require_tls: number | null;
  created_at: string;
  updated_at: string;
}

/** A condition over what Slipway knows of a target, held for `for_duration_ms` before it fires. */
export interface AlertRulesTable {
  id: string;
  organization_id: string;
  cluster_id: string;
  name: string;
  name_key: string;
  description: string;
  tag: string;
  /** JSON: the reference's AlertRuleCondition as given. */
  condition: unknown;
  /** The ISO 8601 duration as given, and its length. */
  for_duration: string;
  for_duration_ms: number;
  severity: string;
  /** JSON: the reference's AlertPresentation (summary, runbook_url). */
  presentation: unknown;
  enabled: number;
  /** CLUSTER, ENVIRONMENT, APPLICATION, CONTAINER, JOB, CRONJOB, HELM or TERRAFORM. */
  target_type: string;
  target_id: string;
  /** The reference's AlertRuleState, as the last evaluation left it (UNDEPLOYED until the first). */
  state: string;
  /** Since when the condition has held without a break; null while it does not. */
  condition_since: string | null;
  /** Bumped by every evaluation and edit: an evaluation writes only over the row it read (compare-and-set). */
  evaluation_seq: number;
  last_evaluated_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AlertRuleReceiversTable {
  rule_id: string;
  receiver_id: string;
}

/** One firing of a rule: from the moment it fired (its condition held for the rule's duration) until it resolved. */
export interface AlertFiringsTable {
  id: string;
  rule_id: string;
  /** When the condition began to hold, and when it had held long enough to fire. */
  started_at: string;
  fired_at: string;
  resolved_at: string | null;
  /** The measured value when it fired. */
  value: number;
  /** When at least one receiver took the firing notification; null while none has (retried at each evaluation). */
  notified_at: string | null;
  /** Why the last attempt reached no receiver; safe to show. */
  notification_error: string | null;
}
