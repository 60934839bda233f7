import type { Kysely } from 'kysely';
import type { VerifiedIdentity } from '../../auth/oidc.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import {
  claimUnlinkedUser,
  findUnlinkedUserByEmail,
  findUserByEmail,
  findUserById,
  findUserBySubject,
  insertUser,
  updateUser,
  type UserRow,
} from './users.repo.ts';

export interface UsersDeps {
  db: Kysely<DB>;
  clock: Clock;
}

/**
 * A user row exists per (issuer, subject). It is created the first time a verified token is seen (sign-up), or
 * claimed: a user made by `slipway admin bootstrap` has no identity yet, and the first token whose *verified*
 * e-mail matches it takes it over.
 */
export function createUsersService(deps: UsersDeps) {
  const { db, clock } = deps;

  /** The profile as the latest token states it; the e-mail counts as verified only when this token says so. */
  function profileOf(user: UserRow, identity: VerifiedIdentity): Pick<UserRow, 'email' | 'email_verified' | 'name' | 'picture'> {
    const email = identity.email ?? user.email;
    return {
      email,
      email_verified: identity.email !== null && identity.emailVerified ? 1 : 0,
      name: identity.name ?? user.name,
      picture: identity.picture ?? user.picture,
    };
  }

  async function refreshProfile(user: UserRow, identity: VerifiedIdentity): Promise<UserRow> {
    const profile = profileOf(user, identity);
    const changed = (Object.keys(profile) as (keyof typeof profile)[]).some((key) => profile[key] !== user[key]);
    if (!changed) return user;
    const updated = { ...user, ...profile, updated_at: isoTimestamp(clock) };
    await updateUser(db, user.id, { ...profile, updated_at: updated.updated_at });
    return updated;
  }

  async function userForIdentity(identity: VerifiedIdentity): Promise<UserRow> {
    const known = await findUserBySubject(db, identity.issuer, identity.subject);
    if (known !== undefined) return refreshProfile(known, identity);
    if (identity.email !== null && identity.emailVerified) {
      const unlinked = await findUnlinkedUserByEmail(db, identity.email);
      if (unlinked !== undefined) {
        const linked = {
          issuer: identity.issuer,
          subject: identity.subject,
          email_verified: 1,
          name: identity.name ?? unlinked.name,
          picture: identity.picture,
          updated_at: isoTimestamp(clock),
        };
        if (await claimUnlinkedUser(db, unlinked.id, linked)) return { ...unlinked, ...linked };
        // Another request claimed it first: that was this person's own concurrent first request, or another identity
        // with the same e-mail, which keeps the claim while this one becomes a user of its own.
        const winner = await findUserBySubject(db, identity.issuer, identity.subject);
        if (winner !== undefined) return winner;
      }
    }
    const now = isoTimestamp(clock);
    const user: UserRow = {
      id: newId(),
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
      email_verified: identity.email !== null && identity.emailVerified ? 1 : 0,
      name: identity.name,
      picture: identity.picture,
      created_at: now,
      updated_at: now,
    };
    try {
      await insertUser(db, user);
      return user;
    } catch (error) {
      // Two first requests of the same person raced; the other one created the row.
      if (!isUniqueViolation(error)) throw error;
      const winner = await findUserBySubject(db, identity.issuer, identity.subject);
      if (winner === undefined) throw error;
      return winner;
    }
  }

  /** A person without an identity yet, for the first administrator of an installation. */
  async function createUnlinkedUser(input: { email: string; name: string | null }, trx: Queryable = db): Promise<UserRow> {
    const now = isoTimestamp(clock);
    const user: UserRow = {
      id: newId(),
      issuer: null,
      subject: null,
      email: input.email,
      // Typed by an administrator, not vouched for by an identity provider.
      email_verified: 0,
      name: input.name,
      picture: null,
      created_at: now,
      updated_at: now,
    };
    await insertUser(trx, user);
    return user;
  }

  /** The person with this e-mail, or a new one without an identity yet (first administrator of an installation). */
  async function userForEmail(email: string, name: string | null): Promise<UserRow> {
    return (await findUserByEmail(db, email)) ?? createUnlinkedUser({ email, name });
  }

  /** The user's e-mail in lower case if their identity provider verified it, else undefined. */
  async function verifiedEmailOf(userId: string): Promise<string | undefined> {
    const user = await findUserById(db, userId);
    return user?.email != null && user.email_verified === 1 ? user.email.toLowerCase() : undefined;
  }

  /**
   * Whether a person made by `slipway admin bootstrap` waits for their first sign-in under this address: the first
   * verified identity with it takes the user over (userForIdentity).
   */
  async function awaitsFirstSignIn(email: string): Promise<boolean> {
    return (await findUnlinkedUserByEmail(db, email)) !== undefined;
  }

  return { userForIdentity, createUnlinkedUser, userForEmail, verifiedEmailOf, awaitsFirstSignIn };
}

export type UsersService = ReturnType<typeof createUsersService>;
