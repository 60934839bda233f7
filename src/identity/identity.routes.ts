import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { HTTP_STATUS, statusOf } from '../http/errors.ts';
import type { FastifyTypeBox } from '../http/fastify.types.ts';
import { markRoutesPublic } from '../http/security.ts';
import { CONSOLE_CLIENT_ID } from '../http/console.ts';
import { AppError } from '../lib/errors.ts';
import { PASSWORD_MIN_LENGTH, SIGN_UP_CLOSED_MESSAGE, type AccountsService } from './identity.accounts.ts';
import { consentPage, errorPage, messagePage, signInPage, signUpPage } from './identity.pages.ts';
import { CLI_CLIENT_ID, grantFirstPartyScopes, IDENTITY_MOUNT_PATH, type BuiltInIdentity } from './identity.provider.ts';

/**
 * Mounts the built-in identity provider under /oidc. Every route here is public (the protocol authenticates by
 * its own means) and hidden from the API description.
 *
 *   /oidc/interaction/:uid        sign-in page of an authorization or device request (ours)
 *   /oidc/signup, /oidc/verify    account creation and e-mail verification (ours)
 *   /oidc, /oidc/*                everything else: the library (discovery, JWKS, authorize, token, device, …)
 *
 * The library reads its own request bodies, so its scope has a content-type parser that leaves the body unread.
 */
const HIDDEN = { hide: true } as const;

const FormFields = Type.Record(Type.String(), Type.Unknown());

/** Above the sign-up form, who may use it (SLIPWAY_SIGNUP); nothing when anyone may. */
const SIGN_UP_NOTICES = {
  open: undefined,
  invite: 'Sign-up needs an invitation: use the address an organization invited.',
  closed: `${SIGN_UP_CLOSED_MESSAGE} Only the administrator named when it was set up can create an account here.`,
} as const;

const SIGN_IN_REFUSALS = {
  wrong_credentials: { message: 'Wrong e-mail or password.', kind: 'unauthenticated' },
  unverified: { message: 'Verify your e-mail first: follow the link we sent you.', kind: 'forbidden' },
  locked: { message: 'Too many wrong passwords for this account. Try again in 15 minutes.', kind: 'rate_limited' },
} as const;

function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

function wantsHtml(request: FastifyRequest): boolean {
  return request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') === true || request.headers.accept?.includes('text/html') === true;
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .send(html);
}

