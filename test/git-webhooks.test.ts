import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitServerEnvironment } from '../src/git/git-http-server.ts';
import { readDelivery, verifyDelivery } from '../src/modules/git-webhooks/git-webhooks.deliveries.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { startGitHubApi, type TestGitHubApi } from './support/github-api-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Git webhooks (issue 23, docs/git-webhooks.md): sync registers a hook with a generated secret in the repository
 * through a real (test) GitHub API; a real `git push` of a new commit to a repository served over HTTP, followed by
 * the delivery GitHub would send (signed with that secret), deploys exactly that commit; replays, pushes to other
 * branches and bad signatures do nothing. Image pushes deploy the containers that auto-deploy the image.
 */

/** Tests that push with real git and clone environments: generous, as the machine may be busy. */
const GIT_TEST_TIMEOUT_MS = 180_000;
const TOKEN = 'ghp_test_token_for_hooks_0123456789';
const REPOSITORY = 'acme/web';

let root: string;
let gitServer: TestGitServer;
let githubApi: TestGitHubApi;
let home: string;

function git(args: string[], cwd: string): Promise<string> {
  const env = { ...gitServerEnvironment(home), GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com' };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout.trim()) : reject(new Error(`git ${args.join(' ')}: ${stderr}`))));
  });
}

