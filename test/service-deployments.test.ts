import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readJson } from '../src/db/db.json.ts';
import { DEPLOYMENT_STATES as SERVICE_STATES, DEPLOYMENT_TRANSITIONS as SERVICE_TRANSITIONS, transitionOf } from '../src/engine/deployment-states.ts';
import { SERVICE_ACTION_JOB } from '../src/modules/deployments/deployments.requests.ts';
import type { DeploymentSnapshot } from '../src/modules/deployments/deployments.service.ts';
import { requestedState } from '../src/modules/deployments/deployments.states.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Service deployments (issue 8 part 5): the state machine and its 409s; a deploy that writes its record (with the
 * settings and the resolved variable snapshot, secrets sealed), its log lines, its runtime state and its job in one
 * transaction and stays QUEUED, saying it waits for the cluster's agent; the agent (through the real agent protocol
 * of a self-managed cluster) driving it to DEPLOYED with logs followed live over a real HTTP connection; metering;
 * OUT_OF_DATE after a variable or settings change; stop, cancel, history, and delete while busy.
 */

interface StatusView {
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

interface LogLine {
  id: string;
  created_at: string;
  message: string;
  deployment_id: string;
  stream: string;
  seq: number;
  version?: string;
}

interface AgentTask {
  id: string;
  subject_type: string;
  subject_id: string;
  deployment_id: string;
  action: string;
  payload: Record<string, unknown>;
  lease_id: string;
}

const SECRET_VALUE = 's3cr3t-value-never-shown';
/** Full commit ids: a deploy names one commit by its full id (an abbreviation is refused). */
const FIRST_COMMIT = 'abc1234def0123456789abcdef0123456789abcd';
const SECOND_COMMIT = 'abc1234555555555555555555555555555555555';

describe('service state machine', () => {
  it('gives every state an entry, and every target is a state', () => {
    expect(Object.keys(SERVICE_TRANSITIONS).sort()).toEqual([...SERVICE_STATES].sort());
    for (const moves of Object.values(SERVICE_TRANSITIONS)) {
      for (const to of Object.values(moves)) expect(SERVICE_STATES).toContain(to);
    }
  });

  it('walks QUEUED → BUILDING → DEPLOYING → DEPLOYED, the errors, stop, restart, cancel and delete', () => {
    expect(requestedState('service', 'READY', 'deploy', false)).toBe('QUEUED');
    expect(transitionOf('QUEUED', 'take_deploy')).toBe('BUILDING');
    expect(transitionOf('BUILDING', 'built')).toBe('DEPLOYING');
    expect(transitionOf('BUILDING', 'fail')).toBe('BUILD_ERROR');
    expect(transitionOf('DEPLOYING', 'fail')).toBe('DEPLOYMENT_ERROR');
    expect(transitionOf('DEPLOYING', 'succeed')).toBe('DEPLOYED');
    expect(requestedState('service', 'DEPLOYED', 'stop', true)).toBe('QUEUED');
    expect(transitionOf('QUEUED', 'take_stop')).toBe('STOPPING');
    expect(transitionOf('STOPPING', 'succeed')).toBe('STOPPED');
    expect(transitionOf('QUEUED', 'take_restart')).toBe('RESTARTING');
    expect(transitionOf('RESTARTING', 'succeed')).toBe('RESTARTED');
    expect(transitionOf('QUEUED', 'cancel')).toBe('CANCELED');
    expect(transitionOf('BUILDING', 'cancel')).toBe('CANCELING');
    expect(transitionOf('CANCELING', 'cancel_done')).toBe('CANCELED');
    expect(requestedState('service', 'STOPPED', 'delete', true)).toBe('DELETED');
    // What the table lacks answers 409 naming the state.
    expect(() => requestedState('service', 'QUEUED', 'deploy', false)).toThrow(/cannot deploy service: it is QUEUED/);
    expect(() => requestedState('service', 'BUILDING', 'delete', false)).toThrow(/it is BUILDING/);
    expect(() => requestedState('service', 'READY', 'stop', false)).toThrow(/cannot stop service: it has never been deployed \(it is READY\)/);
    expect(() => requestedState('service', 'STOPPED', 'stop', true)).toThrow(/it is STOPPED/);
  });
});

describeEachDatabase('service deployments', (ctx) => {
  /** A self-managed cluster with its operator enrolled: the agent credential drives tasks over the agent protocol. */
  function clusterWithAgent(organizationId: string, owner: TestUser): Promise<{ clusterId: string; credential: string }> {
    return enrolledCluster(ctx(), organizationId, owner);
  }

  interface World {
    owner: TestUser;
    organizationId: string;
    projectId: string;
    environmentId: string;
    applicationId: string;
    credential: string;
  }

  async function post(auth: string, url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await post(auth, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await clusterWithAgent(organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const applicationId = await created(owner.auth, `/environment/${environmentId}/application`, {
      name: 'web',
      git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    return { owner, organizationId, projectId, environmentId, applicationId, credential };
  }

  async function withVariables(w: World): Promise<void> {
    await created(w.owner.auth, `/project/${w.projectId}/environmentVariable`, { key: 'GREETING', value: 'from-project' });
    await created(w.owner.auth, `/environment/${w.environmentId}/environmentVariable`, { key: 'REGION', value: 'eu' });
    await created(w.owner.auth, `/application/${w.applicationId}/environmentVariable`, { key: 'GREETING', value: 'from-application' });
    await created(w.owner.auth, `/application/${w.applicationId}/environmentVariable`, { key: 'WHERE', value: '$REGION' });
    await created(w.owner.auth, `/application/${w.applicationId}/secret`, { key: 'API_TOKEN', value: SECRET_VALUE });
  }

  async function status(w: World): Promise<StatusView> {
    const response = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/status` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<StatusView>();
  }

  async function deploy(w: World, payload: Record<string, unknown> = {}): Promise<StatusView> {
    const response = await post(w.owner.auth, `/application/${w.applicationId}/deploy`, payload);
    expect(response.statusCode, response.body).toBe(202);
    return response.json<StatusView>();
  }

  async function logs(w: World, query = ''): Promise<LogLine[]> {
    const response = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/log${query}` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: LogLine[] }>().results;
  }

  // ---- the agent's side, over the agent protocol --------------------------------------------------------------

  async function leaseTask(w: World, deploymentId: string): Promise<AgentTask> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=1' });
      expect(response.statusCode, response.body).toBe(200);
      const task = response.json<{ tasks: AgentTask[] }>().tasks.find((candidate) => candidate.deployment_id === deploymentId);
      if (task !== undefined) return task;
    }
    throw new Error(`no task was dispatched for deployment ${deploymentId}`);
  }

  function agentReporter(w: World, task: AgentTask) {
    let seq = 0;
    let logSeq = 0;
    return {
      async report(event: string, message?: string): Promise<void> {
        seq += 1;
        const response = await post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/progress`, {
          lease_id: task.lease_id,
          seq,
          event,
          ...(message === undefined ? {} : { message }),
        });
        expect(response.statusCode, response.body).toBe(200);
      },
      async log(lines: Array<{ stream: 'stdout' | 'stderr'; line: string }>): Promise<void> {
        const numbered = lines.map((line) => {
          logSeq += 1;
          return { ...line, seq: logSeq, at: new Date().toISOString() };
        });
        const response = await post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/logs`, { lease_id: task.lease_id, lines: numbered });
        expect(response.statusCode, response.body).toBe(200);
      },
    };
  }

  /** Deploys and has the agent carry the deploy out to DEPLOYED. */
  async function deployToRunning(w: World): Promise<string> {
    const queued = await deploy(w);
    const deploymentId = queued.deployment_request_id as string;
    const agent = agentReporter(w, await leaseTask(w, deploymentId));
    await agent.report('take');
    await agent.report('built');
    await agent.report('succeed');
    expect((await status(w)).state).toBe('DEPLOYED');
    return deploymentId;
  }

  it('starts READY and NEVER_DEPLOYED, and refuses what needs a deployment with 409 naming the state', async () => {
    const w = await world();
    const initial = await status(w);
    expect(initial).toMatchObject({
      id: w.applicationId,
      state: 'READY',
      service_deployment_status: 'NEVER_DEPLOYED',
      is_part_last_deployment: false,
      deployment_request_id: null,
      status_details: { action: 'DEPLOY', status: 'NEVER', sub_action: 'NONE' },
    });
    for (const action of ['redeploy', 'stop', 'restart-service']) {
      const refused = expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/${action}`), 409);
      expect(refused.message).toMatch(/it is READY/);
    }
    expect(expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/cancelDeployment`), 409).message).toMatch(/READY/);
    expect(await logs(w)).toEqual([]);
    const history = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/deploymentHistoryV2` });
    expect(history.json()).toMatchObject({ page: 1, results: [], next_cursor: null });
  });

  it('refuses bad deploy input with 4xx and writes nothing', async () => {
    const w = await world();
    expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/deploy`, { git_commit_id: 'not-a-commit' }), 400);
    expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/deploy`, { git_commit_id: 'abc1234', extra: true }), 400);
    // An abbreviated commit id passes the schema (it is hex) and is refused with what to give instead.
    const abbreviated = expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/deploy`, { git_commit_id: 'abc1234' }), 400);
    expect(abbreviated.message).toBe(
      'git_commit_id "abc1234" is abbreviated: give the full commit id (40 hexadecimal digits, as `git rev-parse abc1234` prints it); the build fetches exactly one commit, and git hosts serve a commit by its full id only',
    );
    expect(abbreviated.details).toEqual([{ field: '/git_commit_id', message: 'must be a full commit id (40 hexadecimal digits)' }]);
    const tag = expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/deploy`, { image_tag: 'v1' }), 400);
    expect(tag.details?.[0]?.field).toBe('/image_tag');
    expectErrorBody(await post(w.owner.auth, `/application/0190f0b2-6c5e-7000-8000-00000000dead/deploy`, {}), 404);
    expectErrorBody(await post(w.owner.auth, `/application/not-a-uuid/deploy`, {}), 400);
    const broken = await ctx().database.db.selectFrom('service_deployments').selectAll().where('service_id', '=', w.applicationId).execute();
    expect(broken).toEqual([]);
    expect(await ctx().database.db.selectFrom('service_runtime').selectAll().where('service_id', '=', w.applicationId).execute()).toEqual([]);
  });

  it('writes the deployment with its snapshot, log lines, state and job in one go, and stays QUEUED for the agent', async () => {
    const w = await world();
    await withVariables(w);
    const queued = await deploy(w, { git_commit_id: FIRST_COMMIT });
    expect(queued).toMatchObject({
      id: w.applicationId,
      state: 'QUEUED',
      service_deployment_status: 'NEVER_DEPLOYED',
      is_part_last_deployment: true,
      status_details: { action: 'DEPLOY', status: 'QUEUED', sub_action: 'NONE' },
      deployment_requests_count: 1,
      message: "deploy queued: waiting for the cluster's agent to take it",
    });
    const deploymentId = queued.deployment_request_id as string;
    const { db } = ctx().database;

    const record = await db.selectFrom('service_deployments').selectAll().where('id', '=', deploymentId).executeTakeFirstOrThrow();
    expect(record).toMatchObject({ service_id: w.applicationId, action: 'DEPLOY', status: 'QUEUED', git_commit_id: FIRST_COMMIT, finished_at: null });
    expect(JSON.stringify(record)).not.toContain(SECRET_VALUE);
    const snapshot = readJson<DeploymentSnapshot>(record.snapshot);
    expect(snapshot.service).toMatchObject({ id: w.applicationId, kind: 'APPLICATION', name: 'web', environmentId: w.environmentId });
    const byKey = new Map((snapshot.variables?.variables ?? []).map((variable) => [variable.key, variable]));
    // The narrower scope wins, aliases resolve, secrets travel sealed, built-ins are there.
    expect(byKey.get('GREETING')).toMatchObject({ scope: 'APPLICATION', value: 'from-application' });
    expect(byKey.get('REGION')).toMatchObject({ scope: 'ENVIRONMENT', value: 'eu' });
    expect(byKey.get('WHERE')).toMatchObject({ value: 'eu', alias_chain: ['WHERE', 'REGION'] });
    expect(byKey.get('API_TOKEN')?.sealed?.envelope).toEqual(expect.any(String));
    expect(byKey.get('API_TOKEN')?.value).toBeUndefined();
    expect(byKey.get('PLATFORM_BRANCH_NAME')).toMatchObject({ scope: 'BUILT_IN', value: 'main' });
    expect(record.variables_hash).toBe(snapshot.variables?.content_hash);

    const job = await db.selectFrom('jobs').selectAll().where('id', '=', record.job_id).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ kind: SERVICE_ACTION_JOB, serial_key: `service:${w.applicationId}` });
    expect(readJson(job.payload)).toMatchObject({ serviceId: w.applicationId, deploymentId, action: 'deploy', kind: 'APPLICATION' });
    expect(await db.selectFrom('service_runtime').selectAll().where('service_id', '=', w.applicationId).executeTakeFirstOrThrow()).toMatchObject({
      status: 'QUEUED',
      last_deployment_id: deploymentId,
      deployed_deployment_id: null,
    });

    // The record, as the API shows it: plain values, the secret only as sealed.
    const shown = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/deploymentHistory/${deploymentId}` });
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.body).not.toContain(SECRET_VALUE);
    expect(shown.body).not.toContain(byKey.get('API_TOKEN')?.sealed?.envelope ?? 'unreachable');
    const variables = shown.json<{ variables: { results: Array<{ key: string; sealed: boolean; value?: string }> } }>().variables.results;
    expect(variables.find((variable) => variable.key === 'API_TOKEN')).toEqual(expect.objectContaining({ sealed: true }));
    expect(variables.find((variable) => variable.key === 'API_TOKEN')).not.toHaveProperty('value');

    const lines = await logs(w);
    expect(lines.map((line) => line.message)).toEqual([
      expect.stringMatching(/^deploy of application web requested by /),
      expect.stringMatching(/^variables snapshot [0-9a-f]{12}: \d+ variable\(s\)$/),
      "deploy queued: waiting for the cluster's agent to take it",
    ]);
    expect(lines.every((line) => line.stream === 'system' && line.deployment_id === deploymentId && line.version === FIRST_COMMIT)).toBe(true);
    expect(lines.map((line) => line.seq)).toEqual([1, 2, 3]);

    // Nothing takes it without an agent: it stays QUEUED, and saying so.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await status(w)).toMatchObject({ state: 'QUEUED', message: "deploy queued: waiting for the cluster's agent to take it" });
    expect(expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/deploy`, {}), 409).message).toMatch(/it is QUEUED/);

    const history = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/deploymentHistoryV2` });
    expect(history.json()).toMatchObject({
      results: [
        {
          identifier: { name: 'web', service_id: w.applicationId, service_type: 'APPLICATION', execution_id: record.job_id },
          status: 'QUEUED',
          status_details: { action: 'DEPLOY', status: 'QUEUED' },
          details: { commit: { git_commit_id: FIRST_COMMIT } },
          deployment_id: deploymentId,
        },
      ],
    });
    const v1 = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/deploymentHistory` });
    expect(v1.json<{ results: Array<Record<string, unknown>> }>().results[0]).toMatchObject({ id: deploymentId, name: 'web', state: 'QUEUED' });
    expect(v1.json<{ results: Array<Record<string, unknown>> }>().results[0]).not.toHaveProperty('status');

    const canceled = await post(w.owner.auth, `/application/${w.applicationId}/cancelDeployment`);
    expect(canceled.statusCode, canceled.body).toBe(202);
    expect(canceled.json<StatusView>()).toMatchObject({ state: 'CANCELED', status_details: { status: 'CANCELED' } });
    expect(await db.selectFrom('service_deployments').select(['status', 'finished_at']).where('id', '=', deploymentId).executeTakeFirstOrThrow()).toMatchObject({
      status: 'CANCELED',
      finished_at: expect.any(String),
    });
  });

  it('lets one of two concurrent deploys win; the other answers 409', async () => {
    const w = await world();
    const [first, second] = await Promise.all([
      post(w.owner.auth, `/application/${w.applicationId}/deploy`, {}),
      post(w.owner.auth, `/application/${w.applicationId}/deploy`, {}),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([202, 409]);
    expectErrorBody(first.statusCode === 409 ? first : second, 409);
    const records = await ctx().database.db.selectFrom('service_deployments').selectAll().where('service_id', '=', w.applicationId).execute();
    expect(records).toHaveLength(1);
    const jobs = await ctx().database.db.selectFrom('jobs').selectAll().where('serial_key', '=', `service:${w.applicationId}`).execute();
    expect(jobs).toHaveLength(1);
  });

  it('follows the agent to DEPLOYED with logs streamed live, meters it, and shows OUT_OF_DATE after a change', async () => {
    const w = await world();
    await withVariables(w);
    const queued = await deploy(w, { git_commit_id: SECOND_COMMIT });
    const deploymentId = queued.deployment_request_id as string;
    const task = await leaseTask(w, deploymentId);
    expect(task).toMatchObject({ subject_type: 'SERVICE', subject_id: w.applicationId, action: 'deploy' });
    expect(task.payload).toMatchObject({ service_id: w.applicationId, deployment_id: deploymentId, service_type: 'APPLICATION' });
    const agent = agentReporter(w, task);

    // The lease holder, and only it, reads the deployment with its values opened (the secret included).
    const spec = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: `/operator/v1/tasks/${task.id}/spec?lease_id=${task.lease_id}` });
    expect(spec.statusCode, spec.body).toBe(200);
    const opened = spec.json<{ spec: { git_commit_id: string; service: { id: string }; variables: Array<{ key: string; value: string }> } }>().spec;
    expect(opened).toMatchObject({ git_commit_id: SECOND_COMMIT, service: { id: w.applicationId } });
    expect(opened.variables.find((variable) => variable.key === 'API_TOKEN')?.value).toBe(SECRET_VALUE);
    const foreignLease = await ctx().call(`Bearer ${w.credential}`, {
      method: 'GET',
      url: `/operator/v1/tasks/${task.id}/spec?lease_id=0190f0b2-6c5e-7000-8000-00000000abcd`,
    });
    expect(foreignLease.statusCode).toBe(409);
    expect(foreignLease.body).not.toContain(SECRET_VALUE);

    // A reader follows the log over a real HTTP connection while the agent works.
    await ctx().app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ctx().app.server.address() as AddressInfo).port;
    const stream = await fetch(`http://127.0.0.1:${port}/application/${w.applicationId}/log`, {
      headers: { authorization: w.owner.auth, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = stream.text();

    await agent.report('take');
    expect((await status(w)).state).toBe('BUILDING');
    await agent.log([
      { stream: 'stdout', line: 'npm ci' },
      { stream: 'stderr', line: 'npm warn deprecated' },
    ]);
    await agent.report('built');
    await agent.log([{ stream: 'stdout', line: 'listening on 8080' }]);
    await agent.report('succeed', 'healthy');

    const events = (await body).split('\n\n').filter((event) => event.trim() !== '');
    const logEvents = events.filter((event) => event.includes('event: log')).map((event) => JSON.parse(event.split('data: ')[1] as string) as LogLine);
    const messages = logEvents.map((line) => line.message);
    expect(messages).toEqual(expect.arrayContaining(['npm ci', 'npm warn deprecated', 'listening on 8080', 'QUEUED → BUILDING', 'DEPLOYING → DEPLOYED: healthy']));
    expect(messages.indexOf('npm ci')).toBeLessThan(messages.indexOf('listening on 8080'));
    expect(logEvents.find((line) => line.message === 'npm warn deprecated')?.stream).toBe('stderr');
    expect(logEvents.map((line) => line.seq)).toEqual([...logEvents.keys()].map((index) => index + 1));
    expect(events[events.length - 1]).toBe(`event: end\ndata: ${JSON.stringify({ deployment_id: deploymentId, state: 'DEPLOYED' })}`);

    // Read back: the same lines; an NDJSON reader of a settled deployment gets them all and the end at once.
    expect((await logs(w)).map((line) => line.message)).toEqual(messages);
    const ndjson = await fetch(`http://127.0.0.1:${port}/application/${w.applicationId}/log?after=3`, {
      headers: { authorization: w.owner.auth, accept: 'application/x-ndjson' },
    });
    const objects = (await ndjson.text()).trim().split('\n').map((line) => JSON.parse(line) as { type: string; seq?: number });
    expect(objects[0]).toMatchObject({ type: 'log', seq: 4 });
    expect(objects[objects.length - 1]).toEqual({ type: 'end', deployment_id: deploymentId, state: 'DEPLOYED' });

    expect(await status(w)).toMatchObject({ state: 'DEPLOYED', service_deployment_status: 'UP_TO_DATE', status_details: { status: 'SUCCESS' } });
    const { db } = ctx().database;
    const intervals = await db.selectFrom('billing_usage_intervals').selectAll().where('resource_id', '=', w.applicationId).execute();
    expect(intervals).toEqual([expect.objectContaining({ resource_type: 'SERVICE', price_key: 'service.small', units: 1, stopped_at: null })]);

    // Rule 4: a variable change reaches the running service only on redeploy; until then it is OUT_OF_DATE.
    await created(w.owner.auth, `/environment/${w.environmentId}/environmentVariable`, { key: 'NEW_ONE', value: 'x' });
    expect((await status(w)).service_deployment_status).toBe('OUT_OF_DATE');
    const redeployed = await post(w.owner.auth, `/application/${w.applicationId}/redeploy`);
    expect(redeployed.statusCode, redeployed.body).toBe(202);
    const redeploymentId = redeployed.json<StatusView>().deployment_request_id as string;
    const redeployment = await db.selectFrom('service_deployments').selectAll().where('id', '=', redeploymentId).executeTakeFirstOrThrow();
    // A redeploy rebuilds what ran (its commit) with today's variables.
    expect(redeployment).toMatchObject({ action: 'REDEPLOY', git_commit_id: SECOND_COMMIT });
    expect(readJson<DeploymentSnapshot>(redeployment.snapshot).variables?.variables.map((variable) => variable.key)).toContain('NEW_ONE');
    const again = agentReporter(w, await leaseTask(w, redeploymentId));
    await again.report('take');
    await again.report('built');
    await again.report('succeed');
    expect(await status(w)).toMatchObject({ state: 'DEPLOYED', service_deployment_status: 'UP_TO_DATE' });

    // A settings change as well.
    const edited = await ctx().call(w.owner.auth, {
      method: 'PUT',
      url: `/application/${w.applicationId}`,
      payload: { name: 'web', git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'release' }, healthchecks: {} },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect((await status(w)).service_deployment_status).toBe('OUT_OF_DATE');

    // A restart restarts what runs, with its deployed snapshot: still OUT_OF_DATE afterwards.
    const restarted = await post(w.owner.auth, `/application/${w.applicationId}/restart-service`);
    expect(restarted.statusCode, restarted.body).toBe(202);
    expect(restarted.json<StatusView>()).toMatchObject({ state: 'QUEUED', status_details: { action: 'RESTART' } });
    const restartId = restarted.json<StatusView>().deployment_request_id as string;
    const restartRecord = await db.selectFrom('service_deployments').selectAll().where('id', '=', restartId).executeTakeFirstOrThrow();
    expect(restartRecord).toMatchObject({ action: 'RESTART', settings_hash: redeployment.settings_hash, variables_hash: redeployment.variables_hash });
    const restarter = agentReporter(w, await leaseTask(w, restartId));
    await restarter.report('take');
    expect((await status(w)).state).toBe('RESTARTING');
    await restarter.report('succeed');
    expect(await status(w)).toMatchObject({ state: 'RESTARTED', service_deployment_status: 'OUT_OF_DATE' });

    // Stop: the agent stops what runs; metering ends.
    const stopped = await post(w.owner.auth, `/application/${w.applicationId}/stop`);
    expect(stopped.statusCode, stopped.body).toBe(202);
    expect(stopped.json<StatusView>()).toMatchObject({ state: 'QUEUED', status_details: { action: 'STOP', status: 'QUEUED' } });
    const stopTask = await leaseTask(w, stopped.json<StatusView>().deployment_request_id as string);
    expect(stopTask.action).toBe('stop');
    const stopper = agentReporter(w, stopTask);
    await stopper.report('take');
    expect((await status(w)).state).toBe('STOPPING');
    await stopper.report('succeed');
    expect((await status(w)).state).toBe('STOPPED');
    const closed = await db.selectFrom('billing_usage_intervals').selectAll().where('resource_id', '=', w.applicationId).execute();
    expect(closed.every((interval) => interval.stopped_at !== null)).toBe(true);
    expect(expectErrorBody(await post(w.owner.auth, `/application/${w.applicationId}/stop`), 409).message).toMatch(/it is STOPPED/);

    const page = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/deploymentHistoryV2?pageSize=2` });
    expect(page.json<{ results: Array<{ status_details: { action: string } }>; next_cursor: string }>()).toMatchObject({
      page: 1,
      page_size: 2,
      results: [{ status: 'STOPPED', status_details: { action: 'STOP' } }, { status: 'RESTARTED', status_details: { action: 'RESTART' } }],
    });
    const next = await ctx().call(w.owner.auth, {
      method: 'GET',
      url: `/application/${w.applicationId}/deploymentHistoryV2?pageSize=2&cursor=${page.json<{ next_cursor: string }>().next_cursor}`,
    });
    expect(next.json()).toMatchObject({ page: 2, results: [{ status: 'DEPLOYED' }, { status: 'DEPLOYED' }], next_cursor: null });
  });

  it('refuses to delete a service while the agent works on it, and withdraws queued work when it goes', async () => {
    const w = await world();
    const queued = await deploy(w);
    const deploymentId = queued.deployment_request_id as string;
    const agent = agentReporter(w, await leaseTask(w, deploymentId));
    await agent.report('take');
    const refused = expectErrorBody(await ctx().call(w.owner.auth, { method: 'DELETE', url: `/application/${w.applicationId}` }), 409);
    expect(refused.message).toMatch(/BUILDING/);
    await agent.report('fail', 'npm run build exited with 1');
    expect(await status(w)).toMatchObject({ state: 'BUILD_ERROR', message: 'npm run build exited with 1', status_details: { status: 'ERROR' } });

    const deployedBefore = await deployToRunning({ ...w });
    expect(deployedBefore).toEqual(expect.any(String));
    const deleted = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/application/${w.applicationId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    const { db } = ctx().database;
    expect(await db.selectFrom('service_deployments').selectAll().where('service_id', '=', w.applicationId).execute()).toEqual([]);
    // What ran is torn down by the agent: the teardown job carries everything, the service row being gone.
    const teardown = await db.selectFrom('jobs').selectAll().where('kind', '=', 'service.teardown').where('serial_key', '=', `service:${w.applicationId}`).execute();
    expect(teardown).toHaveLength(1);
    expect(readJson(teardown[0]?.payload)).toMatchObject({ serviceId: w.applicationId, kind: 'APPLICATION', name: 'web', deployedDeploymentId: deployedBefore });
    const intervals = await db.selectFrom('billing_usage_intervals').selectAll().where('resource_id', '=', w.applicationId).execute();
    expect(intervals.every((interval) => interval.stopped_at !== null)).toBe(true);
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/status` }), 404);
  });

  it('answers 404 for a service of another organization, and lets a reader read but not deploy', async () => {
    const w = await world();
    const outsider = await ctx().signUpWithOrganization();
    expectErrorBody(await post(outsider.owner.auth, `/application/${w.applicationId}/deploy`, {}), 404);
    const viewer = await ctx().signUp(uniqueName('viewer'));
    await ctx().addMemberDirectly(w.organizationId, viewer, 'VIEWER');
    expect((await ctx().call(viewer.auth, { method: 'GET', url: `/application/${w.applicationId}/status` })).statusCode).toBe(200);
    expect((await ctx().call(viewer.auth, { method: 'GET', url: `/application/${w.applicationId}/log` })).statusCode).toBe(200);
    expectErrorBody(await post(viewer.auth, `/application/${w.applicationId}/deploy`, {}), 403);
  });

  it('publishes deployment events of services and environments to the webhooks, in the moves themselves', async () => {
    const w = await world();
    const webhook = await post(w.owner.auth, `/organization/${w.organizationId}/webhook`, {
      target_url: 'https://hooks.example.com/slipway',
      events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL', 'DEPLOYMENT_FAILURE', 'DEPLOYMENT_CANCELLED'],
      environment_types_filter: ['STAGING'],
    });
    expect(webhook.statusCode, webhook.body).toBe(201);
    const webhookId = webhook.json<{ id: string }>().id;
    const messages = async () =>
      (await ctx().database.db.selectFrom('webhook_messages').select(['event_type', 'body']).where('webhook_id', '=', webhookId).orderBy('id').execute()).map(
        (row) => ({ type: row.event_type, body: JSON.parse(row.body) as { data?: Record<string, unknown> } }),
      );

    await deployToRunning(w);
    const afterService = await messages();
    expect(afterService.map((message) => message.type)).toEqual(['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL']);
    expect(JSON.stringify(afterService[1]?.body)).toContain(w.applicationId);
    expect(JSON.stringify(afterService[1]?.body)).toContain('APPLICATION');

    // A queued deploy canceled at once is a cancelled deployment; a stop is no deployment at all.
    const queued = await deploy(w);
    expect(queued.deployment_request_id).toBeTruthy();
    expect((await post(w.owner.auth, `/application/${w.applicationId}/cancelDeployment`)).statusCode).toBe(202);
    expect((await messages()).map((message) => message.type).slice(2)).toEqual(['DEPLOYMENT_CANCELLED']);

    // The environment's own deploy, carried out by the agent after the redeploy of its application, publishes as well.
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/deploy`)).statusCode).toBe(202);
    const task = await leaseEnvironmentTask(w);
    const agent = agentReporter(w, task);
    await agent.report('take');
    await agent.report('built');
    await agent.report('fail', 'the chart did not install');
    const last = (await messages()).slice(3);
    const ofApplication = (message: { body: unknown }) => JSON.stringify(message.body).includes(w.applicationId);
    expect(last.filter(ofApplication).map((message) => message.type)).toEqual(['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL']);
    const ofEnvironment = last.filter((message) => !ofApplication(message));
    expect(ofEnvironment.map((message) => message.type)).toEqual(['DEPLOYMENT_STARTED', 'DEPLOYMENT_FAILURE']);
    expect(JSON.stringify(ofEnvironment[1]?.body)).toContain('the chart did not install');
  });

  /**
   * Leases until the environment's own task arrives, carrying out the deployments of its services it fanned out
   * into on the way: the control plane offers the environment's task only once they are done.
   */
  async function leaseEnvironmentTask(w: World): Promise<AgentTask> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=1' });
      for (const task of response.json<{ tasks: AgentTask[] }>().tasks) {
        if (task.subject_id === w.environmentId) return task;
        const service = agentReporter(w, task);
        await service.report('take');
        await service.report('built');
        await service.report('succeed');
      }
    }
    throw new Error('no task was dispatched for the environment');
  }
},
  // The suite's webhook points at a host that never answers: its failed deliveries, retried fast here, must not
  // disable it while a test still counts the messages it is published.
  { webhooks: { disableAfterFailures: 10_000 } },
);
