import type { Database } from '../db/db.client.ts';
import type { FastifyTypeBox } from '../http/fastify.types.ts';
import type { Clock } from '../lib/clock.ts';
import { escapeHtml, type Mailer } from '../mail/mailer.ts';
import { createAccountsService, type SignUpPolicy, type VerificationMessage } from './identity.accounts.ts';

/**
 * Turns the built-in identity provider on for an application without an external issuer: answers the issuer and
 * audience the API verifier is to trust (the provider's own, reached over HTTP like any issuer) and a function
 * that mounts the provider's routes.
 *
 * The library is loaded only here, on demand, so processes that never serve it (the CLI, installations with an
 * external issuer) do not load it.
 */
export interface BuiltInIdentitySetup {
  verifier: { issuer: string; audience: string };
  registerRoutes(app: FastifyTypeBox): Promise<void>;
}

export interface BuiltInIdentityDeps {
  database: Database;
  clock: Clock;
  /** The installation's public URL; the issuer is `${publicUrl}/oidc`. */
  publicUrl: string;
  /** Carries the verification link (SMTP, or the outbox table and the log when no relay is configured). */
  mailer: Mailer;
  /** SLIPWAY_SIGNUP, and the invitations and bootstrapped users it asks about. */
  signUp: SignUpPolicy;
}

function verificationMail(message: VerificationMessage) {
  return {
    to: message.email,
    subject: 'Verify your e-mail for Slipway',
    text: `Someone, hopefully you, created a Slipway account for ${message.email}.\n\nVerify this address to sign in:\n${message.link}\n\nThe link works once, for 24 hours. If it was not you, ignore this message.\n`,
    html:
      `<p>Someone, hopefully you, created a Slipway account for ${escapeHtml(message.email)}.</p>` +
      `<p><a href="${escapeHtml(message.link)}">Verify this address to sign in</a>.</p>` +
      '<p>The link works once, for 24 hours. If it was not you, ignore this message.</p>',
  };
}

export async function setUpBuiltInIdentity(deps: BuiltInIdentityDeps): Promise<BuiltInIdentitySetup> {
  const { createBuiltInIdentity, IDENTITY_AUDIENCE, IDENTITY_MOUNT_PATH } = await import('./identity.provider.ts');
  const { registerIdentityRoutes } = await import('./identity.routes.ts');
  const issuer = `${deps.publicUrl}${IDENTITY_MOUNT_PATH}`;
  const accounts = createAccountsService({
    db: deps.database.db,
    clock: deps.clock,
    issuer,
    deliverVerification: (message) => deps.mailer.send(verificationMail(message)),
    signUp: deps.signUp,
  });
  const identity = await createBuiltInIdentity({ db: deps.database.db, clock: deps.clock, issuer, apiResource: deps.publicUrl, accounts });
  return {
    verifier: { issuer, audience: IDENTITY_AUDIENCE },
    registerRoutes: (app) => registerIdentityRoutes(app, identity, accounts),
  };
}
