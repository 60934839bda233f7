import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * LOCAL clusters belong to the installation's operator (docs/clusters.md, "LOCAL clusters"): their workloads run as
 * processes on the control plane's own host, so creating one, or deploying onto one, needs a grant the operator gives
 * an organization (`slipway admin local-clusters allow`, and `slipway admin bootstrap` for the organization it
 * creates). One row per allowed organization, owned by the clusters module; denying removes the row. It goes with its
 * organization.
 *
 * No organization is allowed by this migration, not even one that owns a LOCAL cluster already: before grants
 * existed anyone who could sign up could create one, and an upgrade must not keep that open. Existing workloads keep
 * running; the next deployment onto a LOCAL cluster answers 403 naming the command that allows it, and
 * `slipway admin local-clusters list` shows the organizations holding LOCAL clusters without a grant.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('local_cluster_grants')
    .addColumn('organization_id', 'varchar(36)', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('granted_by', 'text', (c) => c.notNull())
    .addColumn('granted_at', types.timestamp, (c) => c.notNull())
    .execute();
}
