import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { startGitHubApi, type TestGitHubApi } from './support/github-api-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Where a deployment came from (the reference's origin): each deployment record — a service's and an environment's,
 * as their histories, the deployment queue and the environment's status show them — records the client the request
 * came through, told by its User-Agent as the audit log tells it (the console is a browser, the CLI names itself,
 * anything else is the API), GIT when a git provider's push deploys a service, or PLATFORM_INTERNAL when Slipway acts
 * on its own (a deployment rule's schedule). The services' deployments an environment's action fans out into carry
 * that action's origin.
 */

const CONSOLE = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const CLI = 'slipway-cli/1.4.0 (linux; x64)';
/** No User-Agent at all (the test client otherwise sends one of its own). */
const NONE = undefined;

const MINUTE = 60_000;
const GITHUB_TOKEN = 'ghp_test_token_for_origin_0123456789';

/** A test GitHub API for the webhook's registration (git-webhooks.test.ts drives the whole flow with real pushes). */
let githubApi: TestGitHubApi;

beforeAll(async () => {
  githubApi = await startGitHubApi({ 'acme/web': GITHUB_TOKEN });
});

afterAll(async () => {
  await githubApi?.close();
});

interface Auditing {
  triggered_by: string;
  origin?: string;
}

interface ServiceHistoryEntry {
  identifier: { service_id: string };
  auditing_data: Auditing;
}

describeEachDatabase(
  'deployment origin',
  (ctx) => {
    interface World {
      owner: TestUser;
      organizationId: string;
      environmentId: string;
      applicationId: string;
      databaseId: string;
    }

    /** A request as `userAgent` sends it (none when undefined). */
    async function call(auth: string, method: 'GET' | 'POST' | 'PUT', url: string, userAgent: string | undefined, payload?: Record<string, unknown>) {
      return ctx().call(auth, { method, url, headers: { 'user-agent': userAgent }, ...(payload === undefined ? {} : { payload }) });
    }

    async function ok<T>(auth: string, method: 'GET' | 'POST' | 'PUT', url: string, status: number, payload?: Record<string, unknown>, userAgent = CONSOLE): Promise<T> {
      const response = await call(auth, method, url, userAgent, payload);
      expect(response.statusCode, response.body).toBe(status);
      return response.json<T>();
    }

    /** An environment on an enrolled cluster with an application and a database, set up from the console. */
    async function world(): Promise<World> {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId } = await enrolledCluster(ctx(), organizationId, owner);
      const { id: projectId } = await ok<{ id: string }>(owner.auth, 'POST', `/organization/${organizationId}/project`, 200, { name: uniqueName('project') });
      const { id: environmentId } = await ok<{ id: string }>(owner.auth, 'POST', `/project/${projectId}/environment`, 201, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
      const { id: applicationId } = await ok<{ id: string }>(owner.auth, 'POST', `/environment/${environmentId}/application`, 201, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
        healthchecks: {},
      });
      const { id: databaseId } = await ok<{ id: string }>(owner.auth, 'POST', `/environment/${environmentId}/database`, 201, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
      return { owner, organizationId, environmentId, applicationId, databaseId };
    }

    async function serviceHistory(w: World, url: string): Promise<ServiceHistoryEntry[]> {
      return (await ok<{ results: ServiceHistoryEntry[] }>(w.owner.auth, 'GET', `${url}/deploymentHistoryV2`, 200)).results;
    }

    async function environmentQueue(w: World) {
      return (await ok<{ results: Array<{ identifier: { deployment_request_id: string }; auditing_data: Auditing }> }>(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentQueue`, 200)).results;
    }

    async function environmentStatus(w: World) {
      return ok<{ origin: string | null; triggered_by: string | null }>(w.owner.auth, 'GET', `/environment/${w.environmentId}/status`, 200);
    }

    async function environmentHistory(w: World) {
      return (await ok<{ results: Array<{ auditing_data: Auditing; stages: Array<{ services: ServiceHistoryEntry[] }> }> }>(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentHistoryV2`, 200))
        .results;
    }

    /** Waits until the environment's action was fanned out into its services' deployments (by the job worker). */
    async function fannedOut(deploymentRequestId: string): Promise<void> {
      await vi.waitFor(
        async () => {
          const row = await ctx().database.db.selectFrom('environment_deployments').select('services_requested_at').where('id', '=', deploymentRequestId).executeTakeFirst();
          expect(row?.services_requested_at ?? null).not.toBeNull();
        },
        { timeout: 10_000, interval: 50 },
      );
    }

    for (const [client, userAgent, origin] of [
      ['the console', CONSOLE, 'CONSOLE'],
      ['the CLI', CLI, 'CLI'],
      ['a client that names none', NONE, 'API'],
    ] as const) {
      it(`records a service deploy from ${client} as ${origin}, in its history and the deployment queue`, async () => {
        const w = await world();
        const deployed = await call(w.owner.auth, 'POST', `/application/${w.applicationId}/deploy`, userAgent, {});
        expect(deployed.statusCode, deployed.body).toBe(202);
        const requestId = deployed.json<{ deployment_request_id: string }>().deployment_request_id;

        const [entry, ...older] = await serviceHistory(w, `/application/${w.applicationId}`);
        expect(older).toEqual([]);
        expect(entry?.auditing_data).toMatchObject({ origin, triggered_by: expect.any(String) as string });
        const queue = await environmentQueue(w);
        expect(queue.map((request) => [request.identifier.deployment_request_id, request.auditing_data.origin])).toEqual([[requestId, origin]]);
      });

      it(`records an environment deploy from ${client} as ${origin}, and the services' deployments it fans out into alike`, async () => {
        const w = await world();
        const deployed = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`, userAgent);
        expect(deployed.statusCode, deployed.body).toBe(202);
        const requestId = deployed.json<{ deployment_request_id: string }>().deployment_request_id;
        expect((await environmentStatus(w)).origin).toBe(origin);
        await fannedOut(requestId);

        // Read from the console: the reader's client is not the origin of what it reads.
        expect((await environmentStatus(w)).origin).toBe(origin);
        const queue = await environmentQueue(w);
        expect(queue.map((request) => [request.identifier.deployment_request_id, request.auditing_data.origin])).toEqual([[requestId, origin]]);
        const [history] = await environmentHistory(w);
        expect(history?.auditing_data.origin).toBe(origin);
        const fanned = history?.stages.flatMap((stage) => stage.services) ?? [];
        expect(fanned.map((service) => [service.identifier.service_id, service.auditing_data.origin]).sort()).toEqual(
          [
            [w.applicationId, origin],
            [w.databaseId, origin],
          ].sort(),
        );
        for (const url of [`/application/${w.applicationId}`, `/database/${w.databaseId}`]) {
          expect((await serviceHistory(w, url)).map((entry) => entry.auditing_data.origin)).toEqual([origin]);
        }
      });
    }

    it("records a service deployed by its git provider's push as GIT", async () => {
      const w = await world();
      const { id: gitTokenId } = await ok<{ id: string }>(w.owner.auth, 'POST', `/organization/${w.organizationId}/gitToken`, 201, {
        name: uniqueName('github'),
        type: 'GITHUB',
        token: GITHUB_TOKEN,
        git_api_url: githubApi.baseUrl,
      });
      const { id: serviceId } = await ok<{ id: string }>(w.owner.auth, 'POST', `/environment/${w.environmentId}/application`, 201, {
        name: 'pushed',
        git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main', owner: 'acme', name: 'web', git_token_id: gitTokenId },
        healthchecks: {},
      });
      await ok(w.owner.auth, 'POST', `/service/${serviceId}/gitWebhook/sync`, 200);
      const secret = githubApi.hooks.get('acme/web')?.find((hook) => hook.config.url.endsWith(`/git-webhook/github/${serviceId}`))?.config.secret ?? '';
      const commit = 'a'.repeat(40);
      const push = JSON.stringify({
        ref: 'refs/heads/main',
        before: 'b'.repeat(40),
        after: commit,
        repository: { full_name: 'acme/web', name: 'web' },
        pusher: { name: 'dev', email: 'dev@example.com' },
        head_commit: { id: commit, message: 'change', added: [], removed: [], modified: ['src/index.js'] },
      });
      const delivered = await ctx().call(undefined, {
        method: 'POST',
        url: `/git-webhook/github/${serviceId}`,
        payload: push,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'GitHub-Hookshot/5a1b2c3',
          'x-github-event': 'push',
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(push).digest('hex')}`,
        },
      });
      expect(delivered.statusCode, delivered.body).toBe(202);
      const [entry] = await serviceHistory(w, `/application/${serviceId}`);
      expect(entry?.auditing_data).toMatchObject({ origin: 'GIT', triggered_by: 'git push by dev (github webhook)' });
    });

    it("records an environment stopped by its deployment rule's schedule as PLATFORM_INTERNAL", async () => {
      const w = await world();
      // Deployed as its cluster's agent would have left it; the schedule stops it at the coming whole minute.
      await ctx().database.db.updateTable('environments').set({ status: 'DEPLOYED', deployed_revision: 1 }).where('id', '=', w.environmentId).execute();
      const stopAt = new Date(Math.ceil(ctx().clock.now().getTime() / MINUTE) * MINUTE + 2 * MINUTE);
      const startAt = new Date(stopAt.getTime() + 6 * 60 * MINUTE);
      const { id: ruleId } = await ok<{ id: string }>(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentRule`, 200);
      await ok(w.owner.auth, 'PUT', `/environment/${w.environmentId}/deploymentRule/${ruleId}`, 200, {
        auto_stop: true,
        timezone: 'UTC',
        start_time: startAt.toISOString().slice(11, 16),
        stop_time: stopAt.toISOString().slice(11, 16),
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'],
      });

      ctx().clock.advance(stopAt.getTime() - ctx().clock.now().getTime() + 30_000);
      await vi.waitFor(async () => expect((await environmentStatus(w)).triggered_by).toBe('deployment rule schedule'), { timeout: 10_000, interval: 50 });
      expect((await environmentStatus(w)).origin).toBe('PLATFORM_INTERNAL');
      const [history] = await environmentHistory(w);
      expect(history?.auditing_data).toEqual(expect.objectContaining({ origin: 'PLATFORM_INTERNAL', triggered_by: 'deployment rule schedule' }));
    });
  },
  { gitAllowPrivateHosts: true },
);
