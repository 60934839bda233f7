import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startTestSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp-server.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Invitations by e-mail (SPEC.md "Members and invitations", DESIGN.md §6): the message really leaves through SMTP to a
 * server started here (or stays in the outbox without a relay), carries the acceptance link, and only the signed-in
 * person whose verified e-mail is the invited address can accept it, once, within 7 days.
 */

const PUBLIC_URL = 'https://slipway.example.test';
const SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000;

type RoleName = 'OWNER' | 'ADMIN' | 'DEVELOPER' | 'VIEWER';

interface InviteMemberBody {
  id: string;
  created_at: string;
  email: string;
  role: string;
  role_id: string;
  role_name: string;
  invitation_link: string;
  invitation_status: string;
  organization_name: string;
  inviter: string;
  expires_at: string;
}

interface Organization {
  id: string;
  name: string;
  owner: TestUser;
  roleIds: Record<RoleName, string>;
}

async function newOrganization(testApp: TestApp): Promise<Organization> {
  const owner = await testApp.signUp();
  const name = uniqueName('org');
  const id = await testApp.createOrganization(owner, name);
  const roles = await testApp.call(owner.auth, { method: 'GET', url: `/organization/${id}/availableRole` });
  const roleIds = Object.fromEntries(roles.json<{ results: { id: string; name: string }[] }>().results.map((role) => [role.name, role.id]));
  return { id, name, owner, roleIds: roleIds as Record<RoleName, string> };
}

function invite(testApp: TestApp, auth: string, organizationId: string, payload: Record<string, unknown>) {
  return testApp.call(auth, { method: 'POST', url: `/organization/${organizationId}/inviteMember`, payload });
}

function accept(testApp: TestApp, auth: string | undefined, organizationId: string, invitationId: string) {
  return testApp.call(auth, { method: 'POST', url: `/organization/${organizationId}/inviteMember/${invitationId}` });
}

async function memberIds(testApp: TestApp, organization: Organization): Promise<string[]> {
  const response = await testApp.call(organization.owner.auth, { method: 'GET', url: `/organization/${organization.id}/member` });
  expect(response.statusCode).toBe(200);
  return response.json<{ results: { id: string }[] }>().results.map((member) => member.id).sort();
}

async function invitationCount(testApp: TestApp, organizationId: string): Promise<number> {
  const rows = await testApp.database.db.selectFrom('invitations').select('id').where('organization_id', '=', organizationId).execute();
  return rows.length;
}

/** A signed-in person whose identity provider did not verify their e-mail address. */
async function signUpUnverified(testApp: TestApp, email: string): Promise<string> {
  const jwt = await testApp.issuer.signToken({ sub: `sub-${uniqueName('unverified')}`, email, email_verified: false });
  const auth = `Bearer ${jwt}`;
  expect((await testApp.call(auth, { method: 'GET', url: '/organization' })).statusCode).toBe(200);
  return auth;
}

