import { sql, type Kysely, type RawBuilder } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { DialectName } from './db.client.ts';
import * as foundation from './migrations/0001_foundation.ts';
import * as policyTokens from './migrations/0002_policy_tokens.ts';
import * as membership from './migrations/0003_membership.ts';
import * as identity from './migrations/0004_identity.ts';
import * as gitTokens from './migrations/0005_git_tokens.ts';
import * as idempotency from './migrations/0006_idempotency.ts';
import * as clusters from './migrations/0007_clusters.ts';
import * as billing from './migrations/0008_billing.ts';
import * as platformConfigurations from './migrations/0009_platform_configurations.ts';
import * as cloudCredentials from './migrations/0010_cloud_credentials.ts';
import * as registries from './migrations/0011_registries.ts';
import * as environments from './migrations/0012_environments.ts';
import * as variables from './migrations/0013_variables.ts';
import * as webhooks from './migrations/0014_webhooks.ts';
import * as organizationEvents from './migrations/0016_organization_events.ts';
import * as customRoles from './migrations/0015_custom_roles.ts';
import * as services from './migrations/0017_services.ts';
import * as serviceDeployments from './migrations/0018_service_deployments.ts';
import * as serviceDomains from './migrations/0019_service_domains.ts';
import * as agentTasks from './migrations/0020_agent_tasks.ts';
import * as serviceLocalPorts from './migrations/0021_service_local_ports.ts';
import * as agentTaskOrder from './migrations/0022_agent_task_order.ts';
import * as serviceWorkloadHealth from './migrations/0023_service_workload_health.ts';
import * as serviceLocalAddresses from './migrations/0024_service_local_addresses.ts';
import * as localClusterGrants from './migrations/0025_local_cluster_grants.ts';
import * as serviceHostnames from './migrations/0026_service_hostnames.ts';
import * as customRoleReveal from './migrations/0027_custom_role_reveal.ts';
import * as organizationDeletion from './migrations/0028_organization_deletion.ts';
import * as jobSchedules from './migrations/0029_job_schedules.ts';
import * as environmentFanOut from './migrations/0030_environment_fan_out.ts';
import * as serviceLogInstances from './migrations/0031_service_log_instances.ts';
import * as placementInDrivers from './migrations/0032_placement_in_drivers.ts';
import * as certificates from './migrations/0033_certificates.ts';
import * as agentClusterFacts from './migrations/0034_agent_cluster_facts.ts';
import * as serviceCertificates from './migrations/0036_service_certificates.ts';
import * as installationCa from './migrations/0037_installation_ca.ts';
import * as deploymentStages from './migrations/0038_deployment_stages.ts';
import * as deploymentRules from './migrations/0039_deployment_rules.ts';
import * as clusterAdvancedSettings from './migrations/0040_cluster_advanced_settings.ts';
import * as agentCertificates from './migrations/0045_agent_certificates.ts';
import * as accountSettings from './migrations/0046_account_settings.ts';
import * as alerts from './migrations/0047_alerts.ts';
import * as githubAppConnections from './migrations/0048_github_app_connections.ts';
import * as gitWebhooks from './migrations/0049_git_webhooks.ts';
import * as databaseBackups from './migrations/0050_database_backups.ts';
import * as clusterInsight from './migrations/0051_cluster_insight.ts';
import * as clusterSettings from './migrations/0052_cluster_settings.ts';
import * as traceContext from './migrations/0053_trace_context.ts';
import * as rateLimitCounters from './migrations/0054_rate_limit_counters.ts';
import * as listIndexes from './migrations/0055_list_indexes.ts';
import * as deploymentLogCounter from './migrations/0056_deployment_log_counter.ts';
import * as jobWokenWhileRunning from './migrations/0057_job_woken_while_running.ts';
import * as environmentsByOrganization from './migrations/0058_environments_by_organization.ts';
import * as webhooksByOrganizationInOrder from './migrations/0059_webhooks_by_organization_in_order.ts';
import * as listRevisions from './migrations/0060_list_revisions.ts';
import * as variableAliasesByProject from './migrations/0061_variable_aliases_by_project.ts';

/** Column types that differ between the dialects; everything else in a migration is portable schema-builder. */
export interface ColumnTypes {
  timestamp: 'text' | 'timestamptz';
  json: 'text' | 'jsonb';
  /**
   * Normalised names (unique keys, sort order): compared byte-wise on both dialects, as SQLite's BINARY collation
   * does, so uniqueness and listing order never depend on the PostgreSQL server's locale.
   */
  nameKey: 'text' | RawBuilder<unknown>;
}

type MigrationModule = { up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> };

