import { expect, it } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The refusal of an action asked of several services at once (deployAllServices, stopSelectedServices,
 * deleteSelectedServices, uninstallSelectedServices, rebootServices naming services): one 409 whose message names
 * every service in the way — kind, name, id — and its state, whose details point at where the body named each, and
 * which leaves nothing done, not even for the services that could have taken the action. The services reach their
 * states through the real agent protocol of an enrolled cluster.
 */

interface AgentTask {
  id: string;
  deployment_id: string;
  lease_id: string;
}

describeEachDatabase('conflicts of bulk actions on services', (ctx) => {
  interface World {
    owner: TestUser;
    environmentId: string;
    credential: string;
    webId: string;
    ordersId: string;
    nightlyId: string;
  }

  async function call(auth: string, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await call(auth, 'POST', url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  const git = { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' };

  /** An environment on an enrolled cluster with an application "web", a database "orders" and a job "nightly". */
  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const webId = await created(owner.auth, `/environment/${environmentId}/application`, { name: 'web', git_repository: git, healthchecks: {} });
    const ordersId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    const nightlyId = await created(owner.auth, `/environment/${environmentId}/job`, {
      name: 'nightly',
      source: { docker: { git_repository: git, dockerfile_path: 'Dockerfile' } },
      schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC' } },
      healthchecks: {},
    });
    return { owner, environmentId, credential, webId, ordersId, nightlyId };
  }

  /** Has the agent lease tasks and report `events` on each, until `count` tasks were carried (or only `deploymentId`'s). */
  async function agentCarries(w: World, options: { count?: number; deploymentId?: string; events?: string[] }): Promise<void> {
    const events = options.events ?? ['take', 'built', 'succeed'];
    let carried = 0;
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await call(`Bearer ${w.credential}`, 'GET', '/operator/v1/tasks?wait_seconds=1');
      expect(response.statusCode, response.body).toBe(200);
      for (const task of response.json<{ tasks: AgentTask[] }>().tasks) {
        if (options.deploymentId !== undefined && task.deployment_id !== options.deploymentId) continue;
        for (const [seq, event] of events.entries()) {
          const report = await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq: seq + 1, event });
          expect(report.statusCode, report.body).toBe(200);
        }
        carried += 1;
        if (options.deploymentId !== undefined || carried === options.count) return;
      }
    }
    throw new Error(`the agent was given ${carried} task(s) of the ${options.count ?? 1} expected`);
  }

  /** Asks one service's action and answers its deployment's id. */
  async function requested(w: World, item: string, serviceId: string, action: 'deploy' | 'redeploy'): Promise<string> {
    const response = await call(w.owner.auth, 'POST', `/${item}/${serviceId}/${action}`, {});
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ deployment_request_id: string }>().deployment_request_id;
  }

  async function stateOf(w: World, item: string, serviceId: string): Promise<string> {
    const response = await call(w.owner.auth, 'GET', `/${item}/${serviceId}/status`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ state: string }>().state;
  }

  const actionsOf = async (serviceId: string) =>
    (await ctx().database.db.selectFrom('service_deployments').select('action').where('service_id', '=', serviceId).orderBy('id').execute()).map((row) => row.action);

  it('names every service a stop or a deploy finds in the way, with its state, and queues nothing', async () => {
    const w = await world();
    await agentCarries(w, { deploymentId: await requested(w, 'application', w.webId, 'deploy') });
    await requested(w, 'database', w.ordersId, 'deploy');
    expect([await stateOf(w, 'application', w.webId), await stateOf(w, 'database', w.ordersId), await stateOf(w, 'job', w.nightlyId)]).toEqual(['DEPLOYED', 'QUEUED', 'READY']);

    // The web application could stop; the database is busy and the job never ran: neither one is stopped.
    const stop = expectErrorBody(
      await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/stop`, { application_ids: [w.webId], database_ids: [w.ordersId], job_ids: [w.nightlyId] }),
      409,
    );
    // Neither has been deployed yet: that is the reason given, with the state.
    const ordersFirstQueued = `database orders (${w.ordersId}) has never been deployed (it is QUEUED)`;
    const nightlyNeverDeployed = `job nightly (${w.nightlyId}) has never been deployed (it is READY)`;
    expect(stop.message).toBe(`cannot stop 2 of the 3 services: ${ordersFirstQueued}; ${nightlyNeverDeployed}; nothing was queued`);
    expect(stop.details).toEqual([
      { field: '/database_ids/0', message: ordersFirstQueued },
      { field: '/job_ids/0', message: nightlyNeverDeployed },
    ]);
    expect(await stateOf(w, 'application', w.webId)).toBe('DEPLOYED');
    expect(await actionsOf(w.webId)).toEqual(['DEPLOY']);

    // A deploy naming them: the busy database is named where the body named it, and the application is not redeployed.
    // A deploy needs no earlier one: the database is refused for its state alone.
    const ordersQueued = `database orders (${w.ordersId}) is QUEUED`;
    const deploy = expectErrorBody(
      await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/deploy`, { applications: [{ application_id: w.webId }], databases: [w.ordersId] }),
      409,
    );
    expect(deploy.message).toBe(`cannot deploy 1 of the 2 services: ${ordersQueued}; nothing was queued`);
    expect(deploy.details).toEqual([{ field: '/databases/0', message: ordersQueued }]);
    // A deploy of every service names no service in its body: the message alone names the one in the way.
    const everything = expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/deploy`, {}), 409);
    expect(everything.message).toBe(`cannot deploy 1 of the 3 services: ${ordersQueued}; nothing was queued`);
    expect(everything.details).toBeUndefined();
    expect([await actionsOf(w.webId), await actionsOf(w.ordersId), await actionsOf(w.nightlyId)]).toEqual([['DEPLOY'], ['DEPLOY'], []]);
  });

  it('names every service a delete or an uninstall finds in the way, and deletes or uninstalls none', async () => {
    const w = await world();
    // The agent works on both: the web application is building, the database deploying.
    await agentCarries(w, { deploymentId: await requested(w, 'application', w.webId, 'deploy'), events: ['take'] });
    await agentCarries(w, { deploymentId: await requested(w, 'database', w.ordersId, 'deploy'), events: ['take', 'built'] });

    const del = expectErrorBody(
      await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/delete`, { application_ids: [w.webId], database_ids: [w.ordersId], job_ids: [w.nightlyId] }),
      409,
    );
    const webBuilding = `application web (${w.webId}) is BUILDING`;
    const ordersDeploying = `database orders (${w.ordersId}) is DEPLOYING`;
    expect(del.message).toBe(`cannot delete 2 of the 3 services: ${webBuilding}; ${ordersDeploying}; nothing was deleted`);
    expect(del.details).toEqual([
      { field: '/application_ids/0', message: webBuilding },
      { field: '/database_ids/0', message: ordersDeploying },
    ]);
    const services = await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', w.environmentId).execute();
    expect(services.map((row) => row.id).sort()).toEqual([w.webId, w.ordersId, w.nightlyId].sort());

    const uninstall = expectErrorBody(
      await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/uninstall`, { database_ids: [w.ordersId], application_ids: [w.webId] }),
      409,
    );
    expect(uninstall.message).toBe(`cannot uninstall the 2 services: ${webBuilding}; ${ordersDeploying}; nothing was uninstalled`);
    expect(uninstall.details?.map((detail) => detail.field)).toEqual(['/application_ids/0', '/database_ids/0']);
    expect([await stateOf(w, 'application', w.webId), await stateOf(w, 'database', w.ordersId)]).toEqual(['BUILDING', 'DEPLOYING']);
  });

  it("names every service a restart of named services finds in the way, and restarts none of the environment's", async () => {
    const w = await world();
    const deployed = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`);
    expect(deployed.statusCode, deployed.body).toBe(202);
    // The three services' deploys, then the environment's own task.
    await agentCarries(w, { count: 4 });
    expect([await stateOf(w, 'application', w.webId), await stateOf(w, 'database', w.ordersId)]).toEqual(['DEPLOYED', 'DEPLOYED']);
    await requested(w, 'database', w.ordersId, 'redeploy');
    const apiId = await created(w.owner.auth, `/environment/${w.environmentId}/application`, { name: 'api', git_repository: git, healthchecks: {} });

    const restart = expectErrorBody(
      await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/restart-service`, { application_ids: [w.webId, apiId], database_ids: [w.ordersId] }),
      409,
    );
    const apiNeverDeployed = `application api (${apiId}) has never been deployed (it is READY)`;
    const ordersQueued = `database orders (${w.ordersId}) is QUEUED`;
    expect(restart.message).toBe(`cannot restart 2 of the 3 services: ${apiNeverDeployed}; ${ordersQueued}; nothing was queued`);
    expect(restart.details).toEqual([
      { field: '/application_ids/1', message: apiNeverDeployed },
      { field: '/database_ids/0', message: ordersQueued },
    ]);
    // Not even the environment's restart was queued, so its job will not restart the web application either.
    const environment = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/status`);
    expect(environment.json<{ state: string }>().state).toBe('DEPLOYED');
    const environmentActions = await ctx().database.db.selectFrom('environment_deployments').select('action').where('environment_id', '=', w.environmentId).execute();
    expect(environmentActions.map((row) => row.action)).toEqual(['DEPLOY']);
  });
});
