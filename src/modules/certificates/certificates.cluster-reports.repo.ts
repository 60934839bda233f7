import type { Selectable } from 'kysely';
import type { AgentCertificatesTable, Queryable } from '../../db/db.schema.ts';

export type AgentCertificateRow = Selectable<AgentCertificatesTable>;

/** Of these custom domains, those of a service whose environment runs on the cluster. */
export async function listClusterCustomDomains(db: Queryable, clusterId: string, domains: readonly string[]): Promise<string[]> {
  if (domains.length === 0) return [];
  const rows = await db
    .selectFrom('service_custom_domains')
    .innerJoin('services', 'services.id', 'service_custom_domains.service_id')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .select('service_custom_domains.domain')
    .where('environments.cluster_id', '=', clusterId)
    .where('service_custom_domains.domain', 'in', [...domains])
    .execute();
  return rows.map((row) => row.domain);
}

/** Of these hostname labels (`<label>.<SLIPWAY_APPS_DOMAIN>`), those of a service whose environment runs on the cluster. */
export async function listClusterHostnameLabels(db: Queryable, clusterId: string, labels: readonly string[]): Promise<string[]> {
  if (labels.length === 0) return [];
  const rows = await db
    .selectFrom('services')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .select('services.hostname_label')
    .where('environments.cluster_id', '=', clusterId)
    .where('services.hostname_label', 'in', [...labels])
    .execute();
  return rows.flatMap((row) => (row.hostname_label === null ? [] : [row.hostname_label]));
}

export async function upsertAgentCertificate(db: Queryable, row: AgentCertificateRow): Promise<void> {
  await db
    .insertInto('agent_certificates')
    .values(row)
    .onConflict((oc) => oc.columns(['cluster_id', 'hostname']).doUpdateSet({ status: row.status, error: row.error, expires_at: row.expires_at, reported_at: row.reported_at }))
    .execute();
}

export async function deleteAgentCertificates(db: Queryable, clusterId: string, hostnames: readonly string[]): Promise<void> {
  if (hostnames.length === 0) return;
  await db.deleteFrom('agent_certificates').where('cluster_id', '=', clusterId).where('hostname', 'in', [...hostnames]).execute();
}

/**
 * Of these custom domains, those whose service's cluster obtains its own certificates (its agent said it runs with a
 * cert-manager issuer), with what the cluster last reported of the domain (nulls before any report).
 */
export function listClusterCertifiedDomains(
  db: Queryable,
  customDomainIds: readonly string[],
): Promise<Array<{ id: string; status: string | null; error: string | null; expires_at: string | null }>> {
  if (customDomainIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('service_custom_domains')
    .innerJoin('services', 'services.id', 'service_custom_domains.service_id')
    .innerJoin('environments', 'environments.id', 'services.environment_id')
    .innerJoin('agent_presence', 'agent_presence.cluster_id', 'environments.cluster_id')
    .leftJoin('agent_certificates', (join) =>
      join.onRef('agent_certificates.cluster_id', '=', 'environments.cluster_id').onRef('agent_certificates.hostname', '=', 'service_custom_domains.domain'),
    )
    .select(['service_custom_domains.id as id', 'agent_certificates.status as status', 'agent_certificates.error as error', 'agent_certificates.expires_at as expires_at'])
    .where('service_custom_domains.id', 'in', [...customDomainIds])
    .where('agent_presence.cert_manager_issuer', 'is not', null)
    .execute();
}
