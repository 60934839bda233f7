import type { TSchema } from 'typebox';
import { keyedDefaults, keyedOverrides, keyedSettingsSchema, keyedSettingsWith, type KeyedSetting } from '../../lib/keyed-settings.ts';

/**
 * A service's advanced settings (docs/service-kinds.md, "Advanced settings"): the reference's flat maps of dotted
 * keys (`deployment.termination_grace_period_seconds`, `network.ingress.force_ssl_redirect`, …), one shape per kind.
 * Every key has a default; a service keeps only what it set (`advanced_settings` in its settings, so a change is a
 * change of what a deployment carries: OUT_OF_DATE, and the driver reads them from the deployment's snapshot).
 * A PUT replaces them whole, as the reference's full object: a key left out goes back to its default.
 *
 * This table is the one source of the keys, their types, bounds, defaults and the kinds that have them; the schemas
 * of the 15 operations are built from it. The keys follow the reference exactly (its spelling `Requirred` included,
 * so generated clients decode what they send).
 */

export const ADVANCED_SETTINGS_KINDS = ['APPLICATION', 'CONTAINER', 'JOB', 'HELM', 'TERRAFORM'] as const;
export type AdvancedSettingsKind = (typeof ADVANCED_SETTINGS_KINDS)[number];

interface AdvancedSettingKey extends KeyedSetting {
  kinds: readonly AdvancedSettingsKind[];
}

const A = 'APPLICATION';
const C = 'CONTAINER';
const J = 'JOB';
const H = 'HELM';
const T = 'TERRAFORM';
const WORKLOADS = [A, C] as const;
const INGRESS = [A, C, H] as const;
const DAY = 86_400;

const bool = { type: 'boolean' } as const;
const seconds = (maximum: number) => ({ type: 'integer', minimum: 0, maximum }) as const;
const percent = { type: 'integer', minimum: 0, maximum: 100 } as const;
const text = (maxLength = 4096) => ({ type: 'string', maxLength }) as const;
const nullableSeconds = { type: 'integer', minimum: 0, maximum: DAY, nullable: true } as const;

