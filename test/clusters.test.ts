import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createLocalClusterGrants } from '../src/modules/clusters/clusters.local-grants.ts';
import { CLUSTER_STATES, CLUSTER_TRANSITIONS, requestedState, transitionOf } from '../src/modules/clusters/clusters.states.ts';
import { expectErrorBody } from './support/error-body.ts';
import { clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Clusters (SPEC.md "Clusters", "States and transitions"; issue 7): the state machine's table, and clusters walked
 * through their lifecycle by the real job worker on a real database — a LOCAL cluster from create to delete, a
 * self-managed cluster whose deploy waits for its operator's report, a MANAGED cluster that fails honestly without
 * a provisioner, locks, upgrades, cancellation and every illegal action answered 409 with the state named, and LOCAL
 * clusters only for organizations the installation's operator allows.
 */

interface ClusterStatusView {
  cluster_id: string;
  status: string;
  is_deployed: boolean;
  next_k8s_available_version: string | null;
  last_execution_id: string | null;
  cluster_lock: { reason: string; cluster_id: string; locked_at: string; owner_name: string; ttl_in_days: number | null } | null;
  last_deployment_date: string | null;
  message: string | null;
}

interface ClusterView {
  id: string;
  name: string;
  status: string;
  version: string;
  deployment_status: string;
  kubernetes: string;
}

const LOCAL_CLUSTER = { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' };

describe('cluster state machine', () => {
  it('gives every state of SPEC.md an entry, and every target is a state', () => {
    expect(Object.keys(CLUSTER_TRANSITIONS).sort()).toEqual([...CLUSTER_STATES].sort());
    for (const moves of Object.values(CLUSTER_TRANSITIONS)) {
      for (const to of Object.values(moves)) expect(CLUSTER_STATES).toContain(to);
    }
  });

  it('leaves no state a dead end except DELETED: each can be acted on or progresses', () => {
    for (const state of CLUSTER_STATES) {
      if (state === 'DELETED') expect(Object.keys(CLUSTER_TRANSITIONS[state])).toEqual([]);
      else expect(Object.keys(CLUSTER_TRANSITIONS[state]).length, state).toBeGreaterThan(0);
    }
  });

  it('refuses illegal actions with a conflict naming the state, and actions on infrastructure never deployed', () => {
    expect(() => requestedState('DEPLOYING', 'deploy', false)).toThrow(/DEPLOYING/);
    expect(() => requestedState('READY', 'stop', false)).toThrow(/READY/);
    expect(() => requestedState('DEPLOYMENT_ERROR', 'stop', false)).toThrow(/never been deployed/);
    expect(() => requestedState('DELETED', 'delete', true)).toThrow(/DELETED/);
    expect(requestedState('DEPLOYED', 'upgrade', true)).toBe('DEPLOYMENT_QUEUED');
    expect(transitionOf('BUILDING', 'built')).toBe('DEPLOYING');
    expect(transitionOf('DEPLOYING', 'dry_run_done')).toBe('DRY_RUN');
    expect(transitionOf('CANCELING', 'cancel_done')).toBe('CANCELED');
  });
});

async function waitForStatus(ctx: TestApp, auth: string, organizationId: string, clusterId: string, wanted: string): Promise<ClusterStatusView> {
  return vi.waitFor(
    async () => {
      const response = await ctx.call(auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/status` });
      expect(response.statusCode, response.body).toBe(200);
      const last = response.json<ClusterStatusView>();
      expect(last.status, `cluster ${clusterId} did not reach ${wanted}; last status ${JSON.stringify(last)}`).toBe(wanted);
      return last;
    },
    { timeout: 10_000, interval: 20 },
  );
}

describeEachDatabase(
  'clusters',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;

    async function createCluster(body: Record<string, unknown>) {
      return ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster`, payload: body });
    }
    async function action(clusterId: string, verb: string) {
      return ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${clusterId}/${verb}` });
    }
    /** A new organization the installation's operator allows LOCAL clusters, as most tests here walk one. */
    async function organizationAllowedLocalClusters(): Promise<{ owner: TestUser; organizationId: string }> {
      const signedUp = await ctx().signUpWithOrganization();
      await ctx().allowLocalClusters(signedUp.organizationId);
      return signedUp;
    }

    it('walks a LOCAL cluster: create → deploy → DEPLOYED → lock → upgrade refused → unlock → upgrade → stop → delete', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      const created = await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('local') });
      expect(created.statusCode, created.body).toBe(201);
      const cluster = created.json<ClusterView>();
      expect(cluster).toMatchObject({ status: 'READY', deployment_status: 'NEVER_DEPLOYED', kubernetes: 'LOCAL', version: '1.31' });

      const deploy = await action(cluster.id, 'deploy');
      expect(deploy.statusCode, deploy.body).toBe(201);
      const queued = deploy.json<ClusterStatusView>();
      expect(queued.status).toBe('DEPLOYMENT_QUEUED');
      expect(queued.last_execution_id).toMatch(/^[0-9a-f-]{36}$/);
      const deployed = await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      expect(deployed).toMatchObject({ is_deployed: true, next_k8s_available_version: '1.32', cluster_lock: null, last_execution_id: queued.last_execution_id });
      expect(deployed.last_deployment_date).toMatch(/\.\d{3}Z$/);
      // The job is marked SUCCEEDED just after the cluster reaches DEPLOYED (the handler returns, then the worker records it).
      const jobStatus = async () => (await ctx().database.db.selectFrom('jobs').select('status').where('id', '=', queued.last_execution_id as string).executeTakeFirstOrThrow()).status;
      expect(['RUNNING', 'SUCCEEDED']).toContain(await jobStatus());
      await expect.poll(jobStatus, { timeout: 4_000, interval: 20, message: 'the deploy job was not marked SUCCEEDED' }).toBe('SUCCEEDED');

      const lock = await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/lock`, payload: { reason: 'quarter close', ttl_in_days: 2 } });
      expect(lock.statusCode, lock.body).toBe(200);
      expect(lock.json()).toMatchObject({ reason: 'quarter close', cluster_id: cluster.id, ttl_in_days: 2 });
      const second = await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/lock`, payload: { reason: 'again' } });
      expectErrorBody(second, 409);

      const refused = await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/upgrade` });
      const refusal = expectErrorBody(refused, 409);
      expect(refusal.message).toContain('quarter close');
      const status = await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      expect(status.cluster_lock).toMatchObject({ reason: 'quarter close' });
      const locks = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/lock` });
      expect(locks.json<{ results: unknown[] }>().results).toHaveLength(1);

      const unlock = await ctx().call(owner.auth, { method: 'DELETE', url: `/cluster/${cluster.id}/lock` });
      expect(unlock.statusCode).toBe(204);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/cluster/${cluster.id}/lock` }), 404);

      const upgrade = await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/upgrade` });
      expect(upgrade.statusCode, upgrade.body).toBe(200);
      expect(upgrade.json<ClusterStatusView>()).toMatchObject({ cluster_id: cluster.id, status: 'DEPLOYMENT_QUEUED', is_deployed: true, next_k8s_available_version: '1.32' });
      const upgraded = await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      expect(upgraded.next_k8s_available_version).toBeNull();
      const afterUpgrade = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${cluster.id}` });
      expect(afterUpgrade.json<ClusterView>()).toMatchObject({ version: '1.32', deployment_status: 'UP_TO_DATE' });
      const noNewer = await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/upgrade` });
      expect(expectErrorBody(noNewer, 409).message).toContain('newest');

      const stop = await action(cluster.id, 'stop');
      expect(stop.statusCode, stop.body).toBe(202);
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'STOPPED');
      const stopAgain = await action(cluster.id, 'stop');
      expect(expectErrorBody(stopAgain, 409).message).toContain('STOPPED');

      const removed = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/cluster/${cluster.id}` });
      expect(removed.statusCode, removed.body).toBe(204);
      await vi.waitFor(
        async () => {
          const gone = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${cluster.id}/status` });
          if (gone.statusCode === 404) return;
          expect(gone.statusCode).toBe(200);
          expect(['DELETE_QUEUED', 'DELETING', 'DELETED']).toContain(gone.json<ClusterStatusView>().status);
          throw new Error('cluster was not deleted');
        },
        { timeout: 10_000, interval: 20 },
      );
      const list = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster` });
      expect(list.json<{ results: ClusterView[] }>().results.map((c) => c.id)).not.toContain(cluster.id);
    });

    it('lists statuses as id and status only, and marks an edited deployed cluster OUT_OF_DATE until redeployed', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      const name = uniqueName('edit');
      const cluster = (await createCluster({ ...LOCAL_CLUSTER, name })).json<ClusterView>();
      await action(cluster.id, 'deploy');
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');

      const statuses = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/status` });
      expect(statuses.statusCode).toBe(200);
      expect(statuses.json()).toEqual({ results: [{ cluster_id: cluster.id, status: 'DEPLOYED' }] });

      const edited = await ctx().call(owner.auth, {
        method: 'PUT',
        url: `/organization/${organizationId}/cluster/${cluster.id}`,
        payload: { ...LOCAL_CLUSTER, name, description: 'bigger', max_running_nodes: 3 },
      });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json<ClusterView>()).toMatchObject({ deployment_status: 'OUT_OF_DATE', status: 'DEPLOYED' });
      const moved = await ctx().call(owner.auth, {
        method: 'PUT',
        url: `/organization/${organizationId}/cluster/${cluster.id}`,
        payload: { ...LOCAL_CLUSTER, name, region: 'elsewhere' },
      });
      expectErrorBody(moved, 400);

      await action(cluster.id, 'deploy');
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      const redeployed = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${cluster.id}` });
      expect(redeployed.json<ClusterView>().deployment_status).toBe('UP_TO_DATE');
    });

    it('answers 400 for bad bodies and delete options, 409 for a taken name (one winner of parallel creates)', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      expectErrorBody(await createCluster({ ...LOCAL_CLUSTER, cloud_provider: 'AWS' }), 400);
      expectErrorBody(await createCluster({ ...LOCAL_CLUSTER, kubernetes: 'SELF_MANAGED', cloud_provider: 'AWS' }), 400);
      expectErrorBody(await createCluster({ ...LOCAL_CLUSTER, min_running_nodes: 3, max_running_nodes: 2 }), 400);
      expectErrorBody(await createCluster({ ...LOCAL_CLUSTER, cloud_provider: 'MOON' }), 400);
      expectErrorBody(await createCluster({ ...LOCAL_CLUSTER, surprise: true }), 400);
      expectErrorBody(await createCluster({ region: 'x', cloud_provider: 'AWS' }), 400);

      const name = uniqueName('race');
      const answers = await Promise.all(Array.from({ length: 6 }, () => createCluster({ ...LOCAL_CLUSTER, name })));
      expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(1);
      for (const r of answers.filter((a) => a.statusCode !== 201)) expectErrorBody(r, 409);
      const id = answers.find((r) => r.statusCode === 201)?.json<ClusterView>().id as string;

      const both = await ctx().call(owner.auth, {
        method: 'DELETE',
        url: `/organization/${organizationId}/cluster/${id}?deleteMode=DELETE_PLATFORM_CONFIG&skipReconcile=true`,
      });
      expectErrorBody(both, 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/cluster/${id}?deleteMode=NOPE` }), 400);
      const configOnly = await ctx().call(owner.auth, {
        method: 'DELETE',
        url: `/organization/${organizationId}/cluster/${id}?deleteMode=DELETE_PLATFORM_CONFIG`,
      });
      expect(configOnly.statusCode, configOnly.body).toBe(204);
      expect((await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${id}` })).statusCode).toBe(200);
      const skip = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/cluster/${id}?skipReconcile=true` });
      expect(skip.statusCode, skip.body).toBe(204);
    });

    it('ends a MANAGED deploy in DEPLOYMENT_ERROR saying no provisioner is configured, never a fake success', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const cluster = (
        await createCluster({ name: uniqueName('eks'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED', instance_type: 't3.large', max_running_nodes: 4 })
      ).json<ClusterView>();
      await action(cluster.id, 'deploy');
      const failed = await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYMENT_ERROR');
      expect(failed.is_deployed).toBe(false);
      expect(failed.message).toMatch(/no cloud provisioner is configured for AWS/);
      const retry = await action(cluster.id, 'deploy');
      expect(retry.statusCode).toBe(201);
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYMENT_ERROR');
    });

    it('stops counting a lock once its ttl_in_days have passed; of two concurrent locks one wins', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      const cluster = (await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('ttl') })).json<ClusterView>();
      const locks = await Promise.all(
        ['first', 'second', 'third'].map((reason) => ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/lock`, payload: { reason, ttl_in_days: 1 } })),
      );
      expect(locks.filter((r) => r.statusCode === 200)).toHaveLength(1);
      for (const refused of locks.filter((r) => r.statusCode !== 200)) expectErrorBody(refused, 409);
      expect(expectErrorBody(await action(cluster.id, 'deploy'), 409).message).toMatch(/locked by/);
      expectErrorBody(
        await ctx().call(owner.auth, { method: 'PUT', url: `/organization/${organizationId}/cluster/${cluster.id}`, payload: { ...LOCAL_CLUSTER, name: 'renamed' } }),
        409,
      );

      ctx().clock.advance(24 * 60 * 60 * 1000 + 1000);
      const listed = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/lock` });
      expect(listed.json()).toEqual({ results: [] });
      expect((await action(cluster.id, 'deploy')).statusCode).toBe(201);
      const deployed = await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      expect(deployed.cluster_lock).toBeNull();
      const relock = await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/lock`, payload: { reason: 'again' } });
      expect(relock.statusCode, relock.body).toBe(200);
      expect(relock.json()).toMatchObject({ reason: 'again' });
      expect(relock.json()).not.toHaveProperty('ttl_in_days');
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/lock`, payload: { reason: '   ' } }), 400);
    });

    it('refuses deploys with 402 while billing is invalid (an invoice unpaid for over a week), but still lets a cluster stop', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      const cluster = (await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('billing') })).json<ClusterView>();
      await action(cluster.id, 'deploy');
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      const changed = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/changePlan`, payload: { plan: 'STARTUP' } });
      expect(changed.statusCode, changed.body).toBe(200);
      await ctx()
        .database.db.insertInto('billing_invoices')
        .values({
          id: randomUUID(),
          organization_id: organizationId,
          period: '2020-01',
          plan: 'STARTUP',
          status: 'NOT_PAID',
          currency_code: 'USD',
          subtotal_cents: 4900,
          allowance_cents: 0,
          credit_applied_cents: 0,
          total_cents: 4900,
          lines: JSON.stringify([{ description: 'Startup plan, 2020-01', amountCents: 4900 }]),
          created_at: new Date(ctx().clock.now().getTime() - 8 * 24 * 60 * 60 * 1000).toISOString(),
          paid_at: null,
          payment_reference: null,
        })
        .execute();
      expect(expectErrorBody(await action(cluster.id, 'deploy'), 402).message).toMatch(/billing is not valid: invoice .* unpaid/);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: `/cluster/${cluster.id}/upgrade` }), 402);
      expectErrorBody(await action(cluster.id, 'restart'), 402);
      expect((await action(cluster.id, 'stop')).statusCode).toBe(202);
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'STOPPED');
    });

    it('attaches labels groups of the organization only, and keeps an attached group from being deleted', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      const group = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/labelsGroups`,
        payload: { name: uniqueName('labels'), labels: [{ key: 'team', value: 'core' }] },
      });
      expect(group.statusCode, group.body).toBe(201);
      const groupId = group.json<{ id: string }>().id;
      const unknown = await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('lg'), labels_groups: [{ id: '0190f0b2-6c5e-7000-8000-000000000009' }] });
      expect(expectErrorBody(unknown, 400).details?.[0]?.field).toMatch(/^\/labels_groups/);
      const created = await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('lg'), labels_groups: [{ id: groupId }] });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json<{ labels_groups: { id: string }[] }>().labels_groups).toEqual([{ id: groupId }]);
      const refused = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/labelsGroups/${groupId}` });
      expectErrorBody(refused, 409);
    });

    it('runs a dry run to DRY_RUN without deploying, and cancels a queued action', async () => {
      ({ owner, organizationId } = await organizationAllowedLocalClusters());
      const cluster = (await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('dry') })).json<ClusterView>();
      const dry = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${cluster.id}/deploy?dry_run=true` });
      expect(dry.statusCode).toBe(201);
      const done = await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DRY_RUN');
      expect(done.is_deployed).toBe(false);
      expect(expectErrorBody(await action(cluster.id, 'cancel'), 409).message).toContain('DRY_RUN');
    });

    it('refuses LOCAL clusters without the operator\'s grant: creation and every deployment onto one answer 403, until allowed; denied, refused again while what runs keeps running', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const grants = createLocalClusterGrants({ db: ctx().database.db, clock: ctx().clock });
      const post = (url: string, payload?: Record<string, unknown>) => ctx().call(owner.auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
      const refusedForGrant = (response: Awaited<ReturnType<typeof post>>) => {
        const body = expectErrorBody(response, 403);
        expect(body.message).toContain("installation operator's permission");
        expect(body.message).toContain(`slipway admin local-clusters allow --organization ${organizationId}`);
        return body;
      };

      // Never allowed: no LOCAL cluster is created, and nothing is written; other kinds are not concerned.
      expect(refusedForGrant(await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('local') })).message).toMatch(/^creating a LOCAL cluster needs/);
      expect((await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster` })).json()).toEqual({ results: [] });
      expect((await createCluster({ name: uniqueName('eks'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' })).statusCode).toBe(201);

      // Allowed (what `slipway admin local-clusters allow` writes): created, deployed, and an environment's service on it deploys.
      expect((await grants.allow(organizationId, 'test')).changed).toBe(true);
      const created = await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('local') });
      expect(created.statusCode, created.body).toBe(201);
      const cluster = created.json<ClusterView>();
      expect((await action(cluster.id, 'deploy')).statusCode).toBe(201);
      await waitForStatus(ctx(), owner.auth, organizationId, cluster.id, 'DEPLOYED');
      const projectId = (await post(`/organization/${organizationId}/project`, { name: uniqueName('project') })).json<{ id: string }>().id;
      const environment = await post(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: cluster.id, mode: 'STAGING' });
      expect(environment.statusCode, environment.body).toBe(201);
      const environmentId = environment.json<{ id: string }>().id;
      const application = await post(`/environment/${environmentId}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB' },
        healthchecks: {},
      });
      expect(application.statusCode, application.body).toBe(201);
      const applicationId = application.json<{ id: string }>().id;

      // Denied: every deployment onto the cluster is refused, whoever's path it takes; what runs is left as it is.
      expect(await grants.deny(organizationId)).toMatchObject({ changed: true, local_clusters: 1 });
      for (const refused of [
        await action(cluster.id, 'deploy'),
        await action(cluster.id, 'restart'),
        await post(`/cluster/${cluster.id}/upgrade`),
        await post(`/environment/${environmentId}/deploy`),
        await post(`/application/${applicationId}/deploy`, {}),
      ]) {
        expect(refusedForGrant(refused).message).toMatch(/^deploying onto the LOCAL cluster ".*" needs/);
      }
      refusedForGrant(await createCluster({ ...LOCAL_CLUSTER, name: uniqueName('local') }));
      expect((await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${cluster.id}/status` })).json<ClusterStatusView>().status).toBe('DEPLOYED');
      expect((await ctx().call(owner.auth, { method: 'GET', url: `/application/${applicationId}/status` })).json<{ state: string }>().state).toBe('READY');
      expect(await grants.deny(organizationId)).toMatchObject({ changed: false });

      // Allowed again: deployments are accepted once more (the application's waits for the cluster's agent).
      expect((await grants.allow(organizationId, 'test')).changed).toBe(true);
      const deploy = await post(`/application/${applicationId}/deploy`, {});
      expect(deploy.statusCode, deploy.body).toBe(202);
      expect(deploy.json<{ state: string }>().state).toBe('QUEUED');
      expect((await grants.allow(organizationId, 'test')).changed).toBe(false);
    });

    it('lets one of concurrent grants of an organization win and the others find it given', async () => {
      const { organizationId: allowedId } = await ctx().signUpWithOrganization();
      const grants = createLocalClusterGrants({ db: ctx().database.db, clock: ctx().clock });
      const answers = await Promise.all([0, 1, 2, 3].map(() => grants.allow(allowedId, 'test')));
      expect(answers.filter((answer) => answer.changed)).toHaveLength(1);
      expect(new Set(answers.map((answer) => answer.grant.granted_at)).size).toBe(1);
      await expect(grants.allow('no such organization', 'test')).rejects.toMatchObject({ kind: 'not_found' });
    });
  },
  {},
);

