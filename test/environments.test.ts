import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../src/db/db.schema.ts';
import { findCluster, listClusters } from '../src/modules/clusters/clusters.repo.ts';
import { summaryOf } from '../src/modules/clusters/clusters.service.ts';
import { DEPLOYMENT_STATES as ENVIRONMENT_STATES, DEPLOYMENT_TRANSITIONS as ENVIRONMENT_TRANSITIONS, transitionOf } from '../src/engine/deployment-states.ts';
import { ENVIRONMENT_ACTION_JOB } from '../src/modules/deployments/deployments.environment-requests.ts';
import { createDeploymentsService, type DeploymentsService } from '../src/modules/deployments/deployments.service.ts';
import { requestedState } from '../src/modules/deployments/deployments.states.ts';
import {
  createEnvironmentsService,
  NO_ENVIRONMENT_VARIABLES,
  type EnvironmentsService,
  type EnvironmentVariablesCopier,
} from '../src/modules/environments/environments.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Environments (issue 8 part 1): CRUD within a project, the cluster rule, clone (with and without the variables
 * port), the action state machine (deploy, redeploy, stop, restart, cancel) with its 409s, a deployment that stays
 * QUEUED until the cluster's agent takes it and says so, and the paginated deployment history.
 */

interface EnvironmentView {
  id: string;
  name: string;
  mode: string;
  cluster_id: string;
  cluster_name?: string;
  cloud_provider: { provider?: string; cluster?: string };
  project: { id: string };
  organization: { id: string };
  created_at: string;
  updated_at: string;
  expires_at: null;
}

interface EnvironmentStatusView {
  id: string;
  state: string;
  last_deployment_date: string | null;
  last_deployment_state: string;
  last_deployment_id: string | null;
  deployment_status: string;
  deployment_request_id: string | null;
  triggered_by: string | null;
  origin: string | null;
  message: string | null;
}

interface ActionStatusView {
  id: string;
  state: string;
  service_deployment_status: string;
  is_part_last_deployment: boolean;
  execution_id?: string;
  status_details: { action: string; status: string; sub_action: string };
  deployment_request_id: string | null;
  deployment_requests_count: number;
  message: string | null;
}

interface HistoryPage<T> {
  page: number;
  page_size: number;
  next_cursor: string | null;
  results: T[];
}

describe('environment state machine', () => {
  it('gives every state an entry, and every target is a state', () => {
    expect(Object.keys(ENVIRONMENT_TRANSITIONS).sort()).toEqual([...ENVIRONMENT_STATES].sort());
    for (const moves of Object.values(ENVIRONMENT_TRANSITIONS)) {
      for (const to of Object.values(moves)) expect(ENVIRONMENT_STATES).toContain(to);
    }
  });

  it('walks the service states of issue 8: QUEUED → BUILDING → DEPLOYING → DEPLOYED, errors, stop, restart, cancel', () => {
    expect(requestedState('environment', 'READY', 'deploy', false)).toBe('QUEUED');
    expect(transitionOf('QUEUED', 'take_deploy')).toBe('BUILDING');
    expect(transitionOf('BUILDING', 'built')).toBe('DEPLOYING');
    expect(transitionOf('DEPLOYING', 'succeed')).toBe('DEPLOYED');
    expect(transitionOf('BUILDING', 'fail')).toBe('BUILD_ERROR');
    expect(transitionOf('DEPLOYING', 'fail')).toBe('DEPLOYMENT_ERROR');
    expect(transitionOf('QUEUED', 'take_stop')).toBe('STOPPING');
    expect(transitionOf('STOPPING', 'succeed')).toBe('STOPPED');
    expect(transitionOf('STOPPING', 'fail')).toBe('STOP_ERROR');
    expect(transitionOf('QUEUED', 'take_restart')).toBe('RESTARTING');
    expect(transitionOf('RESTARTING', 'succeed')).toBe('RESTARTED');
    expect(transitionOf('RESTARTING', 'fail')).toBe('RESTART_ERROR');
    expect(transitionOf('QUEUED', 'cancel')).toBe('CANCELED');
    expect(transitionOf('BUILDING', 'cancel')).toBe('CANCELING');
    expect(transitionOf('CANCELING', 'cancel_done')).toBe('CANCELED');
  });

  it('refuses illegal actions with a conflict naming the state, and acting on what was never deployed', () => {
    expect(() => requestedState('environment', 'QUEUED', 'deploy', false)).toThrow(/it is QUEUED/);
    expect(() => requestedState('environment', 'BUILDING', 'stop', true)).toThrow(/it is BUILDING/);
    expect(() => requestedState('environment', 'STOPPED', 'restart', true)).toThrow(/it is STOPPED/);
    expect(() => requestedState('environment', 'STOPPED', 'stop', true)).toThrow(/it is STOPPED/);
    expect(() => requestedState('environment', 'DEPLOYING', 'delete', true)).toThrow(/it is DEPLOYING/);
    expect(() => requestedState('environment', 'READY', 'redeploy', false)).toThrow(/it has never been deployed \(it is READY\)/);
    expect(() => requestedState('environment', 'BUILD_ERROR', 'stop', false)).toThrow(/never been deployed/);
    expect(() => requestedState('environment', 'CANCELED', 'restart', false)).toThrow(/never been deployed/);
    expect(requestedState('environment', 'DEPLOYED', 'restart', true)).toBe('QUEUED');
    expect(requestedState('environment', 'STOPPED', 'redeploy', true)).toBe('QUEUED');
  });
});

