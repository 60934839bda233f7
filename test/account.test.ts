import { expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * The signed-in person's own account (docs/service-extras.md "Account"): the profile their identity provider states,
 * the communication e-mail they set (their identity's until then), validated; tokens have no account.
 */
describeEachDatabase('account', (ctx) => {
  it("answers the person's profile and keeps the communication e-mail they set", async () => {
    const name = uniqueName('ada');
    const person = await ctx().signUp(name);
    const first = await ctx().call(person.auth, { method: 'GET', url: '/account' });
    expect(first.statusCode, first.body).toBe(200);
    const account = first.json<Record<string, string>>();
    expect(account).toMatchObject({ id: person.id, nickname: name, first_name: name, communication_email: `${name}@example.com` });
    expect(account.last_name).toBeUndefined();
    expect(Number.isNaN(Date.parse(account.created_at ?? ''))).toBe(false);

    const edited = await ctx().call(person.auth, { method: 'PUT', url: '/account', payload: { communication_email: 'Ada.Work@Example.org' } });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({ id: person.id, communication_email: 'ada.work@example.org' });
    const again = await ctx().call(person.auth, { method: 'PUT', url: '/account', payload: { communication_email: 'ada@example.net' } });
    expect(again.json()).toMatchObject({ communication_email: 'ada@example.net' });
    expect((await ctx().call(person.auth, { method: 'GET', url: '/account' })).json()).toMatchObject({ communication_email: 'ada@example.net' });

    // Someone else's account is their own.
    const other = await ctx().signUp();
    expect((await ctx().call(other.auth, { method: 'GET', url: '/account' })).json()).toMatchObject({ id: other.id, communication_email: other.email });
  });

  it('refuses what is not an e-mail address, unknown fields, tokens and anonymous callers', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    for (const payload of [{ communication_email: 'not-an-email' }, { communication_email: '' }, {}, { communication_email: 'a@example.com', nickname: 'x' }]) {
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: '/account', payload }), 400);
    }
    const token = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('token'), scope: 'ADMIN' })}`;
    expectErrorBody(await ctx().call(token, { method: 'GET', url: '/account' }), 403);
    expectErrorBody(await ctx().call(token, { method: 'PUT', url: '/account', payload: { communication_email: 'a@example.com' } }), 403);
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url: '/account' }), 401);
  });
});
