import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { outsideCommitParticipants, withCommitParticipant, type CommitParticipant } from '../src/db/db.commit-participants.ts';
import type { Database } from '../src/db/db.client.ts';
import { newId } from '../src/lib/ids.ts';
import { changeSummary, MASK } from '../src/modules/organization-events/organization-events.masking.ts';
import { classifyRoute, originOf } from '../src/modules/organization-events/organization-events.taxonomy.ts';
import { openTestDatabase, TEST_DIALECTS } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startTestIssuer } from './support/oidc-issuer.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * The audit log (docs/audit-log.md): a run of writes by a person, an API token (through the CLI's user agent) and
 * policy tokens — successes, a conflict, a validation failure, a policy's denial — each appears exactly once, with
 * its author, target, status and outcome, and no secret it carried (a secret's value, a git token, the values of the
 * tokens created) anywhere in the log, its answers or its table. Then the listing's filters, page links, access and
 * retention; the commit participant that writes an event in the change's own transaction; masking and
 * classification rules.
 */

const ALLOW_ALL = 'package agent\n\nallow := true\n';
const ALLOW_GET_ONLY = 'package agent\n\ndefault allow := false\n\nallow if input.method == "GET"\n';

interface EventView {
  id: string;
  timestamp: string;
  event_type: string;
  target_id: string | null;
  target_name?: string;
  target_type: string;
  sub_target_type: string | null;
  change?: string;
  origin: string;
  triggered_by: string;
  project_id: string | null;
  project_name?: string;
  environment_id: string | null;
  environment_name?: string;
  operation_id: string;
  author: { type: string; id: string; name: string };
  ip: string | null;
  user_agent: string | null;
  request_id: string;
  status_code: number | null;
  outcome: string;
}
interface EventPage {
  events: EventView[];
  links: { previous?: string; next?: string };
}

