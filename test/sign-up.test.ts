import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../src/app.services.ts';
import { grantsOfRole } from '../src/auth/permissions.ts';
import type { SignUpMode } from '../src/config.ts';
import { escapeHtml } from '../src/identity/identity.pages.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startIdentityTestApp, type IdentityTestApp } from './support/identity-app.ts';
import { formAction, formField, TestBrowser, type BrowserResponse } from './support/identity-browser.ts';
import { runSlipway } from './support/slipway-process.ts';

/**
 * SLIPWAY_SIGNUP on the built-in identity provider: who may create an account (invite by default, open, closed), as
 * JSON, through the sign-up page and the `slipway signup` command; what the sign-in page offers in each mode; and
 * that a refusal never creates an account, never mails, and reads the same whether or not the address has one.
 */
const PASSWORD = 'correct horse battery staple';
const INVITE_REFUSAL = (email: string) => `Sign-up needs an invitation: ask an organization's administrator to invite ${email}.`;
const CLOSED_REFUSAL = 'Sign-up is closed on this installation.';

let counter = 0;
function uniqueEmail(label: string): string {
  counter += 1;
  return `${label}-${process.pid}-${counter}@example.com`;
}

interface Installation {
  ctx: IdentityTestApp;
  /** The address `slipway admin bootstrap` named: a user waiting for their first sign-in. */
  operatorEmail: string;
  organizationId: string;
  /** An ADMIN API token of the bootstrapped organization. */
  auth: string;
}

/** The identity test app in `mode`, bootstrapped as `slipway admin bootstrap` does (user, organization, ADMIN token). */
async function startInstallation(dialect: (typeof TEST_DIALECTS)[number], mode: SignUpMode | undefined): Promise<Installation> {
  const ctx = await startIdentityTestApp(dialect, mode === undefined ? {} : { signUp: mode });
  const services = createServices(ctx.database);
  const operatorEmail = uniqueEmail('operator');
  const user = await services.users.userForEmail(operatorEmail, null);
  const organization = await services.organizations.createOrganization(user.id, { name: `Acme ${counter}` });
  const token = await services.apiTokens.createApiToken(
    { kind: 'user', userId: user.id, email: user.email, name: user.name },
    { organizationId: organization.id, grants: grantsOfRole('OWNER'), roleName: 'OWNER' },
    { name: 'bootstrap', description: 'as slipway admin bootstrap makes it', scope: 'ADMIN' },
  );
  return { ctx, operatorEmail, organizationId: organization.id, auth: `Token ${token.token}` };
}

function signUpJson(ctx: IdentityTestApp, email: string) {
  return ctx.app.inject({ method: 'POST', url: '/oidc/signup', headers: { 'content-type': 'application/json' }, payload: { email, password: PASSWORD, name: 'Someone' } });
}

/** Fills the sign-up page in as a browser does, answering the page the form's submission shows. */
async function signUpPage(ctx: IdentityTestApp, email: string): Promise<BrowserResponse> {
  const browser = new TestBrowser();
  const form = await browser.get(`${ctx.issuer}/signup`);
  const action = formAction(form.body, form.url);
  if (action === undefined) throw new Error(`no sign-up form: ${form.body}`);
  return browser.post(action, { email, password: PASSWORD, name: 'Someone' });
}

/** The sign-in page of an authorization request, as the CLI's browser sign-in reaches it. */
async function signInPage(ctx: IdentityTestApp): Promise<BrowserResponse> {
  const browser = new TestBrowser();
  const query = new URLSearchParams({
    client_id: 'slipway-cli',
    response_type: 'code',
    redirect_uri: 'http://127.0.0.1:45678/callback',
    scope: 'openid email profile',
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'state',
  });
  const page = await browser.follow(await browser.get(`${ctx.issuer}/auth?${query.toString()}`));
  expect(page.body).toContain('name="password"');
  return page;
}

async function invite(installation: Installation, email: string): Promise<string> {
  const response = await installation.ctx.app.inject({
    method: 'POST',
    url: `/organization/${installation.organizationId}/inviteMember`,
    headers: { authorization: installation.auth },
    payload: { email },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ id: string }>().id;
}

async function accountsOf(ctx: IdentityTestApp, email: string): Promise<unknown[]> {
  return ctx.database.db.selectFrom('local_accounts').select('id').where('email', '=', email.toLowerCase()).execute();
}

/** Refused: 403 with the error body and `message`, and neither an account nor a verification mail. */
async function expectRefused(ctx: IdentityTestApp, email: string, message: string): Promise<void> {
  const before = await accountsOf(ctx, email);
  const refused = expectErrorBody(await signUpJson(ctx, email), 403);
  expect(refused.message).toBe(message);
  const page = await signUpPage(ctx, email);
  expect(page.status).toBe(403);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.body).toContain(escapeHtml(message));
  // The sign-up page again, filled in as it was sent.
  expect(formField(page.body, 'email')).toBe(escapeHtml(email));
  expect(await accountsOf(ctx, email)).toEqual(before);
  if (before.length === 0) expect(await ctx.verificationLinks(email.toLowerCase())).toEqual([]);
}

