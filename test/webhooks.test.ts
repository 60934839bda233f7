import { createHmac } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createLocalClusterGrants } from '../src/modules/clusters/clusters.local-grants.ts';
import { createWebhookSender } from '../src/modules/webhooks/webhooks.sender.ts';
import { nameMatches } from '../src/modules/webhooks/webhooks.service.ts';
import { generateWebhookSecret, signWebhook } from '../src/modules/webhooks/webhooks.signing.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startTestIssuer, type TestIssuer } from './support/oidc-issuer.ts';
import { connectionsDuring, EMBEDDED_IPV4_HOSTS } from './support/outbound-attempts.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';
import { startWebhookReceiver, type ReceivedWebhook, type TestWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * Webhooks: a LOCAL cluster's deploy delivers signed events to real HTTP receivers started here; a receiver that
 * fails first gets the delivery again through the job queue's retries; one that always fails gets its webhook
 * disabled (threshold 3 here) with a notice; redelivery; the secret shown once and nowhere else (answers, logs,
 * database); bad addresses refused.
 */

const DISABLE_AFTER = 3;
const LOCAL_CLUSTER = { region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' };
const OWN_SECRET = 'receiver-chosen-Secret-42';

interface WebhookView {
  id: string;
  enabled: boolean;
  target_secret?: string;
  target_secret_set: boolean;
  disabled_reason: string | null;
}
interface DeliveryView {
  id: string;
  message_id: string;
  event: string;
  attempt: number;
  trigger: string;
  succeeded: boolean;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
}

interface LogLine {
  level: number;
  msg: string;
  webhook?: string;
  [field: string]: unknown;
}

/** Verifies a delivery as a Standard Webhooks receiver does, with the key a secret stands for. */
function verifySignature(delivery: ReceivedWebhook, secret: string): boolean {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest('base64');
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .some((signature) => signature === `v1,${expected}`);
}

/** Reads every 25 ms until `done` holds for the value read; at the deadline it fails with `what` and the last value. */
function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      expect(done(value), `${what}: last ${JSON.stringify(value)}`).toBe(true);
      return value;
    },
    { timeout: timeoutMs, interval: 25 },
  );
}

