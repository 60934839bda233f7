import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { Uuid } from '../../protocol/wire.ts';
import { findAccountSettings, findUserById, upsertAccountSettings, type UserRow } from './users.repo.ts';

/**
 * The signed-in person's own account (getAccountInformation, editAccountInformation; docs/service-extras.md
 * "Account"). What the identity provider says of them (name, picture, e-mail) is refreshed from each token and is
 * not edited here; the one thing a person sets themselves is the e-mail they want to be written to.
 */

export const AccountInfo = Type.Object(
  {
    id: Uuid,
    created_at: Type.String({ format: 'date-time' }),
    nickname: Type.Optional(Type.String({ description: "The identity's name, else the part of its e-mail before the @." })),
    first_name: Type.Optional(Type.String({ description: "The first word of the identity's name." })),
    last_name: Type.Optional(Type.String({ description: "The rest of the identity's name." })),
    profile_picture_url: Type.Optional(Type.String({ description: "The identity provider's picture claim." })),
    communication_email: Type.Optional(Type.String({ description: "The e-mail set with editAccountInformation, else the identity's e-mail." })),
  },
  { $id: 'AccountInfo', additionalProperties: false },
);
type AccountInfoView = Static<typeof AccountInfo>;

export const AccountInfoEditRequest = Type.Object(
  { communication_email: Type.String({ format: 'email', minLength: 3, maxLength: 320 }) },
  { $id: 'AccountInfoEditRequest', additionalProperties: false },
);

export interface AccountDeps {
  db: Kysely<DB>;
  clock: Clock;
}

/** `Ada Lovelace King` → first `Ada`, last `Lovelace King`; a one-word name has no last name. */
function nameParts(name: string | null): { first_name?: string; last_name?: string } {
  const words = (name ?? '').trim().split(/\s+/).filter((word) => word !== '');
  const [first, ...rest] = words;
  if (first === undefined) return {};
  return rest.length === 0 ? { first_name: first } : { first_name: first, last_name: rest.join(' ') };
}

function accountView(user: UserRow, communicationEmail: string | undefined): AccountInfoView {
  const nickname = user.name?.trim() || user.email?.split('@')[0];
  const email = communicationEmail ?? user.email ?? undefined;
  return {
    id: user.id,
    created_at: user.created_at,
    ...(nickname === undefined || nickname === '' ? {} : { nickname }),
    ...nameParts(user.name),
    ...(user.picture === null ? {} : { profile_picture_url: user.picture }),
    ...(email === undefined ? {} : { communication_email: email }),
  };
}

export function createAccountService(deps: AccountDeps) {
  const { db, clock } = deps;

  async function requireUser(userId: string): Promise<UserRow> {
    const user = await findUserById(db, userId);
    // The row is created when the token is first seen, so only a concurrent removal gets here.
    if (user === undefined) throw notFound(`user ${userId} not found`);
    return user;
  }

  return {
    async getAccountInformation(userId: string): Promise<AccountInfoView> {
      const user = await requireUser(userId);
      return accountView(user, (await findAccountSettings(db, userId))?.communication_email);
    },

    async editAccountInformation(userId: string, body: Static<typeof AccountInfoEditRequest>): Promise<AccountInfoView> {
      const user = await requireUser(userId);
      const communicationEmail = body.communication_email.trim().toLowerCase();
      await upsertAccountSettings(db, { user_id: userId, communication_email: communicationEmail, updated_at: isoTimestamp(clock) });
      return accountView(user, communicationEmail);
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
