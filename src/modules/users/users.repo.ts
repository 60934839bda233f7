import type { Selectable } from 'kysely';
import type { AccountSettingsTable, Queryable, UsersTable } from '../../db/db.schema.ts';

export type UserRow = Selectable<UsersTable>;

export function findUserBySubject(db: Queryable, issuer: string, subject: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
}

/** A user created without an identity (by `slipway admin bootstrap`) waiting to be claimed by a verified e-mail. */
export function findUnlinkedUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('issuer', 'is', null)
    .where('email', '=', email)
    .orderBy('created_at')
    .executeTakeFirst();
}

export function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).orderBy('created_at').executeTakeFirst();
}

export function findUserById(db: Queryable, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertUser(db: Queryable, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function updateUser(
  db: Queryable,
  id: string,
  fields: Partial<Pick<UserRow, 'issuer' | 'subject' | 'email' | 'email_verified' | 'name' | 'picture' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('users').set(fields).where('id', '=', id).execute();
}

/**
 * Links an identity to a user created without one, only if it is still unlinked: of two identities racing to
 * claim the same user, exactly one wins. Answers whether this call claimed it.
 */
export async function claimUnlinkedUser(
  db: Queryable,
  id: string,
  fields: Pick<UserRow, 'issuer' | 'subject' | 'email_verified' | 'name' | 'picture' | 'updated_at'>,
): Promise<boolean> {
  const result = await db.updateTable('users').set(fields).where('id', '=', id).where('issuer', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export type AccountSettingsRow = Selectable<AccountSettingsTable>;

export function findAccountSettings(db: Queryable, userId: string): Promise<AccountSettingsRow | undefined> {
  return db.selectFrom('account_settings').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** Sets the person's communication e-mail, in one statement whether or not they set one before. */
export async function upsertAccountSettings(db: Queryable, row: AccountSettingsRow): Promise<void> {
  await db
    .insertInto('account_settings')
    .values(row)
    .onConflict((conflict) => conflict.column('user_id').doUpdateSet({ communication_email: row.communication_email, updated_at: row.updated_at }))
    .execute();
}
