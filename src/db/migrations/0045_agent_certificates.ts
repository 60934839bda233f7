import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Certificates a cluster obtains itself (docs/kubernetes.md, "Ingress and HTTPS"; docs/https.md, "Kubernetes
 * clusters"): a Kubernetes agent running with `--cert-manager-issuer` says so with its heartbeats
 * (`agent_presence.cert_manager_issuer`), and reports where cert-manager's Certificate of each of its hostnames
 * stands — one row per cluster and hostname, PENDING, ISSUED (with `expires_at`) or ERROR (with `error`).
 *
 * A table of its own rather than rows of `certificates`: those are the certificates the control plane orders and
 * serves itself (chain, sealed key, renewal backoff), which the renewal schedule and the apps proxy read; these are
 * only what a cluster says of certificates it keeps in its own Secrets. The rows go with their cluster.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('agent_presence').addColumn('cert_manager_issuer', 'varchar(253)').execute();
  await db.schema
    .createTable('agent_certificates')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('hostname', 'varchar(253)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('expires_at', types.timestamp)
    .addColumn('reported_at', types.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_certificates_pkey', ['cluster_id', 'hostname'])
    .execute();
}
