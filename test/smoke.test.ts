import { expect, it } from 'vitest';
import { describeEachDatabase } from './support/test-app.ts';

describeEachDatabase('harness', (ctx) => {
  it('signs a user up and creates an organization they own', async () => {
    const user = await ctx().signUp();
    const organizationId = await ctx().createOrganization(user);
    const response = await ctx().call(user.auth, { method: 'GET', url: `/organization/${organizationId}` });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ id: organizationId, owner: user.id });
  });
});
