import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { callApi, checkScreen, launchConsoleBrowser, newConsoleContext, PASSWORD, signIn, signUp, watchPage } from './support/console-browser.ts';
import { decodedMailText, linksIn } from './support/mail-text.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

interface Invitation {
  id: string;
  invitation_link: string;
  invitation_status: string;
  inviter: string;
}

/**
 * The invitation e-mail's link in a real browser against the real server (docs/console.md, "Accepting an
 * invitation"): an invitation created through the API is mailed to a real SMTP server; its link, opened by a browser
 * without a session, reaches the console's invitation page through the sign-in and back; the page names the
 * organization, the role and who invited; Accept makes the person a member. Another person cannot see it; Decline
 * leaves an invitation unused. API clients at the link's path still get the operation. Photographs `96-…` to `98-…`.
 */
describe('web console: accepting an invitation from its e-mail (real browser, real server)', () => {
  let smtp: TestSmtpServer;
  let server: SlipwayServer & { organizationId: string; apiToken: string };
  let browser: Browser;
  const dana = `console-invite-dana-${process.pid}@example.com`;
  const eli = `console-invite-eli-${process.pid}@example.com`;
  const fay = `console-invite-fay-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    server = await startSlipwayServer('sqlite', { SLIPWAY_SMTP_URL: smtp.url, SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>', SLIPWAY_SIGNUP: 'open' }, { bootstrap: true });
    await signUp(server, smtp, dana, 'Dana Developer');
    await signUp(server, smtp, eli, 'Eli Extra');
    await signUp(server, smtp, fay, 'Fay Outsider');
    browser = await launchConsoleBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  }, 60_000);

  async function invite(email: string, role: string): Promise<{ invitation: Invitation; link: string }> {
    const created = await callApi<Invitation>(server, server.apiToken, 'POST', `/organization/${server.organizationId}/inviteMember`, { email, role });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const mail = await smtp.waitFor((candidate) => candidate.to.includes(email) && decodedMailText(candidate).includes(created.body.id));
    const [link] = linksIn(mail, /\/inviteMember\//);
    expect(link).toBe(created.body.invitation_link);
    return { invitation: created.body, link: link as string };
  }

  it('sends a browser from the link to the console, signs in, shows the invitation and accepts it', { timeout: 180_000 }, async () => {
    const { invitation, link } = await invite(dana, 'DEVELOPER');
    const consolePath = `/console/invitations/${server.organizationId}/${invitation.id}`;

    // The link's path: a browser (HTML, no credential) is sent to the console; an API client gets the operation.
    const browserVisit = await fetch(link, { headers: { accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    expect(browserVisit.status).toBe(302);
    expect(browserVisit.headers.get('location')).toBe(consolePath);
    const anonymousClient = await fetch(link, { headers: { accept: 'application/json' } });
    expect(anonymousClient.status).toBe(401);
    expect(((await anonymousClient.json()) as { status: number }).status).toBe(401);
    const tokenClient = await callApi<Invitation>(server, server.apiToken, 'GET', new URL(link).pathname);
    expect(tokenClient.status).toBe(200);
    expect(tokenClient.body.invitation_status).toBe('PENDING');

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    watchPage(page, problems, () => false);
    try {
      // No session: the sign-in page first, then back to the invitation.
      await page.goto(link);
      await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();
      expect(new URL(page.url()).searchParams.get('redirect')).toBe(consolePath);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('E-mail').fill(dana);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Join Acme' }).waitFor();
      expect(new URL(page.url()).pathname).toBe(consolePath);

      const summary = await page.locator('#invitation-summary').textContent();
      expect(summary).toBe(`${invitation.inviter} invited you to join Acme as Developer.`);
      const facts = await page.locator('.invitation-facts').innerText();
      expect(facts).toContain('Organization\nAcme');
      expect(facts).toContain('Role\nDeveloper');
      expect(facts).toContain(`Invited by\n${invitation.inviter}`);
      expect(facts).toContain(`Sent to\n${dana}`);
      // Not a member yet: the organization's navigation is not offered.
      expect(await page.getByRole('navigation', { name: 'Main' }).count()).toBe(0);
      await checkScreen(page, '96-invitation');

      await page.getByRole('button', { name: 'Accept and join' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme', exact: true }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/organization/${server.organizationId}`);
      // The membership, in the console (the switcher) and through the API.
      await page.getByRole('button', { name: /^Organization: Acme/ }).waitFor();
      const members = await callApi<{ results: { email: string; role: string }[] }>(server, server.apiToken, 'GET', `/organization/${server.organizationId}/member`);
      expect(members.body.results).toEqual(expect.arrayContaining([expect.objectContaining({ email: dana, role: 'DEVELOPER' })]));

      // The link again, once used: it says so and opens the organization.
      await page.goto(link);
      await page.getByText('This invitation has been accepted.').waitFor();
      await page.getByRole('link', { name: 'Open Acme' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme', exact: true }).waitFor();

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows nothing of an invitation to another person, only its addressee may accept, declining leaves it unused', { timeout: 180_000 }, async () => {
    const { invitation, link } = await invite(eli, 'VIEWER');
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    // Fay (no member) opening Eli's invitation: the API's 404, on purpose.
    watchPage(page, problems, (url, status) => status === 404 && url.includes(`/inviteMember/${invitation.id}`));
    try {
      await signIn(page, server, fay);
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Invitation not found' }).waitFor();
      expect(await page.textContent('main')).not.toContain(eli);
      await checkScreen(page, '97-invitation-not-found');
      await page.getByRole('button', { name: 'Sign in with another address' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();

      // Dana (a member since the test above), who may read the organization's invitations, sees it but cannot accept it for Eli.
      await signIn(page, server, dana);
      await page.goto(link);
      await page.getByRole('status').filter({ hasText: `This invitation is for ${eli}` }).waitFor();
      expect(await page.getByRole('button', { name: 'Accept and join' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Sign in with another address' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();

      await page.goto(link);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('E-mail').fill(eli);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Join Acme' }).waitFor();
      await page.getByRole('button', { name: 'Decline' }).click();
      await page.getByRole('status').filter({ hasText: 'You declined: you did not join Acme.' }).waitFor();
      await checkScreen(page, '98-invitation-declined');
      const after = await callApi<Invitation>(server, server.apiToken, 'GET', `/organization/${server.organizationId}/inviteMember/${invitation.id}`);
      expect(after.body.invitation_status).toBe('PENDING');
      const members = await callApi<{ results: { email: string }[] }>(server, server.apiToken, 'GET', `/organization/${server.organizationId}/member`);
      expect(members.body.results.map((member) => member.email)).not.toContain(eli);

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
