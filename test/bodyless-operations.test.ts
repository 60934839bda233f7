import { expect, it } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Operations that take no body, as generated clients call them (issue 24, part 1): an axios client generated from the
 * reference sends `Content-Type: application/x-www-form-urlencoded` and nothing; others send no content type, or
 * `application/json` and nothing. Every such call goes through. A body in a type other than JSON stays a 415, and an
 * operation that needs a body answers 400 without one.
 */
describeEachDatabase('operations that take no body', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    clusterId: string;
    databaseId: string;
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId } = await enrolledCluster(ctx(), organizationId, owner);
    const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
    expect(project.statusCode, project.body).toBe(200);
    const environment = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/project/${project.json<{ id: string }>().id}/environment`,
      payload: { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' },
    });
    expect(environment.statusCode, environment.body).toBe(201);
    const database = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/environment/${environment.json<{ id: string }>().id}/database`,
      payload: { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' },
    });
    expect(database.statusCode, database.body).toBe(201);
    return { owner, organizationId, clusterId, databaseId: database.json<{ id: string }>().id };
  }

  async function deploymentCount(databaseId: string): Promise<number> {
    const rows = await ctx().database.db.selectFrom('service_deployments').select('id').where('service_id', '=', databaseId).execute();
    return rows.length;
  }

  it('deploys a database with no body at all, with an empty form body, and with an empty JSON body', async () => {
    const w = await world();
    const noBody = await ctx().call(w.owner.auth, { method: 'POST', url: `/database/${w.databaseId}/deploy` });
    expect(noBody.statusCode, noBody.body).toBe(202);
    expect(noBody.json()).toMatchObject({ id: w.databaseId, state: 'QUEUED' });

    const stop = await ctx().call(w.owner.auth, {
      method: 'POST',
      url: `/database/${w.databaseId}/stop`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    // Stopping what is only queued is refused by the state machine, not by the content type.
    expect(stop.statusCode, stop.body).not.toBe(415);
    expect(stop.statusCode).toBeLessThan(500);

    const other = await world();
    const emptyForm = await ctx().call(other.owner.auth, {
      method: 'POST',
      url: `/database/${other.databaseId}/deploy`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(emptyForm.statusCode, emptyForm.body).toBe(202);
    expect(await deploymentCount(other.databaseId)).toBe(1);

    const third = await world();
    const emptyJson = await ctx().call(third.owner.auth, {
      method: 'POST',
      url: `/database/${third.databaseId}/deploy`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(emptyJson.statusCode, emptyJson.body).toBe(202);
  });

  it('deploys a cluster called with an empty form body as with none', async () => {
    const answers: Array<{ status: number; state: unknown }> = [];
    for (const headers of [{ 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
      const w = await world();
      const response = await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/cluster/${w.clusterId}/deploy`, headers, payload: '' });
      answers.push({ status: response.statusCode, state: response.json<{ status?: unknown }>().status });
    }
    expect(answers[0]?.status).toBe(201);
    expect(answers[0]).toEqual(answers[1]);
  });

  it('refuses a body in another type than JSON with 415, and a missing body where one is needed with 400, writing nothing', async () => {
    const w = await world();
    const asText = await ctx().call(w.owner.auth, {
      method: 'POST',
      url: `/database/${w.databaseId}/deploy`,
      headers: { 'content-type': 'text/plain' },
      payload: '{}',
    });
    expectErrorBody(asText, 415);
    const asForm = await ctx().call(w.owner.auth, {
      method: 'POST',
      url: `/database/${w.databaseId}/deploy`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'applyImmediately=true',
    });
    expectErrorBody(asForm, 415);
    const withoutContentType = await ctx().call(w.owner.auth, { method: 'POST', url: `/database/${w.databaseId}/deploy`, payload: Buffer.from('{}') });
    expect(withoutContentType.statusCode).toBe(415);
    expect(await deploymentCount(w.databaseId)).toBe(0);

    // A project needs its name: no body, whatever the content type said, is a 400 naming the body.
    for (const headers of [{}, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'application/json' }]) {
      const response = await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/project`, headers, payload: '' });
      expectErrorBody(response, 400);
    }
  });
});