/** The decoded text of a raw message (quoted-printable soft breaks and escapes undone), to find the link in it. */
function decodedMail(mail: ReceivedMail): string {
  return mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

describeEachDatabase('invitations delivered through SMTP', (ctx) => {
  let smtp: TestSmtpServer;
  let mailingApp: FastifyTypeBox;
  /** The same database and identity issuer as ctx(), with the mailer pointed at the SMTP server of this test. */
  const callMailing = (auth: string | undefined, options: InjectOptions) =>
    mailingApp.inject({ ...options, headers: { ...(options.headers ?? {}), ...(auth === undefined ? {} : { authorization: auth }) } });

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    mailingApp = await buildApp({
      config: {
        oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience },
        egressIps: [],
        logLevel: 'silent',
        smtpUrl: smtp.url,
        mailFrom: 'Slipway <noreply@slipway.example.test>',
        publicUrl: `${PUBLIC_URL}/`,
      },
      database: ctx().database,
      clock: ctx().clock,
    });
  });
  afterAll(async () => {
    await mailingApp.close();
    await smtp.close();
  });

  it('mails the invitation with the acceptance link, and the invitee accepts it from that link', async () => {
    const organization = await newOrganization(ctx());
    const invitee = await ctx().signUp();
    const response = await callMailing(organization.owner.auth, {
      method: 'POST',
      url: `/organization/${organization.id}/inviteMember`,
      payload: { email: invitee.email, role: 'DEVELOPER' },
    });
    expect(response.statusCode, response.body).toBe(201);
    const invitation = response.json<InviteMemberBody>();
    const link = `${PUBLIC_URL}/organization/${organization.id}/inviteMember/${invitation.id}`;
    expect(invitation).toMatchObject({
      email: invitee.email,
      role: 'DEVELOPER',
      role_name: 'DEVELOPER',
      role_id: organization.roleIds.DEVELOPER,
      invitation_status: 'PENDING',
      invitation_link: link,
      organization_name: organization.name,
    });
    expect(invitation.inviter).toBe(organization.owner.email.replace('@example.com', ''));
    expect(Date.parse(invitation.expires_at) - Date.parse(invitation.created_at)).toBe(SEVEN_DAYS_MS);

    const mail = await smtp.waitFor((candidate) => candidate.to.includes(invitee.email));
    expect(mail.from).toBe('noreply@slipway.example.test');
    const text = decodedMail(mail);
    expect(text).toMatch(new RegExp(`^Subject: .*${organization.name}`, 'm'));
    expect(text).toContain('Content-Type: text/plain');
    expect(text).toContain('Content-Type: text/html');
    expect(text).toContain(`Accept the invitation: ${link}`);
    expect(text).toContain(`<a href="${link}">`);

    // The link names the organization and the invitation: the invitee (not yet a member) opens it, then accepts.
    const path = new URL(link).pathname;
    const opened = await ctx().call(invitee.auth, { method: 'GET', url: path });
    expect(opened.statusCode, opened.body).toBe(200);
    expect(opened.json<InviteMemberBody>()).toMatchObject({ id: invitation.id, invitation_status: 'PENDING', organization_name: organization.name });
    const accepted = await ctx().call(invitee.auth, { method: 'POST', url: path });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(accepted.json<InviteMemberBody>()).toMatchObject({ id: invitation.id, invitation_status: 'ACCEPTED', role: 'DEVELOPER' });
    expect(await memberIds(ctx(), organization)).toEqual([organization.owner.id, invitee.id].sort());
    const roster = await ctx().call(invitee.auth, { method: 'GET', url: `/organization/${organization.id}/member` });
    expect(roster.json<{ results: { id: string; role: string }[] }>().results.find((member) => member.id === invitee.id)?.role).toBe('DEVELOPER');
    // Nothing was left in the outbox: the relay took it.
    const kept = await ctx().database.db.selectFrom('outbox').select('id').where('recipient', '=', invitee.email).execute();
    expect(kept).toEqual([]);
  });

  it('answers 503 and keeps no invitation when the relay cannot be reached, so the address can be invited again', async () => {
    // A relay address on which nothing listens: the port of a server that was started and closed again.
    const gone = await startTestSmtpServer();
    await gone.close();
    const unreachableApp = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent', smtpUrl: gone.url, publicUrl: PUBLIC_URL },
      database: ctx().database,
      clock: ctx().clock,
    });
    try {
      const organization = await newOrganization(ctx());
      const email = `${uniqueName('unreachable')}@example.com`;
      const failed = await unreachableApp.inject({
        method: 'POST',
        url: `/organization/${organization.id}/inviteMember`,
        headers: { authorization: organization.owner.auth },
        payload: { email },
      });
      expectErrorBody(failed, 503);
      expect(await invitationCount(ctx(), organization.id)).toBe(0);
      const retried = await callMailing(organization.owner.auth, { method: 'POST', url: `/organization/${organization.id}/inviteMember`, payload: { email } });
      expect(retried.statusCode, retried.body).toBe(201);
    } finally {
      await unreachableApp.close();
    }
  });

  it('escapes names in the HTML body, so an organization name cannot inject markup', async () => {
    const owner = await ctx().signUp();
    const name = `<b>evil</b> ${uniqueName('org')}`;
    const organizationId = await ctx().createOrganization(owner, name);
    const email = `${uniqueName('escaped')}@example.com`;
    const response = await callMailing(owner.auth, { method: 'POST', url: `/organization/${organizationId}/inviteMember`, payload: { email } });
    expect(response.statusCode, response.body).toBe(201);
    const html = decodedMail(await smtp.waitFor((candidate) => candidate.to.includes(email)));
    expect(html).toContain('&#60;b&#62;evil&#60;/b&#62;');
    expect(html).not.toContain('<strong><b>evil</b>');
  });
});

