import type { Selectable } from 'kysely';
import { compiledOnce } from '../../db/db.compiled-query.ts';
import type { PolicyTokensTable, Queryable } from '../../db/db.schema.ts';

export type PolicyTokenRow = Selectable<PolicyTokensTable>;

export async function insertPolicyToken(db: Queryable, row: PolicyTokenRow): Promise<void> {
  await db.insertInto('policy_tokens').values(row).execute();
}

/** The authentication lookup: one indexed read by hash, on every request with a policy token, so compiled once. */
const tokenByHash = compiledOnce((db, hash) => db.selectFrom('policy_tokens').selectAll().where('token_hash', '=', hash));

export async function findPolicyTokenByHash(db: Queryable, hash: string): Promise<PolicyTokenRow | undefined> {
  return (await tokenByHash(db, hash))[0];
}

export function findPolicyTokenById(db: Queryable, id: string): Promise<PolicyTokenRow | undefined> {
  return db.selectFrom('policy_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listPolicyTokens(db: Queryable, organizationId: string): Promise<PolicyTokenRow[]> {
  return db
    .selectFrom('policy_tokens')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function deletePolicyToken(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('policy_tokens')
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Every row of the organization: its deletion takes every way in away at once (organizations.service removeOrganization). */
export async function deleteOrganizationPolicyTokens(db: Queryable, organizationId: string): Promise<void> {
  await db.deleteFrom('policy_tokens').where('organization_id', '=', organizationId).execute();
}
