import { expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Azure credentials (issue 24): the reference's five operations under /organization/{id}/azure/credentials, with the
 * AzureStaticClusterCredentials answer; Slipway's optional app registration and its client secret, sealed and never
 * answered; providers and organizations kept apart; deletion refused while a cluster runs on them.
 */

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const SUBSCRIPTION = '0b1f6471-1bf0-4dda-aec3-cb9272f09590';
const APPLICATION = 'a1b2c3d4-0000-4000-8000-00000000abcd';
const APPLICATION_OBJECT = 'b2c3d4e5-0000-4000-8000-00000000dcba';

describeEachDatabase('Azure credentials', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  const url = (id?: string) => `/organization/${organizationId}/azure/credentials${id === undefined ? '' : `/${id}`}`;

  it('sets up an owner and an organization', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
  });

  it('creates with the reference\'s three fields, lists, reads, edits with an app registration whose secret is sealed, and deletes', async () => {
    const name = uniqueName('azure');
    const created = await ctx().call(owner.auth, { method: 'POST', url: url(), payload: { name, azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT.toUpperCase() } });
    expect(created.statusCode, created.body).toBe(201);
    const view = created.json<{ id: string }>();
    expect(view).toEqual({
      id: view.id,
      name,
      object_type: 'AZURE',
      azure_subscription_id: SUBSCRIPTION,
      azure_tenant_id: TENANT,
      azure_application_id: '',
      azure_application_object_id: '',
    });
    expect((await ctx().call(owner.auth, { method: 'GET', url: url() })).json()).toEqual({ results: [view] });
    expect((await ctx().call(owner.auth, { method: 'GET', url: url(view.id) })).json()).toEqual(view);

    const clientSecret = `azure~${uniqueName('secret').replace(/-/g, '')}`;
    const edited = await ctx().call(owner.auth, {
      method: 'PUT',
      url: url(view.id),
      payload: {
        name,
        azure_subscription_id: SUBSCRIPTION,
        azure_tenant_id: TENANT,
        azure_application_id: APPLICATION,
        azure_application_object_id: APPLICATION_OBJECT,
        azure_client_secret: clientSecret,
      },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toEqual({ ...view, azure_application_id: APPLICATION, azure_application_object_id: APPLICATION_OBJECT });
    expect(edited.body).not.toContain(clientSecret);
    const row = await ctx().database.db.selectFrom('cloud_credentials').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow();
    expect(row.cloud_provider).toBe('AZURE');
    expect(row.secret_envelope).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(clientSecret);
    expect((await ctx().call(owner.auth, { method: 'GET', url: url(view.id) })).body).not.toContain(clientSecret);

    const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: url(view.id) });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: url(view.id) }), 404);
  });

  it('refuses bad input: missing tenant, ids that are not GUIDs, a client secret without its application, unknown fields', async () => {
    const base = { name: uniqueName('azure-bad'), azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['missing tenant', { name: base.name, azure_subscription_id: SUBSCRIPTION }, 'azure_tenant_id'],
      ['not a GUID', { ...base, azure_subscription_id: 'my-subscription' }, 'azure_subscription_id'],
      ['secret alone', { ...base, azure_client_secret: 'sekrit' }, 'azure_application_id'],
      ['unknown field', { ...base, password: 'x' }, 'password'],
    ];
    for (const [label, payload, field] of cases) {
      const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: url(), payload }), 400);
      expect(JSON.stringify(refused), label).toContain(field);
    }
    expect((await ctx().call(owner.auth, { method: 'GET', url: url() })).json()).toEqual({ results: [] });
  });

  it('keeps names unique across providers (409, also when two creates race) and providers and organizations apart (404)', async () => {
    const name = uniqueName('shared');
    const aws = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/aws/credentials`, payload: { type: 'AWS_ROLE', name, role_arn: 'arn:aws:iam::123456789012:role/slipway' } });
    expect(aws.statusCode, aws.body).toBe(201);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: url(), payload: { name, azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT } }), 409);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: url(aws.json<{ id: string }>().id) }), 404);

    const raced = uniqueName('race');
    const answers = await Promise.all(
      [1, 2, 3].map(() => ctx().call(owner.auth, { method: 'POST', url: url(), payload: { name: raced, azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT } })),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);

    const azure = answers.find((answer) => answer.statusCode === 201)?.json<{ id: string }>().id ?? '';
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: url(azure) }), 404);
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${stranger.organizationId}/azure/credentials/${azure}` }), 404);
    expectErrorBody(
      await ctx().call(stranger.owner.auth, {
        method: 'PUT',
        url: `/organization/${stranger.organizationId}/azure/credentials/${azure}`,
        payload: { name: 'taken-over', azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT },
      }),
      404,
    );
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'DELETE', url: `/organization/${stranger.organizationId}/azure/credentials/${azure}` }), 404);
  });

  it('refuses deleting credentials a cluster runs on, naming it; a viewer reads but cannot create', async () => {
    const created = await ctx().call(owner.auth, { method: 'POST', url: url(), payload: { name: uniqueName('azure-used'), azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT } });
    const credentialsId = created.json<{ id: string }>().id;
    const clusterName = uniqueName('aks');
    const cluster = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/cluster`,
      payload: { name: clusterName, region: 'westeurope', cloud_provider: 'AZURE', kubernetes: 'MANAGED', cloud_provider_credentials: { cloud_provider: 'AZURE', credentials: { id: credentialsId } } },
    });
    expect(cluster.statusCode, cluster.body).toBe(201);
    const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: url(credentialsId) }), 409);
    expect(refused.message).toContain(clusterName);

    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    expect((await ctx().call(viewer.auth, { method: 'GET', url: url(credentialsId) })).statusCode).toBe(200);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: url(), payload: { name: uniqueName('nope'), azure_subscription_id: SUBSCRIPTION, azure_tenant_id: TENANT } }), 403);
  });
});
