import { expect, it } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The deployment queue (docs/deployment-queue.md): an environment's and a service's requests that have not ended,
 * an environment action's stages and the services' deployments it was fanned out into (listed once), the cancel of a
 * request through its subject's cancel, and a request's status by its id — each isolated per organization.
 */

interface QueueEntry {
  identifier: { deployment_request_id: string; environment_id: string };
  auditing_data: { triggered_by: string; origin?: string };
  trigger_action: string;
  stages: Array<{ name: string; status: string; services: Array<{ identifier: { service_id: string; service_type: string; name: string }; status: string }> }>;
  status: string;
}

interface ServiceQueueEntry {
  identifier: { deployment_request_id: string; service_id: string; service_type: string; name: string };
  status_details: { action: string; status: string; sub_action: string };
  requested_for: 'ENVIRONMENT' | 'SERVICE';
  status: string;
}

describeEachDatabase('deployment queue', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    environmentId: string;
    applicationId: string;
    databaseId: string;
  }

  async function call(auth: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await call(auth, 'POST', url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const applicationId = await created(owner.auth, `/environment/${environmentId}/application`, {
      name: 'web',
      git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    const databaseId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    return { owner, organizationId, environmentId, applicationId, databaseId };
  }

  async function environmentQueue(w: World): Promise<QueueEntry[]> {
    const response = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentQueue`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: QueueEntry[] }>().results;
  }

  async function serviceQueue(w: World, serviceId: string): Promise<ServiceQueueEntry[]> {
    const response = await call(w.owner.auth, 'GET', `/service/${serviceId}/deploymentQueue`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: ServiceQueueEntry[] }>().results;
  }

  async function deployApplication(w: World): Promise<string> {
    const response = await call(w.owner.auth, 'POST', `/application/${w.applicationId}/deploy`, {});
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ deployment_request_id: string }>().deployment_request_id;
  }

  async function requestStatus(auth: string, deploymentRequestId: string) {
    return call(auth, 'GET', `/environment/deploymentStatus?deploymentRequestId=${deploymentRequestId}`);
  }

  /** Waits until the environment's action was fanned out into its services' deployments (by the job worker). */
  async function fannedOut(deploymentRequestId: string): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const row = await ctx().database.db.selectFrom('environment_deployments').select('services_requested_at').where('id', '=', deploymentRequestId).executeTakeFirst();
      if (row?.services_requested_at != null) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`environment action ${deploymentRequestId} was never fanned out`);
  }

  it('is empty before anything is asked, and lists a service deploy with its stage until it is cancelled', async () => {
    const w = await world();
    expect(await environmentQueue(w)).toEqual([]);
    expect(await serviceQueue(w, w.applicationId)).toEqual([]);

    const requestId = await deployApplication(w);
    const [entry, ...others] = await environmentQueue(w);
    expect(others).toEqual([]);
    expect(entry).toMatchObject({
      identifier: { deployment_request_id: requestId, environment_id: w.environmentId },
      trigger_action: 'DEPLOY',
      status: 'QUEUED',
      stages: [{ name: 'SERVICE DEFAULT', status: 'QUEUED', services: [{ identifier: { service_id: w.applicationId, service_type: 'APPLICATION', name: 'web' }, status: 'QUEUED' }] }],
    });
    expect(entry?.auditing_data.triggered_by).toBeTruthy();
    expect(await serviceQueue(w, w.applicationId)).toMatchObject([
      { identifier: { deployment_request_id: requestId, service_id: w.applicationId, service_type: 'APPLICATION', name: 'web' }, requested_for: 'SERVICE', status: 'QUEUED', status_details: { action: 'DEPLOY', status: 'QUEUED' } },
    ]);
    expect(await serviceQueue(w, w.databaseId)).toEqual([]);

    const status = await requestStatus(w.owner.auth, requestId);
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toEqual({ deployment_request_id: requestId, environment_id: w.environmentId, status: 'QUEUED' });

    const canceled = await call(w.owner.auth, 'POST', `/deploymentQueue/${requestId}/cancelDeployment`, {});
    expect(canceled.statusCode, canceled.body).toBe(202);
    expect(await environmentQueue(w)).toEqual([]);
    expect((await requestStatus(w.owner.auth, requestId)).json()).toMatchObject({ status: 'CANCELED' });
    const application = await call(w.owner.auth, 'GET', `/application/${w.applicationId}/status`);
    expect(application.json()).toMatchObject({ state: 'CANCELED' });

    // A request that ended cannot be cancelled again.
    expect(expectErrorBody(await call(w.owner.auth, 'POST', `/deploymentQueue/${requestId}/cancelDeployment`, {}), 409).message).toMatch(/has ended/);
  });

  it("lists an environment's action once, with its services in stages, databases first", async () => {
    const w = await world();
    const deployed = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`);
    expect(deployed.statusCode, deployed.body).toBe(202);
    const requestId = deployed.json<{ deployment_request_id: string }>().deployment_request_id;
    await fannedOut(requestId);

    // The services' own deployments the action was fanned out into are its stages' entries, not entries of their own.
    const queue = await environmentQueue(w);
    expect(queue).toHaveLength(1);
    expect(queue[0]).toMatchObject({ identifier: { deployment_request_id: requestId }, trigger_action: 'DEPLOY', status: 'QUEUED' });
    expect(queue[0]?.stages.map((stage) => [stage.name, stage.services.map((service) => service.identifier.service_id)])).toEqual([
      ['DATABASE DEFAULT', [w.databaseId]],
      ['SERVICE DEFAULT', [w.applicationId]],
    ]);
    for (const stage of queue[0]?.stages ?? []) expect(stage.status).toBe('QUEUED');
    expect((await requestStatus(w.owner.auth, requestId)).json()).toEqual({ deployment_request_id: requestId, environment_id: w.environmentId, status: 'QUEUED' });

    // The application's queue holds its own deployment now, which the cancel of that request ends.
    const [own] = await serviceQueue(w, w.applicationId);
    expect(own).toMatchObject({ requested_for: 'SERVICE', status: 'QUEUED' });
    const ownId = own?.identifier.deployment_request_id as string;
    expect((await call(w.owner.auth, 'POST', `/deploymentQueue/${ownId}/cancelDeployment`, {})).statusCode).toBe(202);
    expect(await serviceQueue(w, w.applicationId)).toEqual([]);
    const stages = (await environmentQueue(w))[0]?.stages ?? [];
    expect(stages.find((stage) => stage.name === 'SERVICE DEFAULT')?.services[0]?.status).toBe('CANCELED');

    // The environment's own request is cancelled through the environment's cancel.
    expect((await call(w.owner.auth, 'POST', `/deploymentQueue/${requestId}/cancelDeployment`, {})).statusCode).toBe(202);
    expect((await requestStatus(w.owner.auth, requestId)).json()).toMatchObject({ status: 'CANCELED' });
    const environment = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/status`);
    expect(environment.json()).toMatchObject({ state: 'CANCELED' });
  });

  it("shows an action's services in the environment's own deployment stages", async () => {
    const w = await world();
    const stage = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, { name: 'migrations' });
    expect(stage.statusCode, stage.body).toBe(200);
    const attached = await call(w.owner.auth, 'PUT', `/deploymentStage/${stage.json<{ id: string }>().id}/service/${w.applicationId}`, {});
    expect(attached.statusCode, attached.body).toBe(200);

    const deployed = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`);
    expect(deployed.statusCode, deployed.body).toBe(202);
    const requestId = deployed.json<{ deployment_request_id: string }>().deployment_request_id;
    const stagesOf = async () => (await environmentQueue(w))[0]?.stages.map((entry) => [entry.name, entry.services.map((service) => service.identifier.service_id)]);
    expect(await stagesOf()).toEqual([
      ['DATABASE DEFAULT', [w.databaseId]],
      ['migrations', [w.applicationId]],
    ]);
    await fannedOut(requestId);
    expect(await stagesOf()).toEqual([
      ['DATABASE DEFAULT', [w.databaseId]],
      ['migrations', [w.applicationId]],
    ]);
  });

  it("answers 404 for another organization's requests, environments and services, and 400 for bad ids", async () => {
    const w = await world();
    const requestId = await deployApplication(w);
    const { owner: stranger } = await ctx().signUpWithOrganization();

    expectErrorBody(await requestStatus(stranger.auth, requestId), 404);
    expectErrorBody(await call(stranger.auth, 'POST', `/deploymentQueue/${requestId}/cancelDeployment`, {}), 404);
    expectErrorBody(await call(stranger.auth, 'GET', `/environment/${w.environmentId}/deploymentQueue`), 404);
    expectErrorBody(await call(stranger.auth, 'GET', `/service/${w.applicationId}/deploymentQueue`), 404);
    // Nothing was cancelled by the refused request.
    expect((await requestStatus(w.owner.auth, requestId)).json()).toMatchObject({ status: 'QUEUED' });

    const unknown = '0190f0b2-6c5e-7000-8000-00000000abcd';
    expectErrorBody(await requestStatus(w.owner.auth, unknown), 404);
    expectErrorBody(await call(w.owner.auth, 'POST', `/deploymentQueue/${unknown}/cancelDeployment`, {}), 404);
    expectErrorBody(await call(w.owner.auth, 'GET', '/environment/deploymentStatus'), 400);
    expectErrorBody(await requestStatus(w.owner.auth, 'not-a-uuid'), 400);
    expectErrorBody(await call(w.owner.auth, 'POST', '/deploymentQueue/not-a-uuid/cancelDeployment', {}), 400);

    // The static path is served next to the environment's own: /environment/{environmentId} still answers.
    const environment = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}`);
    expect(environment.statusCode, environment.body).toBe(200);
  });

  it('refuses to cancel a request that is no longer its subject\'s newest action (409)', async () => {
    const w = await world();
    const first = await deployApplication(w);
    expect((await call(w.owner.auth, 'POST', `/deploymentQueue/${first}/cancelDeployment`, {})).statusCode).toBe(202);
    const second = await deployApplication(w);
    expect(second).not.toBe(first);
    expectErrorBody(await call(w.owner.auth, 'POST', `/deploymentQueue/${first}/cancelDeployment`, {}), 409);
    expect((await requestStatus(w.owner.auth, second)).json()).toMatchObject({ status: 'QUEUED' });
  });
});
