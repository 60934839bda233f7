import type { TSchema } from 'typebox';
import { readJson, writeJson } from '../../db/db.json.ts';
import { keyedDefaults, keyedOverrides, keyedSettingsSchema, keyedSettingsWith, type KeyedSetting } from '../../lib/keyed-settings.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { updateCluster } from './clusters.repo.ts';
import type { ClusterLocks } from './clusters.locks.ts';
import type { ClusterRecords } from './clusters.records.ts';
import type { ClustersDeps } from './clusters.service.ts';

/**
 * A cluster's advanced settings (docs/clusters.md, "Advanced settings"): the reference's ClusterAdvancedSettings, a
 * flat map of dotted keys read and written the way a service's advanced settings are (src/lib/keyed-settings.ts):
 * every key has a type, bounds and a default, a cluster keeps only what it sets away from the defaults (column
 * `advanced_settings`, migration 0040), a PUT replaces the whole map, a bad key or value is refused whole (400 naming
 * it), and answers show every key.
 *
 * They describe the managed infrastructure the original product installs (its AWS network, EKS add-ons, Loki,
 * nginx, the container registry). None of Slipway's drivers provisions that infrastructure: the local driver runs on
 * its host, the Kubernetes driver deploys into a cluster someone else runs, and neither keeps a registry of its own or
 * creates load balancers. So the settings are stored, answered and counted as a change of the cluster's definition
 * (a deployed cluster reads OUT_OF_DATE until its next deploy), and carried to no agent: carrying them would promise
 * an effect nothing produces. The defaults are the original product's where its reference states one.
 */

const DAY_LIMIT = 3653;
const MILLI_CPU = { type: 'integer', minimum: 10, maximum: 64_000 } as const;
const MEBIBYTES = { type: 'integer', minimum: 16, maximum: 262_144 } as const;
const bool = { type: 'boolean' } as const;
const nullableSeconds = { type: 'integer', minimum: 0, maximum: 86_400, nullable: true } as const;

/** Loki's resources per component (single binary, or write/read/backend when simple scalable). */
function lokiResources(component: string, cpu: [number, number], memory: [number, number]): KeyedSetting[] {
  return [
    { key: `loki.${component}.cpu_request_m`, value: MILLI_CPU, default: cpu[0] },
    { key: `loki.${component}.cpu_limit_m`, value: MILLI_CPU, default: cpu[1] },
    { key: `loki.${component}.memory_request_mib`, value: MEBIBYTES, default: memory[0] },
    { key: `loki.${component}.memory_limit_mib`, value: MEBIBYTES, default: memory[1] },
  ];
}

/** Which databases' public access can be restricted. */
const DATABASE_ACCESS: KeyedSetting[] = ['postgresql', 'mysql', 'mongodb', 'redis'].flatMap((engine) => [
  { key: `database.${engine}.deny_any_access`, value: bool, default: false },
  { key: `database.${engine}.allowed_cidrs`, value: { type: 'cidrs' } as const, default: ['0.0.0.0/0'] },
]);