for (const dialect of TEST_DIALECTS) {
  describe(`sign-up by invitation, the default [${dialect}]`, () => {
    let installation: Installation;
    beforeAll(async () => {
      installation = await startInstallation(dialect, undefined);
    });
    afterAll(async () => {
      await installation?.ctx.close();
    });

    it("refuses a stranger's sign-up: 403 as JSON and as the page, no account, no mail", async () => {
      const stranger = uniqueEmail('stranger');
      await expectRefused(installation.ctx, stranger, INVITE_REFUSAL(stranger));
    });

    it('lets an invited address sign up while its invitation is pending, whatever the case it is typed in', async () => {
      const invited = uniqueEmail('Invited');
      await invite(installation, invited);
      const created = await signUpJson(installation.ctx, invited.toLowerCase());
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject({ email: invited.toLowerCase(), email_verified: false });
      expect(await installation.ctx.verificationLinks(invited.toLowerCase())).toHaveLength(1);

      const throughThePage = uniqueEmail('page');
      await invite(installation, throughThePage);
      const page = await signUpPage(installation.ctx, throughThePage);
      expect(page.status).toBe(201);
      expect(page.body).toContain('Check your e-mail');
    });

    it('refuses an address whose invitation expired or was withdrawn', async () => {
      const expired = uniqueEmail('expired');
      const expiredId = await invite(installation, expired);
      // A week and a moment later.
      await installation.ctx.database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', expiredId).execute();
      await expectRefused(installation.ctx, expired, INVITE_REFUSAL(expired));

      const withdrawn = uniqueEmail('withdrawn');
      const withdrawnId = await invite(installation, withdrawn);
      const deleted = await installation.ctx.app.inject({
        method: 'DELETE',
        url: `/organization/${installation.organizationId}/inviteMember/${withdrawnId}`,
        headers: { authorization: installation.auth },
      });
      expect(deleted.statusCode).toBe(204);
      await expectRefused(installation.ctx, withdrawn, INVITE_REFUSAL(withdrawn));
    });

    it('answers an uninvited address that has an account exactly as one that has none (403, not 409)', async () => {
      const member = uniqueEmail('member');
      const invitationId = await invite(installation, member);
      expect((await signUpJson(installation.ctx, member)).statusCode).toBe(201);
      await installation.ctx.app.inject({
        method: 'DELETE',
        url: `/organization/${installation.organizationId}/inviteMember/${invitationId}`,
        headers: { authorization: installation.auth },
      });
      const stranger = uniqueEmail('stranger');
      const forMember = expectErrorBody(await signUpJson(installation.ctx, member), 403);
      const forStranger = expectErrorBody(await signUpJson(installation.ctx, stranger), 403);
      expect(forMember.message.replace(member, '<email>')).toBe(forStranger.message.replace(stranger, '<email>'));
      expect(await accountsOf(installation.ctx, member)).toHaveLength(1);
    });

    it('lets the address slipway admin bootstrap named create its account', async () => {
      const created = await signUpJson(installation.ctx, installation.operatorEmail);
      expect(created.statusCode, created.body).toBe(201);
    });

    it('offers sign-up to invited people from the sign-in page, and says who may use the form', async () => {
      const page = await signInPage(installation.ctx);
      expect(page.body).toContain('Invited to an organization?');
      expect(page.body).toContain(`href="${installation.ctx.issuer}/signup"`);
      const form = await fetch(`${installation.ctx.issuer}/signup`);
      expect(form.status).toBe(200);
      expect(await form.text()).toContain('Sign-up needs an invitation: use the address an organization invited.');
    });

    it("slipway signup prints the server's refusal in one line", async () => {
      const stranger = uniqueEmail('cli');
      const home = await mkdtemp(path.join(tmpdir(), 'slipway-sign-up-'));
      try {
        const result = await runSlipway(
          ['signup', '--url', installation.ctx.baseUrl, '--email', stranger, '--password-stdin'],
          { HOME: home, XDG_CONFIG_HOME: home },
          `${PASSWORD}\n`,
        );
        expect(result.stdout).toBe('');
        expect(result.stderr).toBe(`slipway: ${INVITE_REFUSAL(stranger)}\n`);
        expect(result.code).toBe(1);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
      expect(await accountsOf(installation.ctx, stranger)).toEqual([]);
    }, 30_000);
  });

  describe(`open sign-up [${dialect}]`, () => {
    let installation: Installation;
    beforeAll(async () => {
      installation = await startInstallation(dialect, 'open');
    });
    afterAll(async () => {
      await installation?.ctx.close();
    });

    it('lets anyone create an account, and links the form from the sign-in page', async () => {
      const created = await signUpJson(installation.ctx, uniqueEmail('anyone'));
      expect(created.statusCode, created.body).toBe(201);
      expect((await signUpPage(installation.ctx, uniqueEmail('anyone'))).status).toBe(201);
      const page = await signInPage(installation.ctx);
      expect(page.body).toContain('No account yet?');
      expect(page.body).toContain(`href="${installation.ctx.issuer}/signup"`);
    });
  });

  describe(`closed sign-up [${dialect}]`, () => {
    let installation: Installation;
    beforeAll(async () => {
      installation = await startInstallation(dialect, 'closed');
    });
    afterAll(async () => {
      await installation?.ctx.close();
    });

    it('refuses everyone, invited or not, and hides the link from the sign-in page', async () => {
      await expectRefused(installation.ctx, uniqueEmail('stranger'), CLOSED_REFUSAL);
      const invited = uniqueEmail('invited');
      await invite(installation, invited);
      await expectRefused(installation.ctx, invited, CLOSED_REFUSAL);

      const page = await signInPage(installation.ctx);
      expect(page.body).not.toContain('/signup');
      expect(page.body).not.toContain('Create');
      const form = await fetch(`${installation.ctx.issuer}/signup`);
      expect(await form.text()).toContain(CLOSED_REFUSAL);
    });

    it('still lets the address slipway admin bootstrap named create its account', async () => {
      const created = await signUpJson(installation.ctx, installation.operatorEmail);
      expect(created.statusCode, created.body).toBe(201);
    });
  });
}
