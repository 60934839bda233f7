import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clusterEventOf, startClusterEventReports } from '../src/engine/kubernetes/kubernetes-events.ts';
import type { AgentClusterEventReport } from '../src/protocol/agent-protocol.ts';
import { parse } from 'yaml';
import { SLIPWAY_VERSION } from '../src/lib/version.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startKubeCluster, type KubeCluster } from './support/kube-cluster.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Cluster insight (issue 23 part 8, docs/cluster-insight.md): a self-managed cluster's kubeconfig sealed at rest and
 * the token taken from it; Kubernetes events and the agent's lines reported over the agent protocol and read back;
 * a LOCAL cluster's deploy in its logs; readiness; the operator's status, update and fleet; and the callers who may
 * not see any of it.
 */

const SERVICE_ACCOUNT_TOKEN = `eyJhbGciOiJSUzI1NiJ9.${'c2VjcmV0'.repeat(6)}.sig-${process.pid}`;

function kubeconfig(token = SERVICE_ACCOUNT_TOKEN): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: byo',
    '    cluster:',
    '      server: https://203.0.113.10:6443',
    '      certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t',
    'users:',
    '  - name: slipway',
    '    user:',
    `      token: ${token}`,
    'contexts:',
    '  - name: byo',
    '    context:',
    '      cluster: byo',
    '      user: slipway',
    'current-context: byo',
    '',
  ].join('\n');
}

const YAML = { 'content-type': 'application/x-yaml' };

