import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { scheduleJobKind } from '../src/jobs/job-schedules.ts';
import { normaliseDomain } from '../src/modules/custom-domains/custom-domains.verification.ts';
import { startTestDnsServer } from './support/dns-server.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Custom domains of applications and containers (issue 8 part 3): CRUD with the reference's operation ids, one
 * service per domain in the whole installation (409), bad domains 400, and verification through real DNS: the app's
 * resolver asks a DNS server this test runs (support/dns-server.ts) and edits between checks.
 */

const APPS_DOMAIN = 'apps.slipway.test';
const dns = await startTestDnsServer();
afterAll(() => dns.close());

interface DomainView {
  id: string;
  domain: string;
  status: string;
  validation_domain: string;
  generate_certificate: boolean;
  use_cdn: boolean;
  verification_record: { type: string; name: string; value: string };
  last_check: { status: string; details: string | null; checked_at: string } | null;
}

/** The service's own public hostname, from its default link (listApplicationLinks): what a CNAME must point at. */
async function publicHostnameOf(app: TestApp, auth: string, applicationId: string): Promise<string> {
  const links = await app.call(auth, { method: 'GET', url: `/application/${applicationId}/link` });
  expect(links.statusCode, links.body).toBe(200);
  const own = links.json<{ results: Array<{ url: string; is_platform_domain: boolean }> }>().results.find((link) => link.is_platform_domain);
  if (own === undefined) throw new Error(`application ${applicationId} has no link of its own: ${links.body}`);
  return new URL(own.url).hostname;
}

describe('custom domain names', () => {
  it('normalises and refuses as documented', () => {
    expect(normaliseDomain('WWW.Example.COM.', APPS_DOMAIN)).toEqual({ domain: 'www.example.com' });
    expect(normaliseDomain('bücher.example', APPS_DOMAIN)).toEqual({ domain: 'xn--bcher-kva.example' });
    expect(normaliseDomain('*.shop.example.com', APPS_DOMAIN)).toEqual({ domain: '*.shop.example.com' });
    for (const bad of ['example', '10.0.0.1', 'a.*.example.com', 'foo*.example.com', '-a.example.com', 'a_b.example.com', 'x.localhost', APPS_DOMAIN, `web.${APPS_DOMAIN}`, 'example.123', `${'a'.repeat(64)}.com`]) {
      expect('problem' in normaliseDomain(bad, APPS_DOMAIN), bad).toBe(true);
    }
  });
});

