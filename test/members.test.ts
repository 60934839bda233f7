import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Members of an organization: listing, role changes, removal and ownership transfer, with the rules of DESIGN.md §6
 * (exactly one OWNER, who is neither removed nor demoted except by transfer; nobody grants a role above their own).
 * People become members the real way: invited by e-mail and accepting with their own signed-in identity.
 */

type RoleName = 'OWNER' | 'ADMIN' | 'DEVELOPER' | 'VIEWER';

interface MemberBody {
  id: string;
  created_at: string;
  updated_at?: string;
  name?: string;
  email: string;
  role: string;
  role_name: string;
  role_id: string;
}

interface Organization {
  id: string;
  owner: TestUser;
  roleIds: Record<RoleName, string>;
}

async function roleIdsOf(testApp: TestApp, auth: string, organizationId: string): Promise<Record<RoleName, string>> {
  const response = await testApp.call(auth, { method: 'GET', url: `/organization/${organizationId}/availableRole` });
  expect(response.statusCode, response.body).toBe(200);
  const roles = response.json<{ results: { id: string; name: RoleName }[] }>().results;
  return Object.fromEntries(roles.map((role) => [role.name, role.id])) as Record<RoleName, string>;
}

async function newOrganization(testApp: TestApp): Promise<Organization> {
  const owner = await testApp.signUp();
  const id = await testApp.createOrganization(owner);
  return { id, owner, roleIds: await roleIdsOf(testApp, owner.auth, id) };
}

/** Invites a newly signed-up person with `role` as `inviterAuth` and has them accept. */
async function addMember(testApp: TestApp, organization: Organization, role: RoleName, inviterAuth = organization.owner.auth): Promise<TestUser> {
  const person = await testApp.signUp();
  const invitation = await testApp.call(inviterAuth, {
    method: 'POST',
    url: `/organization/${organization.id}/inviteMember`,
    payload: { email: person.email, role_id: organization.roleIds[role] },
  });
  expect(invitation.statusCode, invitation.body).toBe(201);
  const accepted = await testApp.call(person.auth, {
    method: 'POST',
    url: `/organization/${organization.id}/inviteMember/${invitation.json<{ id: string }>().id}`,
  });
  expect(accepted.statusCode, accepted.body).toBe(201);
  return person;
}