/** Every migration, in order. A new migration is a new file in migrations/ and one line here. */
const MIGRATIONS: ReadonlyArray<[string, MigrationModule]> = [
  ['0001_foundation', foundation],
  ['0002_policy_tokens', policyTokens],
  ['0003_membership', membership],
  ['0004_identity', identity],
  ['0005_git_tokens', gitTokens],
  ['0006_idempotency', idempotency],
  ['0007_clusters', clusters],
  ['0008_billing', billing],
  ['0009_platform_configurations', platformConfigurations],
  ['0010_cloud_credentials', cloudCredentials],
  ['0011_registries', registries],
  ['0012_environments', environments],
  ['0013_variables', variables],
  ['0014_webhooks', webhooks],
  ['0016_organization_events', organizationEvents],
  ['0015_custom_roles', customRoles],
  ['0017_services', services],
  ['0018_service_deployments', serviceDeployments],
  ['0019_service_domains', serviceDomains],
  ['0020_agent_tasks', agentTasks],
  ['0021_service_local_ports', serviceLocalPorts],
  ['0022_agent_task_order', agentTaskOrder],
  ['0023_service_workload_health', serviceWorkloadHealth],
  ['0024_service_local_addresses', serviceLocalAddresses],
  ['0025_local_cluster_grants', localClusterGrants],
  ['0026_service_hostnames', serviceHostnames],
  ['0027_custom_role_reveal', customRoleReveal],
  ['0028_organization_deletion', organizationDeletion],
  ['0029_job_schedules', jobSchedules],
  ['0030_environment_fan_out', environmentFanOut],
  ['0031_service_log_instances', serviceLogInstances],
  ['0032_placement_in_drivers', placementInDrivers],
  ['0033_certificates', certificates],
  ['0034_agent_cluster_facts', agentClusterFacts],
  ['0036_service_certificates', serviceCertificates],
  ['0037_installation_ca', installationCa],
  ['0038_deployment_stages', deploymentStages],
  ['0039_deployment_rules', deploymentRules],
  ['0040_cluster_advanced_settings', clusterAdvancedSettings],
  ['0045_agent_certificates', agentCertificates],
  ['0046_account_settings', accountSettings],
  ['0047_alerts', alerts],
  ['0048_github_app_connections', githubAppConnections],
  ['0049_git_webhooks', gitWebhooks],
  ['0050_database_backups', databaseBackups],
  ['0051_cluster_insight', clusterInsight],
  ['0052_cluster_settings', clusterSettings],
  ['0053_trace_context', traceContext],
  ['0054_rate_limit_counters', rateLimitCounters],
  ['0055_list_indexes', listIndexes],
  ['0056_deployment_log_counter', deploymentLogCounter],
  ['0057_job_woken_while_running', jobWokenWhileRunning],
  ['0058_environments_by_organization', environmentsByOrganization],
  ['0059_webhooks_by_organization_in_order', webhooksByOrganizationInOrder],
  ['0060_list_revisions', listRevisions],
  ['0061_variable_aliases_by_project', variableAliasesByProject],
];

/** The names of the migrations this build knows: a backup taken at a level beyond them is refused (db.backup.ts). */
export const KNOWN_MIGRATIONS: readonly string[] = MIGRATIONS.map(([name]) => name);

class StaticMigrationProvider implements MigrationProvider {
  private readonly types: ColumnTypes;
  constructor(types: ColumnTypes) {
    this.types = types;
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, module] of MIGRATIONS) {
      out[name] = { up: (db) => module.up(db, this.types) };
    }
    return out;
  }
}

/** Applies every pending migration; called at each start, so the schema is always current. Migrations see an untyped database. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (await schemaIsCurrent(db)) return;
  const types: ColumnTypes =
    dialect === 'postgres'
      ? { timestamp: 'timestamptz', json: 'jsonb', nameKey: sql`text collate "C"` }
      : { timestamp: 'text', json: 'text', nameKey: 'text' };
  // Kysely looks for its own bookkeeping tables in any schema unless told which: name the one in use, so two
  // installations (or test suites) sharing a PostgreSQL database in different schemas never see each other's.
  const migrationTableSchema =
    dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(types),
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
  });
  for (let attempt = 1; ; attempt += 1) {
    const { error, results } = await migrator.migrateToLatest();
    if (error === undefined) return;
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    // Before running any migration, Kysely checks its bookkeeping tables by reading the catalog of every schema
    // (pg_get_serial_sequence on each column): a schema dropped meanwhile by another installation or test suite on
    // the same server fails that read ("column … of relation … does not exist"). Nothing was applied: look again.
    if (failed === undefined && attempt < BOOKKEEPING_ATTEMPTS) continue;
    throw new Error(`database migration ${failed ?? 'bookkeeping'} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const BOOKKEEPING_ATTEMPTS = 3;

/**
 * One query at a start whose schema is current (every start but the first after an upgrade): the bookkeeping table
 * lists exactly the migrations this build knows. Kysely's migrator would first check its tables in the catalog and
 * take its lock. Anything else — no table yet, a migration missing, one this build does not know — goes the whole
 * way through the migrator, which applies what is pending or refuses what it does not know.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function schemaIsCurrent(db: Kysely<any>): Promise<boolean> {
  let applied: string[];
  try {
    // Unqualified: the table of the schema in use (search_path), the one the migrator is told to use below.
    applied = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((row) => row.name);
  } catch {
    return false;
  }
  // Compared as sets: the list is in the order migrations run, which is not always the order of their names.
  const known = MIGRATIONS.map(([name]) => name).sort();
  return applied.length === known.length && [...applied].sort().every((name, index) => name === known[index]);
}