for (const dialect of TEST_DIALECTS) {
  describe(`webhooks [${dialect}]`, () => {
    let issuer: TestIssuer;
    let testDatabase: TestDatabase;
    let app: FastifyTypeBox;
    const logLines: string[] = [];
    let organizationId: string;
    let call: (options: InjectOptions) => Promise<LightMyRequestResponse>;
    const receivers: TestWebhookReceiver[] = [];
    const answers: string[] = [];
    let base: string;
    let clusterId: string;

    beforeAll(async () => {
      issuer = await startTestIssuer();
      testDatabase = await openTestDatabase(dialect);
      const logStream = new PassThrough();
      logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
      app = await buildApp({
        config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'trace', gitAllowPrivateHosts: true },
        database: testDatabase.database,
        logStream,
        jobs: { pollIntervalMs: 50, retryBaseMs: 40 },
        webhooks: { disableAfterFailures: DISABLE_AFTER },
      });
      const name = uniqueName('hook-owner');
      const auth = `Bearer ${await issuer.signToken({ sub: `sub-${name}`, email: `${name}@example.com`, email_verified: true, name })}`;
      call = async (options) => {
        const response = await app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: auth } });
        answers.push(response.body);
        return response;
      };
      const created = await call({ method: 'POST', url: '/organization', payload: { name: uniqueName('org') } });
      expect(created.statusCode, created.body).toBe(201);
      organizationId = created.json<{ id: string }>().id;
      base = `/organization/${organizationId}/webhook`;
      // The operator's grant for LOCAL clusters (docs/clusters.md), which the deploys below run on.
      await createLocalClusterGrants({ db: testDatabase.database.db, clock: systemClock }).allow(organizationId, 'test support');
      const cluster = await call({ method: 'POST', url: `/organization/${organizationId}/cluster`, payload: { ...LOCAL_CLUSTER, name: uniqueName('local') } });
      expect(cluster.statusCode, cluster.body).toBe(201);
      clusterId = cluster.json<{ id: string }>().id;
    });

    afterAll(async () => {
      await app?.close();
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await testDatabase?.dispose();
      await issuer?.close();
    });

    async function receiver(respond?: (index: number) => number): Promise<TestWebhookReceiver> {
      const started = await startWebhookReceiver(respond);
      receivers.push(started);
      return started;
    }

    async function deployAndWait(): Promise<void> {
      const deploy = await call({ method: 'POST', url: `/organization/${organizationId}/cluster/${clusterId}/deploy` });
      expect(deploy.statusCode, deploy.body).toBe(201);
      await until(
        async () => (await call({ method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/status` })).json<{ status: string }>().status,
        (status) => status === 'DEPLOYED',
        'cluster did not reach DEPLOYED',
      );
    }

    /** The server's log lines about one webhook (pino's JSON records). */
    function webhookLogLines(webhookId: string): LogLine[] {
      return logLines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.webhook === webhookId);
    }

    async function deliveries(webhookId: string): Promise<DeliveryView[]> {
      const response = await call({ method: 'GET', url: `${base}/${webhookId}/delivery` });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ results: DeliveryView[] }>().results;
    }

    let generatedSecret: string;
    let firstHook: WebhookView;

    it('refuses bad target URLs and event lists with 400', async () => {
      for (const target_url of ['not a url', 'ftp://hooks.example.com/x', 'https://user:pw@hooks.example.com/x', 'file:///etc/passwd']) {
        const response = await call({ method: 'POST', url: base, payload: { target_url, events: ['DEPLOYMENT_STARTED'] } });
        expectErrorBody(response, 400);
      }
      expectErrorBody(await call({ method: 'POST', url: base, payload: { target_url: 'https://hooks.example.com/', events: [] } }), 400);
      expectErrorBody(await call({ method: 'POST', url: base, payload: { target_url: 'https://hooks.example.com/', events: ['DEPLOYMENT_EXPLODED'] } }), 400);
      expectErrorBody(await call({ method: 'POST', url: base, payload: { target_url: 'https://hooks.example.com/', events: ['DEPLOYMENT_STARTED'], target_secret: 'short' } }), 400);
      expect((await call({ method: 'GET', url: base })).json<{ results: unknown[] }>().results).toEqual([]);
    });

    it('delivers signed DEPLOYMENT_STARTED and DEPLOYMENT_SUCCESSFUL of a LOCAL cluster deploy', async () => {
      const target = await receiver();
      const created = await call({
        method: 'POST',
        url: base,
        payload: { target_url: target.url, description: 'ci', events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL', 'DEPLOYMENT_FAILURE', 'DEPLOYMENT_CANCELLED'] },
      });
      expect(created.statusCode, created.body).toBe(201);
      firstHook = created.json<WebhookView>();
      expect(firstHook).toMatchObject({ enabled: true, target_secret_set: true, kind: 'STANDARD', project_names_filter: [], disabled_reason: null });
      generatedSecret = firstHook.target_secret as string;
      expect(generatedSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      const read = await call({ method: 'GET', url: `${base}/${firstHook.id}` });
      expect(read.statusCode).toBe(200);
      expect(read.json()).not.toHaveProperty('target_secret');

      await deployAndWait();
      const got = await target.waitForCount(2);
      const bodies = got.map((delivery) => JSON.parse(delivery.body) as { id: string; type: string; organization_id: string; resource: unknown; data: { status: string } });
      expect(bodies.map((body) => body.type).sort()).toEqual(['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL']);
      for (const [index, delivery] of got.entries()) {
        expect(verifySignature(delivery, generatedSecret)).toBe(true);
        expect(verifySignature(delivery, `${generatedSecret.slice(0, -2)}AA`)).toBe(false);
        expect(delivery.headers['slipway-signature']).toBe(generatedSecret);
        expect(delivery.headers['content-type']).toBe('application/json');
        expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
        expect(bodies[index]).toMatchObject({ id: delivery.headers['webhook-id'], organization_id: organizationId, resource: { type: 'CLUSTER', id: clusterId } });
      }
      expect(bodies.find((body) => body.type === 'DEPLOYMENT_SUCCESSFUL')?.data.status).toBe('DEPLOYED');
      const log = await until(() => deliveries(firstHook.id), (rows) => rows.length === 2, 'two logged deliveries');
      for (const row of log) expect(row).toMatchObject({ attempt: 1, trigger: 'EVENT', succeeded: true, response_status: 200, error: null });
    });

    let retriedHook: WebhookView;
    let retriedTarget: TestWebhookReceiver;

    it('retries a delivery the receiver first answers 500, logging both attempts, and redelivers on request', async () => {
      const disabled = await call({ method: 'PUT', url: `${base}/${firstHook.id}`, payload: { target_url: receivers[0]?.url, events: ['DEPLOYMENT_STARTED'], enabled: false } });
      expect(disabled.statusCode, disabled.body).toBe(200);
      expect(disabled.json()).toMatchObject({ enabled: false, disabled_reason: null });
      retriedTarget = await receiver((index) => (index === 0 ? 500 : 200));
      const created = await call({ method: 'POST', url: base, payload: { target_url: retriedTarget.url, events: ['DEPLOYMENT_SUCCESSFUL'], target_secret: OWN_SECRET } });
      expect(created.statusCode, created.body).toBe(201);
      retriedHook = created.json<WebhookView>();
      expect(retriedHook.target_secret).toBe(OWN_SECRET);

      await deployAndWait();
      const got = await retriedTarget.waitForCount(2);
      expect(got[0]?.headers['webhook-id']).toBe(got[1]?.headers['webhook-id']);
      for (const delivery of got) expect(verifySignature(delivery, OWN_SECRET)).toBe(true);
      const log = await until(() => deliveries(retriedHook.id), (rows) => rows.length === 2, 'two logged attempts');
      expect(log.map((row) => [row.attempt, row.succeeded, row.response_status])).toEqual([
        [2, true, 200],
        [1, false, 500],
      ]);
      expect(log[1]?.error).toBe('the receiver answered 500');
      for (const row of log) expect(row.latency_ms).toBeGreaterThanOrEqual(0);
      // The first webhook, disabled, got nothing more.
      expect(receivers[0]?.received).toHaveLength(2);

      const page = await call({ method: 'GET', url: `${base}/${retriedHook.id}/delivery?pageSize=1` });
      const first = page.json<{ results: DeliveryView[]; next_cursor: string | null }>();
      expect(first.results.map((row) => row.id)).toEqual([log[0]?.id]);
      const second = await call({ method: 'GET', url: `${base}/${retriedHook.id}/delivery?pageSize=1&cursor=${first.next_cursor}` });
      expect(second.json()).toMatchObject({ results: [{ id: log[1]?.id }], next_cursor: null });

      const redeliver = await call({ method: 'POST', url: `${base}/${retriedHook.id}/delivery/${log[1]?.id}/redeliver` });
      expect(redeliver.statusCode, redeliver.body).toBe(202);
      expect(redeliver.json()).toMatchObject({ message_id: log[1]?.message_id, event: 'DEPLOYMENT_SUCCESSFUL', status: 'QUEUED' });
      const again = await retriedTarget.waitForCount(3);
      expect(again[2]?.headers['webhook-id']).toBe(got[0]?.headers['webhook-id']);
      expect(again[2]?.body).toBe(got[0]?.body);
      expect(verifySignature(again[2] as ReceivedWebhook, OWN_SECRET)).toBe(true);
      const logged = await until(() => deliveries(retriedHook.id), (rows) => rows.length === 3, 'the redelivery logged');
      expect(logged[0]).toMatchObject({ trigger: 'REDELIVERY', attempt: 1, succeeded: true, response_status: 200 });
      expectErrorBody(await call({ method: 'POST', url: `${base}/${retriedHook.id}/delivery/${firstHook.id}/redeliver` }), 404);
    });

    it(`disables a webhook after ${DISABLE_AFTER} failed deliveries in a row, with a notice to the owner`, async () => {
      const failing = await receiver(() => 503);
      const created = await call({ method: 'POST', url: base, payload: { target_url: failing.url, events: ['DEPLOYMENT_SUCCESSFUL'] } });
      expect(created.statusCode, created.body).toBe(201);
      const hook = created.json<WebhookView>();
      await deployAndWait();
      await failing.waitForCount(DISABLE_AFTER);
      const read = await until(
        async () => (await call({ method: 'GET', url: `${base}/${hook.id}` })).json<WebhookView>(),
        (view) => !view.enabled,
        'webhook not disabled',
      );
      expect(read.disabled_reason).toContain(`${DISABLE_AFTER} deliveries in a row failed`);
      const log = await until(() => deliveries(hook.id), (rows) => rows.length === DISABLE_AFTER, 'failed attempts logged');
      expect(log.every((row) => !row.succeeded && row.response_status === 503)).toBe(true);
      // No attempt after the one that disabled it, and redelivery waits for the webhook to be enabled again.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(failing.received).toHaveLength(DISABLE_AFTER);
      expectErrorBody(await call({ method: 'POST', url: `${base}/${hook.id}/delivery/${log[0]?.id}/redeliver` }), 409);
      const notice = await testDatabase.database.db.selectFrom('outbox').selectAll().where('subject', 'like', '%webhook was disabled%').execute();
      expect(notice).toHaveLength(1);
      expect(notice[0]?.text_body).toContain(failing.url);
      // The server's log warned twice for the webhook: when it started failing, and when it was disabled.
      expect(webhookLogLines(hook.id).filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([
        'webhook deliveries fail: the receiver answered 503; retried with backoff, the next failures logged at debug until one succeeds',
        `webhook disabled: ${DISABLE_AFTER} deliveries in a row failed (the last: the receiver answered 503)`,
      ]);

      const enabled = await call({ method: 'PUT', url: `${base}/${hook.id}`, payload: { target_url: failing.url, events: ['DEPLOYMENT_SUCCESSFUL'], enabled: true } });
      expect(enabled.json()).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
      const deleted = await call({ method: 'DELETE', url: `${base}/${hook.id}` });
      expect(deleted.statusCode).toBe(204);
      expectErrorBody(await call({ method: 'GET', url: `${base}/${hook.id}` }), 404);
    });

    it('delivers DEPLOYMENT_FAILURE of a deploy that fails, and nothing to a webhook whose filters exclude clusters', async () => {
      const target = await receiver();
      const filtered = await receiver();
      const created = await call({ method: 'POST', url: base, payload: { target_url: target.url, events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_FAILURE'] } });
      expect(created.statusCode, created.body).toBe(201);
      const secret = created.json<WebhookView>().target_secret as string;
      const excluded = await call({
        method: 'POST',
        url: base,
        payload: { target_url: filtered.url, events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_FAILURE'], project_names_filter: ['*'] },
      });
      expect(excluded.statusCode, excluded.body).toBe(201);
      // No cloud provisioner ships, so a MANAGED cluster's deploy ends in DEPLOYMENT_ERROR (docs/clusters.md).
      const managed = await call({
        method: 'POST',
        url: `/organization/${organizationId}/cluster`,
        payload: { name: uniqueName('managed'), region: 'us-east-1', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
      });
      expect(managed.statusCode, managed.body).toBe(201);
      const managedId = managed.json<{ id: string }>().id;
      expect((await call({ method: 'POST', url: `/organization/${organizationId}/cluster/${managedId}/deploy` })).statusCode).toBe(201);
      const got = await target.waitForCount(2);
      const bodies = got.map((delivery) => JSON.parse(delivery.body) as { type: string; resource: { id: string }; data: { status: string; message: string | null } });
      const failure = bodies.find((body) => body.type === 'DEPLOYMENT_FAILURE');
      expect(bodies.map((body) => body.type).sort()).toEqual(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STARTED']);
      expect(failure).toMatchObject({ resource: { id: managedId }, data: { status: 'DEPLOYMENT_ERROR' } });
      expect(failure?.data.message).toEqual(expect.any(String));
      for (const delivery of got) expect(verifySignature(delivery, secret)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(filtered.received).toHaveLength(0);
    });

    it('never shows, logs or stores a secret in clear after creation', async () => {
      const secrets = [generatedSecret, generatedSecret.slice('whsec_'.length), OWN_SECRET];
      const laterAnswers = answers.filter((body) => !body.includes('"target_secret":'));
      expect(answers.filter((body) => body.includes('"target_secret":'))).toHaveLength(5);
      for (const secret of secrets) {
        for (const body of laterAnswers) expect(body).not.toContain(secret);
        for (const line of logLines) expect(line).not.toContain(secret);
      }
      const { db } = testDatabase.database;
      const tables =
        dialect === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
          : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
      for (const { name } of tables.rows) {
        const dump = JSON.stringify((await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)).rows);
        for (const secret of secrets) expect(dump, name).not.toContain(secret);
      }
    });

    it('logs a failing receiver once as it starts failing and once as it succeeds again, each other failed attempt at debug only', async () => {
      const flaky = await receiver((index) => (index < DISABLE_AFTER - 1 ? 503 : 200));
      const created = await call({ method: 'POST', url: base, payload: { target_url: `${flaky.url}?token=receiver-token`, events: ['DEPLOYMENT_SUCCESSFUL'] } });
      expect(created.statusCode, created.body).toBe(201);
      const hook = created.json<WebhookView>();
      await deployAndWait();
      await flaky.waitForCount(DISABLE_AFTER);
      await until(async () => (await deliveries(hook.id)).some((row) => row.succeeded), (found) => found, 'a successful delivery');
      const lines = await vi.waitFor(() => {
        const found = webhookLogLines(hook.id);
        expect(found.map((line) => line.level)).toEqual([40, 20, 30]);
        return found;
      });
      expect(lines.map((line) => line.msg)).toEqual([
        'webhook deliveries fail: the receiver answered 503; retried with backoff, the next failures logged at debug until one succeeds',
        'webhook delivery failed: the receiver answered 503',
        'webhook deliveries succeed again',
      ]);
      expect(lines[0]).toMatchObject({ organization: organizationId, target: new URL(flaky.url).host });
      expect(lines[1]).toMatchObject({ attempt: 2, failures: 2 });
      expect(JSON.stringify(lines)).not.toContain('receiver-token');
      // The job worker's line for each failed attempt is at debug, for this webhook and every failing one before it.
      const jobFailures = logLines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.msg.startsWith('job failed: webhook delivery failed'));
      expect(jobFailures.length).toBeGreaterThanOrEqual(DISABLE_AFTER + 2);
      expect(jobFailures.filter((line) => line.level !== 20)).toEqual([]);
    });
  });
}

describe('webhook signatures', () => {
  it('match the Standard Webhooks example vector', () => {
    // The specification's example: secret, message id, timestamp and body, and the signature its libraries compute.
    const signature = signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(generateWebhookSecret()).not.toBe(generateWebhookSecret());
  });

  it('matches project name patterns with * wildcards, case-insensitively, in linear time', () => {
    expect(nameMatches('product*', 'Product-API')).toBe(true);
    expect(nameMatches('*api', 'product-api')).toBe(true);
    expect(nameMatches('a*b*c', 'axxbyyc')).toBe(true);
    expect(nameMatches('a*b*c', 'axxbyy')).toBe(false);
    expect(nameMatches('shop', 'shop-2')).toBe(false);
    expect(nameMatches('a.c', 'abc')).toBe(false);
    const started = performance.now();
    expect(nameMatches(`${'*a'.repeat(100)}b`, 'a'.repeat(255))).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describeEachDatabase('webhook addresses without private hosts', (ctx) => {
  it('refuses http:// and private or loopback targets with 400', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    for (const target_url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://localhost/x', 'https://[::1]/x']) {
      const response = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/webhook`, payload: { target_url, events: ['DEPLOYMENT_FAILURE'] } });
      expectErrorBody(response, 400);
    }
    const fine = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/webhook`,
      payload: { target_url: 'https://hooks.slipway-fixture.invalid/x', events: ['DEPLOYMENT_FAILURE'], project_names_filter: ['shop*'], environment_types_filter: ['PRODUCTION'] },
    });
    expect(fine.statusCode, fine.body).toBe(201);
  });

  it('refuses IPv6 targets that carry a loopback, private or metadata IPv4 address with 400, before any connection', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
      const payload = { target_url: `https://${host}/hook`, events: ['DEPLOYMENT_FAILURE'] };
      const { result: response, connections } = await connectionsDuring(() => ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/webhook`, payload }));
      const body = expectErrorBody(response, 400);
      expect(body.message, form).toBe('invalid target_url: host is a loopback or private address');
      expect(body.details, form).toEqual([{ field: '/target_url', message: 'host is a loopback or private address' }]);
      expect(connections, form).toEqual([]);
    }
    expect((await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/webhook` })).json()).toEqual({ results: [] });
  });
});