export const CLUSTER_ADVANCED_SETTING_KEYS: readonly KeyedSetting[] = [
  { key: 'aws.cloudwatch.eks_logs_retention_days', value: { type: 'integer', minimum: 0, maximum: DAY_LIMIT }, default: 90 },
  { key: 'aws.vpc.enable_s3_flow_logs', value: bool, default: false },
  { key: 'aws.vpc.flow_logs_retention_days', value: { type: 'integer', minimum: 0, maximum: DAY_LIMIT }, default: 365 },
  { key: 'aws.vpc.enable_nat_gateway_secondary_eip', value: bool, default: false },
  { key: 'loki.log_retention_in_week', value: { type: 'integer', minimum: 1, maximum: 520 }, default: 12 },
  { key: 'loki.deployment_mode', value: { type: 'enum', values: ['single_binary', 'simple_scalable'] }, default: 'single_binary' },
  ...lokiResources('single_binary', [100, 1000], [512, 2048]),
  ...lokiResources('write', [100, 1000], [256, 1024]),
  ...lokiResources('read', [100, 1000], [256, 1024]),
  ...lokiResources('backend', [100, 1000], [256, 1024]),
  /** Seconds an image built for a service is kept in the cluster's registry: a year. */
  { key: 'registry.image_retention_time', value: { type: 'integer', minimum: 3600, maximum: 10 * 365 * 86_400 }, default: 365 * 86_400 },
  { key: 'cloud_provider.container_registry.tags', value: { type: 'tags' }, default: {} },
  { key: 'aws.eks.enable_alb_controller', value: bool, default: true },
  { key: 'aws.eks.enable_efs_addon', value: bool, default: false },
  { key: 'aws.eks.efs.throughput_mode', value: { type: 'enum', values: ['bursting', 'elastic', 'provisioned'] }, default: 'elastic' },
  { key: 'aws.eks.efs.performance_mode', value: { type: 'enum', values: ['generalPurpose', 'maxIO'] }, default: 'generalPurpose' },
  {
    key: 'aws.eks.efs.transition_to_ia',
    value: { type: 'enum', values: ['AFTER_1_DAY', 'AFTER_7_DAYS', 'AFTER_14_DAYS', 'AFTER_30_DAYS', 'AFTER_60_DAYS', 'AFTER_90_DAYS', ''] },
    default: 'AFTER_30_DAYS',
  },
  { key: 'load_balancer.size', value: { type: 'string', maxLength: 64 }, default: 'lb-s' },
  ...DATABASE_ACCESS,
  { key: 'aws.iam.admin_group', value: { type: 'string', maxLength: 128 }, default: 'Admins' },
  { key: 'aws.eks.ec2.metadata_imds', value: { type: 'enum', values: ['optional', 'required'] }, default: 'required' },
  { key: 'aws.eks.ec2.ami', value: { type: 'string', maxLength: 128 }, default: 'AmazonLinux2023' },
  /** Deprecated in the reference; kept so clients that still send it are not refused. -1: never expire. */
  { key: 'pleco.resources_ttl', value: { type: 'integer', minimum: -1, maximum: 10 * 365 * 86_400 }, default: -1 },
  { key: 'registry.mirroring_mode', value: { type: 'enum', values: ['Cluster', 'Service'] }, default: 'Service' },
  { key: 'nginx.vcpu.request_in_milli_cpu', value: MILLI_CPU, default: 100 },
  { key: 'nginx.vcpu.limit_in_milli_cpu', value: MILLI_CPU, default: 500 },
  { key: 'nginx.memory.request_in_mib', value: MEBIBYTES, default: 768 },
  { key: 'nginx.memory.limit_in_mib', value: MEBIBYTES, default: 768 },
  { key: 'envoy.gateway_api.http_request_timeout_seconds', value: nullableSeconds, default: null },
  { key: 'envoy.gateway_api.http_connection_idle_timeout_seconds', value: nullableSeconds, default: null },
  { key: 'envoy.gateway_api.retry.num_retries', value: { type: 'integer', minimum: 0, maximum: 100, nullable: true }, default: null },
  { key: 'envoy.gateway_api.retry.retry_on', value: { type: 'string', maxLength: 255, nullable: true }, default: null },
  { key: 'envoy.gateway_api.retry.http_status_codes', value: { type: 'string', maxLength: 255, nullable: true }, default: null },
  { key: 'envoy.gateway_api.retry.per_try_timeout_seconds', value: { type: 'integer', minimum: 1, maximum: 3600, nullable: true }, default: null },
  { key: 'nginx.hpa.cpu_utilization_percentage_threshold', value: { type: 'integer', minimum: 1, maximum: 100 }, default: 50 },
  { key: 'nginx.hpa.min_number_instances', value: { type: 'integer', minimum: 1, maximum: 100 }, default: 2 },
  { key: 'nginx.hpa.max_number_instances', value: { type: 'integer', minimum: 1, maximum: 100 }, default: 25 },
  /** The storage class of fast SSD volumes; empty: the cluster's default class. */
  { key: 'storageclass.fast_ssd', value: { type: 'string', maxLength: 253 }, default: '' },
  { key: 'platform.static_ip_mode', value: bool, default: false },
  { key: 'k8s.api.allowed_public_access_cidrs', value: { type: 'cidrs' }, default: ['0.0.0.0/0'] },
];