describeEachDatabase('cluster insight', (ctx) => {
  let owner: TestUser;
  let viewer: TestUser;
  let organizationId: string;
  let cluster: { clusterId: string; credential: string };
  let other: { owner: TestUser; organizationId: string };
  const orgCluster = (path = '') => `/organization/${organizationId}/cluster/${cluster.clusterId}${path}`;
  const agentCall = (credential: string | undefined, url: string, payload: unknown) =>
    ctx().call(undefined, { method: 'POST', url, payload: payload as Record<string, unknown>, headers: credential === undefined ? {} : { authorization: `Bearer ${credential}` } });

  it('sets up an organization with an enrolled self-managed cluster, a viewer, and another organization', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    cluster = await enrolledCluster(ctx(), organizationId, owner);
    other = await ctx().signUpWithOrganization();
  });

  it('stores a kubeconfig sealed, answers it back, without credentials on request, and as a token for kubectl', async () => {
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig') }), 404);
    const text = kubeconfig();
    const put = await ctx().call(owner.auth, { method: 'PUT', url: orgCluster('/kubeconfig'), headers: YAML, payload: text });
    expect(put.statusCode, put.body).toBe(204);

    const row = await ctx().database.db.selectFrom('cluster_kubeconfigs').selectAll().where('cluster_id', '=', cluster.clusterId).executeTakeFirstOrThrow();
    expect(row.kubeconfig_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(SERVICE_ACCOUNT_TOKEN);
    expect(JSON.stringify(row)).not.toContain('203.0.113.10');
    // The audit log keeps a masked copy of every write's body: never the kubeconfig.
    const audited = await ctx().database.db.selectFrom('organization_events').selectAll().where('organization_id', '=', organizationId).execute();
    expect(audited.some((event) => event.operation_id === 'editClusterKubeconfig')).toBe(true);
    expect(JSON.stringify(audited)).not.toContain(SERVICE_ACCOUNT_TOKEN);

    const got = await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig') });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.headers['content-type']).toContain('application/x-yaml');
    expect(got.body).toBe(text);

    const withoutCredentials = await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig?with_token_from_cli=true') });
    expect(withoutCredentials.statusCode, withoutCredentials.body).toBe(200);
    expect(withoutCredentials.body).not.toContain(SERVICE_ACCOUNT_TOKEN);
    const parsed = parse(withoutCredentials.body) as { users: Array<{ user: { exec: { args: string[] } } }>; clusters: unknown[] };
    expect(parsed.clusters).toHaveLength(1);
    expect(parsed.users[0]?.user.exec.args.join(' ')).toContain(`/cluster/${cluster.clusterId}/token`);

    const token = await ctx().call(owner.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/token` });
    expect(token.statusCode, token.body).toBe(200);
    const credential = token.json<{ kind: string; status: { token: string; expirationTimestamp: string } }>();
    expect(credential.kind).toBe('ExecCredential');
    expect(credential.status.token).toBe(SERVICE_ACCOUNT_TOKEN);
    expect(Date.parse(credential.status.expirationTimestamp)).toBeGreaterThan(Date.now());

    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig?read_only=true') }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/token?read_only=true` }), 400);
  });

  it('refuses kubeconfigs that are not YAML, lack users or contexts, or name what they do not list; nothing is written', async () => {
    const before = await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig') });
    const cases: Array<[string, string, string]> = [
      ['not YAML', 'clusters: [unclosed', '/'],
      ['a list', '- a\n- b\n', '/'],
      ['no users', kubeconfig().replace(/users:\n(.*\n){3}/, ''), '/users'],
      ['context names an unknown user', kubeconfig().replace('user: slipway', 'user: nobody'), '/contexts/0/context/user'],
      ['unknown current context', kubeconfig().replace('current-context: byo', 'current-context: elsewhere'), '/current-context'],
      ['server not an address', kubeconfig().replace('https://203.0.113.10:6443', 'somewhere'), '/clusters/0/cluster/server'],
      ['empty', '', '/'],
    ];
    for (const [label, text, field] of cases) {
      const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: orgCluster('/kubeconfig'), headers: YAML, payload: text }), 400);
      expect(JSON.stringify(refused), label).toContain(field);
    }
    expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: orgCluster('/kubeconfig'), headers: { 'content-type': 'text/plain' }, payload: kubeconfig() }), 415);
    const after = await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig') });
    expect(after.body).toBe(before.body);

    // A token from a user that authenticates with a certificate cannot be handed out.
    const certificateUser = kubeconfig().replace(`token: ${SERVICE_ACCOUNT_TOKEN}`, 'client-certificate-data: LS0t\n      client-key-data: LS0t');
    const second = await enrolledCluster(ctx(), organizationId, owner);
    const put = await ctx().call(owner.auth, { method: 'PUT', url: `/organization/${organizationId}/cluster/${second.clusterId}/kubeconfig`, headers: YAML, payload: certificateUser });
    expect(put.statusCode, put.body).toBe(204);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/cluster/${second.clusterId}/token` }), 400);
  });

  it('keeps the kubeconfig from viewers and from other organizations', async () => {
    expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/kubeconfig') }), 403);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/token` }), 403);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'PUT', url: orgCluster('/kubeconfig'), headers: YAML, payload: kubeconfig('viewer-token') }), 403);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: orgCluster('/kubeconfig') }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/token` }), 404);
    // Another organization's caller naming the cluster under its own organization finds nothing either.
    expectErrorBody(
      await ctx().call(other.owner.auth, { method: 'PUT', url: `/organization/${other.organizationId}/cluster/${cluster.clusterId}/kubeconfig`, headers: YAML, payload: kubeconfig('x') }),
      404,
    );
    const got = await ctx().call(owner.auth, { method: 'GET', url: orgCluster('/kubeconfig') });
    expect(got.body).toContain(SERVICE_ACCOUNT_TOKEN);
  });

  it('takes Kubernetes events and agent lines over the agent protocol and reads them back, filtered', async () => {
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const backOff = {
      uid: `uid-backoff-${process.pid}`,
      kind: 'Pod',
      namespace: 'z-env',
      name: 'web-7d9c-abcde',
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      type: 'Warning',
      reporting_component: 'kubelet',
      node_name: 'node-1',
      count: 1,
      first_occurrence: at(10),
      last_occurrence: at(10),
    };
    const scaled = { ...backOff, uid: `uid-scaled-${process.pid}`, kind: 'Deployment', name: 'web', reason: 'ScalingReplicaSet', message: 'Scaled up', type: 'Normal', reporting_component: 'deployment-controller', node_name: undefined };
    const report = await agentCall(cluster.credential, '/operator/v1/cluster-events', {
      events: [backOff, scaled],
      logs: [{ at: at(9), type: 'warning', step: 'ValidateSystemRequirements', message: 'the agent lacks permissions: list nodes' }],
    });
    expect(report.statusCode, report.body).toBe(200);
    expect(report.json()).toEqual({ events: 2, logs: 1 });
    // The same event again, repeated: its row follows.
    const repeated = await agentCall(cluster.credential, '/operator/v1/cluster-events', { events: [{ ...backOff, count: 4, last_occurrence: at(2) }] });
    expect(repeated.json()).toEqual({ events: 1, logs: 0 });

    const range = `from_date_time=${encodeURIComponent(at(60))}&to_date_time=${encodeURIComponent(at(-1))}`;
    const events = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/events?${range}` });
    expect(events.statusCode, events.body).toBe(200);
    const results = events.json<{ results: Array<Record<string, unknown>> }>().results;
    expect(results.map((event) => event.reason)).toEqual(['BackOff', 'ScalingReplicaSet']);
    expect(results[0]).toMatchObject({ kind: 'Pod', namespace: 'z-env', name: backOff.name, count: 4, type: 'Warning', reporting_component: 'kubelet' });
    const byPod = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/events?${range}&pod_name=${backOff.name}` });
    expect(byPod.json<{ results: unknown[] }>().results).toHaveLength(1);
    const byComponent = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/events?${range}&reporting_component=deployment-controller` });
    expect(byComponent.json<{ results: Array<{ reason: string }> }>().results.map((event) => event.reason)).toEqual(['ScalingReplicaSet']);
    const byNode = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/events?${range}&node_name=node-1` });
    expect(byNode.json<{ results: unknown[] }>().results).toHaveLength(1);
    const earlier = `from_date_time=${encodeURIComponent(at(120))}&to_date_time=${encodeURIComponent(at(60))}`;
    expect((await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/events?${earlier}` })).json()).toEqual({ results: [] });

    const logs = await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/logs') });
    expect(logs.statusCode, logs.body).toBe(200);
    expect(logs.json<{ results: Array<Record<string, unknown>> }>().results).toContainEqual(
      expect.objectContaining({ type: 'warning', step: 'ValidateSystemRequirements', message: { safe_message: 'the agent lacks permissions: list nodes' } }),
    );

    const query = new URLSearchParams({ endpoint: 'query_range', query: '{source="agent"} |= "permissions"', since: '2h' });
    const loki = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/logs?${query.toString()}` });
    expect(loki.statusCode, loki.body).toBe(200);
    const answer = JSON.parse(loki.json<{ response: string }>().response) as { status: string; data: { result: Array<{ stream: Record<string, string>; values: string[][] }> } };
    expect(answer.status).toBe('success');
    expect(answer.data.result).toHaveLength(1);
    expect(answer.data.result[0]?.stream).toEqual({ source: 'agent', type: 'warning', step: 'ValidateSystemRequirements' });
    expect(answer.data.result[0]?.values[0]?.[1]).toContain('list nodes');
    const none = new URLSearchParams({ endpoint: 'query_range', query: '{source="agent"} != "permissions"', since: '2h' });
    const empty = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/logs?${none.toString()}` });
    expect((JSON.parse(empty.json<{ response: string }>().response) as { data: { result: unknown[] } }).data.result).toEqual([]);
  });

  it('refuses bad reports, bad queries, callers without the credential and other organizations', async () => {
    expectErrorBody(await agentCall(undefined, '/operator/v1/cluster-events', { events: [] }), 401);
    expectErrorBody(await agentCall('slwo_not-a-credential', '/operator/v1/cluster-events', { events: [] }), 401);
    const badEvent = { uid: 'x', kind: 'Pod', namespace: 'n', name: 'p', reason: 'r', message: 'm', type: 'Normal', reporting_component: 'c', count: 0, first_occurrence: 'yesterday', last_occurrence: new Date().toISOString() };
    expectErrorBody(await agentCall(cluster.credential, '/operator/v1/cluster-events', { events: [badEvent] }), 400);
    expectErrorBody(await agentCall(cluster.credential, '/operator/v1/cluster-events', { logs: [{ at: new Date().toISOString(), type: 'loud', message: 'x' }] }), 400);
    expectErrorBody(await agentCall(cluster.credential, '/operator/v1/cluster-events', { surprise: true }), 400);

    const base = `/cluster/${cluster.clusterId}/events`;
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: base }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}?from_date_time=soon&to_date_time=later` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}?from_date_time=2026-01-02T00:00:00Z&to_date_time=2026-01-01T00:00:00Z` }), 400);
    const logsUrl = `/cluster/${cluster.clusterId}/logs`;
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${logsUrl}?endpoint=labels&query=${encodeURIComponent('{}')}` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${logsUrl}?endpoint=query_range&query=${encodeURIComponent('rate({a="b"}[5m])')}` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${logsUrl}?endpoint=query_range&query=${encodeURIComponent('{a=~"b.*"}')}` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${logsUrl}?endpoint=query_range&query=${encodeURIComponent('{}')}&limit=0` }), 400);

    const range = 'from_date_time=2020-01-01T00:00:00Z&to_date_time=2030-01-01T00:00:00Z';
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: `${base}?${range}` }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: `${logsUrl}?endpoint=query&query=${encodeURIComponent('{}')}` }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/environments` }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: orgCluster('/logs') }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: orgCluster('/isReady') }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: orgCluster('/operator/status') }), 404);
    expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: `/organization/${other.organizationId}/cluster/${cluster.clusterId}/logs` }), 404);
  });

  it('keeps only the newest lines of a cluster', async () => {
    const second = await enrolledCluster(ctx(), organizationId, owner);
    const start = Date.now() - 60 * 60_000;
    for (let batch = 0; batch < 5; batch += 1) {
      const logs = Array.from({ length: 500 }, (_, index) => ({ at: new Date(start + (batch * 500 + index) * 1000).toISOString(), type: 'info', message: `line ${batch * 500 + index}` }));
      expect((await agentCall(second.credential, '/operator/v1/cluster-events', { logs })).statusCode).toBe(200);
    }
    const rows = await ctx().database.db.selectFrom('cluster_insight_logs').select('message').where('cluster_id', '=', second.clusterId).execute();
    expect(rows).toHaveLength(2000);
    expect(rows.map((row) => row.message)).not.toContain('line 499');
    expect(rows.map((row) => row.message)).toContain('line 500');
    const listed = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${second.clusterId}/logs` });
    const results = listed.json<{ results: Array<{ message: { safe_message: string } }> }>().results;
    expect(results).toHaveLength(1000);
    expect(results.at(-1)?.message.safe_message).toBe('line 2499');
  });

  it('answers metrics queries with an empty answer and lists the environments on the cluster', async () => {
    const metrics = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/metrics?endpoint=api/v1/query&query=up` });
    expect(metrics.statusCode, metrics.body).toBe(200);
    expect(JSON.parse(metrics.json<{ metrics: string }>().metrics)).toEqual({ status: 'success', data: { resultType: 'vector', result: [] } });
    expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/metrics?endpoint=api/v1/series&query=up` }), 400);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/metrics?endpoint=query` }), 400);

    const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
    expect(project.statusCode, project.body).toBe(200);
    const projectId = project.json<{ id: string }>().id;
    const environment = await ctx().call(owner.auth, { method: 'POST', url: `/project/${projectId}/environment`, payload: { name: 'staging', cluster: cluster.clusterId, mode: 'STAGING' } });
    expect(environment.statusCode, environment.body).toBe(201);
    const listed = await ctx().call(viewer.auth, { method: 'GET', url: `/cluster/${cluster.clusterId}/environments` });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json()).toEqual({
      results: [{ environment_id: environment.json<{ id: string }>().id, environment_name: 'staging', project_id: projectId, project_name: project.json<{ name: string }>().name, services: [] }],
    });
  });

  it('says a cluster is ready once deployed with its agent heartbeating, and shows its operator against the target', async () => {
    expect((await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/isReady') })).json()).toEqual({ is_ready: false });
    const status = await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/operator/status') });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toMatchObject({ cluster_id: cluster.clusterId, organization_id: organizationId, operator_connected: false, status: 'DISCONNECTED', last_heartbeat: null });

    const beat = { agent_version: SLIPWAY_VERSION, driver: 'kubernetes', started_at: new Date().toISOString() };
    expect((await agentCall(cluster.credential, '/operator/v1/heartbeat', beat)).statusCode).toBe(200);
    const connected = (await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/operator/status') })).json<Record<string, unknown>>();
    expect(connected).toMatchObject({ operator_connected: true, operator_version: SLIPWAY_VERSION, desired_image_version: SLIPWAY_VERSION, status: 'CURRENT', request_schema_version: '1' });
    expect(typeof connected.last_heartbeat).toBe('string');
    // Deployed (the worker's doing in real life; written here) with a heartbeating agent: ready.
    expect((await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/isReady') })).json()).toEqual({ is_ready: false });
    await ctx().database.db.updateTable('clusters').set({ status: 'DEPLOYED' }).where('id', '=', cluster.clusterId).execute();
    expect((await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/isReady') })).json()).toEqual({ is_ready: true });

    expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: orgCluster('/operator/update'), payload: { chart_version: '0.2.0' } }), 403);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: orgCluster('/operator/update'), payload: { chart_version: '0.2.0 && rm -rf /' } }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: orgCluster('/operator/update'), payload: {} }), 400);
    const attached = await ctx().call(owner.auth, { method: 'POST', url: orgCluster('/operator/attach') });
    expect(attached.statusCode, attached.body).toBe(204);
    const update = await ctx().call(owner.auth, { method: 'POST', url: orgCluster('/operator/update'), payload: { chart_version: '0.2.0', image_version: '9.9.9' } });
    expect(update.statusCode, update.body).toBe(202);
    expect(update.json()).toMatchObject({ image_version: '9.9.9', chart_version: '0.2.0' });
    const outdated = (await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/operator/status') })).json();
    expect(outdated).toMatchObject({ desired_image_version: '9.9.9', desired_chart_version: '0.2.0', status: 'OUTDATED_IMAGE', reported_chart_version: null });
    const logs = (await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/logs') })).json<{ results: Array<{ message: { safe_message: string } }> }>().results;
    expect(logs.at(-1)?.message.safe_message).toBe('Operator update requested: chart 0.2.0, image 9.9.9');

    // An agent silent for three intervals is disconnected.
    ctx().clock.advance(5 * 60_000);
    expect((await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/operator/status') })).json()).toMatchObject({ operator_connected: false, status: 'DISCONNECTED' });
    expect((await ctx().call(viewer.auth, { method: 'GET', url: orgCluster('/isReady') })).json()).toEqual({ is_ready: false });
  });

  it("lists the fleet of the organizations the caller administers, to admins only", async () => {
    const fleet = await ctx().call(owner.auth, { method: 'GET', url: '/admin/operator/clusters' });
    expect(fleet.statusCode, fleet.body).toBe(200);
    const results = fleet.json<{ results: Array<Record<string, unknown>> }>().results;
    expect(results.every((entry) => entry.organization_id === organizationId)).toBe(true);
    expect(results).toContainEqual(expect.objectContaining({ cluster_id: cluster.clusterId, cluster_kind: 'EKS_SELF_MANAGED', attached: true, desired_chart_version: '0.2.0' }));
    expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: '/admin/operator/clusters' }), 403);
    const readToken = await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('read'), scope: 'READ' });
    expectErrorBody(await ctx().call(`Token ${readToken}`, { method: 'GET', url: '/admin/operator/clusters' }), 403);
    const otherFleet = await ctx().call(other.owner.auth, { method: 'GET', url: '/admin/operator/clusters' });
    expect(otherFleet.json()).toEqual({ results: [] });
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url: '/admin/operator/clusters' }), 401);
  });

  it("writes a LOCAL cluster's deploy into its logs; a LOCAL cluster has no kubeconfig or operator", async () => {
    await ctx().allowLocalClusters(organizationId);
    const created = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/cluster`,
      payload: { name: uniqueName('local'), region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const localId = created.json<{ id: string }>().id;
    const deploy = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${localId}/deploy` });
    expect(deploy.statusCode, deploy.body).toBe(201);
    const logsOf = async () =>
      (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${localId}/logs` })).json<{ results: Array<{ step: string; type: string; details: { transmitter: { id: string } } }> }>().results;
    await vi.waitFor(async () => expect((await logsOf()).map((line) => line.step)).toEqual(['Create', 'Created']), { timeout: 10_000, interval: 50 });
    expect((await logsOf())[0]?.details.transmitter.id).toBe(localId);

    const local = `/organization/${organizationId}/cluster/${localId}`;
    expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: `${local}/kubeconfig`, headers: YAML, payload: kubeconfig() }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${local}/kubeconfig` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `${local}/operator/attach` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${local}/operator/status` }), 400);
    expect(await ctx().database.db.selectFrom('cluster_operator_targets').select('cluster_id').where('cluster_id', '=', localId).execute()).toEqual([]);
  });
});

