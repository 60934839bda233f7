import type { Selectable, Updateable } from 'kysely';
import type { GitTokensTable, Queryable } from '../../db/db.schema.ts';

export type GitTokenRow = Selectable<GitTokensTable>;

export async function insertGitToken(db: Queryable, row: GitTokenRow): Promise<void> {
  await db.insertInto('git_tokens').values(row).execute();
}

export function findGitToken(db: Queryable, organizationId: string, id: string): Promise<GitTokenRow | undefined> {
  return db.selectFrom('git_tokens').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export function listGitTokens(db: Queryable, organizationId: string): Promise<GitTokenRow[]> {
  return db
    .selectFrom('git_tokens')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateGitToken(
  db: Queryable,
  organizationId: string,
  id: string,
  changes: Updateable<GitTokensTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('git_tokens')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteGitToken(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('git_tokens').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
