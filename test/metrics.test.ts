import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { freePort } from './support/identity-app.ts';
import { createServer } from 'node:net';
import { loadConfig } from '../src/config.ts';
import { spawnSlipway, startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { describeEachDatabase, startTestApp, uniqueName } from './support/test-app.ts';
import { enrolledCluster } from './support/agent-cluster.ts';

/**
 * /metrics as an operator's Prometheus sees it (docs/operations.md, "What to watch: metrics"): a real `slipway server`
 * with both exposures — the API port behind SLIPWAY_METRICS_TOKEN and a separate plain listener at
 * SLIPWAY_METRICS_ADDRESS — scraped every second by Debian's real `prometheus`, whose query API must then show the
 * requests made here by route template and status, the cluster deploy's job run and the job queue's depth. Also: the
 * token is required and never logged, and without either setting no /metrics is served. The agents' and deployments'
 * series are read from an app in the test's process, whose cluster agent is played over the agent protocol.
 */

const PROMETHEUS_BIN = '/usr/bin/prometheus';
const PROMETHEUS_TIMEOUT_MS = 60_000;

interface Prometheus {
  baseUrl: string;
  /** The value of `query`'s single sample, once Prometheus has one (after its scrapes), as a number. */
  valueOf(query: string, expected: number): Promise<number>;
  /** How many series `selector` matches now. */
  seriesOf(selector: string): Promise<number>;
  close(): Promise<void>;
}

/** Starts `prometheus` scraping `targets` every second; resolves once its API answers. */
async function startPrometheus(scrapeConfigs: string): Promise<Prometheus> {
  const dir = await mkdtemp(path.join(tmpdir(), 'slipway-prometheus-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const configFile = path.join(dir, 'prometheus.yml');
  await writeFile(configFile, `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n${scrapeConfigs}`);
  let output = '';
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [`--config.file=${configFile}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + PROMETHEUS_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${output}`);
      const ready = await fetch(`${baseUrl}/-/ready`).then((response) => response.ok, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`prometheus was not ready after ${PROMETHEUS_TIMEOUT_MS / 1000} s:\n${output}`);
      await sleep(100);
    }
  } catch (error) {
    await close();
    throw error;
  }

  async function resultOf(query: string): Promise<Array<{ value: [number, string] }>> {
    const response = await fetch(`${baseUrl}/api/v1/query?query=${encodeURIComponent(query)}`);
    const answer = (await response.json()) as { status: string; error?: string; data?: { result: Array<{ value: [number, string] }> } };
    if (answer.status !== 'success') throw new Error(`prometheus refused ${query}: ${answer.error ?? response.status}`);
    return answer.data?.result ?? [];
  }

  async function sampleOf(query: string): Promise<number | undefined> {
    const result = await resultOf(query);
    if (result.length > 1) throw new Error(`${query} matched ${result.length} series`);
    const value = result[0]?.value[1];
    return value === undefined ? undefined : Number(value);
  }

  return {
    baseUrl,
    /**
     * Scrapes land every second and a counter may not have reached `expected` in the newest one yet: asks until it
     * has, then answers what Prometheus holds (for the caller to assert), or the last value seen once time is up.
     */
    async valueOf(query, expected) {
      const deadline = Date.now() + PROMETHEUS_TIMEOUT_MS;
      let seen: number | undefined;
      while (Date.now() < deadline) {
        seen = await sampleOf(query);
        if (seen === expected) return seen;
        await sleep(250);
      }
      if (seen === undefined) throw new Error(`prometheus has no sample of ${query}; it printed:\n${output}`);
      return seen;
    },
    seriesOf: async (selector) => (await resultOf(selector)).length,
    close,
  };
}

/** A fetch answer in the shape expectErrorBody reads. */
async function answerOf(response: Response): Promise<LightMyRequestResponse> {
  const body = await response.text();
  return {
    statusCode: response.status,
    headers: Object.fromEntries(response.headers),
    body,
    json: () => JSON.parse(body) as unknown,
  } as unknown as LightMyRequestResponse;
}

for (const dialect of TEST_DIALECTS) {
  describe(`/metrics scraped by Prometheus [${dialect}]`, () => {
    const metricsToken = `scrape-${randomBytes(24).toString('hex')}`;
    let server: SlipwayServer & { organizationId: string; apiToken: string };
    let metricsBaseUrl: string;
    let prometheus: Prometheus | undefined;

    const api = (url: string, init: RequestInit = {}, token: string | undefined = server.apiToken) =>
      fetch(`${server.baseUrl}${url}`, {
        ...init,
        headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      });

    beforeAll(async () => {
      const metricsPort = await freePort();
      metricsBaseUrl = `http://127.0.0.1:${metricsPort}`;
      server = await startSlipwayServer(
        dialect,
        { SLIPWAY_METRICS_TOKEN: metricsToken, SLIPWAY_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` },
        { bootstrap: true },
      );
      const apiTarget = new URL(server.baseUrl).host;
      prometheus = await startPrometheus(
        [
          '  - job_name: metrics-address',
          '    static_configs:',
          `      - targets: ['127.0.0.1:${metricsPort}']`,
          '  - job_name: api-port',
          '    authorization:',
          `      credentials: '${metricsToken}'`,
          '    static_configs:',
          `      - targets: ['${apiTarget}']`,
          '',
        ].join('\n'),
      );
    }, 120_000);

    afterAll(async () => {
      await prometheus?.close();
      await server?.close();
    }, 60_000);

    it('shows requests by route template and status, the job run of a cluster deploy and the queue depth, on both exposures', async () => {
      // A 200, a 400 and two 404s on paths no route serves.
      const organization = await api(`/organization/${server.organizationId}`);
      expect(organization.status).toBe(200);
      const invalid = await api(`/organization/${server.organizationId}/project`, { method: 'POST', body: JSON.stringify({ unexpected: true }) });
      expectErrorBody(await answerOf(invalid), 400);
      for (const url of ['/no-such-path', `/no-such-path/${server.organizationId}`]) expectErrorBody(await answerOf(await api(url)), 404);

      // A cluster action: a LOCAL cluster deployed by a job of the worker.
      const created = await api(`/organization/${server.organizationId}/cluster`, {
        method: 'POST',
        body: JSON.stringify({ name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const clusterId = ((await created.json()) as { id: string }).id;
      const deploy = await api(`/organization/${server.organizationId}/cluster/${clusterId}/deploy`, { method: 'POST' });
      expect(deploy.status, await deploy.clone().text()).toBe(201);
      await expect
        .poll(
          async () => ((await (await api(`/organization/${server.organizationId}/cluster/${clusterId}/status`)).json()) as { status: string }).status,
          { timeout: 30_000, interval: 100 },
        )
        .toBe('DEPLOYED');

      const p = prometheus!;
      for (const job of ['metrics-address', 'api-port']) {
        const where = (labels: string) => `{job="${job}",${labels}}`;
        expect(await p.valueOf(`slipway_http_requests_total${where('method="GET",route="/organization/:organizationId",status_code="200"')}`, 1)).toBe(1);
        expect(await p.valueOf(`slipway_http_requests_total${where('method="POST",route="/organization/:organizationId/project",status_code="400"')}`, 1)).toBe(1);
        // Unmatched paths share one label value: no raw URL, no id, becomes a series.
        expect(await p.valueOf(`slipway_http_requests_total${where('route="unmatched",status_code="404"')}`, 2)).toBe(2);
        expect(await p.seriesOf(`slipway_http_requests_total{job="${job}",route=~".*no-such-path.*"}`)).toBe(0);
        expect(await p.valueOf(`slipway_http_request_duration_seconds_count${where('method="POST",route="/organization/:organizationId/project",status_code="400"')}`, 1)).toBe(1);
        expect(await p.valueOf(`slipway_http_request_duration_seconds_bucket${where('method="POST",route="/organization/:organizationId/project",status_code="400",le="+Inf"')}`, 1)).toBe(1);
        // The deploy's one run, and the billing schedule's one pending job (exactly one is queued or running at any time).
        expect(await p.valueOf(`slipway_job_runs_total${where('kind="cluster.action",outcome="succeeded"')}`, 1)).toBe(1);
        expect(await p.valueOf(`slipway_job_run_duration_seconds_count${where('kind="cluster.action",outcome="succeeded"')}`, 1)).toBe(1);
        expect(await p.valueOf(`sum(slipway_job_queue_depth{job="${job}",kind="schedule.billing"})`, 1)).toBe(1);
        // The runtime's own series are collected into the same registry.
        expect(await p.valueOf(`count(process_cpu_user_seconds_total{job="${job}"})`, 1)).toBe(1);
        expect(await p.valueOf(`count(nodejs_eventloop_lag_seconds{job="${job}"})`, 1)).toBe(1);
      }
      // Both jobs scraped successfully all along.
      expect(await p.valueOf('sum(up)', 2)).toBe(2);

      const text = await (await fetch(`${metricsBaseUrl}/metrics`)).text();
      for (const series of ['slipway_job_queue_oldest_due_age_seconds', 'slipway_agent_heartbeat_age_seconds', 'slipway_agent_task_duration_seconds', 'slipway_service_deployment_outcomes_total']) {
        expect(text).toContain(`# TYPE ${series} `);
      }
    }, 180_000);

    it('asks the API port for the metrics token (401 without it or with another), serves nothing else on the metrics address, and never logs the token', async () => {
      const without = await api('/metrics', {}, undefined);
      expect(without.headers.get('www-authenticate')).toBe('Bearer realm="slipway"');
      expectErrorBody(await answerOf(without), 401);
      expectErrorBody(await answerOf(await api('/metrics', {}, `${metricsToken}x`)), 401);
      expectErrorBody(await answerOf(await api('/metrics', {}, metricsToken.slice(0, -1))), 401);
      // An API token is no metrics token.
      expectErrorBody(await answerOf(await api('/metrics', {}, server.apiToken)), 401);
      const granted = await api('/metrics', {}, metricsToken);
      expect(granted.status).toBe(200);
      expect(granted.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await granted.text()).toMatch(/^slipway_http_requests_total\{method="GET",route="\/metrics",status_code="401"\} [1-9]/m);

      const plain = await fetch(`${metricsBaseUrl}/metrics`);
      expect(plain.status).toBe(200);
      expect(await plain.text()).toContain('# TYPE slipway_http_requests_total counter');
      expect((await fetch(`${metricsBaseUrl}/organization`)).status).toBe(404);
      expect((await fetch(`${metricsBaseUrl}/metrics`, { method: 'POST' })).status).toBe(404);

      // Not described as an API operation.
      const document = (await (await api('/openapi.json', {}, undefined)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(document.paths)).not.toContain('/metrics');
      expect(server.output()).not.toContain(metricsToken);
    }, 60_000);
  });

  describe(`/metrics without SLIPWAY_METRICS_TOKEN or SLIPWAY_METRICS_ADDRESS [${dialect}]`, () => {
    it('serves no /metrics at all: 404 with the error body, whatever the credential', async () => {
      const testApp = await startTestApp(dialect);
      try {
        expectErrorBody(await testApp.app.inject({ method: 'GET', url: '/metrics' }), 404);
        expectErrorBody(await testApp.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer anything-at-all-here' } }), 404);
        expect(testApp.app.registeredRoutes().map((route) => route.url)).not.toContain('/metrics');
        expect(await testApp.app.startMetricsListener()).toBeUndefined();
      } finally {
        await testApp.close();
      }
    }, 60_000);
  });
}

const METRICS_TOKEN = 'in-process-metrics-token';

/** The value of one sample of the text format (`name{labels} value`), undefined when the series is absent. */
function sampleIn(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describeEachDatabase(
  "the agents' and deployments' series",
  (ctx) => {
    async function scrape(): Promise<string> {
      const response = await ctx().app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(response.statusCode, response.body).toBe(200);
      return response.body;
    }

    it("reports each cluster's heartbeat age, and the agent tasks and service deployments by how they settled", async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
      const agent = `Bearer ${credential}`;
      const created = async (url: string, payload: Record<string, unknown>) => {
        const response = await ctx().call(owner.auth, { method: 'POST', url, payload });
        expect([200, 201], response.body).toContain(response.statusCode);
        return response.json<{ id: string }>().id;
      };
      const projectId = await created(`/organization/${organizationId}/project`, { name: uniqueName('project') });
      const environmentId = await created(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
      const applicationId = await created(`/environment/${environmentId}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB' },
        healthchecks: {},
      });

      expect(await scrape()).not.toContain(`cluster_id="${clusterId}"`);
      const beat = await ctx().call(agent, { method: 'POST', url: '/operator/v1/heartbeat', payload: { agent_version: '1.0.0', driver: 'kubernetes', started_at: new Date().toISOString() } });
      expect(beat.statusCode, beat.body).toBe(200);
      ctx().clock.advance(30_000);
      const age = sampleIn(await scrape(), `slipway_agent_heartbeat_age_seconds{cluster_id="${clusterId}"}`);
      expect(age).toBeGreaterThanOrEqual(30);
      expect(age).toBeLessThan(60);

      /** Deploys the application and has the agent report `events` on its task. */
      async function deployAndReport(events: string[]): Promise<void> {
        const deploy = await ctx().call(owner.auth, { method: 'POST', url: `/application/${applicationId}/deploy` });
        expect(deploy.statusCode, deploy.body).toBe(202);
        let task: { id: string; lease_id: string; last_report_seq: number } | undefined;
        await expect
          .poll(
            async () => {
              const lease = await ctx().call(agent, { method: 'GET', url: '/operator/v1/tasks?max=1&wait_seconds=1' });
              task ??= lease.json<{ tasks: Array<{ id: string; lease_id: string; last_report_seq: number }> }>().tasks[0];
              return task !== undefined;
            },
            { timeout: 20_000, interval: 50 },
          )
          .toBe(true);
        let seq = task!.last_report_seq;
        for (const event of events) {
          seq += 1;
          const report = await ctx().call(agent, { method: 'POST', url: `/operator/v1/tasks/${task!.id}/progress`, payload: { lease_id: task!.lease_id, seq, event } });
          expect(report.statusCode, report.body).toBe(200);
        }
      }

      await deployAndReport(['take', 'built', 'succeed']);
      await deployAndReport(['take', 'fail']);
      const text = await scrape();
      expect(sampleIn(text, 'slipway_service_deployment_outcomes_total{service_kind="APPLICATION",status="DEPLOYED"}')).toBe(1);
      expect(sampleIn(text, 'slipway_service_deployment_outcomes_total{service_kind="APPLICATION",status="BUILD_ERROR"}')).toBe(1);
      expect(sampleIn(text, 'slipway_agent_task_duration_seconds_count{subject="SERVICE",action="deploy",outcome="SUCCEEDED"}')).toBe(1);
      expect(sampleIn(text, 'slipway_agent_task_duration_seconds_count{subject="SERVICE",action="deploy",outcome="FAILED"}')).toBe(1);
      // The first deploy's job finished before the second's could start (one service's jobs run one at a time).
      expect(sampleIn(text, 'slipway_job_runs_total{kind="service.action",outcome="succeeded"}')).toBeGreaterThanOrEqual(1);
      // No tenant id, and no raw URL, in any label but the heartbeat's cluster id.
      for (const id of [organizationId, projectId, environmentId, applicationId]) expect(text).not.toContain(id);
    }, 60_000);
  },
  { metricsToken: METRICS_TOKEN },
);

describe('the metrics settings', () => {
  it('takes a token of 16 to 256 visible characters and a host:port, refusing anything else without echoing a token', () => {
    expect(loadConfig({ SLIPWAY_METRICS_TOKEN: 'a-scraper-token-0123' }).metricsToken).toBe('a-scraper-token-0123');
    expect(loadConfig({ SLIPWAY_METRICS_ADDRESS: '10.0.0.5:9464' }).metricsAddress).toEqual({ host: '10.0.0.5', port: 9464 });
    expect(loadConfig({ SLIPWAY_METRICS_ADDRESS: '[::1]:9464' }).metricsAddress).toEqual({ host: '::1', port: 9464 });
    expect(loadConfig({ SLIPWAY_METRICS_ADDRESS: 'metrics.internal:9464' }).metricsAddress).toEqual({ host: 'metrics.internal', port: 9464 });
    expect(loadConfig({})).toMatchObject({ metricsToken: undefined, metricsAddress: undefined });
    for (const token of ['short-token', 'has a space in the middle of it', 'x'.repeat(257)]) {
      expect(() => loadConfig({ SLIPWAY_METRICS_TOKEN: token })).toThrow('SLIPWAY_METRICS_TOKEN: must be 16 to 256 visible ASCII characters without spaces');
      try {
        loadConfig({ SLIPWAY_METRICS_TOKEN: token });
      } catch (error) {
        expect((error as Error).message).not.toContain(token);
      }
    }
    for (const address of ['9464', '::1:9464', '10.0.0.5:0', '10.0.0.5:65536', '[10.0.0.5]:9464', 'host name:9464', '10.0.0.5:']) {
      expect(() => loadConfig({ SLIPWAY_METRICS_ADDRESS: address })).toThrow(`SLIPWAY_METRICS_ADDRESS: must be host:port such as 10.0.0.5:9464 or [::1]:9464, got ${JSON.stringify(address)}`);
    }
  });

  it('ends a server whose metrics address is in use with one line naming the variable, exit status 2', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = await mkdtemp(path.join(tmpdir(), 'slipway-metrics-address-'));
    try {
      const child = spawnSlipway(['server'], {
        SLIPWAY_DATA_DIR: dataDir,
        SLIPWAY_HOST: '127.0.0.1',
        SLIPWAY_PORT: '0',
        SLIPWAY_LOCAL_AGENT: 'false',
        SLIPWAY_LOG_LEVEL: 'warn',
        SLIPWAY_METRICS_ADDRESS: `127.0.0.1:${port}`,
      });
      // A server that starts after all is ended, so the assertions fail rather than the test hanging.
      const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const result = await child.result.finally(() => clearTimeout(deadline));
      expect(result.stderr).toBe(`slipway: cannot start: the metrics address 127.0.0.1:${port} is in use: choose another with SLIPWAY_METRICS_ADDRESS\n`);
      expect(result.code).toBe(2);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