describe("the Kubernetes agent's events", () => {
  it('reads a core/v1 Event into the protocol, the newer series form and bare events included', () => {
    const classic = clusterEventOf({
      metadata: { uid: 'u1', namespace: 'slipway-env' },
      involvedObject: { kind: 'Pod', namespace: 'slipway-env', name: 'web-1' },
      reason: 'BackOff',
      message: '  Back-off restarting failed container  ',
      type: 'Warning',
      source: { component: 'kubelet', host: 'node-a' },
      count: 7,
      firstTimestamp: new Date('2026-01-01T00:00:00Z'),
      lastTimestamp: new Date('2026-01-01T00:05:00Z'),
    });
    expect(classic).toEqual({
      uid: 'u1',
      kind: 'Pod',
      namespace: 'slipway-env',
      name: 'web-1',
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      type: 'Warning',
      reporting_component: 'kubelet',
      node_name: 'node-a',
      count: 7,
      first_occurrence: '2026-01-01T00:00:00.000Z',
      last_occurrence: '2026-01-01T00:05:00.000Z',
    });
    const series = clusterEventOf({
      metadata: { uid: 'u2' },
      involvedObject: { kind: 'Deployment', namespace: 'slipway-env', name: 'web' },
      reportingComponent: 'deployment-controller',
      eventTime: new Date('2026-01-01T00:00:00Z'),
      series: { count: 3, lastObservedTime: new Date('2026-01-01T00:02:00Z') },
    });
    expect(series).toMatchObject({ count: 3, type: 'Normal', reporting_component: 'deployment-controller', last_occurrence: '2026-01-01T00:02:00.000Z' });
    expect(series).not.toHaveProperty('node_name');
    expect(clusterEventOf({ metadata: {}, involvedObject: {} })).toBeUndefined();
  });
});