export async function registerIdentityRoutes(app: FastifyTypeBox, identity: BuiltInIdentity, accounts: AccountsService): Promise<void> {
  await app.register(async (scope: FastifyTypeBox) => {
    markRoutesPublic(scope);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => {
      done(null);
    });
    const passThrough = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const handle = await identity.handler();
      reply.hijack();
      const raw = request.raw as typeof request.raw & { originalUrl?: string };
      const original = raw.url ?? IDENTITY_MOUNT_PATH;
      raw.originalUrl = original;
      const rest = original.slice(IDENTITY_MOUNT_PATH.length);
      raw.url = rest.startsWith('/') ? rest : `/${rest}`;
      reply.raw.setHeader('x-request-id', request.id);
      // No page of the provider is meant to be framed (its forms would be clickjacking targets).
      reply.raw.setHeader('x-frame-options', 'DENY');
      await handle(raw, reply.raw);
    };
    scope.all(IDENTITY_MOUNT_PATH, { schema: HIDDEN }, passThrough);
    scope.all(`${IDENTITY_MOUNT_PATH}/*`, { schema: HIDDEN }, passThrough);
  });

  await app.register(async (scope: FastifyTypeBox) => {
    markRoutesPublic(scope);
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
    });

    const signUpAction = `${identity.issuer}/signup`;
    const signUpLink = { url: signUpAction, mode: accounts.signUpMode };
    const signUpNotice = SIGN_UP_NOTICES[accounts.signUpMode];
    const signUpForm = { action: signUpAction, passwordMinLength: PASSWORD_MIN_LENGTH, ...(signUpNotice === undefined ? {} : { notice: signUpNotice }) };

    scope.get(`${IDENTITY_MOUNT_PATH}/signup`, { schema: HIDDEN }, async (_request, reply) => sendHtml(reply, HTTP_STATUS.ok, signUpPage(signUpForm)));

    scope.post(`${IDENTITY_MOUNT_PATH}/signup`, { schema: { ...HIDDEN, body: FormFields } }, async (request, reply) => {
      const form = { email: field(request.body, 'email'), password: field(request.body, 'password'), name: field(request.body, 'name') };
      try {
        const account = await accounts.signUp(form);
        if (!wantsHtml(request)) return reply.code(HTTP_STATUS.created).send({ id: account.id, email: account.email, email_verified: false });
        return sendHtml(reply, HTTP_STATUS.created, messagePage('Check your e-mail', `We sent a verification link to ${account.email}. Follow it, then sign in.`));
      } catch (error) {
        if (!(error instanceof AppError) || !wantsHtml(request)) throw error;
        const problem = error.details?.map((detail) => `${detail.field.slice(1)} ${detail.message}`).join('; ') ?? error.message;
        return sendHtml(reply, statusOf(error.kind), signUpPage({ ...signUpForm, error: problem, email: form.email, name: form.name }));
      }
    });

    scope.get(`${IDENTITY_MOUNT_PATH}/verify`, { schema: { ...HIDDEN, querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }) } }, async (request, reply) => {
      try {
        const account = await accounts.verifyEmail(request.query.token);
        if (!wantsHtml(request)) return reply.send({ id: account.id, email: account.email, email_verified: true });
        return sendHtml(reply, HTTP_STATUS.ok, messagePage('E-mail verified', `${account.email} is verified. You can sign in now.`));
      } catch (error) {
        if (!(error instanceof AppError) || !wantsHtml(request)) throw error;
        return sendHtml(reply, statusOf(error.kind), errorPage(error.message));
      }
    });

    const Uid = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 100 }) });

    scope.get(`${IDENTITY_MOUNT_PATH}/interaction/:uid`, { schema: { ...HIDDEN, params: Uid } }, async (request, reply) => {
      const details = await interactionOf(request, request.params.uid, reply);
      if (details === undefined) return reply;
      const action = `${identity.issuer}/interaction/${details.uid}`;
      const clientName = clientNameOf(details.params.client_id);
      if (details.prompt.name === 'login') return sendHtml(reply, HTTP_STATUS.ok, signInPage({ action, signUp: signUpLink, clientName }));
      if (details.prompt.name === 'consent' && isConsole(details.params.client_id)) return reply.redirect(await consentForConsole(request, reply, details));
      if (details.prompt.name === 'consent') return sendHtml(reply, HTTP_STATUS.ok, consentPage({ action: `${action}/consent`, clientName }));
      return sendHtml(reply, statusOf('bad_request'), errorPage(`This sign-in request asks for an unsupported step (${details.prompt.name}).`));
    });

    // The library asks people to confirm before a native client (the CLI) acts for them, so an application that
    // merely borrows the CLI's public client id cannot obtain their tokens silently.
    scope.post(`${IDENTITY_MOUNT_PATH}/interaction/:uid/consent`, { schema: { ...HIDDEN, params: Uid, body: FormFields } }, async (request, reply) => {
      const provider = await identity.provider();
      const details = await interactionOf(request, request.params.uid, reply);
      if (details === undefined) return reply;
      const accountId = details.session?.accountId;
      if (details.prompt.name !== 'consent' || accountId === undefined) throw new AppError('bad_request', 'this sign-in request does not expect a confirmation');
      if (field(request.body, 'decision') !== 'allow') {
        const returnTo = await provider.interactionResult(request.raw, reply.raw, { error: 'access_denied', error_description: 'the person declined' });
        return reply.redirect(returnTo);
      }
      const existing = details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId);
      const grant = existing ?? new provider.Grant({ clientId: String(details.params.client_id), accountId });
      grantFirstPartyScopes(grant, identity.apiResource);
      const grantId = await grant.save();
      const returnTo = await provider.interactionResult(request.raw, reply.raw, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return reply.redirect(returnTo);
    });

    scope.post(`${IDENTITY_MOUNT_PATH}/interaction/:uid`, { schema: { ...HIDDEN, params: Uid, body: FormFields } }, async (request, reply) => {
      const provider = await identity.provider();
      const details = await interactionOf(request, request.params.uid, reply);
      if (details === undefined) return reply;
      if (details.prompt.name !== 'login') throw new AppError('bad_request', 'this sign-in request does not expect a password');
      const email = field(request.body, 'email');
      const outcome = await accounts.signIn(email, field(request.body, 'password'));
      if (!outcome.ok) {
        const { message, kind } = SIGN_IN_REFUSALS[outcome.reason];
        return sendHtml(reply, statusOf(kind), signInPage({ action: `${identity.issuer}/interaction/${details.uid}`, signUp: signUpLink, email, error: message, clientName: clientNameOf(details.params.client_id) }));
      }
      const login = { accountId: outcome.account.id };
      // The console is this installation's own page (its redirect URI is on the public URL): signing in is consent.
      const consent = isConsole(details.params.client_id) ? { grantId: await firstPartyGrant(provider, outcome.account.id, details.grantId) } : undefined;
      const returnTo = await provider.interactionResult(request.raw, reply.raw, consent === undefined ? { login } : { login, consent }, { mergeWithLastSubmission: false });
      return reply.redirect(returnTo);
    });

    /** The console's grant: Slipway's first-party scopes for the account, on the interaction's grant when it has one. */
    async function firstPartyGrant(provider: Awaited<ReturnType<BuiltInIdentity['provider']>>, accountId: string, grantId: string | undefined): Promise<string> {
      const existing = grantId === undefined ? undefined : await provider.Grant.find(grantId);
      const grant = existing ?? new provider.Grant({ clientId: CONSOLE_CLIENT_ID, accountId });
      grantFirstPartyScopes(grant, identity.apiResource);
      return grant.save();
    }

    /** A console sign-in of someone already signed in at the provider (say, by the CLI's device flow): no page to confirm. */
    async function consentForConsole(request: FastifyRequest, reply: FastifyReply, details: { session?: { accountId: string } | undefined; grantId?: string | undefined }): Promise<string> {
      const provider = await identity.provider();
      const accountId = details.session?.accountId;
      if (accountId === undefined) throw new AppError('bad_request', 'this sign-in request has no signed-in account');
      const grantId = await firstPartyGrant(provider, accountId, details.grantId);
      return provider.interactionResult(request.raw, reply.raw, { consent: { grantId } }, { mergeWithLastSubmission: true });
    }

    /** The interaction this browser is in, matching the path; answers an error page and undefined otherwise. */
    async function interactionOf(request: FastifyRequest, uid: string, reply: FastifyReply) {
      const provider = await identity.provider();
      try {
        const details = await provider.interactionDetails(request.raw, reply.raw);
        if (details.uid !== uid) throw new Error('interaction mismatch');
        return details;
      } catch {
        sendHtml(reply, statusOf('bad_request'), errorPage('This sign-in request has expired or was opened in another browser. Start again from your terminal or application.'));
        return undefined;
      }
    }
  });
}

function clientNameOf(clientId: unknown): string {
  if (clientId === CONSOLE_CLIENT_ID) return 'The Slipway console';
  return clientId === CLI_CLIENT_ID ? 'The Slipway CLI' : 'An application';
}

function isConsole(clientId: unknown): boolean {
  return clientId === CONSOLE_CLIENT_ID;
}