describe('webhook deliveries to IPv6 forms of non-public addresses', () => {
  it('are refused by the sender too (a target stored before the check tightened), without connecting', async () => {
    const sender = createWebhookSender({ allowPrivateHosts: false }, 2000);
    for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
      const { result, connections } = await connectionsDuring(() => sender.send(`https://${host}/hook`, { 'content-type': 'application/json' }, '{}'));
      expect(result, form).toEqual({ status: null, error: 'target_url host is a loopback or private address' });
      expect(connections, form).toEqual([]);
    }
  });
});

describeEachDatabase(
  'webhook events with the worker held back',
  (ctx) => {
    it('enqueues DEPLOYMENT_CANCELLED in the transaction that cancels a queued deploy, and no STARTED', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      await ctx().allowLocalClusters(organizationId);
      const hook = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/webhook`,
        payload: { target_url: 'https://hooks.slipway-fixture.invalid/x', events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_CANCELLED'] },
      });
      expect(hook.statusCode, hook.body).toBe(201);
      const webhookId = hook.json<{ id: string }>().id;
      const cluster = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster`, payload: { ...LOCAL_CLUSTER, name: uniqueName('c') } });
      const clusterId = cluster.json<{ id: string }>().id;
      expect((await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${clusterId}/deploy` })).statusCode).toBe(201);
      const cancel = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${clusterId}/cancel` });
      expect(cancel.statusCode, cancel.body).toBe(202);
      const { db } = ctx().database;
      const messages = await db.selectFrom('webhook_messages').selectAll().where('webhook_id', '=', webhookId).execute();
      expect(messages.map((message) => message.event_type)).toEqual(['DEPLOYMENT_CANCELLED']);
      expect(JSON.parse(messages[0]?.body ?? '{}')).toMatchObject({ type: 'DEPLOYMENT_CANCELLED', resource: { type: 'CLUSTER', id: clusterId }, data: { status: 'CANCELED' } });
      const jobs = await db.selectFrom('jobs').selectAll().where('kind', '=', 'webhook.delivery').where('status', '=', 'QUEUED').execute();
      expect(jobs.filter((job) => JSON.stringify(job.payload).includes(messages[0]?.id ?? 'none'))).toHaveLength(1);
    });
  },
  { jobs: { run: false } },
);
