import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * What a Kubernetes agent reports of its cluster with its heartbeats (docs/kubernetes.md, "Installing the agent"):
 * the server's version, the node count (null when the agent may not list nodes) and the permissions it needs and
 * lacks (a JSON array of `verb resource scope`). All null for an agent that reports none (the local driver).
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('agent_presence').addColumn('kubernetes_version', 'varchar(64)').execute();
  await db.schema.alterTable('agent_presence').addColumn('node_count', 'integer').execute();
  await db.schema.alterTable('agent_presence').addColumn('missing_permissions', types.json).execute();
}