describeEachDatabase(
  'custom domains',
  (ctx) => {
    let owner: TestUser;
    let environmentId: string;
    let environmentName: string;
    let applicationId: string;
    let applicationName: string;

    async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth) {
      return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    }

    async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number): Promise<T> {
      const response = await call(method, url, payload);
      expect(response.statusCode, response.body).toBe(status);
      return response.json<T>();
    }

    async function createApplication(publicPort: boolean): Promise<{ id: string; name: string }> {
      const name = uniqueName('web');
      const body = {
        name,
        git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' },
        healthchecks: {},
        ports: [{ internal_port: 8080, publicly_accessible: publicPort }],
      };
      return ok('POST', `/environment/${environmentId}/application`, body, 201);
    }

    beforeAll(async () => {
      let organizationId: string;
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
      const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
      environmentName = uniqueName('prod');
      environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: environmentName, cluster: clusterId }, 201)).id;
      ({ id: applicationId, name: applicationName } = await createApplication(true));
    });

    it('creates (201), lists, edits and deletes (204) a domain that starts VALIDATION_PENDING', async () => {
      const domain = `${uniqueName('shop')}.example.com`.toLowerCase();
      const created = await ok<DomainView>('POST', `/application/${applicationId}/customDomain`, { domain: domain.toUpperCase(), generate_certificate: true }, 201);
      expect(created).toMatchObject({
        domain,
        status: 'VALIDATION_PENDING',
        generate_certificate: true,
        use_cdn: false,
        validation_domain: await publicHostnameOf(ctx(), owner.auth, applicationId),
        verification_record: { type: 'TXT', name: `_slipway-challenge.${domain}` },
        last_check: null,
      });
      // `<service>-<environment>-<8 characters of its id>` under the apps domain: the tenant's names, and its own.
      expect(created.validation_domain).toMatch(new RegExp(`^${applicationName}-${environmentName}-[a-z2-7]{8}\\.${APPS_DOMAIN.replaceAll('.', '\\.')}$`));
      expect(created.verification_record.value).toMatch(/^slipway-verification=[0-9a-f]{32}$/);

      const listed = await ok<{ results: DomainView[] }>('GET', `/application/${applicationId}/customDomain`, undefined, 200);
      expect(listed.results.map((item) => item.id)).toContain(created.id);

      const kept = await ok<DomainView>('PUT', `/application/${applicationId}/customDomain/${created.id}`, { domain, generate_certificate: false, use_cdn: true }, 200);
      expect(kept).toMatchObject({ domain, generate_certificate: false, use_cdn: true, verification_record: created.verification_record });
      const moved = await ok<DomainView>('PUT', `/application/${applicationId}/customDomain/${created.id}`, { domain: `www.${domain}`, generate_certificate: false }, 200);
      expect(moved.status).toBe('VALIDATION_PENDING');
      expect(moved.use_cdn).toBe(false);
      expect(moved.verification_record.value).not.toBe(created.verification_record.value);

      const removed = await call('DELETE', `/application/${applicationId}/customDomain/${created.id}`);
      expect(removed.statusCode, removed.body).toBe(204);
      expectErrorBody(await call('DELETE', `/application/${applicationId}/customDomain/${created.id}`), 404);
      expectErrorBody(await call('GET', `/application/${applicationId}/customDomain/${created.id}/status`), 404);
    });

    it('refuses bad domains (400), a service without a public port (400), and a domain taken by any service (409)', async () => {
      const before = await ctx().database.db.selectFrom('service_custom_domains').selectAll().execute();
      for (const domain of ['localhost', 'not a domain', 'http://x.example.com', '10.1.2.3', `api.${APPS_DOMAIN}`, 'x..example.com', '']) {
        const response = await call('POST', `/application/${applicationId}/customDomain`, { domain, generate_certificate: true });
        expect(response.statusCode, `${domain}: ${response.body}`).toBe(400);
        expectErrorBody(response, 400);
      }
      expectErrorBody(await call('POST', `/application/${applicationId}/customDomain`, { domain: 'ok.example.com' }), 400);
      const privateApp = await createApplication(false);
      expectErrorBody(await call('POST', `/application/${privateApp.id}/customDomain`, { domain: 'private.example.com', generate_certificate: true }), 400);
      expect(await ctx().database.db.selectFrom('service_custom_domains').selectAll().execute()).toEqual(before);

      const domain = `${uniqueName('taken')}.example.org`.toLowerCase();
      await ok('POST', `/application/${applicationId}/customDomain`, { domain, generate_certificate: true }, 201);
      const other = await createApplication(true);
      expectErrorBody(await call('POST', `/application/${other.id}/customDomain`, { domain, generate_certificate: true }), 409);
      expectErrorBody(await call('POST', `/application/${applicationId}/customDomain`, { domain: `${domain}.`, generate_certificate: true }), 409);

      // Two services racing for one domain: exactly one wins.
      const raced = `${uniqueName('race')}.example.net`.toLowerCase();
      const answers = await Promise.all([applicationId, other.id].map((id) => call('POST', `/application/${id}/customDomain`, { domain: raced, generate_certificate: true })));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);

      // A container id under /application is not found, nor an application's domain under another application.
      expectErrorBody(await call('GET', `/application/${crypto.randomUUID()}/customDomain`), 404);
    });

    it('keeps a service at 20 domains when adds race for the last place: one wins, the others are refused', async () => {
      const app = await createApplication(true);
      for (let index = 0; index < 19; index += 1) {
        await ok('POST', `/application/${app.id}/customDomain`, { domain: `d${index}.${uniqueName('many')}.test`.toLowerCase(), generate_certificate: false }, 201);
      }
      const racing = await Promise.all(
        Array.from({ length: 5 }, (_, index) => call('POST', `/application/${app.id}/customDomain`, { domain: `last${index}.${uniqueName('many')}.test`.toLowerCase(), generate_certificate: false })),
      );
      expect(racing.map((answer) => answer.statusCode).sort()).toEqual([201, 400, 400, 400, 400]);
      for (const refused of racing.filter((answer) => answer.statusCode === 400)) expect(expectErrorBody(refused, 400).message).toBe('a service has at most 20 custom domains');
      expect((await ok<{ results: DomainView[] }>('GET', `/application/${app.id}/customDomain`, undefined, 200)).results).toHaveLength(20);
    });

    it('verifies through DNS: not configured, wrong host, CNAME to the service, apex with addresses and TXT, DNS failure', async () => {
      const app = await createApplication(true);
      const target = await publicHostnameOf(ctx(), owner.auth, app.id);
      dns.zone.set(target, { a: ['192.0.2.10'] });
      const create = async (domain: string) => ok<DomainView>('POST', `/application/${app.id}/customDomain`, { domain, generate_certificate: true }, 201);
      const status = async (created: DomainView) => ok<DomainView>('GET', `/application/${app.id}/customDomain/${created.id}/status`, undefined, 200);

      const www = await create(`www.${uniqueName('brand')}.test`.toLowerCase());
      expect(await status(www)).toMatchObject({ status: 'VALIDATION_PENDING', last_check: { status: 'DOMAIN_NOT_CONFIGURED' } });
      dns.zone.set(www.domain, { cname: 'elsewhere.example.net' });
      expect(await status(www)).toMatchObject({ status: 'VALIDATION_FAILED', last_check: { status: 'DOMAIN_LINKED_TO_WRONG_HOST' } });
      dns.zone.set(www.domain, { cname: target });
      const validated = await status(www);
      expect(validated).toMatchObject({ status: 'VALIDATED', last_check: { status: 'MATCHES_LOAD_BALANCER_HOST', details: null } });
      // A resolver failure says nothing about the domain: the status stays, the check says what went wrong.
      dns.zone.set(www.domain, { fail: true });
      expect(await status(www)).toMatchObject({ status: 'VALIDATED', last_check: { status: 'GENERIC_FAILURE' } });

      const apex = await create(`${uniqueName('apex')}.test`.toLowerCase());
      dns.zone.set(apex.domain, { a: ['192.0.2.10'] });
      expect(await status(apex)).toMatchObject({ status: 'VALIDATION_PENDING', last_check: { status: 'RESOLVES_TO_IP' } });
      dns.zone.set(apex.verification_record.name, { txt: ['unrelated', apex.verification_record.value] });
      expect(await status(apex)).toMatchObject({ status: 'VALIDATED', last_check: { status: 'RESOLVES_TO_IP' } });
      dns.zone.set(apex.domain, { a: ['198.51.100.7'] });
      expect(await status(apex)).toMatchObject({ status: 'VALIDATION_FAILED', last_check: { status: 'RESOLVES_TO_IP' } });

      const wildcard = await create(`*.${uniqueName('wild')}.test`.toLowerCase());
      dns.zone.set(`slipway-wildcard-check.${wildcard.domain.slice(2)}`, { cname: target });

      const checked = await ok<{ results: { domain_name: string; status: string; error_details: string | null }[] }>('GET', `/application/${app.id}/checkCustomDomain`, undefined, 200);
      expect(Object.fromEntries(checked.results.map((result) => [result.domain_name, result.status]))).toEqual({
        [www.domain]: 'GENERIC_FAILURE',
        [apex.domain]: 'RESOLVES_TO_IP',
        [wildcard.domain]: 'MATCHES_LOAD_BALANCER_HOST',
      });
      const listed = await ok<{ results: DomainView[] }>('GET', `/application/${app.id}/customDomain`, undefined, 200);
      expect(Object.fromEntries(listed.results.map((item) => [item.domain, item.status]))).toEqual({
        [www.domain]: 'VALIDATED',
        [apex.domain]: 'VALIDATION_FAILED',
        [wildcard.domain]: 'VALIDATED',
      });
    });

    it('serves containers under their own operation ids, and a domain goes with its service', async () => {
      const registryId = (
        await ok<{ id: string }>(
          'POST',
          `/organization/${(await ctx().database.db.selectFrom('environments').select('organization_id').where('id', '=', environmentId).executeTakeFirstOrThrow()).organization_id}/containerRegistry`,
          { name: uniqueName('registry'), kind: 'DOCKER_HUB', url: 'https://docker.io' },
          201,
        )
      ).id;
      const container = await ok<{ id: string }>(
        'POST',
        `/environment/${environmentId}/container`,
        { name: uniqueName('ctr'), registry_id: registryId, image_name: 'library/nginx', tag: '1.27', healthchecks: {}, ports: [{ internal_port: 80, publicly_accessible: true }] },
        201,
      );
      const domain = await ok<DomainView>('POST', `/container/${container.id}/customDomain`, { domain: `${uniqueName('ctr')}.example.com`.toLowerCase(), generate_certificate: true }, 201);
      expectErrorBody(await call('GET', `/application/${container.id}/customDomain`), 404);
      expect((await ok<{ results: DomainView[] }>('GET', `/container/${container.id}/customDomain`, undefined, 200)).results).toHaveLength(1);
      const removed = await call('DELETE', `/container/${container.id}`);
      expect(removed.statusCode, removed.body).toBe(204);
      expect(await ctx().database.db.selectFrom('service_custom_domains').selectAll().where('id', '=', domain.id).execute()).toEqual([]);
    });

    it('serves Helm charts under the reference’s Helm Custom Domain ids: a domain is read as stored, checked through DNS', async () => {
      const organizationId = (await ctx().database.db.selectFrom('environments').select('organization_id').where('id', '=', environmentId).executeTakeFirstOrThrow()).organization_id;
      const charts = await ok<{ id: string }>('POST', `/organization/${organizationId}/helmRepository`, { name: uniqueName('charts'), kind: 'HTTPS', url: 'https://charts.example.com/stable' }, 201);
      const helmBody = (ports: unknown[]) => ({ name: uniqueName('chart'), source: { helm_repository: { repository: charts.id, chart_name: 'nginx', chart_version: '1.2.3' } }, ports });
      const helm = await ok<{ id: string }>('POST', `/environment/${environmentId}/helm`, helmBody([{ service_name: 'web', internal_port: 80, protocol: 'HTTP' }]), 201);
      const base = `/helm/${helm.id}/customDomain`;

      const domain = `${uniqueName('chart')}.example.com`.toLowerCase();
      const created = await ok<DomainView>('POST', base, { domain, generate_certificate: false }, 201);
      expect(created).toMatchObject({ domain, status: 'VALIDATION_PENDING', last_check: null });
      expect(created.validation_domain.endsWith(`.${APPS_DOMAIN}`)).toBe(true);
      expect((await ok<{ results: DomainView[] }>('GET', base, undefined, 200)).results.map((item) => item.id)).toEqual([created.id]);
      // Read as stored: no DNS query, so no check yet.
      expect(await ok<DomainView>('GET', `${base}/${created.id}`, undefined, 200)).toEqual(created);

      dns.zone.set(domain, { cname: created.validation_domain });
      const checked = await ok<{ results: { domain_name: string; status: string }[] }>('GET', `/helm/${helm.id}/checkCustomDomain`, undefined, 200);
      expect(checked.results).toEqual([{ domain_name: domain, status: 'MATCHES_LOAD_BALANCER_HOST', error_details: null }]);
      expect(await ok<DomainView>('GET', `${base}/${created.id}`, undefined, 200)).toMatchObject({ status: 'VALIDATED', last_check: { status: 'MATCHES_LOAD_BALANCER_HOST' } });

      const moved = await ok<DomainView>('PUT', `${base}/${created.id}`, { domain: `www.${domain}`, generate_certificate: false }, 200);
      expect(moved).toMatchObject({ domain: `www.${domain}`, status: 'VALIDATION_PENDING', last_check: null });
      // The status operation is the application's and the container's; a Helm chart's domain is under its own path only.
      expect((await call('GET', `${base}/${created.id}/status`)).statusCode).toBe(404);
      expectErrorBody(await call('GET', `/application/${helm.id}/customDomain`), 404);
      expectErrorBody(await call('GET', `/helm/${applicationId}/customDomain`), 404);
      expectErrorBody(await call('GET', `${base}/${crypto.randomUUID()}`), 404);
      const outsider = await ctx().signUp(uniqueName('outsider'));
      expectErrorBody(await call('GET', `${base}/${created.id}`, undefined, outsider.auth), 404);
      expectErrorBody(await call('POST', base, { domain: `x.${domain}`, generate_certificate: false }, outsider.auth), 404);

      // A chart declaring no port routes nothing: a domain would reach nothing.
      const portless = await ok<{ id: string }>('POST', `/environment/${environmentId}/helm`, helmBody([]), 201);
      expectErrorBody(await call('POST', `/helm/${portless.id}/customDomain`, { domain: `none.${domain}`, generate_certificate: false }), 400);
      // A domain another service uses is refused here too.
      expectErrorBody(await call('POST', base, { domain: `www.${domain}`, generate_certificate: false }), 409);

      const removed = await call('DELETE', `${base}/${created.id}`);
      expect(removed.statusCode, removed.body).toBe(204);
      expectErrorBody(await call('GET', `${base}/${created.id}`), 404);
      expectErrorBody(await call('DELETE', `${base}/${created.id}`), 404);
    });

    it('hides a service from people outside its organization (404) and writes nothing for them', async () => {
      const outsider = await ctx().signUp(uniqueName('outsider'));
      const before = await ctx().database.db.selectFrom('service_custom_domains').selectAll().execute();
      expectErrorBody(await call('GET', `/application/${applicationId}/customDomain`, undefined, outsider.auth), 404);
      expectErrorBody(await call('POST', `/application/${applicationId}/customDomain`, { domain: 'nope.example.com', generate_certificate: true }, outsider.auth), 404);
      expect(await ctx().database.db.selectFrom('service_custom_domains').selectAll().execute()).toEqual(before);
    });
  },
  { dnsServers: [dns.address], appsDomain: APPS_DOMAIN },
);

