import type { Selectable } from 'kysely';
import type { ApiTokensTable, Queryable } from '../../db/db.schema.ts';

export type ApiTokenRow = Selectable<ApiTokensTable>;
export type ApiTokenWithRole = ApiTokenRow & { role_name: string | null; role_kind: string | null };

export async function insertApiToken(db: Queryable, row: ApiTokenRow): Promise<void> {
  await db.insertInto('api_tokens').values(row).execute();
}

function selectWithRole(db: Queryable) {
  return db
    .selectFrom('api_tokens')
    .leftJoin('roles', 'roles.id', 'api_tokens.role_id')
    .selectAll('api_tokens')
    .select(['roles.name as role_name', 'roles.kind as role_kind']);
}

/** The authentication lookup: one indexed read by hash, run on every request that carries an API token. */
export function findApiTokenByHash(db: Queryable, hash: string): Promise<ApiTokenWithRole | undefined> {
  return selectWithRole(db).where('api_tokens.token_hash', '=', hash).executeTakeFirst();
}

export function findApiToken(db: Queryable, organizationId: string, id: string): Promise<ApiTokenWithRole | undefined> {
  return selectWithRole(db)
    .where('api_tokens.organization_id', '=', organizationId)
    .where('api_tokens.id', '=', id)
    .executeTakeFirst();
}

export function listApiTokens(db: Queryable, organizationId: string): Promise<ApiTokenWithRole[]> {
  return selectWithRole(db)
    .where('api_tokens.organization_id', '=', organizationId)
    .orderBy('api_tokens.created_at')
    .orderBy('api_tokens.id')
    .execute();
}

export async function deleteApiToken(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('api_tokens')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Every row of the organization: its deletion takes every way in away at once (organizations.service removeOrganization). */
export async function deleteOrganizationApiTokens(db: Queryable, organizationId: string): Promise<void> {
  await db.deleteFrom('api_tokens').where('organization_id', '=', organizationId).execute();
}
