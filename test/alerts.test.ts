import { createHmac, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { AppError } from '../src/lib/errors.ts';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { forDurationMs } from '../src/modules/alerts/alerts.conditions.ts';
import { createAlertDelivery, parseSmarthost } from '../src/modules/alerts/alerts.delivery.ts';
import { createAlertsService } from '../src/modules/alerts/alerts.service.ts';
import { createWebhookSender } from '../src/modules/webhooks/webhooks.sender.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';
import { startWebhookReceiver, type ReceivedWebhook, type TestWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * Alerting (issue 23 part 6; docs/alerts.md): receivers of the three kinds against a real SMTP server and real
 * webhook receivers on loopback (private hosts allowed, as in the webhooks tests), their secrets never answered;
 * validation answering delivered or why not; a rule on an application's deployment failure evaluated by the `alerts`
 * schedule as the test clock moves — pending for its duration, firing once, resolving once; another organization
 * cannot see or name any of it; bad input is a 400 that writes nothing; a viewer reads but cannot write.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;

interface ReceiverView {
  id: string;
  name: string;
  type: 'SLACK' | 'EMAIL';
  signing_secret?: string;
  webhook_url_hint?: string;
  webhook_format?: string;
  auth_password_set?: boolean;
  smarthost?: string;
}
interface RuleView {
  id: string;
  state: string;
  alert_receiver_ids: string[];
  starts_at?: string;
  last_evaluated_at: string | null;
  firings: { id: string; resolved_at: string | null; notified_at: string | null; value: number }[];
  target: { target_type: string; target_id: string };
}
interface Validation {
  delivered: boolean;
  message: string;
  response_status: number | null;
}

/** Verifies a delivery as a Standard Webhooks receiver does, with the key a `whsec_` secret stands for. */
function verifySignature(delivery: ReceivedWebhook, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest('base64');
  return delivery.headers['webhook-signature'] === `v1,${expected}`;
}

it('reads for_duration as an ISO 8601 duration of at most 7 days, and smarthosts as host[:port]', () => {
  expect(forDurationMs('PT5M')).toBe(5 * MINUTE);
  expect(forDurationMs('PT0S')).toBe(0);
  expect(forDurationMs('P1DT2H30M')).toBe((24 * 60 + 150) * MINUTE);
  expect(forDurationMs('PT1.5S')).toBe(1500);
  for (const bad of ['5m', 'P', 'PT', 'P8D', 'PT5', '-PT5M', 'P1W']) expect(() => forDurationMs(bad), bad).toThrow();
  expect(parseSmarthost('smtp.example.com')).toEqual({ host: 'smtp.example.com', port: 25 });
  expect(parseSmarthost('smtp.example.com:587')).toEqual({ host: 'smtp.example.com', port: 587 });
  expect(parseSmarthost('[::1]:2525')).toEqual({ host: '::1', port: 2525 });
  for (const bad of ['host:0', 'host:99999', 'a:b:c', '[nothost]:25', '']) expect(parseSmarthost(bad), bad).toBeUndefined();
});

describeEachDatabase(
  'alerts',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;
    let outsider: TestUser;
    let outsiderOrganizationId: string;
    let viewer: TestUser;
    let clusterId: string;
    let environmentId: string;
    let applicationId: string;
    let smtp: TestSmtpServer;
    let slackReceiver: TestWebhookReceiver;
    let genericReceiver: TestWebhookReceiver;
    let failingReceiver: TestWebhookReceiver;

    async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth): Promise<LightMyRequestResponse> {
      return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    }

    async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
      const response = await call(method, url, payload, auth);
      expect(response.statusCode, response.body).toBe(status);
      return response.json<T>();
    }

    function smarthostOf(server: TestSmtpServer): string {
      return new URL(server.url).host;
    }

    function slackBody(overrides: Record<string, unknown> = {}) {
      return {
        organization_id: organizationId,
        name: uniqueName('slack'),
        description: 'the on-call channel',
        type: 'SLACK',
        send_resolved: true,
        webhook_url: `${slackReceiver.url}/services/T000/B000/XXXXSECRETTOKEN`,
        ...overrides,
      };
    }

    function emailBody(overrides: Record<string, unknown> = {}) {
      return {
        organization_id: organizationId,
        name: uniqueName('mail'),
        description: 'the on-call mailbox',
        type: 'EMAIL',
        send_resolved: true,
        to: 'oncall@example.com',
        from: 'alerts@example.com',
        smarthost: smarthostOf(smtp),
        auth_username: null,
        auth_password: '',
        require_tls: false,
        ...overrides,
      };
    }

    function ruleBody(receiverIds: string[], overrides: Record<string, unknown> = {}) {
      return {
        organization_id: organizationId,
        cluster_id: clusterId,
        name: uniqueName('rule'),
        description: 'the shop does not deploy',
        tag: 'deployments',
        condition: { kind: 'BUILT', promql: 'deployment_failed' },
        for_duration: 'PT5M',
        severity: 'HIGH',
        presentation: { summary: 'A deployment of the shop failed', runbook_url: 'https://runbooks.example.com/deploy' },
        enabled: true,
        alert_receiver_ids: receiverIds,
        target: { target_type: 'APPLICATION', target_id: applicationId },
        ...overrides,
      };
    }

    async function countRows(): Promise<{ receivers: number; rules: number }> {
      const { db } = ctx().database;
      const receivers = await db.selectFrom('alert_receivers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rules = await db.selectFrom('alert_rules').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { receivers: Number(receivers.n), rules: Number(rules.n) };
    }

    /** What the deployments module records when the agent reports a deployment's outcome (no agent runs here). */
    async function setDeploymentOutcome(serviceId: string, status: 'DEPLOYMENT_ERROR' | 'DEPLOYED'): Promise<void> {
      const { db } = ctx().database;
      const now = new Date().toISOString();
      await db
        .insertInto('service_runtime')
        .values({ service_id: serviceId, status, last_deployment_id: null, deployed_deployment_id: null, workload_health: null, workload_restarts: null, workload_message: null, workload_reported_at: null, updated_at: now })
        .onConflict((conflict) => conflict.column('service_id').doUpdateSet({ status, updated_at: now }))
        .execute();
    }

    /** Moves the test clock past the `alerts` schedule's next run and waits until that run evaluated the rule. */
    async function evaluationAfter(ruleId: string, advanceMs: number): Promise<RuleView> {
      const before = (await ok<RuleView>('GET', `/alert-rules/${ruleId}`, undefined, 200)).last_evaluated_at;
      ctx().clock.advance(advanceMs);
      return vi.waitFor(
        async () => {
          const rule = await ok<RuleView>('GET', `/alert-rules/${ruleId}`, undefined, 200);
          expect(rule.last_evaluated_at).not.toBe(before);
          expect(rule.last_evaluated_at).not.toBeNull();
          return rule;
        },
        { timeout: 15_000, interval: 25 },
      );
    }

    beforeAll(async () => {
      smtp = await startTestSmtpServer();
      slackReceiver = await startWebhookReceiver();
      genericReceiver = await startWebhookReceiver();
      failingReceiver = await startWebhookReceiver(() => 500);
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      ({ owner: outsider, organizationId: outsiderOrganizationId } = await ctx().signUpWithOrganization());
      viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
      clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
      environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
      const application = { name: uniqueName('shop'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }] };
      applicationId = (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, application, 201)).id;
    });

    afterAll(async () => {
      await Promise.all([smtp?.close(), slackReceiver?.close(), genericReceiver?.close(), failingReceiver?.close()]);
    });

    it('creates, lists, reads and edits receivers; webhook URLs and passwords are sealed and never answered', async () => {
      const slack = await ok<ReceiverView>('POST', '/alert-receivers', slackBody(), 201);
      expect(slack).toMatchObject({ type: 'SLACK', webhook_format: 'SLACK', webhook_url_hint: `${new URL(slackReceiver.url).protocol}//${new URL(slackReceiver.url).host}/…` });
      expect(slack.signing_secret).toMatch(/^whsec_/);
      const mail = await ok<ReceiverView>('POST', '/alert-receivers', emailBody({ auth_username: 'relay-user', auth_password: 'relay-Passw0rd' }), 201);
      expect(mail).toMatchObject({ type: 'EMAIL', smarthost: smarthostOf(smtp), auth_password_set: true });

      const listed = await ok<{ results: ReceiverView[] }>('GET', `/organization/${organizationId}/alert-receivers`, undefined, 200);
      expect(listed.results.map((receiver) => receiver.id)).toEqual(expect.arrayContaining([slack.id, mail.id]));
      const again = await ok<ReceiverView>('GET', `/alert-receivers/${slack.id}`, undefined, 200);
      expect(again.signing_secret).toBeUndefined();
      const answers = JSON.stringify([listed, again, await ok('GET', `/alert-receivers/${mail.id}`, undefined, 200)]);
      expect(answers).not.toContain('XXXXSECRETTOKEN');
      expect(answers).not.toContain('relay-Passw0rd');
      expect(answers).not.toContain(slack.signing_secret);
      const stored = JSON.stringify(await ctx().database.db.selectFrom('alert_receivers').selectAll().where('id', 'in', [slack.id, mail.id]).execute());
      expect(stored).not.toContain('XXXXSECRETTOKEN');
      expect(stored).not.toContain('relay-Passw0rd');

      // An edit without a password keeps it; one without a URL keeps the URL; the type cannot change.
      const { organization_id: _mailOrganization, ...mailEdit } = emailBody({ name: 'renamed-mail', auth_username: 'relay-user' });
      delete (mailEdit as Record<string, unknown>).auth_password;
      expect(await ok<ReceiverView>('PUT', `/alert-receivers/${mail.id}`, mailEdit, 200)).toMatchObject({ name: 'renamed-mail', auth_password_set: true });
      const { organization_id: _slackOrganization, webhook_url: _url, ...slackEdit } = slackBody({ name: 'renamed-slack', webhook_format: 'GENERIC' });
      expect(await ok<ReceiverView>('PUT', `/alert-receivers/${slack.id}`, slackEdit, 200)).toMatchObject({ name: 'renamed-slack', webhook_format: 'GENERIC', webhook_url_hint: slack.webhook_url_hint });
      expectErrorBody(await call('PUT', `/alert-receivers/${slack.id}`, { ...mailEdit, name: 'other' }), 400);
      expectErrorBody(await call('PUT', `/alert-receivers/${mail.id}`, { ...mailEdit, name: 'renamed-slack' }), 409);

      expect((await call('DELETE', `/alert-receivers/${slack.id}`)).statusCode).toBe(204);
      expectErrorBody(await call('GET', `/alert-receivers/${slack.id}`), 404);
    });

    it('two concurrent creates of one name: one 201, one 409', async () => {
      const body = emailBody();
      const answers = await Promise.all([call('POST', '/alert-receivers', body), call('POST', '/alert-receivers', body)]);
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);
      expectErrorBody(answers.find((answer) => answer.statusCode === 409) as LightMyRequestResponse, 409);
    });

    it('validates receivers by sending a real message: delivered, or why not', async () => {
      const mail = await ok<ReceiverView>('POST', '/alert-receivers', emailBody({ to: 'validate@example.com' }), 201);
      const mailed = await ok<Validation>('POST', `/alert-receivers/${mail.id}/validate`, { message: 'ping from the test' }, 200);
      expect(mailed).toMatchObject({ delivered: true, response_status: null });
      const received = await smtp.waitFor((message) => message.to.includes('validate@example.com'));
      expect(received.raw).toContain('ping from the test');

      const slack = await ok<ReceiverView>('POST', '/alert-receivers', slackBody(), 201);
      expect(await ok<Validation>('POST', `/alert-receivers/${slack.id}/validate`, {}, 200)).toMatchObject({ delivered: true, response_status: 200 });
      const [posted] = await slackReceiver.waitForCount(1);
      expect(JSON.parse(posted?.body ?? '{}')).toEqual({ text: expect.stringContaining('test notification') });
      expect(verifySignature(posted as ReceivedWebhook, slack.signing_secret ?? '')).toBe(true);

      // Before creation: nothing is stored, whatever the outcome.
      const before = await countRows();
      const refused = await ok<Validation>('POST', '/alert-receivers/validate', { alert_receiver: slackBody({ webhook_url: failingReceiver.url }) }, 200);
      expect(refused).toMatchObject({ delivered: false, response_status: 500, message: 'the receiver answered 500' });
      const closedPort = await startTestSmtpServer();
      const deadHost = smarthostOf(closedPort);
      await closedPort.close();
      const unreachable = await ok<Validation>('POST', '/alert-receivers/validate', { alert_receiver: emailBody({ smarthost: deadHost }) }, 200);
      expect(unreachable.delivered).toBe(false);
      expect(unreachable.message).toMatch(/refused the connection|could not be reached/);
      const generic = await ok<Validation>('POST', '/alert-receivers/validate', { alert_receiver: slackBody({ webhook_url: genericReceiver.url, webhook_format: 'GENERIC' }), message: 'hello' }, 200);
      expect(generic.delivered).toBe(true);
      const [genericPost] = await genericReceiver.waitForCount(1);
      expect(JSON.parse(genericPost?.body ?? '{}')).toMatchObject({ type: 'ALERT_TEST', organization_id: organizationId, message: 'hello' });
      expect(await countRows()).toEqual(before);
      genericReceiver.received.length = 0;
      slackReceiver.received.length = 0;
    });

    it('refuses bad input with 400 and writes nothing', async () => {
      const receiver = await ok<ReceiverView>('POST', '/alert-receivers', emailBody(), 201);
      const before = await countRows();
      const badReceivers = [
        slackBody({ webhook_url: 'not a url' }),
        slackBody({ webhook_url: 'ftp://example.com/hook' }),
        slackBody({ webhook_url: 'https://user:pw@example.com/hook' }),
        slackBody({ unknown_field: true }),
        emailBody({ smarthost: 'a:b:c' }),
        emailBody({ to: 'not-an-address' }),
        emailBody({ type: 'PAGER' }),
        { ...emailBody(), name: '' },
      ];
      for (const body of badReceivers) expectErrorBody(await call('POST', '/alert-receivers', body), 400);
      const badRules: [Record<string, unknown>, RegExp][] = [
        [ruleBody([receiver.id], { condition: { kind: 'CUSTOM', promql: 'up == 0' } }), /Prometheus/],
        [ruleBody([receiver.id], { condition: { kind: 'BUILT', promql: 'container_cpu_usage_seconds_total' } }), /CPU and memory/],
        [ruleBody([receiver.id], { condition: { kind: 'BUILT', promql: 'deployment_failed', operator: 'ABOVE' } }), /threshold/],
        [ruleBody([receiver.id], { for_duration: 'five minutes' }), /for_duration/],
        [ruleBody([receiver.id], { target: { target_type: 'ENVIRONMENT', target_id: applicationId } }), /environment/],
        [ruleBody([receiver.id], { target: { target_type: 'CONTAINER', target_id: applicationId } }), /container/],
        [ruleBody([receiver.id], { target: { target_type: ' CLUSTER', target_id: clusterId }, condition: { kind: 'BUILT', promql: 'workload_failed' } }), /cluster/],
        [ruleBody([]), /alert_receiver_ids/],
        [ruleBody([receiver.id], { severity: 'URGENT' }), /severity/],
      ];
      for (const [body, reason] of badRules) {
        const error = expectErrorBody(await call('POST', '/alert-rules', body), 400);
        expect(JSON.stringify(error), JSON.stringify(body)).toMatch(reason);
      }
      expect(await countRows()).toEqual(before);
    });

    it('another organization cannot see, edit, validate or name these receivers and rules; a viewer reads but cannot write', async () => {
      const receiver = await ok<ReceiverView>('POST', '/alert-receivers', emailBody(), 201);
      const rule = await ok<RuleView>('POST', '/alert-rules', ruleBody([receiver.id]), 201);
      expect(rule.target).toEqual({ target_type: 'APPLICATION', target_id: applicationId });
      const before = await countRows();

      for (const url of [`/alert-receivers/${receiver.id}`, `/alert-rules/${rule.id}`, `/organization/${organizationId}/alert-receivers`, `/organization/${organizationId}/alert-rules`]) {
        expectErrorBody(await call('GET', url, undefined, outsider.auth), 404);
      }
      const { organization_id: _organization, ...edit } = emailBody();
      expectErrorBody(await call('PUT', `/alert-receivers/${receiver.id}`, edit, outsider.auth), 404);
      expectErrorBody(await call('POST', `/alert-receivers/${receiver.id}/validate`, {}, outsider.auth), 404);
      expectErrorBody(await call('DELETE', `/alert-receivers/${receiver.id}`, undefined, outsider.auth), 404);
      expectErrorBody(await call('DELETE', `/alert-rules/${rule.id}`, undefined, outsider.auth), 404);
      expectErrorBody(await call('POST', '/alert-receivers', emailBody(), outsider.auth), 404);
      expectErrorBody(await call('POST', '/alert-rules', ruleBody([receiver.id]), outsider.auth), 404);
      // In its own organization, the outsider cannot name our receiver, cluster or application either.
      const ownReceiver = await ok<ReceiverView>('POST', '/alert-receivers', emailBody({ organization_id: outsiderOrganizationId }), 201, outsider.auth);
      expectErrorBody(await call('POST', '/alert-rules', ruleBody([receiver.id], { organization_id: outsiderOrganizationId }), outsider.auth), 400);
      expectErrorBody(await call('POST', '/alert-rules', ruleBody([ownReceiver.id], { organization_id: outsiderOrganizationId }), outsider.auth), 400);
      const outsiderList = await ok<{ results: ReceiverView[] }>('GET', `/organization/${outsiderOrganizationId}/alert-receivers`, undefined, 200, outsider.auth);
      expect(outsiderList.results.map((entry) => entry.id)).toEqual([ownReceiver.id]);

      expect((await ok<{ results: RuleView[] }>('GET', `/organization/${organizationId}/alert-rules`, undefined, 200, viewer.auth)).results.map((entry) => entry.id)).toContain(rule.id);
      await ok('GET', `/alert-receivers/${receiver.id}`, undefined, 200, viewer.auth);
      expectErrorBody(await call('POST', '/alert-receivers', emailBody(), viewer.auth), 403);
      expectErrorBody(await call('POST', '/alert-rules', ruleBody([receiver.id]), viewer.auth), 403);
      expectErrorBody(await call('DELETE', `/alert-rules/${rule.id}`, undefined, viewer.auth), 403);
      expectErrorBody(await call('POST', `/alert-receivers/${receiver.id}/validate`, {}, viewer.auth), 403);
      expect(await countRows()).toEqual({ ...before, receivers: before.receivers + 1 });
      expect((await call('DELETE', `/alert-rules/${rule.id}`)).statusCode).toBe(204);
    });

    /** The alerts service as app.ts builds it, over the test database, with its own key and outbound policy. */
    function alertsService(allowPrivateHosts: boolean) {
      const policy = { allowPrivateHosts };
      return createAlertsService({
        db: ctx().database.db,
        clock: ctx().clock,
        secrets: createSecretBox(randomBytes(32)),
        policy,
        delivery: createAlertDelivery({ policy, sender: createWebhookSender(policy, 2000), clock: ctx().clock }),
      });
    }

    it('without SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS, refuses loopback webhooks and smarthosts at save and at send', async () => {
      const guarded = alertsService(false);
      const before = await countRows();
      for (const body of [slackBody(), slackBody({ webhook_url: 'https://127.0.0.1:8443/hook' }), slackBody({ webhook_url: 'https://localhost/hook' }), emailBody()]) {
        const refusal = await guarded.createAlertReceiver(organizationId, body as never).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refusal).toBeInstanceOf(AppError);
        expect((refusal as AppError).kind).toBe('bad_request');
      }
      expect(await countRows()).toEqual(before);
      // At send time too (a name may resolve elsewhere later): nothing reaches the loopback servers.
      const delivery = createAlertDelivery({ policy: { allowPrivateHosts: false }, sender: createWebhookSender({ allowPrivateHosts: false }, 2000), clock: ctx().clock });
      const test = { kind: 'TEST' as const, subject: 's', text: 't', html: '<p>t</p>', payload: {} };
      const webhook = await delivery.deliver({ type: 'SLACK', format: 'GENERIC', url: slackReceiver.url.replace('http:', 'https:'), signingSecret: 'whsec_c2VjcmV0' }, test, organizationId);
      expect(webhook).toMatchObject({ delivered: false, responseStatus: null });
      expect(webhook.message).toMatch(/loopback or private/);
      const mail = await delivery.deliver({ type: 'EMAIL', to: 'a@example.com', from: 'b@example.com', smarthost: smarthostOf(smtp), username: null, password: null, requireTls: false }, test, organizationId);
      expect(mail.delivered).toBe(false);
      expect(mail.message).toMatch(/loopback or private/);
      expect(slackReceiver.received).toHaveLength(0);
    });

    it('concurrent evaluations of one rule record one firing and notify once', async () => {
      const own = alertsService(true);
      genericReceiver.received.length = 0;
      const receiver = await own.createAlertReceiver(organizationId, slackBody({ webhook_url: genericReceiver.url, webhook_format: 'GENERIC' }) as never);
      const rule = await own.createAlertRule(organizationId, ruleBody([receiver.id], { for_duration: 'PT0S', name: uniqueName('instant') }) as never);
      await setDeploymentOutcome(applicationId, 'DEPLOYMENT_ERROR');
      await Promise.all([own.evaluateRule(rule.id), own.evaluateRule(rule.id), own.evaluateRule(rule.id)]);
      const firings = await ctx().database.db.selectFrom('alert_firings').selectAll().where('rule_id', '=', rule.id).execute();
      expect(firings).toHaveLength(1);
      // The app's own schedule evaluates every rule too (with a key that cannot open this receiver): at most one notice.
      expect(genericReceiver.received.length).toBeLessThanOrEqual(1);
      if ((await own.getAlertRule(organizationId, rule.id)).state === 'NOTIFIED') expect(genericReceiver.received).toHaveLength(1);
      await setDeploymentOutcome(applicationId, 'DEPLOYED');
      await own.evaluateRule(rule.id);
      await own.deleteAlertRule(organizationId, rule.id);
      await own.deleteAlertReceiver(organizationId, receiver.id);
      genericReceiver.received.length = 0;
    });

    it('a rule on deployment failure is pending for its duration, fires once, then resolves once', async () => {
      const generic = await ok<ReceiverView>('POST', '/alert-receivers', slackBody({ webhook_url: genericReceiver.url, webhook_format: 'GENERIC' }), 201);
      const mail = await ok<ReceiverView>('POST', '/alert-receivers', emailBody({ to: 'deploys@example.com', send_resolved: false }), 201);
      genericReceiver.received.length = 0;
      const created = await ok<RuleView>('POST', '/alert-rules', ruleBody([generic.id, mail.id]), 201);
      expect(created).toMatchObject({ state: 'UNDEPLOYED', firings: [], is_up_to_date: true, source: 'MANAGED' });

      const healthy = await evaluationAfter(created.id, MINUTE + SECOND);
      expect(healthy.state).toBe('OK');

      await setDeploymentOutcome(applicationId, 'DEPLOYMENT_ERROR');
      const pending = await evaluationAfter(created.id, MINUTE + SECOND);
      expect(pending).toMatchObject({ state: 'TRIGGERED', firings: [] });
      expect(pending.starts_at).toBeDefined();
      expect(genericReceiver.received).toHaveLength(0);

      await evaluationAfter(created.id, 5 * MINUTE);
      const fired = await vi.waitFor(
        async () => {
          const rule = await ok<RuleView>('GET', `/alert-rules/${created.id}`, undefined, 200);
          expect(rule.state).toBe('NOTIFIED');
          return rule;
        },
        { timeout: 10_000, interval: 25 },
      );
      expect(fired.firings).toHaveLength(1);
      expect(fired.firings[0]).toMatchObject({ resolved_at: null, value: 1 });
      expect(fired.firings[0]?.notified_at).not.toBeNull();
      const [firing] = await genericReceiver.waitForCount(1);
      expect(verifySignature(firing as ReceivedWebhook, generic.signing_secret ?? '')).toBe(true);
      expect(JSON.parse(firing?.body ?? '{}')).toMatchObject({
        type: 'ALERT_FIRING',
        alert: { rule_id: created.id, status: 'FIRING', severity: 'HIGH', condition: 'deployment_failed', target: { target_type: 'APPLICATION', target_id: applicationId } },
      });
      const mailed = await smtp.waitFor((message) => message.to.includes('deploys@example.com'));
      expect(mailed.raw).toContain('[FIRING:HIGH]');

      // Still failing: nothing more is sent.
      expect((await evaluationAfter(created.id, MINUTE + SECOND)).state).toBe('NOTIFIED');
      expect(genericReceiver.received).toHaveLength(1);

      await setDeploymentOutcome(applicationId, 'DEPLOYED');
      const resolved = await evaluationAfter(created.id, MINUTE + SECOND);
      expect(resolved.state).toBe('OK');
      expect(resolved.firings[0]?.resolved_at).not.toBeNull();
      const [, resolution] = await genericReceiver.waitForCount(2);
      expect(JSON.parse(resolution?.body ?? '{}')).toMatchObject({ type: 'ALERT_RESOLVED', alert: { rule_id: created.id, status: 'RESOLVED' } });
      expect((await evaluationAfter(created.id, MINUTE + SECOND)).firings).toHaveLength(1);
      expect(genericReceiver.received).toHaveLength(2);
      // The mailbox did not ask for resolutions.
      expect(smtp.received.filter((message) => message.to.includes('deploys@example.com'))).toHaveLength(1);

      // A receiver deleted leaves the rule with the others; a disabled rule is SUPPRESSED.
      expect((await call('DELETE', `/alert-receivers/${mail.id}`)).statusCode).toBe(204);
      expect((await ok<RuleView>('GET', `/alert-rules/${created.id}`, undefined, 200)).alert_receiver_ids).toEqual([generic.id]);
      const { organization_id: _o, cluster_id: _c, target: _t, ...edit } = ruleBody([generic.id], { enabled: false });
      expect(await ok<RuleView>('PUT', `/alert-rules/${created.id}`, edit, 200)).toMatchObject({ state: 'SUPPRESSED' });
      expect((await call('DELETE', `/alert-rules/${created.id}`)).statusCode).toBe(204);
      expectErrorBody(await call('GET', `/alert-rules/${created.id}`), 404);
    });
  },
  { gitAllowPrivateHosts: true },
);