/** The clusters port over the clusters module's own repository and summary (what app.ts wires from its service). */
function clustersPortOf(ctx: TestApp) {
  const { db } = ctx.database;
  return {
    async findClusterSummary(organizationId: string, clusterId: string) {
      const row = await findCluster(db, organizationId, clusterId);
      return row === undefined || row.status === 'DELETED' ? undefined : summaryOf(row);
    },
    async listOrganizationCluster(organizationId: string) {
      return (await listClusters(db, organizationId)).filter((row) => row.status !== 'DELETED');
    },
  };
}

/** A service beside the app's, on the same database: the side the variables module calls. */
function serviceOf(ctx: TestApp, variables: EnvironmentVariablesCopier = NO_ENVIRONMENT_VARIABLES): EnvironmentsService {
  return createEnvironmentsService({
    db: ctx.database.db,
    clock: ctx.clock,
    clusters: clustersPortOf(ctx),
    variables,
    deployments: {
      refuseBusyEnvironment: async () => {
        throw new Error('these tests delete no environment through this service');
      },
    },
  });
}

/** The deployments module beside the app's, on the same database: the side the cluster's agent calls. */
function agentOf(ctx: TestApp): DeploymentsService {
  const unused = async (): Promise<never> => {
    throw new Error('these tests request no deployment through this service');
  };
  return createDeploymentsService({
    db: ctx.database.db,
    clock: ctx.clock,
    services: { findService: async () => undefined, listEnvironmentServices: async () => [] },
    environments: serviceOf(ctx),
    clusters: clustersPortOf(ctx),
    variables: { resolveForDeployment: unused, explain: unused },
    deploymentGate: unused,
    metering: { resourceRunning: unused, resourceStopped: unused },
  });
}