describeEachDatabase(
  'custom domains checked in the background',
  (ctx) => {
    it('validates a domain once its DNS record is in place, without anyone asking, and leaves domains older than a week alone', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const created = async (url: string, payload: Record<string, unknown>, status = 201): Promise<{ id: string; name?: string }> => {
        const response = await ctx().call(owner.auth, { method: 'POST', url, payload });
        expect(response.statusCode, response.body).toBe(status);
        return response.json();
      };
      const project = await created(`/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
      const cluster = await created(`/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      const environmentName = uniqueName('prod');
      const environment = await created(`/project/${project.id}/environment`, { name: environmentName, cluster: cluster.id });
      const appName = uniqueName('web');
      const app = await created(`/environment/${environment.id}/application`, {
        name: appName,
        git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' },
        healthchecks: {},
        ports: [{ internal_port: 8080, publicly_accessible: true }],
      });
      const fresh = await created(`/application/${app.id}/customDomain`, { domain: `www.${uniqueName('later')}.test`.toLowerCase(), generate_certificate: false });
      // One added 8 days ago: the clock goes back while it is added. The background checks are runs of a scheduled
      // job, none due while the clock is back; the one under way, if any, ends first, so none sees the domain young.
      const eightDays = 8 * 24 * 60 * 60 * 1000;
      ctx().clock.advance(-eightDays);
      const runningChecks = () =>
        ctx().database.db.selectFrom('jobs').select('id').where('kind', '=', scheduleJobKind('custom-domains')).where('status', '=', 'RUNNING').execute();
      await vi.waitFor(async () => expect(await runningChecks()).toEqual([]), { timeout: 10_000, interval: 20 });
      const stale = await created(`/application/${app.id}/customDomain`, { domain: `www.${uniqueName('stale')}.test`.toLowerCase(), generate_certificate: false });
      ctx().clock.advance(eightDays);

      const listed = async () =>
        (await ctx().call(owner.auth, { method: 'GET', url: `/application/${app.id}/customDomain` })).json<{ results: DomainView[] }>().results;
      const target = await publicHostnameOf(ctx(), owner.auth, app.id);
      for (const domain of await listed()) dns.zone.set(domain.domain, { cname: target });
      // Checked every 100 ms here: the fresh domain passes by itself; the one added 8 days ago is left to its owner.
      await vi.waitFor(async () => expect((await listed()).find((domain) => domain.id === fresh.id)?.status).toBe('VALIDATED'), { timeout: 10_000, interval: 100 });
      const domains = await listed();
      expect(domains.find((domain) => domain.id === fresh.id)).toMatchObject({ status: 'VALIDATED', last_check: { status: 'MATCHES_LOAD_BALANCER_HOST' } });
      expect(domains.find((domain) => domain.id === stale.id)).toMatchObject({ status: 'VALIDATION_PENDING', last_check: null });
    });
  },
  { dnsServers: [dns.address], appsDomain: APPS_DOMAIN, customDomains: { recheckIntervalMs: 100 } },
);