describeEachDatabase('organization events (audit log)', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  /** Every write of the run, by request id: the answer it got. */
  const writes = new Map<string, LightMyRequestResponse>();
  const secrets: string[] = [];
  let apiToken: { id: string; name: string; value: string };
  let deniedAgent: { id: string; name: string; value: string };
  let projectId: string;
  let secondProjectId: string;
  let environmentId: string;

  async function write(auth: string, options: InjectOptions): Promise<LightMyRequestResponse> {
    const response = await ctx().call(auth, options);
    writes.set(String(response.headers['x-request-id']), response);
    return response;
  }

  async function events(query = '', auth = owner.auth): Promise<EventPage> {
    const response = await ctx().call(auth, { method: 'GET', url: `/organization/${organizationId}/events${query}` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<EventPage>();
  }

  async function allEvents(): Promise<EventView[]> {
    return (await events('?pageSize=100')).events;
  }

  it('records every write of a run once, with who, what, from where and how it ended', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const base = `/organization/${organizationId}`;

    const project = await write(owner.auth, { method: 'POST', url: `${base}/project`, payload: { name: uniqueName('shop') } });
    // SPEC.md: createProject answers 200.
    expect(project.statusCode, project.body).toBe(200);
    projectId = project.json<{ id: string }>().id;
    expect((await write(owner.auth, { method: 'PUT', url: `/project/${projectId}`, payload: { name: 'shop-renamed', description: 'the shop' } })).statusCode).toBe(200);

    const secretValue = `sk_live_${newId().replaceAll('-', '')}`;
    secrets.push(secretValue);
    expect((await write(owner.auth, { method: 'POST', url: `/project/${projectId}/secret`, payload: { key: 'STRIPE_KEY', value: secretValue } })).statusCode).toBe(201);
    expect(
      (await write(owner.auth, { method: 'POST', url: `/project/${projectId}/environmentVariable`, payload: { key: 'PLAIN', value: 'visible-value' } })).statusCode,
    ).toBe(201);

    const cluster = await write(owner.auth, {
      method: 'POST',
      url: `${base}/cluster`,
      payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
    });
    expect(cluster.statusCode, cluster.body).toBe(201);
    const environment = await write(owner.auth, { method: 'POST', url: `/project/${projectId}/environment`, payload: { name: 'staging', mode: 'STAGING' } });
    expect(environment.statusCode, environment.body).toBe(201);
    environmentId = environment.json<{ id: string }>().id;
    expect(
      (await write(owner.auth, { method: 'POST', url: `/environment/${environmentId}/environmentVariable`, payload: { key: 'LEVEL', value: 'debug' } })).statusCode,
    ).toBe(201);

    const gitTokenValue = `ghp_${newId().replaceAll('-', '')}Zq9`;
    secrets.push(gitTokenValue);
    expect((await write(owner.auth, { method: 'POST', url: `${base}/gitToken`, payload: { name: 'github', type: 'GITHUB', token: gitTokenValue } })).statusCode).toBe(201);

    const token = await write(owner.auth, { method: 'POST', url: `${base}/apiToken`, payload: { name: uniqueName('ci'), scope: 'ADMIN' } });
    expect(token.statusCode, token.body).toBe(201);
    apiToken = { id: token.json<{ id: string }>().id, name: token.json<{ name: string }>().name, value: token.json<{ token: string }>().token };
    secrets.push(apiToken.value);

    const agent = await write(owner.auth, { method: 'POST', url: `${base}/policyApiToken`, payload: { name: uniqueName('reader'), opa_policy: ALLOW_GET_ONLY } });
    expect(agent.statusCode, agent.body).toBe(201);
    deniedAgent = { id: agent.json<{ id: string }>().id, name: agent.json<{ name: string }>().name, value: agent.json<{ token: string }>().token };
    secrets.push(deniedAgent.value);

    const byToken = await write(`Bearer ${apiToken.value}`, {
      method: 'POST',
      url: `${base}/project`,
      payload: { name: uniqueName('blog') },
      headers: { 'user-agent': 'slipway-cli' },
    });
    expect(byToken.statusCode, byToken.body).toBe(200);
    secondProjectId = byToken.json<{ id: string }>().id;

    expectErrorBody(await write(owner.auth, { method: 'POST', url: `${base}/project`, payload: { name: 'shop-renamed' } }), 409);
    expectErrorBody(await write(owner.auth, { method: 'POST', url: `${base}/project`, payload: { description: 'no name' } }), 400);
    expectErrorBody(await write(`Bearer ${deniedAgent.value}`, { method: 'POST', url: `${base}/project`, payload: { name: 'by agent' } }), 403);
    expect((await write(owner.auth, { method: 'DELETE', url: `/project/${secondProjectId}` })).statusCode).toBe(204);

    const logged = await allEvents();
    for (const [requestId, response] of writes) {
      const matching = logged.filter((event) => event.request_id === requestId);
      expect(matching, `${requestId}: ${response.body}`).toHaveLength(1);
      const event = matching[0] as EventView;
      expect(event.status_code).toBe(response.statusCode);
      expect(event.outcome).toBe(response.statusCode < 400 ? 'SUCCESS' : 'FAILURE');
      expect(event.ip).toBe('127.0.0.1');
    }
    // Reading is not writing: the listings above left nothing in the log.
    expect(logged.filter((event) => event.operation_id === 'getOrganizationEvents')).toHaveLength(0);
    // The organization's own creation is its first event.
    const creation = logged.find((event) => event.operation_id === 'createOrganization');
    expect(creation).toMatchObject({ event_type: 'CREATE', target_type: 'ORGANIZATION', target_id: organizationId, author: { type: 'USER', id: owner.id } });
  });

  it('says who did it: the person, the API token, the policy token and its denial', async () => {
    const logged = await allEvents();
    const created = logged.find((event) => event.operation_id === 'createProject' && event.target_id === projectId);
    expect(created).toMatchObject({
      event_type: 'CREATE',
      target_type: 'PROJECT',
      target_id: projectId,
      author: { type: 'USER', id: owner.id },
      origin: 'API',
      status_code: 200,
      outcome: 'SUCCESS',
    });

    const byToken = logged.find((event) => event.operation_id === 'createProject' && event.target_id === secondProjectId);
    expect(byToken).toMatchObject({
      author: { type: 'API_TOKEN', id: apiToken.id, name: `token:${apiToken.name}` },
      triggered_by: `token:${apiToken.name}`,
      origin: 'CLI',
      user_agent: 'slipway-cli',
    });

    const denial = logged.find((event) => event.author.type === 'POLICY_TOKEN');
    expect(denial).toMatchObject({
      author: { id: deniedAgent.id, name: `token:${deniedAgent.name}` },
      operation_id: 'createProject',
      status_code: 403,
      outcome: 'FAILURE',
      change: JSON.stringify({ name: 'by agent' }),
    });

    const tokenCreation = logged.find((event) => event.operation_id === 'createOrganizationApiToken');
    expect(tokenCreation).toMatchObject({ target_type: 'ORGANIZATION', sub_target_type: 'API_TOKEN', target_id: apiToken.id, target_name: apiToken.name });

    const environmentVariable = logged.find((event) => event.operation_id === 'createEnvironmentEnvironmentVariable');
    expect(environmentVariable).toMatchObject({
      target_type: 'ENVIRONMENT',
      sub_target_type: 'VARIABLE',
      project_id: projectId,
      project_name: 'shop-renamed',
      environment_id: environmentId,
      environment_name: 'staging',
    });
    expect(logged.find((event) => event.operation_id === 'createEnvironment')).toMatchObject({
      target_type: 'ENVIRONMENT',
      target_id: environmentId,
      target_name: 'staging',
      project_id: projectId,
    });

    const renamed = logged.find((event) => event.operation_id === 'editProject');
    expect(renamed).toMatchObject({ event_type: 'UPDATE', target_type: 'PROJECT', target_id: projectId, project_id: projectId, target_name: 'shop-renamed' });
    const deleted = logged.find((event) => event.operation_id === 'deleteProject');
    expect(deleted).toMatchObject({ event_type: 'DELETE', target_id: secondProjectId, project_id: secondProjectId });
    expect(deleted).not.toHaveProperty('project_name');
    expect(deleted).not.toHaveProperty('change');
    expect(deleted?.status_code).toBe(204);
  });

  it('masks secrets: in the change of each event, in every answer of the log and in its table', async () => {
    const logged = await allEvents();
    const secret = logged.find((event) => event.operation_id === 'createProjectSecret');
    expect(secret).toMatchObject({ target_type: 'PROJECT', sub_target_type: 'SECRET', project_id: projectId });
    expect(JSON.parse(secret?.change ?? 'null')).toEqual({ key: 'STRIPE_KEY', value: MASK });
    const variable = logged.find((event) => event.operation_id === 'createProjectEnvironmentVariable');
    expect(JSON.parse(variable?.change ?? 'null')).toEqual({ key: 'PLAIN', value: 'visible-value' });
    const gitToken = logged.find((event) => event.sub_target_type === 'GIT_TOKEN');
    expect(JSON.parse(gitToken?.change ?? 'null')).toEqual({ name: 'github', type: 'GITHUB', token: MASK });

    const answer = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/events?pageSize=100` })).body;
    const rows = await ctx().database.db.selectFrom('organization_events').selectAll().where('organization_id', '=', organizationId).execute();
    const stored = JSON.stringify(rows);
    for (const value of secrets) {
      expect(answer).not.toContain(value);
      expect(stored).not.toContain(value);
    }
  });

  it('filters by target, type, author, origin, outcome and time, and pages both ways with the links', async () => {
    const all = await allEvents();
    expect(all.map((event) => event.timestamp)).toEqual([...all.map((event) => event.timestamp)].sort().reverse());

    const projectEvents = (await events(`?targetType=PROJECT&targetId=${projectId}&pageSize=100`)).events;
    expect(projectEvents.map((event) => event.operation_id).sort()).toEqual(['createProject', 'editProject']);
    expect((await events('?eventType=DELETE')).events.map((event) => event.operation_id)).toEqual(['deleteProject']);
    expect((await events(`?triggeredBy=${apiToken.id}`)).events.map((event) => event.target_id)).toEqual([secondProjectId]);
    expect((await events(`?triggeredBy=${encodeURIComponent(`token:${deniedAgent.name}`)}`)).events.map((event) => event.status_code)).toEqual([403]);
    expect((await events('?origin=CLI')).events).toHaveLength(1);
    expect((await events('?outcome=FAILURE&pageSize=100')).events.map((event) => event.status_code).sort()).toEqual([400, 403, 409]);
    expect((await events(`?serviceProjectId=${projectId}&subTargetType=SECRET`)).events).toHaveLength(1);

    const oldest = all[all.length - 1] as EventView;
    const newest = all[0] as EventView;
    expect((await events(`?toTimestamp=${encodeURIComponent(oldest.timestamp)}&pageSize=100`)).events.every((event) => event.timestamp <= oldest.timestamp)).toBe(true);
    const nanos = `${BigInt(Date.parse(newest.timestamp)) * 1_000_000n}`;
    expect((await events(`?fromTimestamp=${nanos}&pageSize=100`)).events.every((event) => event.timestamp >= newest.timestamp)).toBe(true);
    expect((await events(`?fromTimestamp=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`)).events).toEqual([]);

    const walked: string[] = [];
    let page = await events('?pageSize=3');
    expect(page.links).not.toHaveProperty('previous');
    const pages: EventPage[] = [page];
    walked.push(...page.events.map((event) => event.id));
    while (page.links.next !== undefined) {
      const next = await ctx().call(owner.auth, { method: 'GET', url: page.links.next });
      expect(next.statusCode, next.body).toBe(200);
      page = next.json<EventPage>();
      pages.push(page);
      walked.push(...page.events.map((event) => event.id));
    }
    expect(walked).toEqual(all.map((event) => event.id));
    expect(pages.length).toBeGreaterThan(2);
    const second = pages[1] as EventPage;
    const back = await ctx().call(owner.auth, { method: 'GET', url: second.links.previous ?? '' });
    expect(back.json<EventPage>().events.map((event) => event.id)).toEqual(pages[0]?.events.map((event) => event.id));
    expect(back.json<EventPage>().links).not.toHaveProperty('previous');
    expect(second.links.next).toContain('pageSize=3');
  });

  it('refuses bad filters with 400, keeps the log to admins of the organization', async () => {
    const base = `/organization/${organizationId}/events`;
    for (const query of ['?eventType=READ', '?pageSize=0', '?pageSize=101', '?continueToken=bm90LWEtY3Vyc29y', '?fromTimestamp=yesterday', '?targetId=nope', '?unknown=1']) {
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}${query}` }), 400);
    }
    const token = (await events('?pageSize=1')).links.next?.split('continueToken=')[1] ?? '';
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}?continueToken=${token}&stepBackToken=${token}` }), 400);

    const developer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, developer, 'DEVELOPER');
    expectErrorBody(await ctx().call(developer.auth, { method: 'GET', url: base }), 403);
    const outsider = await ctx().signUpWithOrganization();
    expectErrorBody(await ctx().call(outsider.owner.auth, { method: 'GET', url: base }), 404);
    // A token's probe of another organization's ids writes nothing in either log; its refusals at home are recorded.
    const outsiderToken = await ctx().createApiToken(outsider.owner.auth, outsider.organizationId, { name: 'prober', scope: 'READ' });
    expectErrorBody(await ctx().call(`Bearer ${outsiderToken}`, { method: 'PUT', url: `/project/${projectId}`, payload: { name: 'taken' } }), 404);
    expectErrorBody(await ctx().call(`Bearer ${outsiderToken}`, { method: 'DELETE', url: `/organization/${organizationId}` }), 404);
    const home = await ctx().call(`Bearer ${outsiderToken}`, { method: 'POST', url: `/organization/${outsider.organizationId}/project`, payload: { name: 'x' } });
    expectErrorBody(home, 403);
    const outsiderLog = await ctx().call(outsider.owner.auth, { method: 'GET', url: `/organization/${outsider.organizationId}/events?pageSize=100` });
    const outsiderEvents = outsiderLog.json<EventPage>().events;
    expect(outsiderEvents.map((event) => event.request_id)).toContain(home.headers['x-request-id']);
    expect(outsiderLog.body).not.toContain(projectId);
    expect(outsiderLog.body).not.toContain(organizationId);
    expect((await allEvents()).some((event) => event.author.id === outsider.owner.id || event.triggered_by === 'token:prober')).toBe(false);

    const allowed = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/policyApiToken`,
      payload: { name: uniqueName('agent'), opa_policy: ALLOW_ALL },
    });
    const agent = allowed.json<{ token: string }>().token;
    expect((await ctx().call(`Bearer ${agent}`, { method: 'GET', url: base })).statusCode).toBe(200);
  });

  it('records an idempotent retry once: the replay is no new write', async () => {
    const request: InjectOptions = {
      method: 'POST',
      url: `/organization/${organizationId}/project`,
      payload: { name: uniqueName('retried') },
      headers: { 'idempotency-key': uniqueName('key') },
    };
    const first = await ctx().call(owner.auth, request);
    const replay = await ctx().call(owner.auth, request);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const created = first.json<{ id: string }>().id;
    expect((await events(`?targetId=${created}`)).events.map((event) => event.request_id)).toEqual([first.headers['x-request-id']]);
  });

  it('keeps events for the plan\'s retention (Community: 7 days)', async () => {
    const before = await allEvents();
    expect(before.length).toBeGreaterThan(0);
    ctx().clock.advance(8 * 24 * 60 * 60 * 1000);
    expect(await allEvents()).toEqual([]);
    const left = await ctx().database.db.selectFrom('organization_events').select('id').where('organization_id', '=', organizationId).execute();
    expect(left).toEqual([]);
  });
});