describeEachDatabase('environments', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let projectId: string;
  let clusterId: string;

  async function post(url: string, payload?: Record<string, unknown>, auth = owner.auth) {
    return ctx().call(auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
  }

  async function get(url: string, auth = owner.auth) {
    return ctx().call(auth, { method: 'GET', url });
  }

  async function createCluster(orgId: string, auth: string): Promise<string> {
    const response = await post(`/organization/${orgId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, auth);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  }

  async function createProject(orgId: string, auth: string): Promise<string> {
    const response = await post(`/organization/${orgId}/project`, { name: uniqueName('project') }, auth);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ id: string }>().id;
  }

  async function createEnvironment(body: Record<string, unknown> = {}): Promise<EnvironmentView> {
    const response = await post(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, ...body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<EnvironmentView>();
  }

  async function status(environmentId: string): Promise<EnvironmentStatusView> {
    const response = await get(`/environment/${environmentId}/status`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<EnvironmentStatusView>();
  }

  /** Deploys and lets the agent's side walk the deployment to DEPLOYED. */
  async function deployed(environmentId: string): Promise<void> {
    const response = await post(`/environment/${environmentId}/deploy`);
    expect(response.statusCode, response.body).toBe(202);
    const deploymentId = response.json<ActionStatusView>().deployment_request_id ?? '';
    const agent = agentOf(ctx());
    for (const event of ['take', 'built', 'succeed'] as const) await agent.recordEnvironmentProgress(environmentId, deploymentId, event);
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    projectId = await createProject(organizationId, owner.auth);
    clusterId = await createCluster(organizationId, owner.auth);
  });

  describe('CRUD', () => {
    it('creates an environment on a cluster of the organization, with the reference shape', async () => {
      const name = uniqueName('staging');
      const response = await post(`/project/${projectId}/environment`, { name, cluster: clusterId, mode: 'STAGING' });
      expect(response.statusCode, response.body).toBe(201);
      const env = response.json<EnvironmentView & { last_updated_by?: string }>();
      expect(env).toMatchObject({
        name,
        mode: 'STAGING',
        cluster_id: clusterId,
        project: { id: projectId },
        organization: { id: organizationId },
        cloud_provider: { provider: 'AWS' },
        expires_at: null,
        last_updated_by: owner.id,
      });
      expect(env.cluster_name).toBe(env.cloud_provider.cluster);
      expect(env.created_at).toMatch(/\.\d{3}Z$/);

      const got = await get(`/environment/${env.id}`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual(env);
      const listed = await get(`/project/${projectId}/environment`);
      expect(listed.json<{ results: EnvironmentView[] }>().results.map((e) => e.id)).toContain(env.id);

      const fresh = await status(env.id);
      expect(fresh).toMatchObject({ id: env.id, state: 'READY', last_deployment_state: 'READY', deployment_status: 'NEVER_DEPLOYED', last_deployment_id: null });
    });

    it('accepts every mode, PREVIEW included, and defaults to DEVELOPMENT', async () => {
      for (const mode of ['PRODUCTION', 'STAGING', 'DEVELOPMENT', 'PREVIEW']) expect((await createEnvironment({ mode })).mode).toBe(mode);
      const response = await post(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId });
      expect(response.json<EnvironmentView>().mode).toBe('DEVELOPMENT');
    });

    it('refuses bad input with 400 and writes nothing', async () => {
      const before = await ctx().database.db.selectFrom('environments').select('id').execute();
      const bad: Record<string, unknown>[] = [
        { name: 'x', cluster: clusterId, mode: 'QA' },
        { name: '', cluster: clusterId },
        { name: 'tab\there', cluster: clusterId },
        { name: 'a'.repeat(256), cluster: clusterId },
        { name: 'ok', cluster: 'not-a-uuid' },
        { name: 'ok', cluster: clusterId, region: 'us-east-1' },
        { cluster: clusterId },
      ];
      for (const payload of bad) expectErrorBody(await post(`/project/${projectId}/environment`, payload), 400);
      const after = await ctx().database.db.selectFrom('environments').select('id').execute();
      expect(after.length).toBe(before.length);
    });

    it('keeps names unique per project (409, case-insensitive), and lets another project reuse one', async () => {
      const env = await createEnvironment({ name: uniqueName('Prod') });
      const again = expectErrorBody(await post(`/project/${projectId}/environment`, { name: env.name.toLowerCase(), cluster: clusterId }), 409);
      expect(again.message).toMatch(/already exists/);
      const otherProject = await createProject(organizationId, owner.auth);
      const elsewhere = await post(`/project/${otherProject}/environment`, { name: env.name, cluster: clusterId });
      expect(elsewhere.statusCode, elsewhere.body).toBe(201);
    });

    it('lets exactly one of two concurrent creates of one name win', async () => {
      const name = uniqueName('race');
      const answers = await Promise.all([0, 1, 2, 3].map(() => post(`/project/${projectId}/environment`, { name, cluster: clusterId })));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
      const rows = await ctx().database.db.selectFrom('environments').select('id').where('project_id', '=', projectId).where('name', '=', name).execute();
      expect(rows).toHaveLength(1);
    });

    it('answers 404 for a cluster of another organization or no cluster at all, and for another organization\'s project', async () => {
      const other = await ctx().signUpWithOrganization();
      const foreignCluster = await createCluster(other.organizationId, other.owner.auth);
      const foreignProject = await createProject(other.organizationId, other.owner.auth);
      expect(expectErrorBody(await post(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: foreignCluster }), 404).message).toMatch(
        foreignCluster,
      );
      expectErrorBody(await post(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: randomUUID() }), 404);
      expectErrorBody(await post(`/project/${foreignProject}/environment`, { name: uniqueName('env'), cluster: clusterId }), 404);
      expectErrorBody(await get(`/project/${foreignProject}/environment`), 404);

      const foreignEnvironment = await post(`/project/${foreignProject}/environment`, { name: uniqueName('env'), cluster: foreignCluster }, other.owner.auth);
      expect(foreignEnvironment.statusCode, foreignEnvironment.body).toBe(201);
      const foreignId = foreignEnvironment.json<EnvironmentView>().id;
      expectErrorBody(await get(`/environment/${foreignId}`), 404);
      expectErrorBody(await post(`/environment/${foreignId}/deploy`), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/environment/${foreignId}` }), 404);
      expectErrorBody(await get(`/environment/${randomUUID()}`), 404);
    });

    it('places an environment on the only cluster when none is named, and asks for one when there are several', async () => {
      const solo = await ctx().signUpWithOrganization();
      const soloProject = await createProject(solo.organizationId, solo.owner.auth);
      const none = expectErrorBody(await post(`/project/${soloProject}/environment`, { name: uniqueName('env') }, solo.owner.auth), 400);
      expect(none.message).toMatch(/0 clusters/);
      const soloCluster = await createCluster(solo.organizationId, solo.owner.auth);
      const placed = await post(`/project/${soloProject}/environment`, { name: uniqueName('env') }, solo.owner.auth);
      expect(placed.statusCode, placed.body).toBe(201);
      expect(placed.json<EnvironmentView>().cluster_id).toBe(soloCluster);
      await createCluster(solo.organizationId, solo.owner.auth);
      expect(expectErrorBody(await post(`/project/${soloProject}/environment`, { name: uniqueName('env') }, solo.owner.auth), 400).details?.[0]?.field).toBe(
        '/cluster',
      );
    });

    it('edits the name and mode (409 on a taken name) and counts environments in the project stats', async () => {
      const env = await createEnvironment({ mode: 'DEVELOPMENT' });
      const taken = await createEnvironment();
      const edited = await ctx().call(owner.auth, { method: 'PUT', url: `/environment/${env.id}`, payload: { name: uniqueName('renamed'), mode: 'PRODUCTION' } });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json<EnvironmentView>()).toMatchObject({ mode: 'PRODUCTION', cluster_id: clusterId });
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: `/environment/${env.id}`, payload: { name: taken.name.toUpperCase() } }), 409);
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: `/environment/${env.id}`, payload: { cluster: clusterId } }), 400);

      const statsProject = await createProject(organizationId, owner.auth);
      for (let i = 0; i < 3; i += 1) {
        expect((await post(`/project/${statsProject}/environment`, { name: uniqueName('env'), cluster: clusterId })).statusCode).toBe(201);
      }
      const stats = await get(`/organization/${organizationId}/project/stats`);
      expect(stats.statusCode, stats.body).toBe(200);
      const entry = stats.json<{ results: { id: string; environment_total_number: number; service_total_number: number }[] }>().results.find((r) => r.id === statsProject);
      expect(entry).toEqual({ id: statsProject, environment_total_number: 3, service_total_number: 0 });
      const project = await get(`/project/${statsProject}`);
      expect(project.json<{ associated_environments_count: number }>().associated_environments_count).toBe(3);
    });

    it('deletes an environment with 204, its history with it, and withdraws its queued job', async () => {
      const env = await createEnvironment();
      const deploy = await post(`/environment/${env.id}/deploy`);
      expect(deploy.statusCode, deploy.body).toBe(202);
      const jobId = deploy.json<ActionStatusView>().execution_id ?? '';
      const removed = await ctx().call(owner.auth, { method: 'DELETE', url: `/environment/${env.id}` });
      expect(removed.statusCode, removed.body).toBe(204);
      expect(removed.body).toBe('');
      expectErrorBody(await get(`/environment/${env.id}`), 404);
      const { db } = ctx().database;
      expect(await db.selectFrom('environment_deployments').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
      expect((await db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow()).status).toBe('CANCELLED');
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/environment/${env.id}` }), 404);
    });

    it('refuses to delete an environment the agent is working on (409 naming the state)', async () => {
      const env = await createEnvironment();
      const deploy = await post(`/environment/${env.id}/deploy`);
      await agentOf(ctx()).recordEnvironmentProgress(env.id, deploy.json<ActionStatusView>().deployment_request_id ?? '', 'take');
      const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/environment/${env.id}` }), 409);
      expect(refused.message).toMatch(/BUILDING/);
      expect((await get(`/environment/${env.id}`)).statusCode).toBe(200);
    });
  });

  describe('clone', () => {
    it('copies the settings into a new environment of the same project, never the history', async () => {
      const source = await createEnvironment({ mode: 'PRODUCTION' });
      await deployed(source.id);
      const response = await post(`/environment/${source.id}/clone`, { name: uniqueName('clone') });
      expect(response.statusCode, response.body).toBe(201);
      const clone = response.json<EnvironmentView>();
      expect(clone).toMatchObject({ mode: 'PRODUCTION', cluster_id: clusterId, project: { id: projectId } });
      expect(clone.id).not.toBe(source.id);
      expect(await status(clone.id)).toMatchObject({ state: 'READY', deployment_status: 'NEVER_DEPLOYED', last_deployment_id: null });
      const history = await get(`/environment/${clone.id}/deploymentHistoryV2`);
      expect(history.json<HistoryPage<unknown>>().results).toEqual([]);
      expect((await get(`/environment/${source.id}/deploymentHistoryV2`)).json<HistoryPage<unknown>>().results).toHaveLength(1);
    });

    it('takes the mode and cluster given, refuses a taken name (409) and another organization\'s cluster (404)', async () => {
      const source = await createEnvironment({ mode: 'STAGING' });
      const secondCluster = await createCluster(organizationId, owner.auth);
      const response = await post(`/environment/${source.id}/clone`, { name: uniqueName('clone'), cluster_id: secondCluster, mode: 'PREVIEW', apply_deployment_rule: true });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json<EnvironmentView>()).toMatchObject({ mode: 'PREVIEW', cluster_id: secondCluster });
      expectErrorBody(await post(`/environment/${source.id}/clone`, { name: source.name }), 409);
      const other = await ctx().signUpWithOrganization();
      const foreignCluster = await createCluster(other.organizationId, other.owner.auth);
      expectErrorBody(await post(`/environment/${source.id}/clone`, { name: uniqueName('clone'), cluster_id: foreignCluster }), 404);
      expectErrorBody(await post(`/environment/${source.id}/clone`, { name: uniqueName('clone'), mode: 'QA' }), 400);
    });

    it('calls the variables port inside the clone\'s transaction only when clone_variables is true', async () => {
      const calls: Array<{ from: string; to: string; inTransaction: boolean; cloneVisible: boolean }> = [];
      const recording: EnvironmentVariablesCopier = {
        async copyEnvironmentVariables(trx: Transaction<DB>, from: string, to: string) {
          const row = await trx.selectFrom('environments').select('id').where('id', '=', to).executeTakeFirst();
          calls.push({ from, to, inTransaction: trx.isTransaction, cloneVisible: row !== undefined });
        },
      };
      const environments = serviceOf(ctx(), recording);
      const source = await createEnvironment();
      const principal = { kind: 'user' as const, userId: owner.id, email: owner.email, name: null };
      const without = await environments.cloneEnvironment(principal, source.id, { name: uniqueName('plain') });
      expect(calls).toEqual([]);
      const withVariables = await environments.cloneEnvironment(principal, source.id, { name: uniqueName('vars'), clone_variables: true });
      expect(calls).toEqual([{ from: source.id, to: withVariables.id, inTransaction: true, cloneVisible: true }]);
      expect(without.id).not.toBe(withVariables.id);
    });

    it('copies the environment\'s variables and secrets through the variables module only when asked', async () => {
      const source = await createEnvironment();
      const variable = await post(`/environment/${source.id}/environmentVariable`, { key: 'CLONED_SETTING', value: 'from-source' });
      expect(variable.statusCode, variable.body).toBe(201);
      const secret = await post(`/environment/${source.id}/secret`, { key: 'CLONED_SECRET', value: 'sealed-value' });
      expect(secret.statusCode, secret.body).toBe(201);

      const ownKeys = async (environmentId: string, kind: 'environmentVariable' | 'secret') => {
        const response = await get(`/environment/${environmentId}/${kind}`);
        expect(response.statusCode, response.body).toBe(200);
        return response
          .json<{ results: { key: string; scope: string; value?: string }[] }>()
          .results.filter((v) => v.scope === 'ENVIRONMENT')
          .map((v) => [v.key, v.value]);
      };
      const plain = (await post(`/environment/${source.id}/clone`, { name: uniqueName('plain') })).json<EnvironmentView>();
      expect(await ownKeys(plain.id, 'environmentVariable')).toEqual([]);
      expect(await ownKeys(plain.id, 'secret')).toEqual([]);
      const withVariables = await post(`/environment/${source.id}/clone`, { name: uniqueName('vars'), clone_variables: true });
      expect(withVariables.statusCode, withVariables.body).toBe(201);
      const cloneId = withVariables.json<EnvironmentView>().id;
      expect(await ownKeys(cloneId, 'environmentVariable')).toEqual([['CLONED_SETTING', 'from-source']]);
      expect(await ownKeys(cloneId, 'secret')).toEqual([['CLONED_SECRET', undefined]]);
    });

    it('writes nothing when the variables port fails', async () => {
      const failing: EnvironmentVariablesCopier = {
        async copyEnvironmentVariables() {
          throw new Error('variables store unavailable');
        },
      };
      const source = await createEnvironment();
      const name = uniqueName('doomed');
      const principal = { kind: 'user' as const, userId: owner.id, email: owner.email, name: null };
      await expect(serviceOf(ctx(), failing).cloneEnvironment(principal, source.id, { name, clone_variables: true })).rejects.toThrow(/unavailable/);
      expect(await ctx().database.db.selectFrom('environments').select('id').where('name', '=', name).execute()).toEqual([]);
    });
  });

  describe('actions', () => {
    it('queues a deploy (202, the reference Status) with its history record and job in one go, and stays QUEUED saying why', async () => {
      const env = await createEnvironment();
      const response = await post(`/environment/${env.id}/deploy`);
      expect(response.statusCode, response.body).toBe(202);
      const body = response.json<ActionStatusView>();
      expect(body).toMatchObject({
        id: env.id,
        state: 'QUEUED',
        service_deployment_status: 'NEVER_DEPLOYED',
        is_part_last_deployment: true,
        status_details: { action: 'DEPLOY', status: 'QUEUED', sub_action: 'NONE' },
        deployment_requests_count: 1,
      });
      expect(body.message).toMatch(/waiting for the cluster's agent/);

      const { db } = ctx().database;
      const job = await db.selectFrom('jobs').selectAll().where('id', '=', body.execution_id ?? '').executeTakeFirstOrThrow();
      expect(job).toMatchObject({ kind: ENVIRONMENT_ACTION_JOB, serial_key: `environment:${env.id}`, status: 'QUEUED' });
      const record = await db.selectFrom('environment_deployments').selectAll().where('id', '=', body.deployment_request_id ?? '').executeTakeFirstOrThrow();
      expect(record).toMatchObject({ environment_id: env.id, action: 'DEPLOY', status: 'QUEUED', job_id: job.id });

      // The in-process worker polls every 50 ms here; no agent exists to take the job, so nothing pretends to.
      await new Promise((resolve) => setTimeout(resolve, 600));
      const later = await status(env.id);
      expect(later).toMatchObject({ state: 'QUEUED', last_deployment_state: 'QUEUED', deployment_status: 'NEVER_DEPLOYED', origin: 'API' });
      expect(later.message).toMatch(/waiting for the cluster's agent/);
      expect(later.triggered_by).toBeTruthy();
      expect((await db.selectFrom('jobs').select('status').where('id', '=', job.id).executeTakeFirstOrThrow()).status).toBe('QUEUED');

      const twice = expectErrorBody(await post(`/environment/${env.id}/deploy`), 409);
      expect(twice.message).toMatch(/it is QUEUED/);
    });

    it('lets exactly one of two concurrent deploys queue, with one history record and one job', async () => {
      const env = await createEnvironment();
      const answers = await Promise.all([0, 1, 2].map(() => post(`/environment/${env.id}/deploy`)));
      expect(answers.map((r) => r.statusCode).sort()).toEqual([202, 409, 409]);
      const records = await ctx().database.db.selectFrom('environment_deployments').select('job_id').where('environment_id', '=', env.id).execute();
      expect(records).toHaveLength(1);
      const jobs = await ctx().database.db.selectFrom('jobs').select('id').where('serial_key', '=', `environment:${env.id}`).execute();
      expect(jobs.map((j) => j.id)).toEqual(records.map((r) => r.job_id));
    });

    it('refuses redeploy, stop and restart of an environment never deployed, naming the state', async () => {
      const env = await createEnvironment();
      for (const path of ['redeploy', 'stop', 'service/restart-service']) {
        expect(expectErrorBody(await post(`/environment/${env.id}/${path}`), 409).message).toMatch(/READY/);
      }
      expect(expectErrorBody(await post(`/environment/${env.id}/cancelDeployment`), 409).message).toMatch(/READY/);
      expect((await status(env.id)).state).toBe('READY');
      expect(await ctx().database.db.selectFrom('environment_deployments').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
    });

    it('cancels a queued deploy at once and withdraws its job', async () => {
      const env = await createEnvironment();
      const deploy = (await post(`/environment/${env.id}/deploy`)).json<ActionStatusView>();
      const canceled = await post(`/environment/${env.id}/cancelDeployment`);
      expect(canceled.statusCode, canceled.body).toBe(202);
      expect(canceled.json<EnvironmentStatusView>()).toMatchObject({ state: 'CANCELED', last_deployment_state: 'CANCELED' });
      const job = await ctx().database.db.selectFrom('jobs').select('status').where('id', '=', deploy.execution_id ?? '').executeTakeFirstOrThrow();
      expect(job.status).toBe('CANCELLED');
      expect(expectErrorBody(await post(`/environment/${env.id}/cancelDeployment`), 409).message).toMatch(/CANCELED/);
      const again = await post(`/environment/${env.id}/deploy`);
      expect(again.statusCode, again.body).toBe(202);
    });

    it('cancels a running deploy through CANCELING when the agent reaches its next step', async () => {
      const env = await createEnvironment();
      const deploymentId = (await post(`/environment/${env.id}/deploy`)).json<ActionStatusView>().deployment_request_id ?? '';
      const agent = agentOf(ctx());
      expect((await agent.recordEnvironmentProgress(env.id, deploymentId, 'take')).state).toBe('BUILDING');
      const canceling = await post(`/environment/${env.id}/cancelDeployment`);
      expect(canceling.statusCode, canceling.body).toBe(202);
      expect(canceling.json<EnvironmentStatusView>().state).toBe('CANCELING');
      await expect(agent.recordEnvironmentProgress(env.id, deploymentId, 'built')).rejects.toThrow(/CANCELING/);
      expect((await agent.recordEnvironmentProgress(env.id, deploymentId, 'cancel_done')).state).toBe('CANCELED');
    });

    it('walks deploy → DEPLOYED, then redeploy, stop, restart and their errors through the one table', async () => {
      const env = await createEnvironment();
      const agent = agentOf(ctx());
      await deployed(env.id);
      expect(await status(env.id)).toMatchObject({ state: 'DEPLOYED', deployment_status: 'UP_TO_DATE', last_deployment_state: 'DEPLOYED' });

      // A mode change is deployed configuration: OUT_OF_DATE until the next deployment.
      await ctx().call(owner.auth, { method: 'PUT', url: `/environment/${env.id}`, payload: { mode: 'PRODUCTION' } });
      expect((await status(env.id)).deployment_status).toBe('OUT_OF_DATE');

      const redeploy = await post(`/environment/${env.id}/redeploy`);
      expect(redeploy.statusCode, redeploy.body).toBe(202);
      const redeployed = redeploy.json<EnvironmentStatusView>();
      expect(redeployed).toMatchObject({ state: 'QUEUED', deployment_status: 'OUT_OF_DATE' });
      expect(redeployed.message).toMatch(/redeploy queued: waiting for the cluster's agent/);
      expect((await agent.recordEnvironmentProgress(env.id, redeployed.deployment_request_id ?? '', 'take')).state).toBe('BUILDING');
      expect(expectErrorBody(await post(`/environment/${env.id}/stop`), 409).message).toMatch(/BUILDING/);
      expect((await agent.recordEnvironmentProgress(env.id, redeployed.deployment_request_id ?? '', 'fail', 'image build failed')).state).toBe('BUILD_ERROR');
      expect((await status(env.id)).message).toBe('image build failed');

      const stop = await post(`/environment/${env.id}/stop`);
      expect(stop.statusCode, stop.body).toBe(202);
      const stopId = stop.json<EnvironmentStatusView>().deployment_request_id ?? '';
      expect((await agent.recordEnvironmentProgress(env.id, stopId, 'take')).state).toBe('STOPPING');
      expect((await agent.recordEnvironmentProgress(env.id, stopId, 'succeed')).state).toBe('STOPPED');
      expect(expectErrorBody(await post(`/environment/${env.id}/stop`), 409).message).toMatch(/STOPPED/);
      expect(expectErrorBody(await post(`/environment/${env.id}/service/restart-service`, {}), 409).message).toMatch(/STOPPED/);

      await deployed(env.id);
      expect((await status(env.id)).deployment_status).toBe('UP_TO_DATE');
      const restart = await post(`/environment/${env.id}/service/restart-service`, {});
      expect(restart.statusCode, restart.body).toBe(202);
      const restarting = restart.json<ActionStatusView>();
      expect(restarting).toMatchObject({ state: 'QUEUED', status_details: { action: 'RESTART', status: 'QUEUED' } });
      const restartId = restarting.deployment_request_id ?? '';
      expect((await agent.recordEnvironmentProgress(env.id, restartId, 'take')).state).toBe('RESTARTING');
      expect((await agent.recordEnvironmentProgress(env.id, restartId, 'succeed')).state).toBe('RESTARTED');

      const history = (await get(`/environment/${env.id}/deploymentHistoryV2`)).json<HistoryPage<{ trigger_action: string; status: string; action_status: string }>>();
      expect(history.results.map((r) => [r.trigger_action, r.status, r.action_status])).toEqual([
        ['RESTART', 'RESTARTED', 'SUCCESS'],
        ['DEPLOY', 'DEPLOYED', 'SUCCESS'],
        ['STOP', 'STOPPED', 'SUCCESS'],
        ['DEPLOY', 'BUILD_ERROR', 'ERROR'],
        ['DEPLOY', 'DEPLOYED', 'SUCCESS'],
      ]);
    });

    it('refuses progress the table does not have, and reports on an action that is not the current one', async () => {
      const env = await createEnvironment();
      const first = (await post(`/environment/${env.id}/deploy`)).json<ActionStatusView>().deployment_request_id ?? '';
      const agent = agentOf(ctx());
      await expect(agent.recordEnvironmentProgress(env.id, first, 'succeed')).rejects.toThrow(/it is QUEUED/);
      await post(`/environment/${env.id}/cancelDeployment`);
      await post(`/environment/${env.id}/deploy`);
      await expect(agent.recordEnvironmentProgress(env.id, first, 'take')).rejects.toThrow(/not the environment's current action/);
    });

    it('refuses to queue work for a cluster that was deleted (409), and still shows the environment', async () => {
      const doomedCluster = await createCluster(organizationId, owner.auth);
      const env = await createEnvironment({ cluster: doomedCluster });
      // The cluster's delete action ends in DELETED once its infrastructure is gone; its row is kept until then.
      await ctx().database.db.updateTable('clusters').set({ status: 'DELETED' }).where('id', '=', doomedCluster).execute();
      expect(expectErrorBody(await post(`/environment/${env.id}/deploy`), 409).message).toMatch(/no longer exists/);
      const shown = await get(`/environment/${env.id}`);
      expect(shown.statusCode, shown.body).toBe(200);
      expect(shown.json<EnvironmentView>()).toMatchObject({ cluster_id: doomedCluster, cloud_provider: {} });
      expect(shown.json<EnvironmentView>().cluster_name).toBeUndefined();
    });

    it('refuses restarting services that are not in the environment with 400', async () => {
      const env = await createEnvironment();
      await deployed(env.id);
      const refused = expectErrorBody(await post(`/environment/${env.id}/service/restart-service`, { application_ids: [randomUUID()] }), 400);
      expect(refused.details?.[0]?.field).toBe('/application_ids/0');
      expect((await status(env.id)).state).toBe('DEPLOYED');
    });
  });

  describe('variables and deployed configuration (SPEC.md variable rule 4)', () => {
    it('shows a deployed environment OUT_OF_DATE after its own or its project\'s variables change, UP_TO_DATE after redeploy', async () => {
      const env = await createEnvironment();
      const other = await createEnvironment();
      await deployed(env.id);
      await deployed(other.id);
      expect((await status(env.id)).deployment_status).toBe('UP_TO_DATE');

      const own = await post(`/environment/${env.id}/environmentVariable`, { key: 'FEATURE_FLAG', value: 'on' });
      expect(own.statusCode, own.body).toBe(201);
      expect((await status(env.id)).deployment_status).toBe('OUT_OF_DATE');
      expect((await status(other.id)).deployment_status).toBe('UP_TO_DATE');

      await deployed(env.id);
      expect((await status(env.id)).deployment_status).toBe('UP_TO_DATE');
      const shared = await post(`/project/${projectId}/environmentVariable`, { key: `SHARED_${Date.now()}`, value: 'x' });
      expect(shared.statusCode, shared.body).toBe(201);
      expect((await status(env.id)).deployment_status).toBe('OUT_OF_DATE');
      expect((await status(other.id)).deployment_status).toBe('OUT_OF_DATE');
    });
  });

  describe('deployment history', () => {
    it('pages newest first with pageSize and a cursor, on both history operations', async () => {
      const env = await createEnvironment();
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const deploy = await post(`/environment/${env.id}/deploy`);
        expect(deploy.statusCode, deploy.body).toBe(202);
        ids.push(deploy.json<ActionStatusView>().deployment_request_id ?? '');
        expect((await post(`/environment/${env.id}/cancelDeployment`)).statusCode).toBe(202);
      }
      const newestFirst = [...ids].reverse();

      const seen: string[] = [];
      const pages: number[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/environment/${env.id}/deploymentHistoryV2?pageSize=2${cursor === null ? '' : `&cursor=${cursor}`}`;
        const response = await get(url);
        expect(response.statusCode, response.body).toBe(200);
        const page = response.json<HistoryPage<{ identifier: { execution_id: string; environment_id: string }; status: string; total_duration: string }>>();
        expect(page.page_size).toBe(2);
        pages.push(page.page);
        for (const entry of page.results) {
          expect(entry.identifier.environment_id).toBe(env.id);
          expect(entry.status).toBe('CANCELED');
          expect(entry.total_duration).toMatch(/^PT\d+(\.\d+)?S$/);
        }
        const records = await ctx().database.db.selectFrom('environment_deployments').select(['id', 'job_id']).where('environment_id', '=', env.id).execute();
        const byJob = new Map(records.map((r) => [r.job_id, r.id]));
        seen.push(...page.results.map((r) => byJob.get(r.identifier.execution_id) ?? 'unknown'));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(newestFirst);
      expect(pages).toEqual([1, 2, 3]);

      const v1 = (await get(`/environment/${env.id}/deploymentHistory?pageSize=3`)).json<HistoryPage<{ id: string; status: string; origin: string; applications: unknown[] }>>();
      expect(v1.results.map((r) => r.id)).toEqual(newestFirst.slice(0, 3));
      expect(v1.results[0]).toMatchObject({ status: 'CANCELED', origin: 'API', applications: [] });
      const rest = (await get(`/environment/${env.id}/deploymentHistory?startId=${v1.next_cursor}`)).json<HistoryPage<{ id: string }>>();
      expect(rest.results.map((r) => r.id)).toEqual(newestFirst.slice(3));
      expect(rest.next_cursor).toBeNull();
      expect(rest.page_size).toBe(20);
    });

    it('refuses a bad page size or a cursor of another environment with 400', async () => {
      const env = await createEnvironment();
      const other = await createEnvironment();
      const foreign = (await post(`/environment/${other.id}/deploy`)).json<ActionStatusView>().deployment_request_id ?? '';
      for (const query of ['pageSize=0', 'pageSize=101', 'pageSize=two', `cursor=${foreign}`, 'cursor=nope']) {
        expectErrorBody(await get(`/environment/${env.id}/deploymentHistoryV2?${query}`), 400);
      }
      expectErrorBody(await get(`/environment/${env.id}/deploymentHistory?startId=${foreign}`), 400);
    });
  });

  describe('permissions', () => {
    it('lets a DEPLOY token act on an environment but not create one, and a READ token only read', async () => {
      const env = await createEnvironment();
      const deployToken = `Token ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('deploy'), scope: 'DEPLOY' })}`;
      const readToken = `Token ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('read'), scope: 'READ' })}`;
      expect((await post(`/environment/${env.id}/deploy`, undefined, deployToken)).statusCode).toBe(202);
      expectErrorBody(await post(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId }, deployToken), 403);
      expect((await get(`/environment/${env.id}/status`, readToken)).statusCode).toBe(200);
      expectErrorBody(await post(`/environment/${env.id}/cancelDeployment`, undefined, readToken), 403);
    });
  });
},
  // These tests read what a request writes (its job QUEUED, a cancel withdrawing it): no worker races them. The worker's
  // side — dispatching the job to the cluster's agent — is test/agent-protocol.test.ts's.
  { jobs: { run: false } },
);
