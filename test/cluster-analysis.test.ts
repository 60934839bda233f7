import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { readJson } from '../src/db/db.json.ts';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { SLIPWAY_VERSION } from '../src/lib/version.ts';
import { clusterAnalysisHandler, createClusterSettingsService } from '../src/modules/cluster-settings/cluster-settings.service.ts';
import { SUPPORTED_KUBERNETES_VERSIONS } from '../src/modules/clusters/clusters.records.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Cluster analyses (docs/cluster-network.md, "Cluster analysis"): started as a job (202 PENDING), one at a time per
 * cluster (409, also for concurrent starts), run by the job's handler into log lines of the requested format that
 * report what is wrong with the cluster: a stale agent heartbeat, an agent of another version, missing permissions,
 * failed certificates. The in-process worker is off here so that the test decides when the job runs and sees every
 * status on the way.
 */

interface Analysis {
  id: string;
  cluster_id: string;
  organization_id: string;
  kind: string;
  status: string;
  output_format: string;
  triggered_by: string;
  error_message?: string | null;
}

interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  line_order: number;
}

/** Runs the analysis's queued job through the registry entry the worker uses (app.ts), as a worker would. */
async function runQueuedAnalysis(app: TestApp, analysisId: string): Promise<void> {
  const unused = () => {
    throw new Error('not used by an analysis run');
  };
  const settings = createClusterSettingsService({
    db: app.database.db,
    clock: app.clock,
    secrets: createSecretBox(randomBytes(32)),
    wakeWorkers: () => undefined,
    platformDomain: 'localhost',
    jwtKey: randomBytes(32),
    publicUrl: 'http://localhost',
    heartbeatIntervalMs: 15_000,
    supportedKubernetesVersions: SUPPORTED_KUBERNETES_VERSIONS,
    cloudCredentials: { findCredentialsSummary: unused },
    git: { listCommits: unused },
    gitCredentialsOf: unused,
    platformConfiguration: { getClusterPlatformConfiguration: unused, resolvePlatformTemplateComponentConfiguration: unused },
  });
  const jobs = await app.database.db.selectFrom('jobs').selectAll().where('kind', '=', 'cluster-analysis').execute();
  const job = jobs.find((row) => readJson<{ analysisId: string }>(row.payload).analysisId === analysisId);
  if (job === undefined) throw new Error(`no job queued for analysis ${analysisId}`);
  const [kind, handler] = clusterAnalysisHandler(settings);
  expect(kind).toBe(job.kind);
  await handler.run({ id: job.id, kind: job.kind, payload: readJson(job.payload), serialKey: job.serial_key, attempt: 1, maxAttempts: job.max_attempts });
}