export const ADVANCED_SETTING_KEYS: readonly AdvancedSettingKey[] = [
  { key: 'deployment.custom_domain_check_enabled', kinds: [A, C, H], value: bool, default: true },
  { key: 'deployment.termination_grace_period_seconds', kinds: [A, C, J, T], value: seconds(3600), default: 60 },
  { key: 'deployment.affinity.node.required', kinds: [A, C, J, T], value: { type: 'labels' }, default: {} },
  { key: 'deployment.antiaffinity.pod', kinds: WORKLOADS, value: { type: 'enum', values: ['Preferred', 'Requirred'] }, default: 'Preferred' },
  { key: 'deployment.topology_spread.zone', kinds: WORKLOADS, value: { type: 'enum', values: ['Disabled', 'ScheduleAnyway', 'DoNotSchedule'] }, default: 'Disabled' },
  { key: 'deployment.lifecycle.post_start_exec_command', kinds: [A], value: { type: 'strings' }, default: [] },
  { key: 'deployment.lifecycle.pre_stop_exec_command', kinds: [A], value: { type: 'strings' }, default: [] },
  { key: 'deployment.update_strategy.type', kinds: WORKLOADS, value: { type: 'enum', values: ['RollingUpdate', 'Recreate'] }, default: 'RollingUpdate' },
  { key: 'deployment.update_strategy.rolling_update.max_unavailable_percent', kinds: WORKLOADS, value: percent, default: 25 },
  { key: 'deployment.update_strategy.rolling_update.max_surge_percent', kinds: WORKLOADS, value: percent, default: 25 },
  { key: 'build.timeout_max_sec', kinds: [A, J, T], value: { type: 'integer', minimum: 60, maximum: 6 * 3600 }, default: 1800 },
  { key: 'build.cpu_max_in_milli', kinds: [A, J, T], value: { type: 'integer', minimum: 250, maximum: 64_000 }, default: 4000 },
  { key: 'build.ram_max_in_gib', kinds: [A, J, T], value: { type: 'integer', minimum: 1, maximum: 256 }, default: 8 },
  { key: 'build.ephemeral_storage_in_gib', kinds: [T], value: { type: 'integer', minimum: 1, maximum: 1000 }, default: 20 },
  { key: 'build.disable_buildkit_cache', kinds: [A, J], value: bool, default: false },
  { key: 'build.skip_git_submodules', kinds: [A, J, T], value: bool, default: false },
  { key: 'network.ingress.proxy_body_size_mb', kinds: INGRESS, value: { type: 'integer', minimum: 0, maximum: 10_240 }, default: 100 },
  { key: 'network.ingress.force_ssl_redirect', kinds: INGRESS, value: bool, default: true },
  { key: 'network.ingress.enable_cors', kinds: INGRESS, value: bool, default: false },
  { key: 'network.ingress.cors_allow_origin', kinds: INGRESS, value: text(), default: '*' },
  { key: 'network.ingress.cors_allow_methods', kinds: INGRESS, value: text(), default: 'GET, PUT, POST, DELETE, PATCH, OPTIONS' },
  {
    key: 'network.ingress.cors_allow_headers',
    kinds: INGRESS,
    value: text(),
    default: 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
  },
  { key: 'network.ingress.proxy_buffer_size_kb', kinds: INGRESS, value: { type: 'integer', minimum: 1, maximum: 1024 }, default: 4 },
  { key: 'network.ingress.keepalive_time_seconds', kinds: INGRESS, value: seconds(DAY), default: 3600 },
  { key: 'network.ingress.keepalive_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.send_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.proxy_connect_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.proxy_send_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.proxy_read_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.proxy_buffering', kinds: INGRESS, value: { type: 'enum', values: ['on', 'off'] }, default: 'on' },
  { key: 'network.ingress.proxy_request_buffering', kinds: [C, H], value: { type: 'enum', values: ['on', 'off'] }, default: 'on' },
  { key: 'network.ingress.whitelist_source_range', kinds: INGRESS, value: text(), default: '0.0.0.0/0' },
  { key: 'network.ingress.denylist_source_range', kinds: INGRESS, value: text(), default: '' },
  { key: 'network.ingress.basic_auth_env_var', kinds: INGRESS, value: text(255), default: '' },
  { key: 'network.ingress.enable_sticky_session', kinds: INGRESS, value: bool, default: false },
  { key: 'network.ingress.grpc_send_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.grpc_read_timeout_seconds', kinds: INGRESS, value: seconds(3600), default: 60 },
  { key: 'network.ingress.extra_headers', kinds: INGRESS, value: text(), default: '{}' },
  { key: 'network.gateway_api.http_request_timeout_seconds', kinds: INGRESS, value: nullableSeconds, default: null },
  { key: 'network.gateway_api.http_connection_idle_timeout_seconds', kinds: INGRESS, value: nullableSeconds, default: null },
  { key: 'network.gateway_api.retry.num_retries', kinds: INGRESS, value: { type: 'integer', minimum: 0, maximum: 100, nullable: true }, default: null },
  { key: 'network.gateway_api.retry.retry_on', kinds: INGRESS, value: { type: 'string', maxLength: 255, nullable: true }, default: null },
  { key: 'network.gateway_api.retry.http_status_codes', kinds: INGRESS, value: { type: 'string', maxLength: 255, nullable: true }, default: null },
  { key: 'network.gateway_api.retry.per_try_timeout_seconds', kinds: INGRESS, value: { type: 'integer', minimum: 1, maximum: 3600, nullable: true }, default: null },
  { key: 'hpa.cpu.average_utilization_percent', kinds: WORKLOADS, value: { type: 'integer', minimum: 1, maximum: 100 }, default: 60 },
  { key: 'hpa.memory.average_utilization_percent', kinds: WORKLOADS, value: { type: 'integer', minimum: 1, maximum: 100, nullable: true }, default: null },
  { key: 'security.service_account_name', kinds: [A, C, J, T], value: text(253), default: '' },
  { key: 'security.automount_service_account_token', kinds: [A, C, J], value: bool, default: false },
  { key: 'security.read_only_root_filesystem', kinds: [A, C, J, T], value: bool, default: false },
  { key: 'job.delete_ttl_seconds_after_finished', kinds: [J], value: { type: 'integer', minimum: 0, maximum: 30 * DAY, nullable: true }, default: null },
  { key: 'cronjob.concurrency_policy', kinds: [J], value: { type: 'enum', values: ['Forbid', 'Allow', 'Replace'] }, default: 'Forbid' },
  { key: 'cronjob.failed_jobs_history_limit', kinds: [J], value: { type: 'integer', minimum: 0, maximum: 100 }, default: 1 },
  { key: 'cronjob.success_jobs_history_limit', kinds: [J], value: { type: 'integer', minimum: 0, maximum: 100 }, default: 1 },
];

const SCHEMA_NAMES: Record<AdvancedSettingsKind, string> = {
  APPLICATION: 'ApplicationAdvancedSettings',
  CONTAINER: 'ContainerAdvancedSettings',
  JOB: 'JobAdvancedSettings',
  HELM: 'HelmAdvancedSettings',
  TERRAFORM: 'TerraformAdvancedSettings',
};

/** The kind's keys. */
export function advancedSettingKeysOf(kind: AdvancedSettingsKind): AdvancedSettingKey[] {
  return ADVANCED_SETTING_KEYS.filter((entry) => entry.kinds.includes(kind));
}

/** The kind's shape: every key optional in a request (left out: its default), every key present in an answer. */
export function advancedSettingsSchema(kind: AdvancedSettingsKind, use: 'request' | 'response'): TSchema {
  return keyedSettingsSchema(advancedSettingKeysOf(kind), use, SCHEMA_NAMES[kind]);
}

/** The kind's defaults (getDefault…AdvancedSettings), a fresh object. */
export function defaultAdvancedSettings(kind: AdvancedSettingsKind): Record<string, unknown> {
  return keyedDefaults(advancedSettingKeysOf(kind));
}

/** What a service's settings keep of a request: the keys that differ from their defaults. */
export function advancedSettingsOverrides(kind: AdvancedSettingsKind, request: Record<string, unknown>): Record<string, unknown> {
  return keyedOverrides(advancedSettingKeysOf(kind), request);
}

/** The full advanced settings of a service: its defaults, with what its settings keep over them. */
export function advancedSettingsOf(kind: AdvancedSettingsKind, settings: Record<string, unknown>): Record<string, unknown> {
  return keyedSettingsWith(advancedSettingKeysOf(kind), settings.advanced_settings);
}
