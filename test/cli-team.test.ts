import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import { approveDeviceCode, TestBrowser } from './support/identity-browser.ts';
import { linksIn } from './support/mail-text.ts';
import { runSlipway, spawnSlipway, startSlipwayServer, waitForOutput, type CliResult, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

/**
 * "Two people can work in one organization end to end with the CLI alone": a real `slipway server` (built-in
 * identity provider, mail through a real SMTP server), and every action of each person done by running the real
 * `slipway` executable with a config directory of their own. The one step outside the CLI is approving the
 * device-flow code, done by driving the provider's pages over HTTP as the person's browser would.
 */
const PASSWORD = 'correct horse battery staple';
const STORY_TIMEOUT_MS = 240_000;

interface Person {
  email: string;
  name: string;
  configHome: string;
  env: Record<string, string>;
}

interface MemberJson {
  id: string;
  email: string;
  role: string;
}

interface InvitationJson {
  id: string;
  email: string;
  role: string;
  invitation_status: string;
}

for (const dialect of TEST_DIALECTS) {
  describe(`slipway CLI: a team of two [${dialect}]`, () => {
    let smtp: TestSmtpServer;
    let server: SlipwayServer;
    const homes: string[] = [];

    beforeAll(async () => {
      smtp = await startTestSmtpServer();
      // Alice and Carol sign up uninvited to found their organizations: sign-up is open on this server.
      server = await startSlipwayServer(dialect, { SLIPWAY_SMTP_URL: smtp.url, SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>', SLIPWAY_SIGNUP: 'open' });
      // The server process really runs on the database this suite is for.
      expect(server.output()).toMatch(new RegExp(`"database":"${dialect}"[^\n]*"msg":"slipway is serving"`));
    }, 60_000);

    afterAll(async () => {
      await server?.close();
      await smtp?.close();
      await Promise.all(homes.map((home) => rm(home, { recursive: true, force: true })));
    }, 60_000);

    let people = 0;
    async function person(label: string): Promise<Person> {
      people += 1;
      const configHome = await mkdtemp(path.join(tmpdir(), `slipway-${label}-`));
      homes.push(configHome);
      return {
        email: `${label}-${process.pid}-${people}@example.com`,
        name: `${label[0]?.toUpperCase() ?? ''}${label.slice(1)}`,
        configHome,
        env: { XDG_CONFIG_HOME: configHome, HOME: configHome, SLIPWAY_URL: server.baseUrl },
      };
    }

    function slipway(who: Person, args: string[], input?: string): Promise<CliResult> {
      return runSlipway(args, who.env, input);
    }

    /** Runs a command that must succeed, answering what it printed. */
    async function succeeds(who: Person, args: string[], input?: string): Promise<string> {
      const result = await slipway(who, args, input);
      expect(result.stderr, `slipway ${args.join(' ')}`).toBe('');
      expect(result.code, `slipway ${args.join(' ')}: ${result.stdout}`).toBe(0);
      return result.stdout;
    }

    /** Runs a command that must fail: exit status 1, nothing on stdout, exactly one line on stderr. */
    async function fails(who: Person, args: string[]): Promise<string> {
      const result = await slipway(who, args);
      expect(result.code, `slipway ${args.join(' ')}: ${result.stdout}`).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^slipway: [^\n]+\n$/);
      return result.stderr;
    }

    async function json<T>(who: Person, args: string[]): Promise<T> {
      return JSON.parse(await succeeds(who, [...args, '--json'])) as T;
    }

    /** The first message to `to` that contains a link matching `pattern`, and that link. */
    async function mailedLink(to: string, pattern: RegExp): Promise<string> {
      const mail = await smtp.waitFor((candidate) => candidate.to.includes(to) && linksIn(candidate, pattern).length > 0);
      const links = linksIn(mail, pattern);
      expect(links).toHaveLength(1);
      return links[0] as string;
    }

    /** The API's own answer to a request made with the person's stored sign-in, to compare the CLI's line with. */
    async function apiAnswer(who: Person, method: string, url: string, body?: unknown): Promise<{ status: number; body: { message: string } }> {
      const stored = JSON.parse(await readFile(path.join(who.configHome, 'slipway', 'credentials.json'), 'utf8')) as { servers: Record<string, { access_token: string }> };
      const token = stored.servers[server.baseUrl]?.access_token as string;
      const response = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as { message: string } };
    }

    /** signup → the verification link from the e-mail → verify → login (the code approved in the "browser"). */
    async function signUpAndLogIn(who: Person): Promise<void> {
      const created = await succeeds(who, ['signup', '--email', who.email, '--name', who.name, '--password-stdin'], `${PASSWORD}\n`);
      expect(created).toContain(`Created the account ${who.email} on ${server.baseUrl}.`);

      const verificationLink = await mailedLink(who.email, /\/oidc\/verify\?token=/);
      expect(verificationLink.startsWith(`${server.baseUrl}/oidc/verify?token=`)).toBe(true);
      expect(await succeeds(who, ['verify', verificationLink])).toBe(`${who.email} is verified. Sign in with slipway login.\n`);

      const login = spawnSlipway(['login'], who.env);
      login.stdin?.end();
      const [, uri, code] = await waitForOutput(login, /open (\S+)\nand enter the code: (\S+)/);
      const page = await approveDeviceCode(new TestBrowser(), uri as string, code as string, who.email, PASSWORD);
      expect(page.status).toBe(200);
      const loggedIn = await login.result;
      expect(loggedIn.stderr).toBe('');
      expect(loggedIn.code).toBe(0);
      expect(loggedIn.stdout).toContain(`Signed in to ${server.baseUrl} as ${who.email}.`);
    }

    it('two people work in one organization with the CLI alone: sign up, invite, accept from the e-mail, change role, remove', { timeout: STORY_TIMEOUT_MS }, async () => {
      const alice = await person('alice');
      const bob = await person('bob');

      // Alice signs up, verifies from the e-mail, signs in and creates an organization, which becomes her current one.
      await signUpAndLogIn(alice);
      const organizationName = `Acme ${process.pid} ${dialect}`;
      const organization = await json<{ id: string; name: string }>(alice, ['org', 'create', organizationName]);
      expect(organization.name).toBe(organizationName);
      const settingsFile = path.join(alice.configHome, 'slipway', 'config.json');
      expect((await stat(settingsFile)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(settingsFile, 'utf8'))).toEqual({ organizations: { [server.baseUrl]: organization.id } });
      const aliceOrganizations = await succeeds(alice, ['org', 'list']);
      expect(aliceOrganizations).toMatch(/^\s+ID\s+NAME\n/);
      expect(aliceOrganizations).toMatch(new RegExp(`^\\*\\s+${organization.id}\\s+${organizationName}$`, 'm'));

      // She invites Bob (VIEWER by default); inviting him again is the API's conflict, in one line.
      const invited = await succeeds(alice, ['invite', bob.email]);
      expect(invited).toContain(`Invited ${bob.email} to ${organizationName} as VIEWER`);
      expect(await fails(alice, ['invite', bob.email])).toBe(`slipway: ${bob.email} already has a pending invitation to this organization\n`);
      const pending = await json<{ results: InvitationJson[] }>(alice, ['invitations', 'list']);
      expect(pending.results).toEqual([expect.objectContaining({ email: bob.email, role: 'VIEWER', invitation_status: 'PENDING' })]);
      expect(await succeeds(alice, ['invitations', 'list'])).toMatch(new RegExp(`^${pending.results[0]?.id}\\s+${bob.email}\\s+VIEWER\\s+PENDING\\s`, 'm'));

      // The invitation e-mail reached Bob over SMTP with the acceptance link.
      const invitationLink = await mailedLink(bob.email, /\/organization\/[^/]+\/inviteMember\/[^/]+$/);
      expect(invitationLink).toBe(`${server.baseUrl}/organization/${organization.id}/inviteMember/${pending.results[0]?.id}`);

      // Bob signs up, verifies, signs in; he belongs to nothing until he accepts from the link.
      await signUpAndLogIn(bob);
      expect(await succeeds(bob, ['org', 'list'])).toContain('You belong to no organization.');
      expect(await succeeds(bob, ['invitations', 'accept', invitationLink])).toBe(`Joined ${organizationName} as VIEWER; it is now your current organization.\n`);
      expect(await fails(bob, ['invitations', 'accept', invitationLink])).toBe('slipway: this invitation has already been accepted\n');
      expect(await succeeds(bob, ['org', 'list'])).toMatch(new RegExp(`^\\*\\s+${organization.id}\\s+${organizationName}$`, 'm'));

      // Alice sees Bob as VIEWER, and makes him DEVELOPER (by e-mail).
      const listed = await json<{ results: MemberJson[] }>(alice, ['members', 'list']);
      expect(listed.results.map(({ email, role }) => ({ email, role })).sort((a, b) => a.email.localeCompare(b.email))).toEqual([
        { email: alice.email, role: 'OWNER' },
        { email: bob.email, role: 'VIEWER' },
      ]);
      const bobId = listed.results.find((member) => member.email === bob.email)?.id as string;
      expect(await succeeds(alice, ['members', 'list'])).toMatch(new RegExp(`^${bobId}\\s+${bob.email}\\s+Bob\\s+VIEWER$`, 'm'));
      expect(await succeeds(alice, ['members', 'set-role', bob.email, 'DEVELOPER'])).toBe(`${bob.email} is now DEVELOPER.\n`);

      // As DEVELOPER, Bob creates a project.
      const created = await succeeds(bob, ['projects', 'create', 'web', '--description', 'the storefront']);
      expect(created).toMatch(/^Created project web \([0-9a-f-]{36}\)\.\n$/);

      // Alice makes him VIEWER again (by user id); now the API refuses his project, and the CLI says exactly why.
      expect(await succeeds(alice, ['members', 'set-role', bobId, 'viewer'])).toBe(`${bob.email} is now VIEWER.\n`);
      const refused = await fails(bob, ['projects', 'create', 'api']);
      const direct = await apiAnswer(bob, 'POST', `/organization/${organization.id}/project`, { name: 'api' });
      expect(direct.status).toBe(403);
      expect(refused).toBe(`slipway: ${direct.body.message}\n`);
      const projects = await json<{ results: { name: string }[] }>(bob, ['projects', 'list']);
      expect(projects.results.map((project) => project.name)).toEqual(['web']);

      // Alice removes Bob: his organization list no longer shows it, and he can no longer read its projects.
      expect(await succeeds(alice, ['members', 'remove', bob.email])).toBe(`Removed ${bob.email} from the organization.\n`);
      const bobOrganizations = await succeeds(bob, ['org', 'list']);
      expect(bobOrganizations).not.toContain(organization.id);
      expect(bobOrganizations).toContain('You belong to no organization.');
      expect((await json<{ results: unknown[] }>(bob, ['org', 'list'])).results).toEqual([]);
      await fails(bob, ['projects', 'list']);
      expect((await json<{ results: MemberJson[] }>(alice, ['members', 'list'])).results.map((member) => member.email)).toEqual([alice.email]);
    });

    it('refuses, in one line and without changing anything, what the API refuses; transfers ownership', { timeout: STORY_TIMEOUT_MS }, async () => {
      const carol = await person('carol');
      const dave = await person('dave');
      const erin = await person('erin');

      // Not signed in yet: every API command says so.
      expect(await fails(carol, ['org', 'list'])).toBe(`slipway: not signed in to ${server.baseUrl}; run slipway login --url ${server.baseUrl}\n`);
      // A password the provider refuses, and a verification link that is not valid.
      expect(await fails(carol, ['signup', '--email', carol.email, '--password-stdin'])).toMatch(/^slipway: the sign-up form is not valid \(password must be 10 to 256 characters\)\n$/);
      expect(await fails(carol, ['verify', `${server.baseUrl}/oidc/verify?token=not-a-real-token`])).toBe('slipway: the verification link is not valid or has expired\n');

      await signUpAndLogIn(carol);
      // No organization chosen yet.
      expect(await fails(carol, ['members', 'list'])).toBe('slipway: no organization chosen: run slipway org use <id|name>, or pass --org <id|name>\n');
      const first = await json<{ id: string }>(carol, ['org', 'create', `First ${process.pid} ${dialect}`]);
      const organizationName = `Second ${process.pid} ${dialect}`;
      const organization = await json<{ id: string }>(carol, ['org', 'create', organizationName]);
      expect(await succeeds(carol, ['org', 'use', `first ${process.pid} ${dialect}`])).toBe(`Now using organization First ${process.pid} ${dialect} (${first.id}).\n`);
      expect(await succeeds(carol, ['org', 'use', organization.id])).toBe(`Now using organization ${organizationName} (${organization.id}).\n`);
      expect(await fails(carol, ['org', 'use', 'no such organization'])).toBe('slipway: you belong to no organization named "no such organization"; see slipway org list\n');

      expect(await fails(carol, ['invite', 'someone@example.com', '--role', 'WIZARD'])).toMatch(/^slipway: .*role.*\n$/);
      expect(await fails(carol, ['invite', 'not-an-address'])).toMatch(/^slipway: .*email.*\n$/);
      await succeeds(carol, ['invite', dave.email, '--role', 'DEVELOPER']);
      await succeeds(carol, ['invite', erin.email]);
      const erinsLink = await mailedLink(erin.email, /\/inviteMember\//);
      const davesLink = await mailedLink(dave.email, /\/inviteMember\//);

      // Dave cannot accept Erin's invitation: the API's 403, in one line; he joins nothing and it stays pending.
      await signUpAndLogIn(dave);
      const refused = await fails(dave, ['invitations', 'accept', erinsLink]);
      const direct = await apiAnswer(dave, 'POST', new URL(erinsLink).pathname);
      expect(direct.status).toBe(403);
      expect(refused).toBe(`slipway: ${direct.body.message}\n`);
      expect((await json<{ results: unknown[] }>(dave, ['org', 'list'])).results).toEqual([]);
      const open = await json<{ results: InvitationJson[] }>(carol, ['invitations', 'list']);
      expect(open.results.map(({ email, invitation_status }) => ({ email, invitation_status })).sort((a, b) => a.email.localeCompare(b.email))).toEqual([
        { email: dave.email, invitation_status: 'PENDING' },
        { email: erin.email, invitation_status: 'PENDING' },
      ]);
      expect(await fails(dave, ['invitations', 'accept', 'https://example.com/not/an/invitation'])).toBe(
        'slipway: https://example.com/not/an/invitation is not a Slipway invitation link (…/organization/<id>/inviteMember/<id>)\n',
      );

      // His own invitation, by id and organization id instead of the link.
      const davesInvitation = davesLink.split('/').at(-1) as string;
      const joined = await json<{ role: string; organization_id: string }>(dave, ['invitations', 'accept', davesInvitation, '--org', organization.id]);
      expect(joined).toMatchObject({ role: 'DEVELOPER', organization_id: organization.id });

      // OWNER is given only by transfer; Carol revokes Erin's invitation and hands the organization to Dave.
      await fails(carol, ['members', 'set-role', dave.email, 'OWNER']);
      expect((await json<{ results: MemberJson[] }>(carol, ['members', 'list'])).results.find((member) => member.email === dave.email)?.role).toBe('DEVELOPER');
      expect(await fails(carol, ['members', 'remove', erin.email])).toBe(`slipway: ${erin.email} is not a member of this organization; see slipway members list\n`);
      const erinsInvitation = open.results.find((invitation) => invitation.email === erin.email)?.id as string;
      expect(await succeeds(carol, ['invitations', 'revoke', erinsInvitation])).toBe(`Revoked invitation ${erinsInvitation}.\n`);
      expect(await fails(carol, ['invitations', 'revoke', erinsInvitation])).toBe(`slipway: invitation ${erinsInvitation} not found\n`);
      // Dave's invitation was used and Erin's withdrawn: nothing is open any more.
      expect((await json<{ results: InvitationJson[] }>(carol, ['invitations', 'list'])).results).toEqual([]);
      expect(await succeeds(carol, ['invitations', 'list'])).toBe('No open invitations.\n');

      expect(await succeeds(carol, ['members', 'transfer-ownership', dave.email])).toBe(`${dave.email} now owns the organization; you are ADMIN.\n`);
      const roles = (await json<{ results: MemberJson[] }>(dave, ['members', 'list'])).results.map(({ email, role }) => ({ email, role }));
      expect(roles.sort((a, b) => a.email.localeCompare(b.email))).toEqual([
        { email: carol.email, role: 'ADMIN' },
        { email: dave.email, role: 'OWNER' },
      ]);
      // Carol, now ADMIN, cannot remove the owner.
      await fails(carol, ['members', 'remove', dave.email]);
      expect((await json<{ results: MemberJson[] }>(dave, ['members', 'list'])).results).toHaveLength(2);
    });
  });
}
