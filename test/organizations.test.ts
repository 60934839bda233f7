import { expect, it } from 'vitest';
import { enqueueJob, findJob } from '../src/jobs/job-queue.ts';
import { newId } from '../src/lib/ids.ts';
import { createOrganizationPurgeHandler, ORGANIZATION_PURGE_JOB } from '../src/modules/organizations/organizations.purge.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';
import { expectErrorBody } from './support/error-body.ts';

/**
 * Organizations, their built-in roles and the per-person onboarding record, through the real routes on a real
 * database: who may do what, what each answer carries, and what each write leaves (or does not leave) in the rows.
 */

interface OrganizationBody {
  id: string;
  name: string;
  description: string | null;
  plan: string;
  website_url: string | null;
  repository: string | null;
  logo_url: string | null;
  icon_url: string | null;
  admin_emails: string[] | null;
  owner?: string;
  organization_plan: { plan: string; audit_logs_retention_in_days: number };
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function organizationRowCount(ctx: TestApp): Promise<number> {
  const row = await ctx.database.db.selectFrom('organizations').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

async function rowsBeneath(ctx: TestApp, organizationId: string) {
  const { db } = ctx.database;
  const count = async (table: 'projects' | 'api_tokens' | 'roles' | 'members' | 'onboarding') =>
    (await db.selectFrom(table).select('organization_id').where('organization_id', '=', organizationId).execute()).length;
  return {
    projects: await count('projects'),
    api_tokens: await count('api_tokens'),
    roles: await count('roles'),
    members: await count('members'),
    onboarding: await count('onboarding'),
  };
}

describeEachDatabase('organizations', (ctx) => {
  const create = (auth: string, payload: unknown) => ctx().call(auth, { method: 'POST', url: '/organization', payload: payload as object });
  const get = (auth: string, id: string) => ctx().call(auth, { method: 'GET', url: `/organization/${id}` });
  const edit = (auth: string, id: string, payload: unknown) =>
    ctx().call(auth, { method: 'PUT', url: `/organization/${id}`, payload: payload as object });

  it('createOrganization answers 201 with the organization, its creator as owner and OWNER member, on the default plan', async () => {
    const user = await ctx().signUp();
    const name = uniqueName('Acme');
    const response = await create(user.auth, { name, description: 'the first one', website_url: 'https://acme.example' });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json<OrganizationBody>();
    expect(body.id).toMatch(UUID_PATTERN);
    expect(body).toMatchObject({
      name,
      description: 'the first one',
      website_url: 'https://acme.example',
      repository: null,
      admin_emails: null,
      owner: user.id,
      // COMMUNITY, the default plan, answers as the reference plan billed like it (organizations.schemas.ts).
      plan: 'FREE',
      organization_plan: { plan: 'FREE' },
    });

    const member = await ctx()
      .database.db.selectFrom('members')
      .innerJoin('roles', 'roles.id', 'members.role_id')
      .select(['members.user_id', 'roles.name'])
      .where('members.organization_id', '=', body.id)
      .execute();
    expect(member).toEqual([{ user_id: user.id, name: 'OWNER' }]);

    const read = await get(user.auth, body.id);
    expect(read.statusCode).toBe(200);
    expect(read.json<OrganizationBody>()).toMatchObject({ id: body.id, name, owner: user.id, plan: 'FREE' });
  });

  it('createOrganization stores the name without surrounding white space', async () => {
    const user = await ctx().signUp();
    const name = uniqueName('Trimmed');
    const response = await create(user.auth, { name: `  ${name}\u00a0 ` });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json<OrganizationBody>().name).toBe(name);
  });

  it('createOrganization answers 409 for a taken name, whatever its case, surrounding white space or Unicode form', async () => {
    const first = await ctx().signUp();
    const second = await ctx().signUp();
    const name = uniqueName('Café');
    expect((await create(first.auth, { name })).statusCode).toBe(201);
    const before = await organizationRowCount(ctx());

    const variants = [name, name.toUpperCase(), name.toLowerCase(), `  ${name}  `, name.normalize('NFD')];
    for (const variant of variants) {
      for (const user of [first, second]) {
        const body = expectErrorBody(await create(user.auth, { name: variant }), 409);
        expect(body.error).toBe('Conflict');
      }
    }
    expect(await organizationRowCount(ctx())).toBe(before);
  });

  it('concurrent creates of one name: exactly one 201, the rest 409, and one row', async () => {
    const users = await Promise.all([ctx().signUp(), ctx().signUp(), ctx().signUp()]);
    const name = uniqueName('Race');
    const attempts = [name, name, name.toUpperCase(), ` ${name}`, name, name.toLowerCase()];
    const responses = await Promise.all(
      attempts.map((variant, index) => create((users[index % users.length] as TestUser).auth, { name: variant })),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409)) expectErrorBody(response, 409);

    const rows = await ctx()
      .database.db.selectFrom('organizations')
      .select(['id'])
      .where('name_key', '=', name.toLowerCase())
      .execute();
    expect(rows).toHaveLength(1);
    const winner = responses.find((response) => response.statusCode === 201);
    expect(rows[0]?.id).toBe(winner?.json<OrganizationBody>().id);
    // The losers left nothing behind: one set of roles, one member, one onboarding record.
    expect(await rowsBeneath(ctx(), rows[0]?.id as string)).toEqual({ projects: 0, api_tokens: 0, roles: 4, members: 1, onboarding: 1 });
  });

  it('listOrganization answers only the caller’s organizations', async () => {
    const first = await ctx().signUp();
    const second = await ctx().signUp();
    const a = await ctx().createOrganization(first);
    const b = await ctx().createOrganization(first);

    const firstList = await ctx().call(first.auth, { method: 'GET', url: '/organization' });
    expect(firstList.statusCode).toBe(200);
    const firstIds = firstList.json<{ results: OrganizationBody[] }>().results.map((organization) => organization.id);
    expect(firstIds.sort()).toEqual([a, b].sort());
    for (const organization of firstList.json<{ results: OrganizationBody[] }>().results) expect(organization.owner).toBe(first.id);

    const secondList = await ctx().call(second.auth, { method: 'GET', url: '/organization' });
    expect(secondList.statusCode).toBe(200);
    expect(secondList.json()).toEqual({ results: [] });

    const own = await ctx().createOrganization(second);
    const secondAgain = await ctx().call(second.auth, { method: 'GET', url: '/organization' });
    expect(secondAgain.json<{ results: OrganizationBody[] }>().results.map((organization) => organization.id)).toEqual([own]);
  });

  it('listOrganization with an API token answers the token’s organization only', async () => {
    const user = await ctx().signUp();
    const a = await ctx().createOrganization(user);
    await ctx().createOrganization(user);
    const token = await ctx().createApiToken(user.auth, a, { name: 'reader', scope: 'READ' });
    const response = await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' });
    expect(response.statusCode).toBe(200);
    expect(response.json<{ results: OrganizationBody[] }>().results.map((organization) => organization.id)).toEqual([a]);
  });

  it('getOrganization answers 404 for an organization the caller is not a member of and for an unknown id', async () => {
    const owner = await ctx().signUp();
    const outsider = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);

    const foreign = expectErrorBody(await get(outsider.auth, organizationId), 404);
    const unknownId = newId();
    const unknown = expectErrorBody(await get(outsider.auth, unknownId), 404);
    // An outsider cannot tell another tenant's organization from one that does not exist.
    expect(foreign.error).toBe('Not Found');
    expect(unknown.error).toBe('Not Found');
    expect(foreign.message.replace(organizationId, '<id>')).toBe(unknown.message.replace(unknownId, '<id>'));

    const token = await ctx().createApiToken(owner.auth, organizationId, { name: 'reader', scope: 'READ' });
    const other = await ctx().createOrganization(outsider);
    expectErrorBody(await get(`Token ${token}`, other), 404);
    expectErrorBody(await get(owner.auth, 'not-a-uuid'), 400);
  });