describeEachDatabase(
  'cluster analyses',
  (ctx) => {
    let owner: TestUser;
    let viewer: TestUser;
    let organizationId: string;
    let stranger: { owner: TestUser; organizationId: string };
    let clusterId: string;
    let otherClusterId: string;
    let firstAnalysis: Analysis;
    const url = (id: string, suffix = '') => `/clusters/${id}/analysis${suffix}`;
    const start = (auth: string, id: string, payload: Record<string, unknown>) => ctx().call(auth, { method: 'POST', url: url(id), payload });
    const logsOf = async (id: string, analysisId: string) => {
      const answer = await ctx().call(owner.auth, { method: 'GET', url: url(id, `/${analysisId}/logs`) });
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json<{ results: LogLine[] }>().results;
    };

    it('sets up an organization with a viewer, another organization, and two clusters', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization(uniqueName('analyst')));
      viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      stranger = await ctx().signUpWithOrganization();
      const create = async () => {
        const response = await ctx().call(owner.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/cluster`,
          payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED', max_running_nodes: 3 },
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json<{ id: string }>().id;
      };
      clusterId = await create();
      otherClusterId = await create();
    });

    it('refuses bad requests, viewers and other organizations, and writes nothing', async () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ['unknown kind', { kind: 'SECURITY_SCAN', output_format: 'TABLE' }],
        ['missing output format', { kind: 'COST_RECOMMENDATION' }],
        ['unknown format', { kind: 'COST_RECOMMENDATION', output_format: 'XML' }],
        ['target version for a cost analysis', { kind: 'COST_RECOMMENDATION', output_format: 'TABLE', target_kubernetes_version: '1.32' }],
        ['malformed target version', { kind: 'DEPRECATED_API_CHECK', output_format: 'TABLE', target_kubernetes_version: 'latest' }],
        ['prometheus url not http', { kind: 'COST_RECOMMENDATION', output_format: 'TABLE', prometheus_url: 'file:///etc/passwd' }],
        ['unknown field', { kind: 'COST_RECOMMENDATION', output_format: 'TABLE', shell: 'rm -rf /' }],
      ];
      for (const [label, payload] of cases) {
        const refused = expectErrorBody(await start(owner.auth, clusterId, payload), 400);
        expect(refused.message, label).toBeTruthy();
      }
      expectErrorBody(await start(viewer.auth, clusterId, { kind: 'COST_RECOMMENDATION', output_format: 'TABLE' }), 403);
      expectErrorBody(await start(stranger.owner.auth, clusterId, { kind: 'COST_RECOMMENDATION', output_format: 'TABLE' }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: url(clusterId) }), 404);
      expectErrorBody(await start(owner.auth, '0190f1f0-0000-7000-8000-000000000000', { kind: 'COST_RECOMMENDATION', output_format: 'TABLE' }), 404);
      expect((await ctx().call(viewer.auth, { method: 'GET', url: url(clusterId) })).json()).toEqual({ results: [] });
    });

    it('accepts one of several concurrent starts (202 PENDING) and refuses the others while it has not ended (409)', async () => {
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => start(owner.auth, clusterId, { kind: 'DEPRECATED_API_CHECK', output_format: 'TABLE', target_kubernetes_version: '1.32' })),
      );
      const accepted = answers.filter((answer) => answer.statusCode === 202);
      expect(accepted, answers.map((answer) => answer.body).join('\n')).toHaveLength(1);
      for (const answer of answers.filter((candidate) => candidate.statusCode !== 202)) expectErrorBody(answer, 409);
      firstAnalysis = accepted[0]?.json<Analysis>() as Analysis;
      expect(firstAnalysis).toMatchObject({ cluster_id: clusterId, organization_id: organizationId, kind: 'DEPRECATED_API_CHECK', status: 'PENDING', output_format: 'TABLE' });
      expect(firstAnalysis.triggered_by).toContain('analyst');

      // Another cluster is not held up.
      const other = await start(owner.auth, otherClusterId, { kind: 'COST_RECOMMENDATION', output_format: 'JSON' });
      expect(other.statusCode, other.body).toBe(202);
      expect((await ctx().call(viewer.auth, { method: 'GET', url: url(clusterId) })).json()).toEqual({ results: [firstAnalysis] });
      expect((await ctx().call(viewer.auth, { method: 'GET', url: url(clusterId, `/${firstAnalysis.id}`) })).json()).toEqual(firstAnalysis);
      expect(await logsOf(clusterId, firstAnalysis.id)).toEqual([]);
      // An analysis is addressed through its own cluster only.
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: url(otherClusterId, `/${firstAnalysis.id}`) }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: url(clusterId, `/${firstAnalysis.id}/logs`) }), 404);
    });

    it('reports a stale agent of another version, its missing permissions and a failed certificate', async () => {
      const now = ctx().clock.now();
      await ctx()
        .database.db.insertInto('agent_presence')
        .values({
          cluster_id: clusterId,
          agent_version: '0.0.1',
          driver: 'kubernetes',
          hostname: 'agent-0',
          started_at: new Date(now.getTime() - 3_600_000).toISOString(),
          last_seen_at: new Date(now.getTime() - 10 * 60_000).toISOString(),
          kubernetes_version: '1.31.4',
          node_count: 3,
          missing_permissions: JSON.stringify(['create ingresses cluster']),
          cert_manager_issuer: null,
        })
        .execute();
      await ctx()
        .database.db.insertInto('agent_certificates')
        .values({ cluster_id: clusterId, hostname: 'shop.example.com', status: 'ERROR', error: 'ACME order failed: rate limited', expires_at: null, reported_at: now.toISOString() })
        .execute();

      await runQueuedAnalysis(ctx(), firstAnalysis.id);
      const done = (await ctx().call(owner.auth, { method: 'GET', url: url(clusterId, `/${firstAnalysis.id}`) })).json<Analysis>();
      expect(done.status).toBe('SUCCEEDED');
      expect(done.error_message ?? null).toBeNull();

      const lines = await logsOf(clusterId, firstAnalysis.id);
      expect(lines.map((line) => line.line_order)).toEqual(lines.map((_, index) => index + 1));
      expect(lines[0]?.message).toMatch(/^CHECK\s+LEVEL\s+DETAIL$/);
      const line = (check: string, level: string) => lines.find((candidate) => candidate.level === level && candidate.message.startsWith(check))?.message;
      expect(line('agent-heartbeat', 'ERROR')).toContain('10 min ago');
      expect(line('agent-version', 'WARNING')).toContain(`0.0.1, the control plane ${SLIPWAY_VERSION}`);
      expect(line('agent-permissions', 'ERROR')).toContain('create ingresses cluster');
      expect(line('certificates', 'ERROR')).toContain('shop.example.com: ACME order failed');
      expect(lines.some((candidate) => candidate.message.startsWith('deprecated-apis') && candidate.message.includes('networking.k8s.io/v1 (Ingress): served by 1.32'))).toBe(true);
      expect(lines.at(-1)?.message).toMatch(/^\d+ finding\(s\): \d+ error\(s\), \d+ warning\(s\)$/);
      // Upgrading to 1.32 removes flowcontrol v1beta3, which charts may still use.
      expect(line('deprecated-apis', 'WARNING')).toContain('flowcontrol.apiserver.k8s.io/v1beta3');
      expect(lines.at(-1)?.level).toBe('ERROR');

      // Ended: a new analysis of the cluster may start.
      const next = await start(owner.auth, clusterId, { kind: 'COST_RECOMMENDATION', output_format: 'CSV' });
      expect(next.statusCode, next.body).toBe(202);
      await runQueuedAnalysis(ctx(), next.json<Analysis>().id);
      const csv = await logsOf(clusterId, next.json<Analysis>().id);
      expect(csv[0]?.message).toBe('check,level,detail');
      expect(csv.some((row) => row.message.startsWith('capacity,WARNING,') && row.message.includes('maximum of 3 node(s)'))).toBe(true);
    });

    it('writes one JSON finding per line, and reports a cluster no agent has joined', async () => {
      const listed = (await ctx().call(owner.auth, { method: 'GET', url: url(otherClusterId) })).json<{ results: Analysis[] }>().results;
      const [pending] = listed;
      expect(pending?.status).toBe('PENDING');
      await runQueuedAnalysis(ctx(), pending?.id ?? '');
      const lines = await logsOf(otherClusterId, pending?.id ?? '');
      const findings = lines.map((line) => JSON.parse(line.message) as { check: string; level: string; detail: string });
      expect(findings.every((finding, index) => finding.level === lines[index]?.level)).toBe(true);
      expect(findings).toContainEqual({ check: 'agent-heartbeat', level: 'ERROR', detail: expect.stringContaining('no agent has ever connected') as unknown as string });
      expect(findings.some((finding) => finding.check === 'capacity')).toBe(true);
      // A run of a job whose analysis has ended changes nothing.
      await runQueuedAnalysis(ctx(), pending?.id ?? '');
      expect(await logsOf(otherClusterId, pending?.id ?? '')).toEqual(lines);
    });
  },
  { jobs: { run: false } },
);