async function members(testApp: TestApp, auth: string, organizationId: string): Promise<MemberBody[]> {
  const response = await testApp.call(auth, { method: 'GET', url: `/organization/${organizationId}/member` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: MemberBody[] }>().results;
}

function roleOf(list: MemberBody[], userId: string): string | undefined {
  return list.find((member) => member.id === userId)?.role_name;
}

describeEachDatabase('members', (ctx) => {
  it('lists every member with their role, name, e-mail and membership time, to every role of the organization', async () => {
    const organization = await newOrganization(ctx());
    const developer = await addMember(ctx(), organization, 'DEVELOPER');
    const viewer = await addMember(ctx(), organization, 'VIEWER');

    const list = await members(ctx(), viewer.auth, organization.id);
    expect(list).toHaveLength(3);
    const owner = list.find((member) => member.id === organization.owner.id);
    expect(owner).toMatchObject({
      email: organization.owner.email,
      role: 'OWNER',
      role_name: 'OWNER',
      role_id: organization.roleIds.OWNER,
    });
    expect(owner?.name).toBe(organization.owner.email.replace('@example.com', ''));
    expect(owner?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(list.find((member) => member.id === developer.id)).toMatchObject({ email: developer.email, role: 'DEVELOPER', role_id: organization.roleIds.DEVELOPER });
    expect(roleOf(list, viewer.id)).toBe('VIEWER');
    // Another organization's members stay out of the listing.
    const other = await newOrganization(ctx());
    expect((await members(ctx(), other.owner.auth, other.id)).map((member) => member.id)).toEqual([other.owner.id]);
  });

  it('changes a role with 200 and no body, and the new role is what the member can then do', async () => {
    const organization = await newOrganization(ctx());
    const member = await addMember(ctx(), organization, 'DEVELOPER');
    const created = await ctx().call(member.auth, { method: 'POST', url: `/organization/${organization.id}/project`, payload: { name: uniqueName('p') } });
    expect(created.statusCode).toBe(200);

    const changed = await ctx().call(organization.owner.auth, {
      method: 'PUT',
      url: `/organization/${organization.id}/member`,
      payload: { user_id: member.id, role_id: organization.roleIds.VIEWER },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.body).toBe('');
    expect(roleOf(await members(ctx(), organization.owner.auth, organization.id), member.id)).toBe('VIEWER');
    const refused = await ctx().call(member.auth, { method: 'POST', url: `/organization/${organization.id}/project`, payload: { name: uniqueName('p') } });
    expectErrorBody(refused, 403);
  });

  it('refuses bad role changes with a 4xx error body and changes nothing', async () => {
    const organization = await newOrganization(ctx());
    const admin = await addMember(ctx(), organization, 'ADMIN');
    const developer = await addMember(ctx(), organization, 'DEVELOPER');
    const stranger = await ctx().signUp();
    const other = await newOrganization(ctx());
    const before = await members(ctx(), organization.owner.auth, organization.id);
    const put = (auth: string, payload: Record<string, unknown>) =>
      ctx().call(auth, { method: 'PUT', url: `/organization/${organization.id}/member`, payload });

    // Unknown role ids: random, and a role of another organization.
    expectErrorBody(await put(organization.owner.auth, { user_id: developer.id, role_id: randomUUID() }), 400);
    expectErrorBody(await put(organization.owner.auth, { user_id: developer.id, role_id: other.roleIds.ADMIN }), 400);
    // Malformed and missing fields, unknown fields.
    expectErrorBody(await put(organization.owner.auth, { user_id: 'not-a-uuid', role_id: organization.roleIds.VIEWER }), 400);
    expectErrorBody(await put(organization.owner.auth, { user_id: developer.id }), 400);
    expectErrorBody(await put(organization.owner.auth, { user_id: developer.id, role_id: organization.roleIds.VIEWER, admin: true }), 400);
    // A user who is not a member (signed up, or not existing at all).
    expectErrorBody(await put(organization.owner.auth, { user_id: stranger.id, role_id: organization.roleIds.VIEWER }), 404);
    expectErrorBody(await put(organization.owner.auth, { user_id: randomUUID(), role_id: organization.roleIds.VIEWER }), 404);
    // The OWNER role is given only by transfer, and the OWNER is demoted only by transfer.
    expectErrorBody(await put(organization.owner.auth, { user_id: developer.id, role_id: organization.roleIds.OWNER }), 400);
    expectErrorBody(await put(organization.owner.auth, { user_id: organization.owner.id, role_id: organization.roleIds.ADMIN }), 403);
    // An ADMIN grants no role above their own and cannot touch the OWNER.
    expectErrorBody(await put(admin.auth, { user_id: developer.id, role_id: organization.roleIds.OWNER }), 403);
    expectErrorBody(await put(admin.auth, { user_id: organization.owner.id, role_id: organization.roleIds.VIEWER }), 403);
    // A DEVELOPER changes no roles at all, not even their own.
    expectErrorBody(await put(developer.auth, { user_id: developer.id, role_id: organization.roleIds.ADMIN }), 403);

    expect(await members(ctx(), organization.owner.auth, organization.id)).toEqual(before);
  });

  it('lets an ADMIN grant roles up to ADMIN, and an ADMIN API token likewise but never OWNER', async () => {
    const organization = await newOrganization(ctx());
    const admin = await addMember(ctx(), organization, 'ADMIN');
    const viewer = await addMember(ctx(), organization, 'VIEWER');
    const promoted = await ctx().call(admin.auth, {
      method: 'PUT',
      url: `/organization/${organization.id}/member`,
      payload: { user_id: viewer.id, role_id: organization.roleIds.ADMIN },
    });
    expect(promoted.statusCode, promoted.body).toBe(200);
    const token = await ctx().createApiToken(organization.owner.auth, organization.id, { name: uniqueName('admin-token'), scope: 'ADMIN' });
    const demoted = await ctx().call(`Bearer ${token}`, {
      method: 'PUT',
      url: `/organization/${organization.id}/member`,
      payload: { user_id: viewer.id, role_id: organization.roleIds.DEVELOPER },
    });
    expect(demoted.statusCode, demoted.body).toBe(200);
    expectErrorBody(
      await ctx().call(`Bearer ${token}`, {
        method: 'PUT',
        url: `/organization/${organization.id}/member`,
        payload: { user_id: viewer.id, role_id: organization.roleIds.OWNER },
      }),
      403,
    );
    const writeToken = await ctx().createApiToken(organization.owner.auth, organization.id, { name: uniqueName('write-token'), scope: 'WRITE' });
    expectErrorBody(
      await ctx().call(`Bearer ${writeToken}`, {
        method: 'PUT',
        url: `/organization/${organization.id}/member`,
        payload: { user_id: viewer.id, role_id: organization.roleIds.VIEWER },
      }),
      403,
    );
    expect(roleOf(await members(ctx(), organization.owner.auth, organization.id), viewer.id)).toBe('DEVELOPER');
  });

  it('removes a member with 204 (who then cannot see the organization) but never the OWNER', async () => {
    const organization = await newOrganization(ctx());
    const admin = await addMember(ctx(), organization, 'ADMIN');
    const developer = await addMember(ctx(), organization, 'DEVELOPER');
    const stranger = await ctx().signUp();
    const remove = (auth: string, payload?: Record<string, unknown>) =>
      ctx().call(auth, { method: 'DELETE', url: `/organization/${organization.id}/member`, ...(payload === undefined ? {} : { payload }) });

    expectErrorBody(await remove(admin.auth, { user_id: organization.owner.id }), 403);
    expectErrorBody(await remove(organization.owner.auth, { user_id: organization.owner.id }), 403);
    expectErrorBody(await remove(organization.owner.auth, { user_id: stranger.id }), 404);
    expectErrorBody(await remove(organization.owner.auth, { user_id: 'nobody' }), 400);
    expectErrorBody(await remove(organization.owner.auth), 400);
    expectErrorBody(await remove(developer.auth, { user_id: admin.id }), 403);
    expect(await members(ctx(), organization.owner.auth, organization.id)).toHaveLength(3);

    const removed = await remove(admin.auth, { user_id: developer.id });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(removed.body).toBe('');
    expect((await members(ctx(), organization.owner.auth, organization.id)).map((member) => member.id).sort()).toEqual([organization.owner.id, admin.id].sort());
    expectErrorBody(await ctx().call(developer.auth, { method: 'GET', url: `/organization/${organization.id}` }), 404);
    expectErrorBody(await remove(admin.auth, { user_id: developer.id }), 404);
  });

  it('transfers ownership to a member: they become OWNER, the old owner ADMIN, in one step', async () => {
    const organization = await newOrganization(ctx());
    const admin = await addMember(ctx(), organization, 'ADMIN');
    const developer = await addMember(ctx(), organization, 'DEVELOPER');
    const transfer = (auth: string, userId: string) =>
      ctx().call(auth, { method: 'POST', url: `/organization/${organization.id}/transferOwnership`, payload: { user_id: userId } });

    const done = await transfer(organization.owner.auth, developer.id);
    expect(done.statusCode, done.body).toBe(204);
    const list = await members(ctx(), developer.auth, organization.id);
    expect(roleOf(list, developer.id)).toBe('OWNER');
    expect(roleOf(list, organization.owner.id)).toBe('ADMIN');
    expect(roleOf(list, admin.id)).toBe('ADMIN');
    expect(list.filter((member) => member.role_name === 'OWNER')).toHaveLength(1);
    // The organization's own view names the new owner.
    const shown = await ctx().call(admin.auth, { method: 'GET', url: `/organization/${organization.id}` });
    expect(shown.statusCode).toBe(200);
    // The old owner is an ADMIN now: no more transfers, and the new OWNER can change their role like anyone's.
    expectErrorBody(await transfer(organization.owner.auth, admin.id), 403);
    const demoted = await ctx().call(developer.auth, {
      method: 'PUT',
      url: `/organization/${organization.id}/member`,
      payload: { user_id: organization.owner.id, role_id: organization.roleIds.VIEWER },
    });
    expect(demoted.statusCode, demoted.body).toBe(200);
  });

  it('refuses transfers by anyone but the OWNER and to anyone but another member, changing nothing', async () => {
    const organization = await newOrganization(ctx());
    const admin = await addMember(ctx(), organization, 'ADMIN');
    const stranger = await ctx().signUp();
    const token = await ctx().createApiToken(organization.owner.auth, organization.id, { name: uniqueName('admin-token'), scope: 'ADMIN' });
    const transfer = (auth: string, payload: Record<string, unknown>) =>
      ctx().call(auth, { method: 'POST', url: `/organization/${organization.id}/transferOwnership`, payload });
    const before = await members(ctx(), organization.owner.auth, organization.id);

    expectErrorBody(await transfer(admin.auth, { user_id: admin.id }), 403);
    expectErrorBody(await transfer(`Bearer ${token}`, { user_id: admin.id }), 403);
    expectErrorBody(await transfer(stranger.auth, { user_id: stranger.id }), 404);
    expectErrorBody(await transfer(organization.owner.auth, { user_id: stranger.id }), 404);
    expectErrorBody(await transfer(organization.owner.auth, { user_id: randomUUID() }), 404);
    expectErrorBody(await transfer(organization.owner.auth, { user_id: organization.owner.id }), 400);
    expectErrorBody(await transfer(organization.owner.auth, { user_id: 'someone' }), 400);
    expectErrorBody(await transfer(organization.owner.auth, {}), 400);

    expect(await members(ctx(), organization.owner.auth, organization.id)).toEqual(before);
  });

  it('keeps exactly one OWNER when the owner starts two transfers at once', async () => {
    const organization = await newOrganization(ctx());
    const first = await addMember(ctx(), organization, 'ADMIN');
    const second = await addMember(ctx(), organization, 'DEVELOPER');
    const answers = await Promise.all(
      [first, second].map((member) =>
        ctx().call(organization.owner.auth, {
          method: 'POST',
          url: `/organization/${organization.id}/transferOwnership`,
          payload: { user_id: member.id },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses[0]).toBe(204);
    expect(statuses[1]).toBeGreaterThanOrEqual(400);
    expect(statuses[1]).toBeLessThan(500);
    const list = await members(ctx(), first.auth, organization.id);
    expect(list.filter((member) => member.role_name === 'OWNER')).toHaveLength(1);
    expect(roleOf(list, organization.owner.id)).toBe('ADMIN');
  });
});
