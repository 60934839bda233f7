import { beforeAll, expect, it } from 'vitest';
import { readJson } from '../src/db/db.json.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Cloning services (issue 24 part 3; docs/service-clone-uninstall.md): the reference's six clone operations answer
 * 202 with the clone as its kind's get answers it. A clone has the source's settings, advanced settings, groups, own
 * variables and secrets (sealed again, the value intact) and deployment restrictions, never its custom domains,
 * history or running state, and a database clone has credentials of its own. The target environment is any of the
 * organization's (another's is a 404), the name is unique there (409, one winner when racing), a bad name or body is
 * a 400 and nothing is written, and an alias that would close a cycle in the target refuses the clone.
 */

const SECRET_VALUE = 'clone-secret-never-shown';
const git = { url: 'https://github.com/acme/shop', provider: 'GITHUB', branch: 'main' };

interface Named {
  id: string;
  name: string;
  environment: { id: string };
}

describeEachDatabase('service clone', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let projectId: string;
  let sourceEnvironmentId: string;
  let targetEnvironmentId: string;
  let credential: string;

  async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
    const response = await call(method, url, payload, auth);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function environment(name: string): Promise<string> {
    const cluster = (await ok<{ results: Array<{ id: string }> }>('GET', `/organization/${organizationId}/cluster`, undefined, 200)).results[0]?.id;
    return (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName(name), cluster }, 201)).id;
  }

  async function application(environmentId: string, extra: Record<string, unknown> = {}): Promise<string> {
    const body = { name: uniqueName('web'), git_repository: git, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }], ...extra };
    return (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, body, 201)).id;
  }

  async function serviceCount(environmentId: string): Promise<number> {
    return (await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', environmentId).execute()).length;
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    ({ credential } = await enrolledCluster(ctx(), organizationId, owner));
    projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    sourceEnvironmentId = await environment('staging');
    targetEnvironmentId = await environment('prod');
  });

  it('clones an application with its settings, groups, variables, secrets and restrictions, never its domains', async () => {
    const labels = await ok<{ id: string }>('POST', `/organization/${organizationId}/labelsGroups`, { name: uniqueName('labels'), labels: [{ key: 'team', value: 'shop' }] }, 201);
    const annotations = await ok<{ id: string }>(
      'POST',
      `/organization/${organizationId}/annotationsGroups`,
      { name: uniqueName('notes'), annotations: [{ key: 'owner', value: 'shop' }], scopes: ['PODS'] },
      201,
    );
    const sourceId = await application(sourceEnvironmentId, { labels_groups: [{ id: labels.id }], annotations_groups: [{ id: annotations.id }], description: 'the shop' });
    await ok('PUT', `/application/${sourceId}/advancedSettings`, { 'deployment.termination_grace_period_seconds': 7 }, 201);
    await ok('POST', `/environment/${sourceEnvironmentId}/environmentVariable`, { key: 'REGION', value: 'eu' }, 201);
    await ok('POST', `/environment/${targetEnvironmentId}/environmentVariable`, { key: 'REGION', value: 'us' }, 201);
    await ok('POST', `/application/${sourceId}/environmentVariable`, { key: 'GREETING', value: 'hello' }, 201);
    await ok('POST', `/application/${sourceId}/environmentVariable`, { key: 'WHERE', value: '$REGION' }, 201);
    await ok('POST', `/application/${sourceId}/secret`, { key: 'API_TOKEN', value: SECRET_VALUE }, 201);
    await ok('POST', `/application/${sourceId}/deploymentRestriction`, { mode: 'EXCLUDE', type: 'PATH', value: 'docs/**' }, 201);
    await ok('POST', `/application/${sourceId}/customDomain`, { domain: `${uniqueName('shop')}.example.com`, generate_certificate: false }, 201);

    const name = uniqueName('shop-copy');
    const clone = await ok<Named & Record<string, unknown>>('POST', `/application/${sourceId}/clone`, { name, environment_id: targetEnvironmentId }, 202);
    expect(clone).toMatchObject({ name, environment: { id: targetEnvironmentId }, description: 'the shop' });
    expect(clone.id).not.toBe(sourceId);
    const source = await ok<Record<string, unknown>>('GET', `/application/${sourceId}`, undefined, 200);
    expect(await ok('GET', `/application/${clone.id}`, undefined, 200)).toEqual(clone);
    // Everything but what names the service itself is the source's.
    const ownFields = ['id', 'name', 'environment', 'created_at', 'updated_at'];
    const without = (view: Record<string, unknown>) => Object.fromEntries(Object.entries(view).filter(([key]) => !ownFields.includes(key)));
    expect(without(clone)).toEqual(without(source));
    expect(clone).toMatchObject({ labels_groups: [{ id: labels.id }], annotations_groups: [{ id: annotations.id }] });
    expect(await ok('GET', `/application/${clone.id}/advancedSettings`, undefined, 200)).toMatchObject({ 'deployment.termination_grace_period_seconds': 7 });

    // Its own variables, by name; the alias follows REGION where the clone lives.
    const variables = await ok<{ results: Array<{ key: string; value?: string; scope: string }> }>('GET', `/application/${clone.id}/environmentVariable`, undefined, 200);
    const own = variables.results.filter((variable) => variable.scope === 'APPLICATION').map((variable) => [variable.key, variable.value]);
    expect(own.sort()).toEqual([
      ['GREETING', 'hello'],
      ['WHERE', '$REGION'],
    ]);
    const secrets = await call('GET', `/application/${clone.id}/secret`);
    expect(secrets.statusCode, secrets.body).toBe(200);
    expect(secrets.json<{ results: Array<{ key: string }> }>().results.map((secret) => secret.key)).toContain('API_TOKEN');
    expect(secrets.body).not.toContain(SECRET_VALUE);
    // Sealed again for its own row: the envelope differs, the value opens to the same.
    const sealed = await ctx().database.db.selectFrom('variables').select(['owner_id', 'value_envelope']).where('key', '=', 'API_TOKEN').where('owner_id', 'in', [sourceId, clone.id]).execute();
    expect(sealed).toHaveLength(2);
    expect(sealed[0]?.value_envelope).not.toBe(sealed[1]?.value_envelope);

    const restrictions = await ok<{ results: Array<{ mode: string; value: string }> }>('GET', `/application/${clone.id}/deploymentRestriction`, undefined, 200);
    expect(restrictions.results).toMatchObject([{ mode: 'EXCLUDE', value: 'docs/**' }]);
    expect((await ok<{ results: unknown[] }>('GET', `/application/${clone.id}/customDomain`, undefined, 200)).results).toEqual([]);
    expect((await ok<{ results: unknown[] }>('GET', `/application/${sourceId}/customDomain`, undefined, 200)).results).toHaveLength(1);
    const references = await ctx().database.db.selectFrom('service_references').select(['kind', 'reference_id']).where('service_id', '=', clone.id).orderBy('kind').execute();
    expect(references).toEqual([
      { kind: 'ANNOTATIONS_GROUP', reference_id: annotations.id },
      { kind: 'LABELS_GROUP', reference_id: labels.id },
    ]);

    // Never deployed; its deployment carries the secret's value and the target's REGION.
    expect(await ok('GET', `/application/${clone.id}/status`, undefined, 200)).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
    const queued = await ok<{ deployment_request_id: string }>('POST', `/application/${clone.id}/deploy`, {}, 202);
    const task = await leaseTask(queued.deployment_request_id);
    const spec = await ctx().call(`Bearer ${credential}`, { method: 'GET', url: `/operator/v1/tasks/${task.id}/spec?lease_id=${task.lease_id}` });
    expect(spec.statusCode, spec.body).toBe(200);
    const opened = spec.json<{ spec: { variables: Array<{ key: string; value: string }> } }>().spec.variables;
    expect(opened.find((variable) => variable.key === 'API_TOKEN')?.value).toBe(SECRET_VALUE);
    expect(opened.find((variable) => variable.key === 'WHERE')?.value).toBe('us');
  });

  async function leaseTask(deploymentId: string): Promise<{ id: string; lease_id: string }> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await ctx().call(`Bearer ${credential}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=1' });
      expect(response.statusCode, response.body).toBe(200);
      const task = response.json<{ tasks: Array<{ id: string; lease_id: string; deployment_id: string }> }>().tasks.find((candidate) => candidate.deployment_id === deploymentId);
      if (task !== undefined) return task;
    }
    throw new Error(`no task was dispatched for deployment ${deploymentId}`);
  }

  it('clones every kind (202, the kind’s answer); a database gets credentials of its own', async () => {
    const registry = await ok<{ id: string }>(
      'POST',
      `/organization/${organizationId}/containerRegistry`,
      { name: uniqueName('registry'), kind: 'GENERIC_CR', url: 'https://registry.slipway-clone.invalid', config: { username: 'robot', password: 'fixture-pw' } },
      201,
    );
    const bodies: Record<string, Record<string, unknown>> = {
      container: { name: uniqueName('api'), registry_id: registry.id, image_name: 'library/nginx', tag: '1.27-alpine', healthchecks: {} },
      database: { name: uniqueName('orders'), type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' },
      job: { name: uniqueName('migrate'), source: { docker: { git_repository: git, dockerfile_path: 'jobs/Dockerfile' } }, schedule: { on_start: {} }, healthchecks: {} },
      helm: { name: uniqueName('chart'), source: { git_repository: { ...git, root_path: '/charts/app' } } },
      terraform: { name: uniqueName('infra'), terraform_files_source: { git_repository: { ...git, root_path: '/infra' } } },
    };
    for (const [item, body] of Object.entries(bodies)) {
      const source = await ok<Named>('POST', `/environment/${sourceEnvironmentId}/${item}`, body, 201);
      const name = uniqueName(`${item}-copy`);
      const clone = await ok<Named>('POST', `/${item}/${source.id}/clone`, { name, environment_id: targetEnvironmentId }, 202);
      expect(clone).toMatchObject({ name, environment: { id: targetEnvironmentId } });
      expect(await ok('GET', `/${item}/${clone.id}`, undefined, 200)).toEqual(clone);
      // A clone of its own kind only: another kind's path does not name the source.
      expectErrorBody(await call('POST', `/${item === 'job' ? 'helm' : 'job'}/${source.id}/clone`, { name: uniqueName('x'), environment_id: targetEnvironmentId }), 404);
      if (item === 'database') {
        const rows = await ctx().database.db.selectFrom('services').select(['id', 'credentials_envelope', 'settings']).where('id', 'in', [source.id, clone.id]).execute();
        expect(rows.every((row) => row.credentials_envelope !== null)).toBe(true);
        expect(rows[0]?.credentials_envelope).not.toBe(rows[1]?.credentials_envelope);
        expect(readJson(rows[0]?.settings)).toEqual(readJson(rows[1]?.settings));
      }
    }
  });

  it('clones into the same environment under another name; a taken name is a 409, and of two racing clones one wins', async () => {
    const sourceId = await application(sourceEnvironmentId);
    const source = await ok<Named>('GET', `/application/${sourceId}`, undefined, 200);
    expectErrorBody(await call('POST', `/application/${sourceId}/clone`, { name: source.name, environment_id: sourceEnvironmentId }), 409);
    expectErrorBody(await call('POST', `/application/${sourceId}/clone`, { name: source.name.toUpperCase(), environment_id: sourceEnvironmentId }), 409);
    const sibling = await ok<Named>('POST', `/application/${sourceId}/clone`, { name: uniqueName('sibling'), environment_id: sourceEnvironmentId }, 202);
    expect(sibling.environment.id).toBe(sourceEnvironmentId);

    const raced = uniqueName('raced');
    const before = await serviceCount(targetEnvironmentId);
    const answers = await Promise.all([1, 2, 3].map(() => call('POST', `/application/${sourceId}/clone`, { name: raced, environment_id: targetEnvironmentId })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([202, 409, 409]);
    for (const answer of answers.filter((item) => item.statusCode === 409)) expectErrorBody(answer, 409);
    expect(await serviceCount(targetEnvironmentId)).toBe(before + 1);
  });

  it('refuses bad bodies (400), unknown or foreign environments and services (404), and writes nothing', async () => {
    const sourceId = await application(sourceEnvironmentId);
    const before = await serviceCount(targetEnvironmentId);
    for (const body of [
      { name: 'Not_A_Label!', environment_id: targetEnvironmentId },
      { name: '', environment_id: targetEnvironmentId },
      { name: uniqueName('x') },
      { environment_id: targetEnvironmentId },
      { name: uniqueName('x'), environment_id: 'not-a-uuid' },
      { name: uniqueName('x'), environment_id: targetEnvironmentId, clone_variables: true },
    ]) {
      expectErrorBody(await call('POST', `/application/${sourceId}/clone`, body), 400);
    }
    expectErrorBody(await call('POST', `/application/${sourceId}/clone`, { name: uniqueName('x'), environment_id: crypto.randomUUID() }), 404);
    expectErrorBody(await call('POST', `/application/${crypto.randomUUID()}/clone`, { name: uniqueName('x'), environment_id: targetEnvironmentId }), 404);

    // Another organization's environment says no more than an unknown one, and its owner cannot clone ours.
    const stranger = await ctx().signUpWithOrganization();
    const strangerProject = (await ok<{ id: string }>('POST', `/organization/${stranger.organizationId}/project`, { name: uniqueName('p') }, 200, stranger.owner.auth)).id;
    const strangerCluster = (
      await ok<{ id: string }>(
        'POST',
        `/organization/${stranger.organizationId}/cluster`,
        { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
        201,
        stranger.owner.auth,
      )
    ).id;
    const foreignEnvironment = (await ok<{ id: string }>('POST', `/project/${strangerProject}/environment`, { name: uniqueName('env'), cluster: strangerCluster }, 201, stranger.owner.auth)).id;
    const foreign = expectErrorBody(await call('POST', `/application/${sourceId}/clone`, { name: uniqueName('x'), environment_id: foreignEnvironment }), 404);
    expect(foreign.message).toBe(`environment ${foreignEnvironment} not found`);
    expectErrorBody(await call('POST', `/application/${sourceId}/clone`, { name: uniqueName('x'), environment_id: foreignEnvironment }, stranger.owner.auth), 404);
    expect((await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', foreignEnvironment).execute()).length).toBe(0);
    expectErrorBody(await ctx().call(undefined, { method: 'POST', url: `/application/${sourceId}/clone`, payload: { name: uniqueName('x'), environment_id: targetEnvironmentId } }), 401);
    expect(await serviceCount(targetEnvironmentId)).toBe(before);
  });

  it('refuses a clone whose alias would close a cycle in the target environment (400), writing nothing', async () => {
    const sourceId = await application(sourceEnvironmentId);
    await ok('POST', `/environment/${sourceEnvironmentId}/environmentVariable`, { key: 'SECOND', value: 'plain' }, 201);
    await ok('POST', `/application/${sourceId}/environmentVariable`, { key: 'FIRST', value: '$SECOND' }, 201);
    // In the looping environment SECOND follows FIRST, which the clone's own FIRST (following SECOND) would shadow.
    await ok('POST', `/project/${projectId}/environmentVariable`, { key: 'FIRST', value: 'plain' }, 201);
    const looping = await environment('looping');
    await ok('POST', `/environment/${looping}/environmentVariable`, { key: 'SECOND', value: '$FIRST' }, 201);
    const name = uniqueName('cyclic');
    const refused = expectErrorBody(await call('POST', `/application/${sourceId}/clone`, { name, environment_id: looping }), 400);
    expect(refused.message).toMatch(/alias cycle/);
    expect(await serviceCount(looping)).toBe(0);
    // The same clone elsewhere goes through.
    expect((await ok<Named>('POST', `/application/${sourceId}/clone`, { name, environment_id: targetEnvironmentId }, 202)).name).toBe(name);
  });
});