  it('editOrganization renames, keeps absent optional fields, clears fields sent as null', async () => {
    const user = await ctx().signUp();
    const created = await create(user.auth, {
      name: uniqueName('Edit'),
      description: 'kept',
      website_url: 'https://kept.example',
      repository: 'https://git.example/kept',
      admin_emails: ['ops@kept.example'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const organization = created.json<OrganizationBody>();

    const newName = uniqueName('Renamed');
    const renamed = await edit(user.auth, organization.id, { name: newName });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json<OrganizationBody>()).toMatchObject({
      id: organization.id,
      name: newName,
      description: 'kept',
      website_url: 'https://kept.example',
      repository: 'https://git.example/kept',
      admin_emails: ['ops@kept.example'],
      plan: 'FREE',
      owner: user.id,
    });

    const cleared = await edit(user.auth, organization.id, { name: newName, description: null, admin_emails: null, logo_url: 'https://kept.example/logo.png' });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json<OrganizationBody>()).toMatchObject({
      description: null,
      admin_emails: null,
      logo_url: 'https://kept.example/logo.png',
      website_url: 'https://kept.example',
    });

    const read = await get(user.auth, organization.id);
    expect(read.json<OrganizationBody>()).toMatchObject({ name: newName, description: null, logo_url: 'https://kept.example/logo.png' });
  });

  it('editOrganization accepts the organization’s own name in another case, and 409 for another organization’s name', async () => {
    const user = await ctx().signUp();
    const takenName = uniqueName('Taken');
    await ctx().createOrganization(user, takenName);
    const ownName = uniqueName('Own');
    const organizationId = await ctx().createOrganization(user, ownName);

    const recased = await edit(user.auth, organizationId, { name: ownName.toUpperCase() });
    expect(recased.statusCode, recased.body).toBe(200);
    expect(recased.json<OrganizationBody>().name).toBe(ownName.toUpperCase());

    for (const variant of [takenName, takenName.toLowerCase(), ` ${takenName.toUpperCase()} `]) {
      expectErrorBody(await edit(user.auth, organizationId, { name: variant }), 409);
    }
    expect((await get(user.auth, organizationId)).json<OrganizationBody>().name).toBe(ownName.toUpperCase());
  });

  it('editOrganization refuses a plan change with 400 and accepts the current plan sent back', async () => {
    const user = await ctx().signUp();
    const name = uniqueName('Plan');
    const organizationId = await ctx().createOrganization(user, name);

    const refused = expectErrorBody(await edit(user.auth, organizationId, { name, plan: 'ENTERPRISE' }), 400);
    expect(refused.details?.map((detail) => detail.field)).toContain('/plan');
    expect((await get(user.auth, organizationId)).json<OrganizationBody>().plan).toBe('FREE');

    // The plan as read (FREE) and its own code (COMMUNITY) are both the current plan.
    for (const plan of ['FREE', 'COMMUNITY']) {
      const same = await edit(user.auth, organizationId, { name, plan, description: `plan unchanged as ${plan}` });
      expect(same.statusCode, same.body).toBe(200);
      expect(same.json<OrganizationBody>()).toMatchObject({ plan: 'FREE', description: `plan unchanged as ${plan}` });
    }
    const row = await ctx().database.db.selectFrom('organizations').select('plan').where('id', '=', organizationId).executeTakeFirstOrThrow();
    expect(row.plan).toBe('COMMUNITY');
  });

  it('editOrganization needs the admin permission: 403 for a DEVELOPER, VIEWER or READ token, 404 for an outsider', async () => {
    const owner = await ctx().signUp();
    const developer = await ctx().signUp();
    const viewer = await ctx().signUp();
    const outsider = await ctx().signUp();
    const name = uniqueName('Guarded');
    const organizationId = await ctx().createOrganization(owner, name);
    await ctx().addMemberDirectly(organizationId, developer, 'DEVELOPER');
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    const readToken = await ctx().createApiToken(owner.auth, organizationId, { name: 'reader', scope: 'READ' });
    const writeToken = await ctx().createApiToken(owner.auth, organizationId, { name: 'writer', scope: 'WRITE' });
    const adminToken = await ctx().createApiToken(owner.auth, organizationId, { name: 'admin', scope: 'ADMIN' });

    for (const auth of [developer.auth, viewer.auth, `Token ${readToken}`, `Token ${writeToken}`]) {
      expectErrorBody(await edit(auth, organizationId, { name: `${name}-hijacked` }), 403);
      expectErrorBody(await ctx().call(auth, { method: 'DELETE', url: `/organization/${organizationId}` }), 403);
    }
    expectErrorBody(await edit(outsider.auth, organizationId, { name: `${name}-hijacked` }), 404);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'DELETE', url: `/organization/${organizationId}` }), 404);
    // Members can still read it.
    expect((await get(viewer.auth, organizationId)).json<OrganizationBody>().name).toBe(name);

