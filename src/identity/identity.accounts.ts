import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SignUpMode } from '../config.ts';
import type { DB } from '../db/db.schema.ts';
import { uniqueOrConflict } from '../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../lib/clock.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { badRequest, forbidden } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from './identity.passwords.ts';

/**
 * Local accounts of the built-in identity provider: e-mail + password, and an e-mail verification link that must
 * be followed before the account can sign in (invitations are accepted by verified e-mail, DESIGN.md §6).
 */
export interface LocalAccount {
  id: string;
  email: string;
  name: string | null;
  emailVerified: boolean;
}

export interface SignUpRequest {
  email: string;
  password: string;
  name?: string | undefined;
}

/** What the verification mail carries: the recipient and the link to follow. */
export interface VerificationMessage {
  email: string;
  link: string;
}

/**
 * Who may create an account (SLIPWAY_SIGNUP): `open` anyone; `invite` an address that a pending invitation to some
 * organization names; `closed` nobody. In every mode the address `slipway admin bootstrap` named may create its
 * account until its first sign-in: without it the installation's first administrator could never sign in here. The
 * rest of the installation answers through these two ports, filled by the composition root.
 */
export interface SignUpPolicy {
  mode: SignUpMode;
  invitations: { hasPendingInvitation(email: string): Promise<boolean> };
  users: { awaitsFirstSignIn(email: string): Promise<boolean> };
}

export interface AccountsDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** Base URL the verification link is built on, e.g. https://slipway.example.com/oidc. */
  issuer: string;
  deliverVerification(message: VerificationMessage): Promise<void>;
  signUp: SignUpPolicy;
}

export const SIGN_UP_CLOSED_MESSAGE = 'Sign-up is closed on this installation.';

export function signUpNeedsInvitationMessage(email: string): string {
  return `Sign-up needs an invitation: ask an organization's administrator to invite ${email}.`;
}

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;
export const PASSWORD_MIN_LENGTH = 10;
const PASSWORD_MAX_LENGTH = 256;
const VERIFICATION_TTL_MS = 24 * 3600 * 1000;
/** Wrong passwords in a row after which an account refuses sign-in for LOCK_MS (slows password guessing). */
export const MAX_FAILED_SIGN_INS = 10;
const LOCK_MS = 15 * 60 * 1000;

export type SignInOutcome =
  | { ok: true; account: LocalAccount }
  | { ok: false; reason: 'wrong_credentials' | 'unverified' | 'locked' };