/** The request's shape (schema ClusterAdvancedSettings, every key optional) and the answer's (every key present). */
export function clusterAdvancedSettingsSchema(use: 'request' | 'response'): TSchema {
  return keyedSettingsSchema(CLUSTER_ADVANCED_SETTING_KEYS, use, 'ClusterAdvancedSettings');
}

/** The defaults (getDefaultClusterAdvancedSettings), a fresh object. */
export function defaultClusterAdvancedSettings(): Record<string, unknown> {
  return keyedDefaults(CLUSTER_ADVANCED_SETTING_KEYS);
}

/** What pairs of keys must satisfy together beyond each key's own bounds: a request never above its limit, a minimum never above its maximum. */
function crossKeyProblems(settings: Record<string, unknown>): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  const pairs: Array<[string, string]> = [
    ['nginx.hpa.min_number_instances', 'nginx.hpa.max_number_instances'],
    ['nginx.vcpu.request_in_milli_cpu', 'nginx.vcpu.limit_in_milli_cpu'],
    ['nginx.memory.request_in_mib', 'nginx.memory.limit_in_mib'],
    ...['single_binary', 'write', 'read', 'backend'].flatMap((component): Array<[string, string]> => [
      [`loki.${component}.cpu_request_m`, `loki.${component}.cpu_limit_m`],
      [`loki.${component}.memory_request_mib`, `loki.${component}.memory_limit_mib`],
    ]),
  ];
  for (const [low, high] of pairs) {
    const lowValue = settings[low];
    const highValue = settings[high];
    if (typeof lowValue === 'number' && typeof highValue === 'number' && lowValue > highValue) problems.push({ field: `/${low}`, message: `must not exceed ${high} (${highValue})` });
  }
  return problems;
}

export function createClusterAdvancedSettings(deps: Pick<ClustersDeps, 'db' | 'clock'>, records: Pick<ClusterRecords, 'requireCluster'>, locks: Pick<ClusterLocks, 'refuseIfLocked'>) {
  const { db, clock } = deps;

  return {
    /** The cluster's advanced settings: every key, its own value or the default. */
    async getClusterAdvancedSettings(organizationId: string, clusterId: string): Promise<Record<string, unknown>> {
      const row = await records.requireCluster(db, organizationId, clusterId);
      return keyedSettingsWith(CLUSTER_ADVANCED_SETTING_KEYS, readJson<unknown>(row.advanced_settings));
    },

    /**
     * Replaces them (a key left out goes back to its default); only what differs from the defaults is kept. A change
     * of the cluster's definition as editCluster's is: refused while the cluster is locked (409), and a deployed
     * cluster reads OUT_OF_DATE until its next deploy.
     */
    async editClusterAdvancedSettings(organizationId: string, clusterId: string, request: Record<string, unknown>): Promise<Record<string, unknown>> {
      const current = await records.requireCluster(db, organizationId, clusterId);
      const next = keyedSettingsWith(CLUSTER_ADVANCED_SETTING_KEYS, request);
      const problems = crossKeyProblems(next);
      if (problems.length > 0) throw badRequest(`these cluster advanced settings contradict each other: ${problems.map((problem) => `${problem.field.slice(1)} ${problem.message}`).join('; ')}`, problems);
      await locks.refuseIfLocked(db, clusterId);
      const overrides = keyedOverrides(CLUSTER_ADVANCED_SETTING_KEYS, request);
      const updated = await updateCluster(db, clusterId, {
        advanced_settings: Object.keys(overrides).length === 0 ? null : writeJson(overrides),
        config_revision: current.config_revision + 1,
        updated_at: clock.now().toISOString(),
      });
      if (!updated) throw notFound(`cluster ${clusterId} not found`);
      return next;
    },
  };
}

export type ClusterAdvancedSettings = ReturnType<typeof createClusterAdvancedSettings>;