describeEachDatabase(
  'cluster jobs held back',
  (ctx) => {
    it('cancels a queued deploy at once: its job is withdrawn and never runs', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      await ctx().allowLocalClusters(organizationId);
      const cluster = (
        await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster`, payload: { ...LOCAL_CLUSTER, name: uniqueName('c') } })
      ).json<ClusterView>();
      const deploy = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${cluster.id}/deploy` });
      const jobId = deploy.json<ClusterStatusView>().last_execution_id as string;
      const cancel = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${cluster.id}/cancel` });
      expect(cancel.statusCode, cancel.body).toBe(202);
      expect(cancel.json<ClusterStatusView>().status).toBe('CANCELED');
      const job = await ctx().database.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      expect(job.status).toBe('CANCELLED');
      const again = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${cluster.id}/deploy` });
      expect(again.statusCode).toBe(201);
    });
  },
  { jobs: { run: false } },
);

describeEachDatabase(
  'self-managed clusters and their operator',
  (ctx) => {
    function selfManagedCluster(organizationId: string, owner: TestUser): Promise<{ clusterId: string; enrollmentToken: string }> {
      return clusterWithEnrollmentToken(ctx(), organizationId, owner);
    }

    it('enrolls the operator once, completes a deploy only on its READY report, and refuses bad credentials', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, enrollmentToken } = await selfManagedCluster(organizationId, owner);
      expect(enrollmentToken).toMatch(/^slwe_/);
      const stored = await ctx().database.db.selectFrom('cluster_operator_enrollments').selectAll().where('cluster_id', '=', clusterId).execute();
      expect(stored).toHaveLength(1);
      expect(JSON.stringify(stored)).not.toContain(enrollmentToken);

      const enroll = await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: enrollmentToken } });
      expect(enroll.statusCode, enroll.body).toBe(200);
      const { credential } = enroll.json<{ cluster_id: string; credential: string }>();
      expect(enroll.json()).toMatchObject({ cluster_id: clusterId });
      expect(credential).toMatch(/^slwo_/);
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: enrollmentToken } }), 401);
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: 'slwe_nonsense' } }), 401);

      const deploy = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${clusterId}/deploy` });
      expect(deploy.statusCode, deploy.body).toBe(201);
      await waitForStatus(ctx(), owner.auth, organizationId, clusterId, 'DEPLOYING');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await waitForStatus(ctx(), owner.auth, organizationId, clusterId, 'DEPLOYING')).is_deployed).toBe(false);

      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: '/operator/v1/report', payload: { status: 'READY' } }), 401);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: '/operator/v1/report', payload: { status: 'READY' } }), 401);
      expectErrorBody(await ctx().call(`Bearer ${enrollmentToken}`, { method: 'POST', url: '/operator/v1/report', payload: { status: 'READY' } }), 401);
      const report = await ctx().call(`Bearer ${credential}`, { method: 'POST', url: '/operator/v1/report', payload: { status: 'READY', kubernetes_version: '1.31.4' } });
      expect(report.statusCode, report.body).toBe(204);
      const deployed = await waitForStatus(ctx(), owner.auth, organizationId, clusterId, 'DEPLOYED');
      expect(deployed.is_deployed).toBe(true);
    });

    it('fails a deploy whose operator never reports within the timeout, saying so', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId } = await selfManagedCluster(organizationId, owner);
      await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster/${clusterId}/deploy` });
      const failed = await waitForStatus(ctx(), owner.auth, organizationId, clusterId, 'DEPLOYMENT_ERROR');
      expect(failed.message).toMatch(/no operator has enrolled for this cluster within/);
    });

    it('answers the operator bootstrap with a fresh one-time token that replaces the unused one', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      await ctx().allowLocalClusters(organizationId);
      const { clusterId, enrollmentToken } = await selfManagedCluster(organizationId, owner);
      const bootstrap = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/operator/bootstrap` });
      expect(bootstrap.statusCode, bootstrap.body).toBe(200);
      expect(bootstrap.headers['cache-control']).toBe('no-store');
      const body = bootstrap.json<{ values: { enrollmentToken: string; clusterId: string }; values_yaml: string; helm_command: string; chart_name: string; chart_reference: string }>();
      expect(body.values.clusterId).toBe(clusterId);
      expect(body.helm_command).toContain(body.values.enrollmentToken);
      expect(body.helm_command).toContain(`helm upgrade --install slipway-agent ${body.chart_reference} `);
      expect(body.chart_name).toBe('slipway-agent');
      expect(body.values_yaml).toContain(`enrollmentToken: ${body.values.enrollmentToken}`);
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: enrollmentToken } }), 401);
      const enrolled = await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: body.values.enrollmentToken } });
      expect(enrolled.statusCode).toBe(200);

      const local = (
        await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster`, payload: { ...LOCAL_CLUSTER, name: uniqueName('l') } })
      ).json<ClusterView>();
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${local.id}/operator/bootstrap` }), 400);
    });

    it('expires an enrollment token after a day', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { enrollmentToken } = await selfManagedCluster(organizationId, owner);
      ctx().clock.advance(24 * 60 * 60 * 1000 + 1000);
      expectErrorBody(await ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload: { enrollment_token: enrollmentToken } }), 401);
    });
  },
  { clusterOperator: { readyTimeoutMs: 1500, recheckMs: 30 } },
);