function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function validateSignUp(request: SignUpRequest): { email: string; password: string; name: string | null } {
  const email = normaliseEmail(request.email);
  const problems = [];
  if (email.length > 254 || !EMAIL.test(email)) problems.push({ field: '/email', message: 'must be an e-mail address' });
  if (request.password.length < PASSWORD_MIN_LENGTH || request.password.length > PASSWORD_MAX_LENGTH) {
    problems.push({ field: '/password', message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` });
  }
  const name = request.name?.trim() ?? '';
  if (name.length > 255) problems.push({ field: '/name', message: 'must be at most 255 characters' });
  if (problems.length > 0) throw badRequest('the sign-up form is not valid', problems);
  return { email, password: request.password, name: name === '' ? null : name };
}

function accountOf(row: { id: string; email: string; name: string | null; email_verified_at: string | null }): LocalAccount {
  return { id: row.id, email: row.email, name: row.name, emailVerified: row.email_verified_at !== null };
}

export function createAccountsService(deps: AccountsDeps) {
  const { db, clock } = deps;

  /**
   * Why this address may not create an account, or undefined when it may. Asked before anything about existing
   * accounts, so the answer is the same whether the address has one or not.
   */
  async function signUpRefusal(email: string): Promise<string | undefined> {
    const { mode, invitations, users } = deps.signUp;
    if (mode === 'open' || (await users.awaitsFirstSignIn(email))) return undefined;
    if (mode === 'invite') return (await invitations.hasPendingInvitation(email)) ? undefined : signUpNeedsInvitationMessage(email);
    return SIGN_UP_CLOSED_MESSAGE;
  }

  async function signUp(request: SignUpRequest): Promise<LocalAccount> {
    const { email, password, name } = validateSignUp(request);
    const refusal = await signUpRefusal(email);
    if (refusal !== undefined) throw forbidden(refusal);
    const secret = randomBytes(32).toString('base64url');
    const now = isoTimestamp(clock);
    const row = {
      id: newId(),
      email,
      name,
      password_hash: await hashPassword(password),
      email_verified_at: null,
      verification_hash: sha256Hex(secret),
      verification_expires_at: new Date(clock.now().getTime() + VERIFICATION_TTL_MS).toISOString(),
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(async () => {
      await db.insertInto('local_accounts').values(row).execute();
    }, 'an account with this e-mail already exists');
    await deps.deliverVerification({ email, link: `${deps.issuer}/verify?token=${encodeURIComponent(secret)}` });
    return accountOf(row);
  }

  async function verifyEmail(secret: string): Promise<LocalAccount> {
    const now = isoTimestamp(clock);
    const row = await db
      .selectFrom('local_accounts')
      .select(['id', 'email', 'name', 'email_verified_at', 'verification_expires_at'])
      .where('verification_hash', '=', sha256Hex(secret))
      .executeTakeFirst();
    if (row === undefined || row.verification_expires_at === null || row.verification_expires_at <= now) {
      throw badRequest('the verification link is not valid or has expired');
    }
    await db
      .updateTable('local_accounts')
      .set({ email_verified_at: now, verification_hash: null, verification_expires_at: null, updated_at: now })
      .where('id', '=', row.id)
      .execute();
    return accountOf({ ...row, email_verified_at: now });
  }

  async function signIn(email: string, password: string): Promise<SignInOutcome> {
    const row = await db
      .selectFrom('local_accounts')
      .select(['id', 'email', 'name', 'email_verified_at', 'password_hash', 'locked_until'])
      .where('email', '=', normaliseEmail(email))
      .executeTakeFirst();
    // The password is checked even for a locked or unknown account, so timing tells nothing more than the answer.
    const matches = await verifyPassword(password, row?.password_hash ?? DECOY_PASSWORD_HASH);
    if (row === undefined) return { ok: false, reason: 'wrong_credentials' };
    const now = clock.now();
    if (row.locked_until !== null && Date.parse(row.locked_until) > now.getTime()) return { ok: false, reason: 'locked' };
    if (!matches) {
      await recordFailure(row.id, now);
      return { ok: false, reason: 'wrong_credentials' };
    }
    await db.updateTable('local_accounts').set({ failed_sign_ins: 0, locked_until: null }).where('id', '=', row.id).where('failed_sign_ins', '>', 0).execute();
    if (row.email_verified_at === null) return { ok: false, reason: 'unverified' };
    return { ok: true, account: accountOf(row) };
  }

  /** Counts a wrong password in one statement (concurrent guesses all count) and locks at the limit. */
  async function recordFailure(accountId: string, now: Date): Promise<void> {
    const counted = await db
      .updateTable('local_accounts')
      .set((eb) => ({ failed_sign_ins: eb('failed_sign_ins', '+', 1) }))
      .where('id', '=', accountId)
      .returning('failed_sign_ins')
      .executeTakeFirst();
    if (counted !== undefined && counted.failed_sign_ins >= MAX_FAILED_SIGN_INS) {
      await db
        .updateTable('local_accounts')
        .set({ failed_sign_ins: 0, locked_until: new Date(now.getTime() + LOCK_MS).toISOString() })
        .where('id', '=', accountId)
        .execute();
    }
  }

  async function findAccount(id: string): Promise<LocalAccount | undefined> {
    const row = await db
      .selectFrom('local_accounts')
      .select(['id', 'email', 'name', 'email_verified_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : accountOf(row);
  }

  return { signUp, verifyEmail, signIn, findAccount, signUpMode: deps.signUp.mode };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