describeEachDatabase('invitations', (ctx) => {
  it('keeps the message in the outbox when no SMTP relay is configured, and logs the link', async () => {
    const organization = await newOrganization(ctx());
    const email = `${uniqueName('outboxed')}@example.com`;
    const response = await invite(ctx(), organization.owner.auth, organization.id, { email, role_id: organization.roleIds.VIEWER });
    expect(response.statusCode, response.body).toBe(201);
    const invitation = response.json<InviteMemberBody>();
    const rows = await ctx().database.db.selectFrom('outbox').selectAll().where('recipient', '=', email).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.subject).toContain(organization.name);
    expect(rows[0]?.text_body).toContain(`/organization/${organization.id}/inviteMember/${invitation.id}`);
    expect(rows[0]?.text_body).toContain(invitation.invitation_link);
    expect(rows[0]?.html_body).toContain(`href="${invitation.invitation_link}"`);
  });

  it('refuses a second pending invitation for the same address with 409, whatever its spelling, also when concurrent', async () => {
    const organization = await newOrganization(ctx());
    const email = `${uniqueName('twice')}@example.com`;
    expect((await invite(ctx(), organization.owner.auth, organization.id, { email })).statusCode).toBe(201);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email }), 409);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email: email.toUpperCase(), role: 'ADMIN' }), 409);
    expect(await invitationCount(ctx(), organization.id)).toBe(1);

    const racing = `${uniqueName('race')}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_unused, index) =>
        invite(ctx(), organization.owner.auth, organization.id, { email: index % 2 === 0 ? racing : racing.toUpperCase() }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const answer of answers.filter((candidate) => candidate.statusCode === 409)) expectErrorBody(answer, 409);
    expect(await invitationCount(ctx(), organization.id)).toBe(2);
    // The same address may be invited to another organization.
    const other = await newOrganization(ctx());
    expect((await invite(ctx(), other.owner.auth, other.id, { email })).statusCode).toBe(201);
  });

  it('refuses to invite someone who is already a member with 409', async () => {
    const organization = await newOrganization(ctx());
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email: organization.owner.email }), 409);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email: organization.owner.email.toUpperCase() }), 409);
    expect(await invitationCount(ctx(), organization.id)).toBe(0);
  });

  it('refuses bad invitations with a 4xx error body and saves nothing', async () => {
    const organization = await newOrganization(ctx());
    const other = await newOrganization(ctx());
    const adminUser = await ctx().signUp();
    const adminInvitation = await invite(ctx(), organization.owner.auth, organization.id, { email: adminUser.email, role: 'ADMIN' });
    expect((await accept(ctx(), adminUser.auth, organization.id, adminInvitation.json<{ id: string }>().id)).statusCode).toBe(201);
    const developer = await ctx().signUp();
    const developerInvitation = await invite(ctx(), organization.owner.auth, organization.id, { email: developer.email, role: 'DEVELOPER' });
    expect((await accept(ctx(), developer.auth, organization.id, developerInvitation.json<{ id: string }>().id)).statusCode).toBe(201);
    const before = await invitationCount(ctx(), organization.id);
    const email = `${uniqueName('target')}@example.com`;

    for (const malformed of ['not-an-email', 'two@@example.com', '', 'a@b@c', `x${'y'.repeat(260)}@example.com`, 'line\nbreak@example.com']) {
      expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email: malformed }), 400);
    }
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, {}), 400);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email, role_id: randomUUID() }), 400);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email, role_id: other.roleIds.VIEWER }), 400);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email, role: 'SUPERUSER' }), 400);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email, role: 'ADMIN', role_id: organization.roleIds.VIEWER }), 400);
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email, admin: true }), 400);
    // OWNER passes only by transfer; an ADMIN cannot even try (a role above their own); a DEVELOPER invites nobody.
    expectErrorBody(await invite(ctx(), organization.owner.auth, organization.id, { email, role: 'OWNER' }), 400);
    expectErrorBody(await invite(ctx(), adminUser.auth, organization.id, { email, role_id: organization.roleIds.OWNER }), 403);
    expectErrorBody(await invite(ctx(), developer.auth, organization.id, { email, role: 'VIEWER' }), 403);
    const readToken = await ctx().createApiToken(organization.owner.auth, organization.id, { name: uniqueName('read'), scope: 'READ' });
    expectErrorBody(await invite(ctx(), `Bearer ${readToken}`, organization.id, { email }), 403);

    expect(await invitationCount(ctx(), organization.id)).toBe(before);
    const outboxed = await ctx().database.db.selectFrom('outbox').select('id').where('recipient', '=', email).execute();
    expect(outboxed).toEqual([]);
    // An ADMIN may invite an ADMIN (their own role), and the default role is the least one.
    const asAdmin = await invite(ctx(), adminUser.auth, organization.id, { email, role: 'ADMIN' });
    expect(asAdmin.statusCode, asAdmin.body).toBe(201);
    const defaulted = await invite(ctx(), organization.owner.auth, organization.id, { email: `${uniqueName('default')}@example.com` });
    expect(defaulted.json<InviteMemberBody>().role).toBe('VIEWER');
  });

  it('lets only the invitee accept, by verified e-mail; others get a 4xx and no membership', async () => {
    const organization = await newOrganization(ctx());
    const member = await ctx().signUp();
    const memberInvitation = await invite(ctx(), organization.owner.auth, organization.id, { email: member.email, role: 'ADMIN' });
    expect((await accept(ctx(), member.auth, organization.id, memberInvitation.json<{ id: string }>().id)).statusCode).toBe(201);
    const invitee = await ctx().signUp();
    const response = await invite(ctx(), organization.owner.auth, organization.id, { email: invitee.email, role: 'VIEWER' });
    const invitationId = response.json<InviteMemberBody>().id;
    const outsider = await ctx().signUp();
    const impostor = await signUpUnverified(ctx(), invitee.email);
    const token = await ctx().createApiToken(organization.owner.auth, organization.id, { name: uniqueName('admin'), scope: 'ADMIN' });
    const before = await memberIds(ctx(), organization);

    expectErrorBody(await accept(ctx(), undefined, organization.id, invitationId), 401);
    expectErrorBody(await accept(ctx(), outsider.auth, organization.id, invitationId), 403);
    expectErrorBody(await accept(ctx(), member.auth, organization.id, invitationId), 403);
    expectErrorBody(await accept(ctx(), organization.owner.auth, organization.id, invitationId), 403);
    expectErrorBody(await accept(ctx(), impostor, organization.id, invitationId), 403);
    expectErrorBody(await accept(ctx(), `Bearer ${token}`, organization.id, invitationId), 403);
    // The invitation is addressed within its organization only, and by a real id.
    const other = await newOrganization(ctx());
    expectErrorBody(await accept(ctx(), invitee.auth, other.id, invitationId), 404);
    expectErrorBody(await accept(ctx(), invitee.auth, organization.id, randomUUID()), 404);
    expectErrorBody(await accept(ctx(), invitee.auth, organization.id, 'not-a-uuid'), 400);
    expect(await memberIds(ctx(), organization)).toEqual(before);

    // Who may look at it: members and the invitee; an outsider or an impostor learns nothing (404).
    expect((await ctx().call(member.auth, { method: 'GET', url: `/organization/${organization.id}/inviteMember/${invitationId}` })).statusCode).toBe(200);
    expect((await ctx().call(`Bearer ${token}`, { method: 'GET', url: `/organization/${organization.id}/inviteMember/${invitationId}` })).statusCode).toBe(200);
    expect((await ctx().call(invitee.auth, { method: 'GET', url: `/organization/${organization.id}/inviteMember/${invitationId}` })).statusCode).toBe(200);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'GET', url: `/organization/${organization.id}/inviteMember/${invitationId}` }), 404);
    expectErrorBody(await ctx().call(impostor, { method: 'GET', url: `/organization/${organization.id}/inviteMember/${invitationId}` }), 404);

    const accepted = await accept(ctx(), invitee.auth, organization.id, invitationId);
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(await memberIds(ctx(), organization)).toEqual([...before, invitee.id].sort());
    // Accepting twice: 409, and still one membership.
    expectErrorBody(await accept(ctx(), invitee.auth, organization.id, invitationId), 409);
    expect(await memberIds(ctx(), organization)).toEqual([...before, invitee.id].sort());
    // An accepted invitation leaves the list of invited people.
    const listed = await ctx().call(organization.owner.auth, { method: 'GET', url: `/organization/${organization.id}/inviteMember` });
    expect(listed.json<{ results: InviteMemberBody[] }>().results.map((item) => item.id)).not.toContain(invitationId);
  });

  it('accepts exactly once when the invitee accepts twice at the same moment', async () => {
    const organization = await newOrganization(ctx());
    const invitee = await ctx().signUp();
    const invitationId = (await invite(ctx(), organization.owner.auth, organization.id, { email: invitee.email, role: 'DEVELOPER' })).json<InviteMemberBody>().id;
    const answers = await Promise.all([1, 2, 3].map(() => accept(ctx(), invitee.auth, organization.id, invitationId)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
    expect(await memberIds(ctx(), organization)).toEqual([organization.owner.id, invitee.id].sort());
  });

  it('lists pending invitations and shows them EXPIRED after 7 days, when they can no longer be accepted', async () => {
    const organization = await newOrganization(ctx());
    const invitee = await ctx().signUp();
    const invitationId = (await invite(ctx(), organization.owner.auth, organization.id, { email: invitee.email, role: 'DEVELOPER' })).json<InviteMemberBody>().id;
    const list = async () => {
      const response = await ctx().call(organization.owner.auth, { method: 'GET', url: `/organization/${organization.id}/inviteMember` });
      expect(response.statusCode).toBe(200);
      return response.json<{ results: InviteMemberBody[] }>().results;
    };
    expect((await list()).map((item) => [item.id, item.email, item.invitation_status])).toEqual([[invitationId, invitee.email, 'PENDING']]);

    ctx().clock.advance(SEVEN_DAYS_MS + 1000);
    expect((await list()).map((item) => item.invitation_status)).toEqual(['EXPIRED']);
    const shown = await ctx().call(invitee.auth, { method: 'GET', url: `/organization/${organization.id}/inviteMember/${invitationId}` });
    expect(shown.json<InviteMemberBody>().invitation_status).toBe('EXPIRED');
    const refused = expectErrorBody(await accept(ctx(), invitee.auth, organization.id, invitationId), 400);
    expect(refused.message).toMatch(/expired/);
    expect(await memberIds(ctx(), organization)).toEqual([organization.owner.id]);

    // The address can be invited again; the new invitation replaces the expired one.
    const again = await invite(ctx(), organization.owner.auth, organization.id, { email: invitee.email });
    expect(again.statusCode, again.body).toBe(201);
    expect((await list()).map((item) => [item.id, item.invitation_status])).toEqual([[again.json<InviteMemberBody>().id, 'PENDING']]);
    expect((await accept(ctx(), invitee.auth, organization.id, again.json<InviteMemberBody>().id)).statusCode).toBe(201);
  });

  it('withdraws an invitation with 204, after which it can be neither seen nor accepted', async () => {
    const organization = await newOrganization(ctx());
    const invitee = await ctx().signUp();
    const invitationId = (await invite(ctx(), organization.owner.auth, organization.id, { email: invitee.email })).json<InviteMemberBody>().id;
    const url = `/organization/${organization.id}/inviteMember/${invitationId}`;
    const viewer = await ctx().signUp();
    const viewerInvitation = (await invite(ctx(), organization.owner.auth, organization.id, { email: viewer.email, role: 'VIEWER' })).json<InviteMemberBody>().id;
    expect((await accept(ctx(), viewer.auth, organization.id, viewerInvitation)).statusCode).toBe(201);

    expectErrorBody(await ctx().call(viewer.auth, { method: 'DELETE', url }), 403);
    expectErrorBody(await ctx().call(invitee.auth, { method: 'DELETE', url }), 404);
    const withdrawn = await ctx().call(organization.owner.auth, { method: 'DELETE', url });
    expect(withdrawn.statusCode, withdrawn.body).toBe(204);
    expectErrorBody(await ctx().call(organization.owner.auth, { method: 'DELETE', url }), 404);
    expectErrorBody(await ctx().call(invitee.auth, { method: 'GET', url }), 404);
    expectErrorBody(await accept(ctx(), invitee.auth, organization.id, invitationId), 404);
    expect(await memberIds(ctx(), organization)).toEqual([organization.owner.id, viewer.id].sort());
  });
});

/** Log lines of the app below, as pino writes them (one JSON object a line). */
const logLines: string[] = [];
function logCollector(): PassThrough {
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
  return stream;
}

describeEachDatabase(
  'invitations logged from the outbox',
  (ctx) => {
    it('writes the acceptance link to the log when the message stays in the outbox', async () => {
      const organization = await newOrganization(ctx());
      const email = `${uniqueName('logged')}@example.com`;
      const response = await invite(ctx(), organization.owner.auth, organization.id, { email });
      expect(response.statusCode, response.body).toBe(201);
      const link = response.json<InviteMemberBody>().invitation_link;
      const lines = logLines.splice(0).map((line) => JSON.parse(line) as { to?: string; text?: string });
      const logged = lines.find((line) => line.to === email);
      expect(logged?.text).toContain(link);
    });
  },
  { logStream: logCollector() },
);
