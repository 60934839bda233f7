import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../src/agent/agent.client.ts';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * A lifecycle JOB's on_delete through the control plane (docs/agent-protocol.md, "Task spec"): deleting the service,
 * or its environment, removes its records, yet its teardown task still serves the spec of its last deployment —
 * secrets opened, to the holder of the live lease only — so the agent's driver can run on_delete with it. A teardown
 * of any other service has no spec (404). The agent is this suite's client of the operator API, as a real agent's.
 */

const SECRET = 'on-delete-token-s3cr3t';

describeEachDatabase('a lifecycle job’s teardown spec', (ctx) => {
  let baseUrl = '';

  async function listen(): Promise<string> {
    if (baseUrl === '') {
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    }
    return baseUrl;
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await ctx().call(auth, { method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  interface World {
    owner: TestUser;
    environmentId: string;
    environmentName: string;
    projectId: string;
    client: AgentClient;
  }

  async function world(): Promise<World> {
    const url = await listen();
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentName = uniqueName('env');
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: environmentName, cluster: clusterId, mode: 'STAGING' });
    return { owner, environmentId, environmentName, projectId, client: createAgentClient({ controlPlaneUrl: url, credential, retryBaseMs: 20 }) };
  }

  async function job(w: World, name: string, onDelete: boolean): Promise<string> {
    const id = await created(w.owner.auth, `/environment/${w.environmentId}/job`, {
      name,
      source: { docker: { git_repository: { url: 'https://github.com/acme/jobs', branch: 'main', provider: 'GITHUB' }, dockerfile_path: 'Dockerfile' } },
      schedule: { lifecycle_type: 'GENERIC', on_start: { arguments: ['migrate'] }, ...(onDelete ? { on_delete: { entrypoint: '/bin/cleanup', arguments: ['--all'] } } : {}) },
      healthchecks: {},
    });
    expect((await ctx().call(w.owner.auth, { method: 'POST', url: `/job/${id}/secret`, payload: { key: 'CLEANUP_TOKEN', value: SECRET } })).statusCode).toBe(201);
    return id;
  }

  /** Leases until a task of the subject arrives, settling every other task it is handed on the way. */
  async function leaseTaskOf(w: World, subjectId: string, subjectType: AgentTask['subject_type']): Promise<AgentTask> {
    for (let round = 0; round < 60; round++) {
      for (const task of (await w.client.leaseTasks(1)).tasks) {
        if (task.subject_id === subjectId && task.subject_type === subjectType) return task;
        await settle(w, task, ['take', 'built', 'succeed']);
      }
    }
    throw new Error(`no ${subjectType} task of ${subjectId} was handed out`);
  }

  async function settle(w: World, task: AgentTask, events: Array<'take' | 'built' | 'succeed'>): Promise<void> {
    let seq = task.last_report_seq;
    for (const event of events) {
      seq += 1;
      await w.client.reportProgress(task.id, { lease_id: task.lease_id, seq, event });
    }
  }

  async function deploy(w: World, jobId: string): Promise<void> {
    expect((await ctx().call(w.owner.auth, { method: 'POST', url: `/job/${jobId}/deploy`, payload: {} })).statusCode).toBe(202);
    await settle(w, await leaseTaskOf(w, jobId, 'SERVICE'), ['take', 'built', 'succeed']);
  }

  it('serves the deleted job’s last deployment, secrets opened, to the teardown’s lease holder only', async () => {
    const w = await world();
    const jobId = await job(w, 'cleanup', true);
    await deploy(w, jobId);
    expect((await ctx().call(w.owner.auth, { method: 'DELETE', url: `/job/${jobId}` })).statusCode).toBe(204);

    const teardown = await leaseTaskOf(w, jobId, 'SERVICE_TEARDOWN');
    const { spec } = await w.client.getTaskSpec(teardown.id, teardown.lease_id);
    expect(spec.service).toMatchObject({ id: jobId, kind: 'JOB', name: 'cleanup', settings: { schedule: { on_delete: { entrypoint: '/bin/cleanup', arguments: ['--all'] } } } });
    expect(spec.variables.find((variable) => variable.key === 'CLEANUP_TOKEN')).toMatchObject({ value: SECRET, secret: true });
    expect(spec.environment).toEqual({ id: w.environmentId, name: w.environmentName, mode: 'STAGING', project_id: w.projectId });
    expect(spec.git).toMatchObject({ url: 'https://github.com/acme/jobs', branch: 'main' });
    await expect(w.client.getTaskSpec(teardown.id, randomUUID())).rejects.toMatchObject({ status: 409 });
    await settle(w, teardown, ['take', 'succeed']);
    // Settled, the lease is gone: so is the spec.
    await expect(w.client.getTaskSpec(teardown.id, teardown.lease_id)).rejects.toMatchObject({ status: 409 });
  });

  it('serves it when the job goes with its environment', async () => {
    const w = await world();
    const jobId = await job(w, 'farewell', true);
    await deploy(w, jobId);
    expect((await ctx().call(w.owner.auth, { method: 'DELETE', url: `/environment/${w.environmentId}` })).statusCode).toBe(204);
    const teardown = await leaseTaskOf(w, jobId, 'SERVICE_TEARDOWN');
    const { spec } = await w.client.getTaskSpec(teardown.id, teardown.lease_id);
    expect(spec.service).toMatchObject({ id: jobId, name: 'farewell' });
    expect(spec.environment).toMatchObject({ id: w.environmentId, name: w.environmentName, project_id: w.projectId });
    expect(spec.variables.find((variable) => variable.key === 'CLEANUP_TOKEN')?.value).toBe(SECRET);
  });

  it('has no spec for the teardown of a job without on_delete', async () => {
    const w = await world();
    const jobId = await job(w, 'plain', false);
    await deploy(w, jobId);
    expect((await ctx().call(w.owner.auth, { method: 'DELETE', url: `/job/${jobId}` })).statusCode).toBe(204);
    const teardown = await leaseTaskOf(w, jobId, 'SERVICE_TEARDOWN');
    await expect(w.client.getTaskSpec(teardown.id, teardown.lease_id)).rejects.toMatchObject({ status: 404 });
  });
});
