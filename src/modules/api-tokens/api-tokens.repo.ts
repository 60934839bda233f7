import type { Selectable } from 'kysely';
import { compiledOnce } from '../../db/db.compiled-query.ts';
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

/**
 * The authentication lookup: one indexed read by hash, run on every request that carries an API token, so it is
 * built and compiled once (db/db.compiled-query.ts). The role is read by scalar subqueries, not selectWithRole's LEFT
 * JOIN: SQLite runs the join form of this one-row read several times slower (docs/benchmarks.md, issue 26).
 */
const tokenByHash = compiledOnce((db, hash) =>
  db
    .selectFrom('api_tokens')
    .selectAll('api_tokens')
    .select((eb) => [
      eb.selectFrom('roles').select('roles.name').whereRef('roles.id', '=', 'api_tokens.role_id').as('role_name'),
      eb.selectFrom('roles').select('roles.kind').whereRef('roles.id', '=', 'api_tokens.role_id').as('role_kind'),
    ])
    .where('api_tokens.token_hash', '=', hash),
);

export async function findApiTokenByHash(db: Queryable, hash: string): Promise<ApiTokenWithRole | undefined> {
  return (await tokenByHash(db, hash))[0];
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