/** Audit events feed the webhooks: a receiver subscribed to ORGANIZATION_EVENT gets each settled event, masked. */
describe.each(TEST_DIALECTS)('organization events to webhooks [%s]', (dialect) => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });
  let call: (options: InjectOptions) => Promise<LightMyRequestResponse>;

  beforeAll(async () => {
    const issuer = await startTestIssuer();
    closers.push(() => issuer.close());
    const testDatabase = await openTestDatabase(dialect);
    closers.push(() => testDatabase.dispose());
    // Webhook receivers here listen on loopback, which the outbound policy admits only with private hosts allowed.
    const app = await buildApp({
      config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'silent', gitAllowPrivateHosts: true },
      database: testDatabase.database,
      jobs: { pollIntervalMs: 50, retryBaseMs: 40 },
    });
    closers.push(() => app.close());
    const name = uniqueName('auditor');
    const auth = `Bearer ${await issuer.signToken({ sub: `sub-${name}`, email: `${name}@example.com`, email_verified: true, name })}`;
    call = (options) => app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: auth } });
  });

  it('delivers each write as a signed ORGANIZATION_EVENT with its change masked', async () => {
    const receiver = await startWebhookReceiver();
    closers.push(() => receiver.close());
    const organization = await call({ method: 'POST', url: '/organization', payload: { name: uniqueName('org') } });
    const organizationId = organization.json<{ id: string }>().id;
    const hook = await call({ method: 'POST', url: `/organization/${organizationId}/webhook`, payload: { target_url: receiver.url, events: ['ORGANIZATION_EVENT'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    const project = await call({ method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('shop') } });
    const projectId = project.json<{ id: string }>().id;
    const secretValue = `sk_live_${newId().replaceAll('-', '')}`;
    const secret = await call({ method: 'POST', url: `/project/${projectId}/secret`, payload: { key: 'STRIPE_KEY', value: secretValue } });
    expect(secret.statusCode, secret.body).toBe(201);

    // The webhook's own creation, the project, the secret.
    const received = await receiver.waitForCount(3);
    const bodies = received.map((delivery) => JSON.parse(delivery.body) as { type: string; resource: { type: string; id: string }; data: EventView });
    expect(bodies.every((body) => body.type === 'ORGANIZATION_EVENT')).toBe(true);
    expect(received.every((delivery) => String(delivery.headers['webhook-signature']).startsWith('v1,'))).toBe(true);
    const bySecret = bodies.find((body) => body.data.operation_id === 'createProjectSecret');
    expect(bySecret).toMatchObject({ resource: { type: 'PROJECT' }, data: { sub_target_type: 'SECRET', status_code: 201, outcome: 'SUCCESS' } });
    expect(JSON.parse(bySecret?.data.change ?? 'null')).toEqual({ key: 'STRIPE_KEY', value: MASK });
    expect(bodies.find((body) => body.data.operation_id === 'createProject')?.resource.id).toBe(projectId);
    for (const delivery of received) expect(delivery.body).not.toContain(secretValue);
  });
});

/** The commit participant on the real databases: the event commits, or rolls back, with the change. */
describe.each(TEST_DIALECTS)('commit participants [%s]', (dialect) => {
  function eventRow(organizationId: string, operationId: string) {
    return {
      id: newId(),
      organization_id: organizationId,
      created_at: new Date().toISOString(),
      event_type: 'CREATE',
      target_type: 'ORGANIZATION',
      target_id: organizationId,
      target_name: null,
      sub_target_type: null,
      operation_id: operationId,
      change: null,
      origin: 'API',
      author_type: 'USER',
      author_id: organizationId,
      triggered_by: 'test',
      project_id: null,
      environment_id: null,
      ip: null,
      user_agent: null,
      request_id: operationId,
      status_code: null,
      outcome: 'SUCCESS',
    };
  }

  async function operations(database: Database, organizationId: string): Promise<string[]> {
    const rows = await database.db.selectFrom('organization_events').select('operation_id').where('organization_id', '=', organizationId).execute();
    return rows.map((row) => row.operation_id).sort();
  }

  it('writes on the committing connection, rolls back with the change, and stays out of work run outside', async () => {
    const { database, dispose } = await openTestDatabase(dialect);
    try {
      const organizationId = newId();
      let commits = 0;
      const participant: CommitParticipant = {
        async beforeCommit(execute) {
          commits += 1;
          await execute(database.db.insertInto('organization_events').values(eventRow(organizationId, `participant${commits}`)).compile());
        },
      };

      await withCommitParticipant(participant, () =>
        database.db.transaction().execute(async (trx) => {
          await trx.insertInto('organization_events').values(eventRow(organizationId, 'change1')).execute();
        }),
      );
      expect(await operations(database, organizationId)).toEqual(['change1', 'participant1']);

      await expect(
        withCommitParticipant(participant, () =>
          database.db.transaction().execute(async (trx) => {
            await trx.insertInto('organization_events').values(eventRow(organizationId, 'change2')).execute();
            throw new Error('the change fails');
          }),
        ),
      ).rejects.toThrow('the change fails');
      expect(await operations(database, organizationId)).toEqual(['change1', 'participant1']);

      await withCommitParticipant(participant, () =>
        outsideCommitParticipants(() =>
          database.db.transaction().execute(async (trx) => {
            await trx.insertInto('organization_events').values(eventRow(organizationId, 'change3')).execute();
          }),
        ),
      );
      expect(await operations(database, organizationId)).toEqual(['change1', 'change3', 'participant1']);
      expect(commits).toBe(1);

      // A participant that fails takes the change down with it.
      const failing: CommitParticipant = {
        async beforeCommit() {
          throw new Error('the event cannot be written');
        },
      };
      await expect(
        withCommitParticipant(failing, () =>
          database.db.transaction().execute(async (trx) => {
            await trx.insertInto('organization_events').values(eventRow(organizationId, 'change4')).execute();
          }),
        ),
      ).rejects.toThrow('the event cannot be written');
      expect(await operations(database, organizationId)).toEqual(['change1', 'change3', 'participant1']);
    } finally {
      await dispose();
    }
  });
});

describe('change summaries', () => {
  it('masks secrets by field name at any depth, by operation, and by value', () => {
    const summary = JSON.parse(
      changeSummary('createContainerRegistry', {
        name: 'registry',
        git_token_id: '0190a0c4-0000-7000-8000-000000000000',
        config: { username: 'me', password: 'hunter2', secret_access_key: 'AKIA-secret', access_key_id: 'AKIAID' },
        items: [{ key: 'A', value: 'plain' }, { key: 'B', value: 'hidden', is_secret: true }],
        note: 'slw_0123456789abcdefghijABCDEFGHIJ0123456789abcdef',
        pem: 'x -----BEGIN PRIVATE KEY----- y',
      }) ?? 'null',
    );
    expect(summary).toEqual({
      name: 'registry',
      git_token_id: '0190a0c4-0000-7000-8000-000000000000',
      config: { username: 'me', password: MASK, secret_access_key: MASK, access_key_id: 'AKIAID' },
      items: [{ key: 'A', value: 'plain' }, { key: 'B', value: MASK, is_secret: true }],
      note: MASK,
      pem: MASK,
    });
    expect(JSON.parse(changeSummary('editEnvironmentSecret', { key: 'K', value: 'v' }) ?? 'null')).toEqual({ key: 'K', value: MASK });
    expect(JSON.parse(changeSummary('organizationGithubAppConnect', { installation_id: '4711', code: 'a1b2c3' }) ?? 'null')).toEqual({ installation_id: '4711', code: MASK });
    // Credentials in URLs, whatever the field: the user information goes, the rest of the address stays.
    expect(
      JSON.parse(changeSummary('listDirectoriesFromGitRepository', { url: 'https://me:glpat-s3cret@git.example.com/a.git', note: 'see http://x@y/z' }) ?? 'null'),
    ).toEqual({ url: `https://${MASK}@git.example.com/a.git`, note: `see http://${MASK}@y/z` });
    expect(JSON.parse(changeSummary('createOrganizationWebhook', { target_url: 'https://x', target_secret: 's' }) ?? 'null')).toEqual({
      target_url: 'https://x',
      target_secret: MASK,
    });
    expect(JSON.parse(changeSummary('addCreditCard', { number: '4242 4242 4242 4242', cvv: '123', expiry_month: 12 }) ?? 'null')).toEqual({
      number: MASK,
      cvv: MASK,
      expiry_month: 12,
    });
    // A card number is masked whatever its field; other digit strings are not.
    expect(JSON.parse(changeSummary('createX', { note: '5555-5555-5555-4444', order: '1234567890123' }) ?? 'null')).toEqual({ note: MASK, order: '1234567890123' });
    expect(changeSummary('deleteProject', undefined)).toBeNull();
    const deep = JSON.parse(`{"name":"n","description":${'['.repeat(100_000)}${']'.repeat(100_000)}}`) as unknown;
    const deepSummary = JSON.parse(changeSummary('createProject', deep) ?? 'null') as { name: string; description: unknown };
    expect(deepSummary.name).toBe('n');
    expect(JSON.stringify(deepSummary.description)).toContain('"[too deep]"');
    const large = JSON.parse(changeSummary('createX', { name: 'n', blob: 'x'.repeat(20_000) }) ?? 'null');
    expect(large).toEqual({ truncated: true, fields: ['name', 'blob'] });
  });
});

describe('route classification', () => {
  it('places routes in the reference vocabularies from their operation id, method and path', () => {
    expect(classifyRoute('createProject', 'POST', '/organization/:organizationId/project')).toEqual({ eventType: 'CREATE', targetType: 'PROJECT', subTargetType: null });
    expect(classifyRoute('createEnvironment', 'POST', '/project/:projectId/environment')).toMatchObject({ targetType: 'ENVIRONMENT' });
    expect(classifyRoute('deployEnvironment', 'POST', '/environment/:environmentId/deploy')).toMatchObject({ eventType: 'TRIGGER_DEPLOY', targetType: 'ENVIRONMENT' });
    expect(classifyRoute('redeployEnvironment', 'POST', '/environment/:environmentId/redeploy')).toMatchObject({ eventType: 'TRIGGER_REDEPLOY' });
    expect(classifyRoute('createEnvironmentSecret', 'POST', '/environment/:environmentId/secret')).toMatchObject({ targetType: 'ENVIRONMENT', subTargetType: 'SECRET' });
    expect(classifyRoute('postAcceptInviteMember', 'POST', '/organization/:organizationId/inviteMember/:inviteId')).toMatchObject({
      eventType: 'ACCEPT',
      targetType: 'MEMBERS_AND_ROLES',
      subTargetType: 'INVITATION',
    });
    expect(classifyRoute('createApplication', 'POST', '/environment/:environmentId/application')).toMatchObject({ targetType: 'APPLICATION' });
    expect(classifyRoute('checkContainerRegistry', 'POST', '/organization/:organizationId/containerRegistry/:containerRegistryId/check')).toMatchObject({
      eventType: 'CREATE',
      targetType: 'CONTAINER_REGISTRY',
    });
    expect(originOf('Mozilla/5.0 (X11)')).toBe('CONSOLE');
    expect(originOf('Terraform/1.9 terraform-provider-slipway/0.1')).toBe('TERRAFORM_PROVIDER');
    expect(originOf(undefined)).toBe('API');
  });
});
