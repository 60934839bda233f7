import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestedState } from '../src/modules/deployments/deployments.states.ts';
import { SERVICE_TEARDOWN_JOB } from '../src/modules/deployments/deployments.workloads.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { startBootstrappedWorld } from './support/local-engine-world.ts';
import { createSampleRepository, processesUnder, requestThroughProxy, type HelloAnswer } from './support/sample-apps.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Uninstalling services (issue 24 part 3; docs/service-clone-uninstall.md): the reference's six uninstall operations
 * answer 202 with the service's status, READY and never deployed; the teardown of what ran reaches the cluster's agent
 * (over the real agent protocol of a self-managed cluster) while the service keeps its settings, variables and
 * deployment history, and a deploy afterwards reaches the agent only once the teardown ended and brings the service
 * back. An action queued or under way is a 409; a service never deployed is left as it is; SKIP_DESTROY leaves a
 * Terraform service's infrastructure; other organizations' services and other kinds' paths are 404.
 */

interface StatusView {
  id: string;
  state: string;
  service_deployment_status: string;
  deployment_request_id: string | null;
}

interface AgentTask {
  id: string;
  subject_type: string;
  subject_id: string;
  deployment_id: string;
  action: string;
  lease_id: string;
  last_report_seq: number;
}

const git = { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' };

describe('the uninstall move of the state machine', () => {
  it('goes to READY from every settled state, and is refused while an action is queued or under way', () => {
    for (const state of ['READY', 'DEPLOYED', 'BUILD_ERROR', 'DEPLOYMENT_ERROR', 'STOPPED', 'STOP_ERROR', 'RESTARTED', 'RESTART_ERROR', 'CANCELED'] as const) {
      expect(requestedState('service', state, 'uninstall', true)).toBe('READY');
    }
    for (const state of ['QUEUED', 'BUILDING', 'DEPLOYING', 'STOPPING', 'RESTARTING', 'CANCELING'] as const) {
      expect(() => requestedState('service', state, 'uninstall', true)).toThrow(`cannot uninstall service: it is ${state}`);
    }
  });
});

describeEachDatabase('service uninstall', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    environmentId: string;
    credential: string;
  }

  async function post(auth: string | undefined, url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
  }

  async function ok<T>(w: World, method: 'GET' | 'POST', url: string, payload: Record<string, unknown> | undefined, status: number): Promise<T> {
    const response = await ctx().call(w.owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const w = { owner, organizationId, environmentId: '', credential };
    const projectId = (await ok<{ id: string }>(w, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    w.environmentId = (await ok<{ id: string }>(w, 'POST', `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' }, 201)).id;
    return w;
  }

  async function application(w: World): Promise<string> {
    return (await ok<{ id: string }>(w, 'POST', `/environment/${w.environmentId}/application`, { name: uniqueName('web'), git_repository: git, healthchecks: {} }, 201)).id;
  }

  /** Leases until a task of the subject arrives (its deployment when given), settling every other task on the way. */
  async function leaseTaskOf(w: World, subjectType: string, subjectId: string, deploymentId?: string): Promise<AgentTask> {
    for (let round = 0; round < 60; round++) {
      const response = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=1' });
      expect(response.statusCode, response.body).toBe(200);
      for (const task of response.json<{ tasks: AgentTask[] }>().tasks) {
        if (task.subject_type === subjectType && task.subject_id === subjectId && (deploymentId === undefined || task.deployment_id === deploymentId)) return task;
        await settle(w, task, ['take', 'succeed']);
      }
    }
    throw new Error(`no ${subjectType} task of ${subjectId} was handed out`);
  }

  /** The tasks handed out now (none waiting beyond a short poll). */
  async function leaseNow(w: World): Promise<AgentTask[]> {
    const response = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=1' });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ tasks: AgentTask[] }>().tasks;
  }

  async function settle(w: World, task: AgentTask, events: string[]): Promise<void> {
    let seq = task.last_report_seq;
    for (const event of events) {
      seq += 1;
      const response = await post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq, event });
      expect(response.statusCode, response.body).toBe(200);
    }
  }

  async function deployToRunning(w: World, item: string, serviceId: string): Promise<string> {
    const queued = await ok<StatusView>(w, 'POST', `/${item}/${serviceId}/deploy`, {}, 202);
    const deploymentId = queued.deployment_request_id as string;
    await settle(w, await leaseTaskOf(w, 'SERVICE', serviceId, deploymentId), ['take', 'built', 'succeed']);
    expect((await ok<StatusView>(w, 'GET', `/${item}/${serviceId}/status`, undefined, 200)).state).toBe('DEPLOYED');
    return deploymentId;
  }

  async function teardownJobs(serviceId: string) {
    return ctx().database.db.selectFrom('jobs').select(['id', 'status']).where('kind', '=', SERVICE_TEARDOWN_JOB).where('serial_key', '=', `service:${serviceId}`).execute();
  }

  it('tears a deployed application down through its agent, keeps the service, and a deploy brings it back after the teardown', async () => {
    const w = await world();
    const applicationId = await application(w);
    await ok(w, 'POST', `/application/${applicationId}/environmentVariable`, { key: 'GREETING', value: 'hello' }, 201);
    const firstDeployment = await deployToRunning(w, 'application', applicationId);
    const before = await ok<Record<string, unknown>>(w, 'GET', `/application/${applicationId}`, undefined, 200);

    const uninstalled = await ok<StatusView>(w, 'POST', `/application/${applicationId}/uninstall`, {}, 202);
    expect(uninstalled).toMatchObject({ id: applicationId, state: 'READY', service_deployment_status: 'NEVER_DEPLOYED', deployment_request_id: null });
    expect(await ok(w, 'GET', `/application/${applicationId}/status`, undefined, 200)).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
    // The service, its configuration and its history stay.
    expect(await ok(w, 'GET', `/application/${applicationId}`, undefined, 200)).toEqual(before);
    const variables = await ok<{ results: Array<{ key: string }> }>(w, 'GET', `/application/${applicationId}/environmentVariable`, undefined, 200);
    expect(variables.results.map((variable) => variable.key)).toContain('GREETING');
    const history = await ok<{ results: Array<{ id: string }> }>(w, 'GET', `/application/${applicationId}/deploymentHistory`, undefined, 200);
    expect(history.results.map((entry) => entry.id)).toContain(firstDeployment);
    const logged = await ctx().database.db.selectFrom('service_deployment_logs').select('message').where('deployment_id', '=', firstDeployment).execute();
    expect(logged.map((line) => line.message).join('\n')).toMatch(/uninstall requested by .+: the cluster's agent removes what this deployment put there/);

    // A deploy requested at once waits for the teardown: the agent meets the teardown first, and the deploy only after.
    const redeployed = await ok<StatusView>(w, 'POST', `/application/${applicationId}/deploy`, {}, 202);
    expect(redeployed.state).toBe('QUEUED');
    const teardown = await leaseTaskOf(w, 'SERVICE_TEARDOWN', applicationId);
    expect(teardown).toMatchObject({ action: 'delete' });
    expect((await leaseNow(w)).some((task) => task.deployment_id === redeployed.deployment_request_id)).toBe(false);
    await settle(w, teardown, ['take', 'succeed']);
    await settle(w, await leaseTaskOf(w, 'SERVICE', applicationId, redeployed.deployment_request_id as string), ['take', 'built', 'succeed']);
    expect(await ok(w, 'GET', `/application/${applicationId}/status`, undefined, 200)).toMatchObject({ state: 'DEPLOYED', service_deployment_status: 'UP_TO_DATE' });
    expect(await teardownJobs(applicationId)).toMatchObject([{ status: 'SUCCEEDED' }]);
  });

  it('refuses while an action is queued or under way (409), and leaves a never-deployed service as it is', async () => {
    const w = await world();
    const applicationId = await application(w);
    const untouched = await ok<StatusView>(w, 'POST', `/application/${applicationId}/uninstall`, undefined, 202);
    expect(untouched).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
    expect(await teardownJobs(applicationId)).toEqual([]);

    const queued = await ok<StatusView>(w, 'POST', `/application/${applicationId}/deploy`, {}, 202);
    expect(expectErrorBody(await post(w.owner.auth, `/application/${applicationId}/uninstall`, {}), 409).message).toMatch(/it is QUEUED/);
    const task = await leaseTaskOf(w, 'SERVICE', applicationId, queued.deployment_request_id as string);
    await settle(w, task, ['take']);
    expect(expectErrorBody(await post(w.owner.auth, `/application/${applicationId}/uninstall`, {}), 409).message).toMatch(/it is BUILDING/);
    await settle(w, { ...task, last_report_seq: 1 }, ['fail']);
    // A failed first deploy may have left something: its teardown is queued all the same.
    expect(await ok(w, 'POST', `/application/${applicationId}/uninstall`, {}, 202)).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
    expect(await teardownJobs(applicationId)).toHaveLength(1);
  });

  it('serves all six kinds; SKIP_DESTROY leaves a Terraform service’s infrastructure; bad input is a 400, other organizations’ ids a 404', async () => {
    const w = await world();
    const bodies: Record<string, Record<string, unknown>> = {
      application: { name: uniqueName('web'), git_repository: git, healthchecks: {} },
      database: { name: uniqueName('orders'), type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' },
      job: { name: uniqueName('migrate'), source: { docker: { git_repository: git, dockerfile_path: 'Dockerfile' } }, schedule: { on_start: {} }, healthchecks: {} },
      helm: { name: uniqueName('chart'), source: { git_repository: { ...git, root_path: '/charts/app' } } },
      terraform: { name: uniqueName('infra'), terraform_files_source: { git_repository: { ...git, root_path: '/infra' } } },
    };
    const registry = await ok<{ id: string }>(
      w,
      'POST',
      `/organization/${w.organizationId}/containerRegistry`,
      { name: uniqueName('registry'), kind: 'GENERIC_CR', url: 'https://registry.slipway-uninstall.invalid', config: { username: 'robot', password: 'fixture-pw' } },
      201,
    );
    bodies.container = { name: uniqueName('api'), registry_id: registry.id, image_name: 'library/nginx', tag: '1.27-alpine', healthchecks: {} };
    const ids: Record<string, string> = {};
    for (const [item, body] of Object.entries(bodies)) {
      ids[item] = (await ok<{ id: string }>(w, 'POST', `/environment/${w.environmentId}/${item}`, body, 201)).id;
    }
    for (const [item, serviceId] of Object.entries(ids)) {
      if (item === 'terraform') continue;
      await deployToRunning(w, item, serviceId);
      expect(await ok(w, 'POST', `/${item}/${serviceId}/uninstall`, {}, 202)).toMatchObject({ id: serviceId, state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
      expect(await teardownJobs(serviceId)).toHaveLength(1);
      await settle(w, await leaseTaskOf(w, 'SERVICE_TEARDOWN', serviceId), ['take', 'succeed']);
    }

    const terraformId = ids.terraform as string;
    await deployToRunning(w, 'terraform', terraformId);
    expectErrorBody(await post(w.owner.auth, `/terraform/${terraformId}/uninstall?force_terraform_action=DESTROY_ALL`, {}), 400);
    expectErrorBody(await post(w.owner.auth, `/terraform/${terraformId}/uninstall`, { unexpected: true }), 400);
    expect(await ok(w, 'POST', `/terraform/${terraformId}/uninstall?force_terraform_action=SKIP_DESTROY`, {}, 202)).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
    expect(await teardownJobs(terraformId)).toEqual([]);

    // Another kind's path, an unknown id, another organization, no credentials.
    const applicationId = ids.application as string;
    expectErrorBody(await post(w.owner.auth, `/database/${applicationId}/uninstall`, {}), 404);
    expectErrorBody(await post(w.owner.auth, `/container/${crypto.randomUUID()}/uninstall`, {}), 404);
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await post(stranger.owner.auth, `/application/${applicationId}/uninstall`, {}), 404);
    expectErrorBody(await post(undefined, `/application/${applicationId}/uninstall`, {}), 401);
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(w.organizationId, viewer, 'VIEWER');
    expectErrorBody(await post(viewer.auth, `/application/${applicationId}/uninstall`, {}), 403);
  });
});

/**
 * End to end on the local engine: a real `slipway server` with its in-process agent deploys the `hello` sample from
 * git behind its apps proxy; the uninstall's teardown reaches that agent, which stops the instance and removes its
 * checkout (no process of it is left, the proxy no longer routes its hostname), and a deploy afterwards serves again.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`uninstall on the local engine [${dialect}]`, () => {
    const DEADLINE_MS = 150_000;
    let world: Awaited<ReturnType<typeof startBootstrappedWorld>> | undefined;

    beforeAll(async () => {
      world = await startBootstrappedWorld(dialect, { name: 'uninstall-e2e', repositories: (root) => createSampleRepository(root, 'hello', 'hello').then(() => undefined) });
    }, 240_000);

    afterAll(async () => {
      await world?.close();
    }, 60_000);

    async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
      if (world === undefined) throw new Error('the server did not start');
      const response = await fetch(`${world.server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${world.server.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }

    async function eventually(condition: () => Promise<boolean>): Promise<boolean> {
      return vi
        .waitFor(async () => expect(await condition()).toBe(true), { timeout: DEADLINE_MS, interval: 250 })
        .then(() => true)
        .catch(() => false);
    }

    it('tears the running application down and serves it again after a deploy', { timeout: 400_000 }, async () => {
      if (world === undefined) throw new Error('the server did not start');
      const { server, gitServer, appsPort, dataDir } = world;
      const organizationId = server.organizationId;
      const cluster = await api<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      await api('POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
      expect(await eventually(async () => (await api<{ status: string }>('GET', `/organization/${organizationId}/cluster/${cluster.id}/status`)).status === 'DEPLOYED')).toBe(true);
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      const application = await api<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'hello',
        git_repository: { url: gitServer.urlOf('hello'), branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'hello' },
        ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: { readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 30 } },
      });
      const links = await api<{ results: Array<{ url: string; is_default: boolean }> }>('GET', `/application/${application.id}/link`);
      const hostname = new URL(links.results.find((link) => link.is_default)?.url ?? '').hostname;
      const state = async () => (await api<StatusView>('GET', `/application/${application.id}/status`)).state;
      const serves = async () => {
        const answer = await requestThroughProxy(appsPort, hostname);
        return answer.status === 200 && (JSON.parse(answer.body) as HelloAnswer).app === 'hello';
      };
      const processesOfApplication = () => processesUnder(path.join(dataDir, 'agent', 'sources', application.id));

      await api('POST', `/application/${application.id}/deploy`, {});
      expect(await eventually(async () => (await state()) === 'DEPLOYED'), await state()).toBe(true);
      expect(await eventually(serves)).toBe(true);
      expect((await processesOfApplication()).length).toBeGreaterThan(0);

      const uninstalled = await api<StatusView>('POST', `/application/${application.id}/uninstall`, {});
      expect(uninstalled).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
      expect(await eventually(async () => (await processesOfApplication()).length === 0)).toBe(true);
      expect(await eventually(async () => (await requestThroughProxy(appsPort, hostname)).status === 404)).toBe(true);
      expect(await api('GET', `/application/${application.id}`)).toMatchObject({ id: application.id, name: 'hello' });

      await api('POST', `/application/${application.id}/deploy`, {});
      expect(await eventually(async () => (await state()) === 'DEPLOYED'), await state()).toBe(true);
      expect(await eventually(serves)).toBe(true);
    });
  });
}