    const byAdminToken = await edit(`Token ${adminToken}`, organizationId, { name: `${name}-by-token` });
    expect(byAdminToken.statusCode, byAdminToken.body).toBe(200);
    expect(byAdminToken.json<OrganizationBody>()).toMatchObject({ name: `${name}-by-token`, owner: owner.id });
  });

  it('editOrganization refuses bad input with 400 and changes nothing', async () => {
    const user = await ctx().signUp();
    const name = uniqueName('Strict');
    const organizationId = await ctx().createOrganization(user, name);
    const bad: unknown[] = [
      { name, unknown_field: 1 },
      { description: 'no name' },
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(256) },
      { name: 42 },
      { name, admin_emails: ['not an e-mail'] },
      { name, plan: 'NO_SUCH_PLAN' },
      { name, description: 7 },
    ];
    for (const payload of bad) {
      const body = expectErrorBody(await edit(user.auth, organizationId, payload), 400);
      expect(body.error).toBe('Bad Request');
    }
    const row = await ctx().database.db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name, description: null, admin_emails: null });
  });

  it('deleteOrganization removes its projects, API tokens, roles, members and onboarding; its token stops working', async () => {
    const owner = await ctx().signUp();
    const member = await ctx().signUp();
    const keptId = await ctx().createOrganization(owner);
    const organizationId = await ctx().createOrganization(owner);
    await ctx().addMemberDirectly(organizationId, member, 'DEVELOPER');
    const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'api' } });
    expect(project.statusCode, project.body).toBe(200);
    const token = await ctx().createApiToken(owner.auth, organizationId, { name: 'ci', scope: 'ADMIN' });
    expect((await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' })).statusCode).toBe(200);
    expect(await rowsBeneath(ctx(), organizationId)).toEqual({ projects: 1, api_tokens: 1, roles: 4, members: 2, onboarding: 1 });
    const keptBefore = await rowsBeneath(ctx(), keptId);

    const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(deleted.body).toBe('');

    // At once, every way in is gone; the row and what hangs only on it go with the purge job (nothing to tear down here).
    expect(await rowsBeneath(ctx(), organizationId)).toMatchObject({ projects: 0, api_tokens: 0, members: 0 });
    await ctx().organizationPurged(organizationId);
    expect(await rowsBeneath(ctx(), organizationId)).toEqual({ projects: 0, api_tokens: 0, roles: 0, members: 0, onboarding: 0 });
    // The people stay; the other organization is untouched.
    const people = await ctx().database.db.selectFrom('users').select('id').where('id', 'in', [owner.id, member.id]).execute();
    expect(people).toHaveLength(2);
    expect(await rowsBeneath(ctx(), keptId)).toEqual(keptBefore);

    const refused = expectErrorBody(await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' }), 401);
    expect(refused.error).toBe('Unauthorized');
    expectErrorBody(await get(owner.auth, organizationId), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}` }), 404);
    const list = await ctx().call(owner.auth, { method: 'GET', url: '/organization' });
    expect(list.json<{ results: OrganizationBody[] }>().results.map((organization) => organization.id)).toEqual([keptId]);
  });

  it('deleteOrganization by an ADMIN API token of the organization', async () => {
    const owner = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    const token = await ctx().createApiToken(owner.auth, organizationId, { name: 'admin', scope: 'ADMIN' });
    const deleted = await ctx().call(`Token ${token}`, { method: 'DELETE', url: `/organization/${organizationId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    await ctx().organizationPurged(organizationId);
    expect(await rowsBeneath(ctx(), organizationId)).toEqual({ projects: 0, api_tokens: 0, roles: 0, members: 0, onboarding: 0 });
  });

  it('purges a deleted organization whose teardowns no agent takes once its patience ran out, withdrawing them', async () => {
    const { organizationId } = await ctx().signUpWithOrganization();
    const db = ctx().database.db;
    // A teardown nobody carries out (a kind no worker handles), of a service the organization had.
    const serviceId = newId();
    const teardownId = await enqueueJob(db, ctx().clock, { kind: 'test.unhandled', payload: {}, serialKey: `service:${serviceId}` });
    const purge = createOrganizationPurgeHandler({ db, clock: ctx().clock, patienceMs: 60 * 60_000, recheckMs: 5_000 });
    const job = (deletedAt: Date) => ({
      id: newId(),
      kind: ORGANIZATION_PURGE_JOB,
      payload: { organizationId, serviceIds: [serviceId], deletedAt: deletedAt.toISOString() },
      serialKey: `organization:${organizationId}`,
      attempt: 1,
      maxAttempts: 5,
    });
    const now = ctx().clock.now();
    // Within its patience it waits.
    const waiting = await purge.run(job(now));
    expect(waiting).toEqual({ deferUntil: expect.any(Date) });
    const lookAgain = (waiting as { deferUntil: Date }).deferUntil.getTime() - now.getTime();
    expect(lookAgain).toBeGreaterThanOrEqual(5_000);
    expect(lookAgain).toBeLessThan(60_000);
    expect(await db.selectFrom('organizations').select('id').where('id', '=', organizationId).execute()).toHaveLength(1);
    // An hour later it withdraws the teardown and purges.
    expect(await purge.run(job(new Date(now.getTime() - 61 * 60_000)))).toBeUndefined();
    expect(await db.selectFrom('organizations').select('id').where('id', '=', organizationId).execute()).toEqual([]);
    expect((await findJob(db, teardownId))?.status).toBe('CANCELLED');
    // A purge that finds the row gone (run twice after a crash) is done.
    expect(await purge.run(job(now))).toBeUndefined();
    // A payload that is not a purge's fails the job instead of deleting anything.
    await expect(purge.run({ ...job(now), payload: { organizationId } })).rejects.toThrow();
  });

  it('an ADMIN API token creates an organization owned by the token’s creator; a READ token gets 403', async () => {
    const owner = await ctx().signUp();
    const home = await ctx().createOrganization(owner);
    const adminToken = await ctx().createApiToken(owner.auth, home, { name: 'automation', scope: 'ADMIN' });
    const readToken = await ctx().createApiToken(owner.auth, home, { name: 'reader', scope: 'READ' });

    const name = uniqueName('ByToken');
    const created = await create(`Token ${adminToken}`, { name });
    expect(created.statusCode, created.body).toBe(201);
    const organization = created.json<OrganizationBody>();
    expect(organization).toMatchObject({ name, owner: owner.id });

    const ownerRole = await ctx()
      .database.db.selectFrom('members')
      .innerJoin('roles', 'roles.id', 'members.role_id')
      .select(['members.user_id', 'roles.name'])
      .where('members.organization_id', '=', organization.id)
      .execute();
    expect(ownerRole).toEqual([{ user_id: owner.id, name: 'OWNER' }]);
    const read = await get(owner.auth, organization.id);
    expect(read.statusCode).toBe(200);
    expect(read.json<OrganizationBody>().owner).toBe(owner.id);

    const before = await organizationRowCount(ctx());
    const refused = expectErrorBody(await create(`Token ${readToken}`, { name: uniqueName('ByReader') }), 403);
    expect(refused.error).toBe('Forbidden');
    expect(await organizationRowCount(ctx())).toBe(before);
  });

  it('createOrganization refuses bad input with 400 and the error body, and writes nothing', async () => {
    const user = await ctx().signUp();
    const before = await organizationRowCount(ctx());
    const bad: { payload: unknown; field?: string }[] = [
      { payload: { name: uniqueName('ok'), unknown_field: true }, field: '/unknown_field' },
      { payload: { name: '' }, field: '/name' },
      { payload: { name: '   ' }, field: '/name' },
      { payload: { name: 'n'.repeat(256) }, field: '/name' },
      { payload: { name: 12 }, field: '/name' },
      { payload: { name: null }, field: '/name' },
      { payload: { name: ['a'] }, field: '/name' },
      { payload: {}, field: '/name' },
      { payload: { name: uniqueName('ok'), plan: 'GOLD' }, field: '/plan' },
      { payload: { name: uniqueName('ok'), admin_emails: 'ops@example.com' }, field: '/admin_emails' },
      { payload: { name: uniqueName('ok'), admin_emails: ['nope'] } },
      { payload: { name: uniqueName('ok'), description: { text: 'x' } }, field: '/description' },
      { payload: { name: uniqueName('ok'), website_url: 'u'.repeat(2049) }, field: '/website_url' },
      { payload: [{ name: uniqueName('ok') }] },
    ];
    for (const { payload, field } of bad) {
      const body = expectErrorBody(await create(user.auth, payload), 400);
      expect(body.error).toBe('Bad Request');
      if (field !== undefined) expect(body.details?.map((detail) => detail.field), JSON.stringify(payload)).toContain(field);
    }

    const malformed = await ctx().call(user.auth, {
      method: 'POST',
      url: '/organization',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "half',
    });
    expectErrorBody(malformed, 400);
    const empty = await ctx().call(user.auth, { method: 'POST', url: '/organization', headers: { 'content-type': 'application/json' }, payload: '' });
    expectErrorBody(empty, 400);

    expect(await organizationRowCount(ctx())).toBe(before);
  });

  it('NUL and control characters are refused with 400 on every database (PostgreSQL text cannot hold NUL)', async () => {
    const user = await ctx().signUp();
    const name = uniqueName('Controlled');
    const organizationId = await ctx().createOrganization(user, name);
    const before = await organizationRowCount(ctx());
    const bad: { payload: Record<string, unknown>; field: string }[] = [
      { payload: { name: `nul\u0000${uniqueName('name')}` }, field: '/name' },
      { payload: { name: `line\n${uniqueName('name')}` }, field: '/name' },
      { payload: { name: `tab\t${uniqueName('name')}` }, field: '/name' },
      { payload: { name: `${uniqueName('name')}\u007f` }, field: '/name' },
      { payload: { name: uniqueName('nul-description'), description: 'a\u0000b' }, field: '/description' },
      { payload: { name: uniqueName('nul-url'), website_url: 'https://a.example/\u0000' }, field: '/website_url' },
      { payload: { name: uniqueName('nul-email'), admin_emails: ['ops\u0000@example.com'] }, field: '/admin_emails/0' },
    ];
    for (const { payload, field } of bad) {
      const created = expectErrorBody(await create(user.auth, payload), 400);
      expect(created.details?.map((detail) => detail.field), JSON.stringify(payload)).toContain(field);
      const edited = expectErrorBody(await edit(user.auth, organizationId, { name, ...payload }), 400);
      expect(edited.details?.map((detail) => detail.field), JSON.stringify(payload)).toContain(field);
    }
    expect(await organizationRowCount(ctx())).toBe(before);
    const row = await ctx().database.db.selectFrom('organizations').selectAll().where('id', '=', organizationId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name, description: null, website_url: null, admin_emails: null });
    // A multi-line description is fine: only NUL is refused there.
    const multiLine = await edit(user.auth, organizationId, { name, description: 'first line\nsecond line\twith a tab' });
    expect(multiLine.statusCode, multiLine.body).toBe(200);
    expect(multiLine.json<OrganizationBody>().description).toBe('first line\nsecond line\twith a tab');
  });
});