describe("the Kubernetes agent reporting its namespaces' events against the apiserver", () => {
  let kube: KubeCluster | undefined;
  let config: KubeConfig;
  let core: CoreV1Api;

  beforeAll(async () => {
    // The apiserver alone: events are plain objects, nothing needs controllers or a scheduler here.
    kube = await startKubeCluster({ controllerManager: false, scheduler: false });
    config = new KubeConfig();
    config.loadFromString(kube.kubeconfig);
    core = config.makeApiClient(CoreV1Api);
  }, 5 * 60_000);

  afterAll(async () => {
    await kube?.stop();
  });

  const eventIn = (namespace: string, name: string, count: number, last: string) => ({
    namespace,
    body: {
      metadata: { name, namespace },
      involvedObject: { kind: 'Pod', namespace, name: 'web-1' },
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      type: 'Warning',
      source: { component: 'kubelet', host: 'node-a' },
      count,
      firstTimestamp: new Date('2026-01-01T00:00:00Z'),
      lastTimestamp: new Date(last),
    },
  });

  it("sends the events of Slipway's namespaces only, then only repeats, and everything again after a failed report", { timeout: 60_000 }, async () => {
    await core.createNamespace({ body: { metadata: { name: 'slipway-events-env', labels: { 'app.kubernetes.io/managed-by': 'slipway' } } } });
    await core.createNamespace({ body: { metadata: { name: 'someone-elses' } } });
    await core.createNamespacedEvent(eventIn('slipway-events-env', 'web-1.backoff', 1, '2026-01-01T00:00:00Z'));
    await core.createNamespacedEvent(eventIn('someone-elses', 'other.backoff', 1, '2026-01-01T00:00:00Z'));

    const reports: AgentClusterEventReport[] = [];
    let failNext = false;
    const reporter = startClusterEventReports({
      config,
      report: async (report) => {
        if (failNext) {
          failNext = false;
          throw new Error('the control plane cannot be reached');
        }
        reports.push(report);
      },
      onTrouble: () => undefined,
      periodMs: 100,
    });
    try {
      await vi.waitFor(() => expect(reports).toHaveLength(1), { timeout: 10_000, interval: 50 });
      expect(reports[0]?.events).toEqual([expect.objectContaining({ namespace: 'slipway-events-env', name: 'web-1', reason: 'BackOff', count: 1, node_name: 'node-a' })]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(reports, 'nothing repeated: nothing sent').toHaveLength(1);

      await core.patchNamespacedEvent({ namespace: 'slipway-events-env', name: 'web-1.backoff', body: [{ op: 'replace', path: '/count', value: 5 }] });
      await vi.waitFor(() => expect(reports).toHaveLength(2), { timeout: 10_000, interval: 50 });
      expect(reports[1]?.events?.map((event) => event.count)).toEqual([5]);

      failNext = true;
      await core.createNamespacedEvent(eventIn('slipway-events-env', 'web-1.pulled', 1, '2026-01-01T00:01:00Z'));
      // The failed report is followed by one of everything listed.
      await vi.waitFor(() => expect(reports).toHaveLength(3), { timeout: 10_000, interval: 50 });
      expect(reports[2]?.events).toHaveLength(2);
    } finally {
      await reporter.stop();
    }
  });
});