/** Clones the served repository, commits a change to `file` on `branch` and pushes it over HTTP; answers the new commit. */
async function pushCommit(branch: string, file: string): Promise<{ before: string; after: string }> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-push-'));
  try {
    const remote = gitServer.urlOf('web').replace('http://', `http://dev:${TOKEN}@`);
    await git(['clone', '--quiet', '--branch', branch, remote, work], work);
    const before = await git(['rev-parse', 'HEAD'], work);
    await writeFile(path.join(work, file), `${randomUUID()}\n`);
    await git(['add', '--', file], work);
    await git(['commit', '--quiet', '-m', `change ${file}`], work);
    const after = await git(['rev-parse', 'HEAD'], work);
    await git(['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`], work);
    return { before, after };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A push event's body as GitHub sends it (the fields Slipway reads, and some it does not). */
function pushPayload(branch: string, commits: { before: string; after: string }, changed: string[]) {
  return {
    ref: `refs/heads/${branch}`,
    before: commits.before,
    after: commits.after,
    created: false,
    deleted: false,
    forced: false,
    repository: { id: 1296269, name: 'web', full_name: REPOSITORY, clone_url: gitServer.urlOf('web'), default_branch: 'main' },
    pusher: { name: 'dev', email: 'dev@example.com' },
    commits: [{ id: commits.after, message: 'change', added: [], removed: [], modified: changed }],
    head_commit: { id: commits.after, message: 'change', added: [], removed: [], modified: changed },
  };
}

/** The headers GitHub sends with a delivery, the body signed with `secret` (X-Hub-Signature-256). */
function githubHeaders(event: string, deliveryId: string, body: string, secret: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/5a1b2c3',
    'x-github-event': event,
    'x-github-delivery': deliveryId,
    'x-github-hook-id': '1001',
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-hooks-repos-'));
  home = await mkdtemp(path.join(tmpdir(), 'slipway-hooks-home-'));
  await createBareRepository(root, 'web', { main: ['Dockerfile', 'src/index.js', 'docs/README.md'], feature: ['Dockerfile'] });
  gitServer = await startGitServer({ root, privateRepositories: { web: TOKEN } });
  githubApi = await startGitHubApi({ [REPOSITORY]: TOKEN });
}, GIT_TEST_TIMEOUT_MS);

afterAll(async () => {
  await gitServer?.close();
  await githubApi?.close();
  await rm(root, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

describe('git provider deliveries', () => {
  const body = Buffer.from(JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 }));

  it("verifies each provider's signature scheme", () => {
    const hmac = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(() => verifyDelivery('GITHUB', { 'x-hub-signature-256': hmac('s3cret') }, body, 's3cret')).not.toThrow();
    expect(() => verifyDelivery('GITHUB', { 'x-hub-signature-256': hmac('other') }, body, 's3cret')).toThrow(/does not match/);
    expect(() => verifyDelivery('GITHUB', {}, body, 's3cret')).toThrow(/does not match/);
    expect(() => verifyDelivery('BITBUCKET', { 'x-hub-signature': hmac('s3cret') }, body, 's3cret')).not.toThrow();
    expect(() => verifyDelivery('GITLAB', { 'x-gitlab-token': 's3cret' }, body, 's3cret')).not.toThrow();
    expect(() => verifyDelivery('GITLAB', { 'x-gitlab-token': 's3cre' }, body, 's3cret')).toThrow(/does not match/);
  });

  it('reads GitLab and Bitbucket pushes and merge requests', () => {
    const commit = 'a'.repeat(40);
    const gitlabPush = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', checkout_sha: commit, user_username: 'dev', project: { path_with_namespace: 'acme/web' }, commits: [{ added: ['a.txt'], modified: [], removed: ['b.txt'] }] }));
    expect(readDelivery('GITLAB', { 'x-gitlab-event': 'Push Hook', 'x-gitlab-event-uuid': 'u-1' }, gitlabPush).event).toEqual({
      kind: 'push', repository: 'acme/web', branch: 'main', commitId: commit, changedPaths: ['a.txt', 'b.txt'], pusher: 'dev',
    });
    const mergeRequest = Buffer.from(JSON.stringify({ project: { path_with_namespace: 'acme/web' }, object_attributes: { action: 'merge', iid: 7, source_branch: 'feature', target_branch: 'main', last_commit: { id: commit } } }));
    expect(readDelivery('GITLAB', { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-event-uuid': 'u-2' }, mergeRequest).event).toMatchObject({ kind: 'pull_request', action: 'close', number: 7, branch: 'feature' });
    const bitbucketPush = Buffer.from(JSON.stringify({ repository: { full_name: 'acme/web' }, actor: { display_name: 'Dev' }, push: { changes: [{ new: { type: 'branch', name: 'main', target: { hash: commit } } }] } }));
    expect(readDelivery('BITBUCKET', { 'x-event-key': 'repo:push', 'x-request-uuid': 'u-3' }, bitbucketPush).event).toMatchObject({ kind: 'push', branch: 'main', commitId: commit, changedPaths: null });
  });

  it('refuses deliveries without a delivery id, an event or a JSON body', () => {
    expect(() => readDelivery('GITHUB', { 'x-github-event': 'push' }, body)).toThrow(/delivery id/);
    expect(() => readDelivery('GITHUB', { 'x-github-delivery': 'd-1' }, body)).toThrow(/x-github-event/);
    expect(() => readDelivery('GITHUB', { 'x-github-delivery': 'd-1', 'x-github-event': 'push' }, Buffer.from('payload=%7B%7D'))).toThrow(/not JSON/);
    expect(() => readDelivery('GITHUB', { 'x-github-delivery': 'd-1', 'x-github-event': 'push' }, Buffer.from('{"ref":"refs/heads/main"}'))).toThrow(/repository/);
  });
});

describeEachDatabase(
  'git webhooks',
  (ctx) => {
    interface World {
      owner: TestUser;
      organizationId: string;
      environmentId: string;
      applicationId: string;
      gitTokenId: string;
    }

    async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
      const response = await ctx().call(auth, { method: 'POST', url, payload });
      expect(response.statusCode, response.body).toBe(status);
      return response.json<{ id: string }>().id;
    }

    async function world(): Promise<World> {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId } = await enrolledCluster(ctx(), organizationId, owner);
      const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
      const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
      const gitTokenId = await created(owner.auth, `/organization/${organizationId}/gitToken`, { name: uniqueName('github'), type: 'GITHUB', token: TOKEN, git_api_url: githubApi.baseUrl });
      const applicationId = await created(owner.auth, `/environment/${environmentId}/application`, {
        name: 'web',
        git_repository: { url: gitServer.urlOf('web'), provider: 'GITHUB', branch: 'main', owner: 'acme', name: 'web', git_token_id: gitTokenId },
        healthchecks: {},
      });
      return { owner, organizationId, environmentId, applicationId, gitTokenId };
    }

    async function sync(w: World): Promise<string> {
      const response = await ctx().call(w.owner.auth, { method: 'POST', url: `/service/${w.applicationId}/gitWebhook/sync` });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ status: 'ACTIVE', provider: 'GITHUB', missing_events: [] });
      const hook = githubApi.hooks.get(REPOSITORY)?.find((candidate) => candidate.config.url.endsWith(`/git-webhook/github/${w.applicationId}`));
      expect(hook?.events).toEqual(['push', 'pull_request']);
      expect(hook?.config.content_type).toBe('json');
      const secret = hook?.config.secret ?? '';
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      return secret;
    }

    function deliver(w: World, headers: Record<string, string>, payload: string) {
      return ctx().call(undefined, { method: 'POST', url: `/git-webhook/github/${w.applicationId}`, headers, payload });
    }

    async function history(w: World): Promise<Array<{ commit?: { git_commit_id: string }; action: string }>> {
      const response = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/deploymentHistory` });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ results: Array<{ commit?: { git_commit_id: string }; action: string }> }>().results;
    }

    async function deliveryRows(serviceId: string) {
      return ctx().database.db.selectFrom('git_webhook_deliveries').selectAll().where('service_id', '=', serviceId).execute();
    }

    it('registers the hook, keeps its secret sealed, and reports its status', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const before = await ctx().call(w.owner.auth, { method: 'GET', url: `/service/${w.applicationId}/gitWebhookStatus` });
      expect(before.statusCode, before.body).toBe(200);
      expect(before.json()).toEqual({ status: 'NOT_CONFIGURED', provider: 'GITHUB', missing_events: ['push', 'pull_request'] });
      const secret = await sync(w);
      // A second sync updates the same hook and keeps the secret.
      expect(await sync(w)).toBe(secret);
      expect(githubApi.hooks.get(REPOSITORY)?.filter((hook) => hook.config.url.endsWith(w.applicationId))).toHaveLength(1);
      const row = await ctx().database.db.selectFrom('git_webhooks').selectAll().where('service_id', '=', w.applicationId).executeTakeFirstOrThrow();
      expect(row.secret_envelope).not.toContain(secret);
      // Events removed at the provider show as MISCONFIGURED.
      const hook = githubApi.hooks.get(REPOSITORY)?.find((candidate) => candidate.config.url.endsWith(w.applicationId));
      if (hook !== undefined) hook.events = ['push'];
      const misconfigured = await ctx().call(w.owner.auth, { method: 'GET', url: `/service/${w.applicationId}/gitWebhookStatus` });
      expect(misconfigured.json()).toEqual({ status: 'MISCONFIGURED', provider: 'GITHUB', missing_events: ['pull_request'] });
      await sync(w);
    });

    it('deploys the pushed commit once, whatever the replays', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const secret = await sync(w);
      const commits = await pushCommit('main', 'src/index.js');
      const payload = JSON.stringify(pushPayload('main', commits, ['src/index.js']));
      const headers = githubHeaders('push', randomUUID(), payload, secret);
      // The same delivery twice at once: one deploys, the other is recognised as the same delivery.
      const [first, second] = await Promise.all([deliver(w, headers, payload), deliver(w, headers, payload)]);
      const answers = [first, second].map((response) => ({ status: response.statusCode, outcome: response.json<{ outcome: string }>().outcome })).sort((a, b) => b.status - a.status);
      expect(answers).toEqual([
        { status: 202, outcome: 'DEPLOYED' },
        { status: 200, outcome: 'DUPLICATE' },
      ]);
      const deployed = [first, second].find((response) => response.statusCode === 202);
      expect(deployed?.json()).toMatchObject({ event: 'push', git_commit_id: commits.after, service_id: w.applicationId, environment_id: null });
      const replay = await deliver(w, headers, payload);
      expect(replay.statusCode, replay.body).toBe(200);
      expect(replay.json()).toMatchObject({ outcome: 'DUPLICATE' });
      const deployments = await history(w);
      expect(deployments).toHaveLength(1);
      expect(deployments[0]?.commit?.git_commit_id).toBe(commits.after);
      expect(deployments[0]?.action).toBe('DEPLOY');
      // A new push while that deployment waits is refused as the service is busy, and forgotten so a redelivery may act.
      const next = await pushCommit('main', 'src/index.js');
      const nextPayload = JSON.stringify(pushPayload('main', next, ['src/index.js']));
      const busy = await deliver(w, githubHeaders('push', randomUUID(), nextPayload, secret), nextPayload);
      expectErrorBody(busy, 409);
      expect(await deliveryRows(w.applicationId)).toHaveLength(1);
    });

    it('ignores pushes to other branches, pushes the restrictions leave out, pings and other events', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const secret = await sync(w);
      const commits = await pushCommit('feature', 'Dockerfile');
      const payload = JSON.stringify(pushPayload('feature', commits, ['Dockerfile']));
      const other = await deliver(w, githubHeaders('push', randomUUID(), payload, secret), payload);
      expect(other.statusCode, other.body).toBe(200);
      expect(other.json()).toMatchObject({ outcome: 'IGNORED', message: 'push to branch feature; the service deploys main' });

      const restriction = await ctx().call(w.owner.auth, { method: 'POST', url: `/application/${w.applicationId}/deploymentRestriction`, payload: { mode: 'EXCLUDE', type: 'PATH', value: 'docs/**' } });
      expect(restriction.statusCode, restriction.body).toBe(201);
      const docs = await pushCommit('main', 'docs/README.md');
      const docsPayload = JSON.stringify(pushPayload('main', docs, ['docs/README.md']));
      const excluded = await deliver(w, githubHeaders('push', randomUUID(), docsPayload, secret), docsPayload);
      expect(excluded.json()).toMatchObject({ outcome: 'IGNORED' });
      expect(excluded.json<{ message: string }>().message).toMatch(/restrictions/);

      const ping = JSON.stringify({ zen: 'Design for failure.', hook_id: 1001 });
      const pinged = await deliver(w, githubHeaders('ping', randomUUID(), ping, secret), ping);
      expect(pinged.json()).toMatchObject({ outcome: 'IGNORED', event: 'ping' });
      const issue = JSON.stringify({ action: 'opened', issue: { number: 3 } });
      const issues = await deliver(w, githubHeaders('issues', randomUUID(), issue, secret), issue);
      expect(issues.json()).toMatchObject({ outcome: 'IGNORED', event: 'issues' });
      expect(await history(w)).toHaveLength(0);
    });

    it('refuses bad signatures, unreadable and oversized deliveries, and services without a webhook', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const secret = await sync(w);
      const commits = await pushCommit('main', 'src/index.js');
      const payload = JSON.stringify(pushPayload('main', commits, ['src/index.js']));
      const forged = await deliver(w, githubHeaders('push', randomUUID(), payload, 'not-the-secret'), payload);
      expectErrorBody(forged, 401);
      const unsigned = githubHeaders('push', randomUUID(), payload, secret);
      delete unsigned['x-hub-signature-256'];
      expectErrorBody(await deliver(w, unsigned, payload), 401);
      // A body changed after signing does not verify either.
      const tampered = payload.replace(commits.after, 'f'.repeat(40));
      expectErrorBody(await deliver(w, githubHeaders('push', randomUUID(), payload, secret), tampered), 401);
      const malformed = '{"ref": ';
      expectErrorBody(await deliver(w, githubHeaders('push', randomUUID(), malformed, secret), malformed), 400);
      const huge = JSON.stringify({ ...pushPayload('main', commits, []), padding: 'x'.repeat(6 * 1024 * 1024) });
      expectErrorBody(await deliver(w, githubHeaders('push', randomUUID(), huge, secret), huge), 413);
      // Another provider's path, an unknown service, a service never synced: the same 404.
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: `/git-webhook/gitlab/${w.applicationId}`, headers: { 'x-gitlab-token': secret, 'content-type': 'application/json' }, payload }), 404);
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: `/git-webhook/github/${randomUUID()}`, headers: githubHeaders('push', randomUUID(), payload, secret), payload }), 404);
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: `/git-webhook/svn/${w.applicationId}`, headers: githubHeaders('push', randomUUID(), payload, secret), payload }), 400);
      expect(await history(w)).toHaveLength(0);
      expect(await deliveryRows(w.applicationId)).toHaveLength(0);
    });

    it("keeps one organization's webhooks from another's callers, and syncing from viewers", { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/service/${w.applicationId}/gitWebhookStatus` }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'POST', url: `/service/${w.applicationId}/gitWebhook/sync` }), 404);
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(w.organizationId, viewer, 'VIEWER');
      expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: `/service/${w.applicationId}/gitWebhook/sync` }), 403);
      const read = await ctx().call(viewer.auth, { method: 'GET', url: `/service/${w.applicationId}/gitWebhookStatus` });
      expect(read.statusCode, read.body).toBe(200);
      expect(await ctx().database.db.selectFrom('git_webhooks').selectAll().where('service_id', '=', w.applicationId).execute()).toHaveLength(0);
    });

    it('answers 422 to a sync without a git token, and 400 for a service not built from git', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const publicApp = await created(w.owner.auth, `/environment/${w.environmentId}/application`, {
        name: 'public-web',
        git_repository: { url: gitServer.urlOf('web'), provider: 'GITHUB', branch: 'main', owner: 'acme', name: 'web' },
        healthchecks: {},
      });
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'POST', url: `/service/${publicApp}/gitWebhook/sync` }), 422);
      const status = await ctx().call(w.owner.auth, { method: 'GET', url: `/service/${publicApp}/gitWebhookStatus` });
      expect(status.json()).toMatchObject({ status: 'NOT_CONFIGURED' });
      const database = await created(w.owner.auth, `/environment/${w.environmentId}/database`, { name: 'db', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE' });
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'POST', url: `/service/${database}/gitWebhook/sync` }), 400);
    });

    /** A pull request event's body as GitHub sends it. */
    function pullRequestPayload(action: string, number: number, head: string, base = 'main') {
      return JSON.stringify({
        action,
        number,
        pull_request: { number, state: action === 'closed' ? 'closed' : 'open', merged: false, head: { ref: 'feature', sha: head }, base: { ref: base, sha: 'b'.repeat(40) } },
        repository: { id: 1296269, name: 'web', full_name: REPOSITORY, clone_url: gitServer.urlOf('web') },
        sender: { login: 'dev' },
      });
    }

    async function enablePreviews(w: World): Promise<void> {
      const rule = await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${w.environmentId}/deploymentRule` });
      expect(rule.statusCode, rule.body).toBe(200);
      const { id, timezone, start_time: startTime, stop_time: stopTime, weekdays } = rule.json<{ id: string; timezone: string; start_time: string; stop_time: string; weekdays: string[] }>();
      const edited = await ctx().call(w.owner.auth, {
        method: 'PUT',
        url: `/environment/${w.environmentId}/deploymentRule/${id}`,
        payload: { auto_preview: true, timezone, start_time: startTime, stop_time: stopTime, weekdays },
      });
      expect(edited.statusCode, edited.body).toBe(200);
    }

    it('opens, updates and deletes a preview environment for a pull request', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const secret = await sync(w);
      await created(w.owner.auth, `/environment/${w.environmentId}/database`, { name: 'db', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE' });
      const first = await pushCommit('feature', 'Dockerfile');
      const opened = pullRequestPayload('opened', 42, first.after);
      // Previews off: nothing is created.
      const off = await deliver(w, githubHeaders('pull_request', randomUUID(), opened, secret), opened);
      expect(off.statusCode, off.body).toBe(200);
      expect(off.json()).toMatchObject({ outcome: 'IGNORED' });

      await enablePreviews(w);
      const open = await deliver(w, githubHeaders('pull_request', randomUUID(), opened, secret), opened);
      expect(open.statusCode, open.body).toBe(202);
      const { environment_id: previewId } = open.json<{ environment_id: string }>();
      expect(open.json()).toMatchObject({ outcome: 'PREVIEW_DEPLOYED', git_commit_id: first.after });
      const environment = await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${previewId}` });
      expect(environment.statusCode, environment.body).toBe(200);
      expect(environment.json()).toMatchObject({ mode: 'PREVIEW' });
      expect(environment.json<{ name: string }>().name).toMatch(/^pr-42-/);
      const applications = await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${previewId}/application` });
      const [preview] = applications.json<{ results: Array<{ id: string; git_repository: { branch: string } }> }>().results;
      expect(preview?.git_repository.branch).toBe('feature');
      const databases = await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${previewId}/database` });
      expect(databases.json<{ results: unknown[] }>().results).toHaveLength(1);
      const previewApp = preview?.id ?? '';
      const deployedFirst = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${previewApp}/deploymentHistory` });
      expect(deployedFirst.json<{ results: Array<{ commit?: { git_commit_id: string } }> }>().results[0]?.commit?.git_commit_id).toBe(first.after);
      // The preview's deployment came from the git provider, not from a caller of the API.
      const previewHistory = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${previewApp}/deploymentHistoryV2` });
      expect(previewHistory.json<{ results: Array<{ auditing_data: { origin?: string; triggered_by: string } }> }>().results[0]?.auditing_data).toMatchObject({
        origin: 'GIT',
        triggered_by: 'pull request 42 of acme/web (git webhook)',
      });
      // The blueprint's own application is not deployed by a pull request.
      expect(await history(w)).toHaveLength(0);

      // A synchronize deploys the new head commit once the first deployment is over (cancelled here: no agent runs it).
      const cancelled = await ctx().call(w.owner.auth, { method: 'POST', url: `/application/${previewApp}/cancelDeployment` });
      expect(cancelled.statusCode, cancelled.body).toBe(202);
      const second = await pushCommit('feature', 'Dockerfile');
      const synchronized = pullRequestPayload('synchronize', 42, second.after);
      const update = await deliver(w, githubHeaders('pull_request', randomUUID(), synchronized, secret), synchronized);
      expect(update.statusCode, update.body).toBe(202);
      expect(update.json()).toMatchObject({ outcome: 'PREVIEW_DEPLOYED', environment_id: previewId, git_commit_id: second.after });
      const deployedSecond = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${previewApp}/deploymentHistory` });
      expect(deployedSecond.json<{ results: Array<{ commit?: { git_commit_id: string } }> }>().results.map((entry) => entry.commit?.git_commit_id)).toContain(second.after);

      const closed = pullRequestPayload('closed', 42, second.after);
      const close = await deliver(w, githubHeaders('pull_request', randomUUID(), closed, secret), closed);
      expect(close.statusCode, close.body).toBe(202);
      expect(close.json()).toMatchObject({ outcome: 'PREVIEW_DELETED', environment_id: previewId });
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${previewId}` }), 404);
      expect(await ctx().database.db.selectFrom('preview_environments').selectAll().where('blueprint_environment_id', '=', w.environmentId).execute()).toHaveLength(0);
      // A pull request against another branch opens nothing.
      const elsewhere = pullRequestPayload('opened', 43, second.after, 'release');
      const other = await deliver(w, githubHeaders('pull_request', randomUUID(), elsewhere, secret), elsewhere);
      expect(other.json()).toMatchObject({ outcome: 'IGNORED' });
    });

    it('deploys a pushed image tag to the containers that auto-deploy it', { timeout: GIT_TEST_TIMEOUT_MS }, async () => {
      const w = await world();
      const registry = await created(w.owner.auth, `/organization/${w.organizationId}/containerRegistry`, { name: uniqueName('hub'), kind: 'DOCKER_HUB', url: 'https://docker.io' });
      const container = (name: string, image: string) =>
        created(w.owner.auth, `/environment/${w.environmentId}/container`, { name, registry_id: registry, image_name: image, tag: '1.0.0', healthchecks: {}, ports: [{ internal_port: 80, publicly_accessible: false }] });
      const storefront = await container('storefront', 'acme/storefront');
      await container('other', 'acme/other');
      const deployed = await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/container/deploy`, payload: { image_name: 'acme/storefront', tag: '1.1.0' } });
      expect(deployed.statusCode, deployed.body).toBe(202);
      expect(deployed.json()).toMatchObject({ id: w.organizationId, state: 'QUEUED', deployment_requests_count: 1 });
      const history = await ctx().call(w.owner.auth, { method: 'GET', url: `/container/${storefront}/deploymentHistoryV2` });
      expect(history.statusCode, history.body).toBe(200);
      // An image push is announced by whoever calls the API (a registry's hook, a CI job): the deployment is theirs.
      const caller = await ctx().database.db.selectFrom('users').select('name').where('id', '=', w.owner.id).executeTakeFirstOrThrow();
      expect(history.json<{ results: Array<{ auditing_data: { origin?: string; triggered_by: string } }> }>().results[0]?.auditing_data).toMatchObject({
        origin: 'API',
        triggered_by: caller.name,
      });
      const record = await ctx().database.db.selectFrom('service_deployments').select(['image_tag', 'triggered_by']).where('service_id', '=', storefront).executeTakeFirstOrThrow();
      expect(record.image_tag).toBe('1.1.0');
      const none = await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/container/preview`, payload: { image_name: 'acme/storefront', tag: 'pr-1' } });
      expect(none.statusCode, none.body).toBe(202);
      expect(none.json()).toMatchObject({ state: 'READY', deployment_requests_count: 0 });
      const jobs = await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/job/deploy`, payload: { image_name: 'acme/storefront', tag: '1.1.0' } });
      expect(jobs.json()).toMatchObject({ deployment_requests_count: 0 });
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/container/deploy`, payload: { image_name: 'acme/storefront' } }), 400);
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/container/deploy`, payload: { image_name: 'Not An Image', tag: '1' } }), 400);
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(w.organizationId, viewer, 'VIEWER');
      expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: `/organization/${w.organizationId}/container/deploy`, payload: { image_name: 'acme/storefront', tag: '1.2.0' } }), 403);
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'POST', url: `/organization/${w.organizationId}/container/deploy`, payload: { image_name: 'acme/storefront', tag: '1.2.0' } }), 404);
      expect(await ctx().database.db.selectFrom('service_deployments').select('id').where('service_id', '=', storefront).execute()).toHaveLength(1);
    });
  },
  { gitAllowPrivateHosts: true },
);