describeEachDatabase('organization roles', (ctx) => {
  it('listOrganizationAvailableRoles answers OWNER, ADMIN, DEVELOPER and VIEWER with their uuids', async () => {
    const owner = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    const response = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/availableRole` });
    expect(response.statusCode, response.body).toBe(200);
    const roles = response.json<{ results: { id: string; name: string }[] }>().results;
    expect(roles.map((role) => role.name).sort()).toEqual(['ADMIN', 'DEVELOPER', 'OWNER', 'VIEWER']);
    for (const role of roles) expect(role.id).toMatch(UUID_PATTERN);

    const rows = await ctx().database.db.selectFrom('roles').select(['id', 'name']).where('organization_id', '=', organizationId).execute();
    expect(roles.map((role) => ({ id: role.id, name: role.name })).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      rows.map((row) => ({ id: row.id, name: row.name })).sort((a, b) => a.id.localeCompare(b.id)),
    );

    // Each organization has its own role rows.
    const otherId = await ctx().createOrganization(owner);
    const other = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${otherId}/availableRole` });
    const otherIds = other.json<{ results: { id: string }[] }>().results.map((role) => role.id);
    expect(otherIds).toHaveLength(4);
    for (const id of otherIds) expect(roles.map((role) => role.id)).not.toContain(id);
  });

  it('listOrganizationAvailableRoles: a VIEWER and a READ token may read it, an outsider gets 404', async () => {
    const owner = await ctx().signUp();
    const viewer = await ctx().signUp();
    const outsider = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    const token = await ctx().createApiToken(owner.auth, organizationId, { name: 'reader', scope: 'READ' });
    const url = `/organization/${organizationId}/availableRole`;
    for (const auth of [viewer.auth, `Token ${token}`]) {
      const response = await ctx().call(auth, { method: 'GET', url });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<{ results: unknown[] }>().results).toHaveLength(4);
    }
    expectErrorBody(await ctx().call(outsider.auth, { method: 'GET', url }), 404);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'GET', url: `/organization/${newId()}/availableRole` }), 404);
  });
});

