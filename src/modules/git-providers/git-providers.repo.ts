import type { Selectable } from 'kysely';
import type { GithubAppConnectionsTable, Queryable } from '../../db/db.schema.ts';

export type GithubAppConnectionRow = Selectable<GithubAppConnectionsTable>;

export function findGithubAppConnection(db: Queryable, organizationId: string): Promise<GithubAppConnectionRow | undefined> {
  return db.selectFrom('github_app_connections').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
}

/** One statement, so two connects at once leave one row (the last), never a unique violation. */
export async function upsertGithubAppConnection(db: Queryable, row: GithubAppConnectionRow): Promise<void> {
  await db
    .insertInto('github_app_connections')
    .values(row)
    .onConflict((conflict) =>
      conflict.column('organization_id').doUpdateSet({
        installation_id: row.installation_id,
        connected_by_user_id: row.connected_by_user_id,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function deleteGithubAppConnection(db: Queryable, organizationId: string): Promise<boolean> {
  const result = await db.deleteFrom('github_app_connections').where('organization_id', '=', organizationId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
