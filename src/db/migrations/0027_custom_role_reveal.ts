import type { Kysely } from 'kysely';

/**
 * Revealing secret values is a permission of its own (`secrets:reveal`, docs/roles.md), which a custom role grants
 * explicitly per environment type, beside that type's permission: one flag (1/0) per environment type, for the
 * projects the role does not list (`custom_roles`) and for each project it lists (`custom_role_projects`). Existing
 * roles reveal nothing, as before they could only through the write grant that no longer implies it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['custom_roles', 'custom_role_projects']) {
    for (const type of ['development', 'preview', 'staging', 'production']) {
      await db.schema
        .alterTable(table)
        .addColumn(`${type}_reveal`, 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    }
  }
}