describeEachDatabase('organization onboarding', (ctx) => {
  const read = (auth: string, organizationId: string) => ctx().call(auth, { method: 'GET', url: `/organization/${organizationId}/onboarding` });
  const update = (auth: string, organizationId: string, payload: unknown) =>
    ctx().call(auth, { method: 'POST', url: `/organization/${organizationId}/onboarding`, payload: payload as object });
  const storedStatus = async (organizationId: string, userId: string) =>
    (
      await ctx()
        .database.db.selectFrom('onboarding')
        .select('status')
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
    )?.status;

  it('getOrganizationOnboarding answers the caller’s record, IN_PROGRESS after creating the organization', async () => {
    const owner = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    const response = await read(owner.auth, organizationId);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ use_cases: null, status: 'IN_PROGRESS' });
  });

  it('keeps the use cases chosen when the organization was signed up on the owner’s record, shown to members too', async () => {
    const owner = await ctx().signUp();
    const member = await ctx().signUp();
    const created = await ctx().call(owner.auth, {
      method: 'POST',
      url: '/organization',
      payload: { name: uniqueName('with-use-cases'), use_cases: 'web applications, preview environments' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const organizationId = created.json<{ id: string }>().id;
    await ctx().addMemberDirectly(organizationId, member, 'VIEWER');
    expect((await read(owner.auth, organizationId)).json()).toEqual({ use_cases: 'web applications, preview environments', status: 'IN_PROGRESS' });
    expect((await read(member.auth, organizationId)).json()).toEqual({ use_cases: 'web applications, preview environments', status: 'IN_PROGRESS' });
    // Use cases are chosen once, at sign-up: editing the organization does not take them.
    const edited = await ctx().call(owner.auth, { method: 'PUT', url: `/organization/${organizationId}`, payload: { name: 'x', use_cases: 'other' } });
    expect(edited.statusCode).toBe(400);
  });

  it('updateOrganizationOnboarding changes only the caller’s own record', async () => {
    const owner = await ctx().signUp();
    const member = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    await ctx().addMemberDirectly(organizationId, member, 'DEVELOPER');

    const completed = await update(owner.auth, organizationId, { status: 'COMPLETED' });
    expect(completed.statusCode, completed.body).toBe(200);
    expect(completed.json()).toEqual({ use_cases: null, status: 'COMPLETED' });
    expect(await storedStatus(organizationId, owner.id)).toBe('COMPLETED');

    // The member has not onboarded: the owner's progress is not theirs.
    expect((await read(member.auth, organizationId)).json()).toMatchObject({ status: 'IN_PROGRESS' });

    const dismissed = await update(member.auth, organizationId, { status: 'DISMISSED' });
    expect(dismissed.statusCode, dismissed.body).toBe(200);
    expect(dismissed.json()).toMatchObject({ status: 'DISMISSED' });

    expect(await storedStatus(organizationId, owner.id)).toBe('COMPLETED');
    expect(await storedStatus(organizationId, member.id)).toBe('DISMISSED');
    expect((await read(owner.auth, organizationId)).json()).toMatchObject({ status: 'COMPLETED' });
    expect((await read(member.auth, organizationId)).json()).toMatchObject({ status: 'DISMISSED' });

    const back = await update(owner.auth, organizationId, { status: 'IN_PROGRESS' });
    expect(back.json()).toMatchObject({ status: 'IN_PROGRESS' });
    expect(await storedStatus(organizationId, member.id)).toBe('DISMISSED');
    const rows = await ctx().database.db.selectFrom('onboarding').select('user_id').where('organization_id', '=', organizationId).execute();
    expect(rows.map((row) => row.user_id).sort()).toEqual([owner.id, member.id].sort());
  });

  it('the use cases chosen at sign-up are shown to every member and kept when the status changes', async () => {
    const owner = await ctx().signUp();
    const member = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    await ctx().addMemberDirectly(organizationId, member, 'VIEWER');
    await ctx()
      .database.db.updateTable('onboarding')
      .set({ use_cases: 'deploy web apps' })
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', owner.id)
      .execute();

    expect((await read(owner.auth, organizationId)).json()).toEqual({ use_cases: 'deploy web apps', status: 'IN_PROGRESS' });
    expect((await update(owner.auth, organizationId, { status: 'COMPLETED' })).json()).toEqual({ use_cases: 'deploy web apps', status: 'COMPLETED' });
    expect((await read(member.auth, organizationId)).json()).toEqual({ use_cases: 'deploy web apps', status: 'IN_PROGRESS' });
    expect((await update(member.auth, organizationId, { status: 'DISMISSED' })).json()).toEqual({ use_cases: 'deploy web apps', status: 'DISMISSED' });
    expect((await read(member.auth, organizationId)).json()).toEqual({ use_cases: 'deploy web apps', status: 'DISMISSED' });
  });

  it('API tokens may read the onboarding status but get 403 on update', async () => {
    const owner = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    for (const scope of ['ADMIN', 'READ']) {
      const token = await ctx().createApiToken(owner.auth, organizationId, { name: `onboarding-${scope}`, scope });
      const readByToken = await read(`Token ${token}`, organizationId);
      expect(readByToken.statusCode, readByToken.body).toBe(200);
      expect(readByToken.json()).toEqual({ use_cases: null, status: 'IN_PROGRESS' });
      const refused = expectErrorBody(await update(`Token ${token}`, organizationId, { status: 'COMPLETED' }), 403);
      expect(refused.error).toBe('Forbidden');
    }
    expect(await storedStatus(organizationId, owner.id)).toBe('IN_PROGRESS');
    const rows = await ctx().database.db.selectFrom('onboarding').select('user_id').where('organization_id', '=', organizationId).execute();
    expect(rows).toHaveLength(1);
  });

  it('onboarding answers 404 to outsiders and 400 to invalid statuses, writing nothing', async () => {
    const owner = await ctx().signUp();
    const outsider = await ctx().signUp();
    const organizationId = await ctx().createOrganization(owner);
    expectErrorBody(await read(outsider.auth, organizationId), 404);
    expectErrorBody(await update(outsider.auth, organizationId, { status: 'COMPLETED' }), 404);
    expectErrorBody(await read(owner.auth, newId()), 404);

    for (const payload of [{ status: 'DONE' }, { status: 'completed' }, { status: null }, { status: 1 }, {}, { status: 'COMPLETED', extra: true }, []]) {
      const body = expectErrorBody(await update(owner.auth, organizationId, payload), 400);
      expect(body.error).toBe('Bad Request');
    }
    const malformed = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/onboarding`,
      headers: { 'content-type': 'application/json' },
      payload: '{"status":',
    });
    expectErrorBody(malformed, 400);
    expect(await storedStatus(organizationId, owner.id)).toBe('IN_PROGRESS');
    expect(await storedStatus(organizationId, outsider.id)).toBeUndefined();
  });
});
