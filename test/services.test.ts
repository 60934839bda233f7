import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../src/db/db.errors.ts';
import { up as addServiceHostnames } from '../src/db/migrations/0026_service_hostnames.ts';
import { hostnameLabelCandidate, publicHostname } from '../src/modules/services/services.hostnames.ts';
import { SERVICE_KIND_DEFINITIONS } from '../src/modules/services/services.kinds.ts';
import { DATABASE_TYPES } from '../src/modules/variables/variables.builtins.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';
import type { Static } from 'typebox';
import type { Link } from '../src/modules/services/services.schemas.ts';

/**
 * Services (issue 8 parts 2 and 6): the generic routes every kind gets (list, create 201, get, edit, delete 204),
 * names unique per environment across kinds and shaped as DNS labels, references checked in the organization, the
 * authorizer's `service` placement, the wire-ups (git token associated services, registry/repository/group usage,
 * project stats, built-in variables) and the service-scope variable and secret endpoints.
 */

interface ServiceView {
  id: string;
  name: string;
  description: string;
  environment: { id: string };
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

interface VariableView {
  id: string;
  key: string;
  value?: string | null;
  scope: string;
  variable_type: string;
}

interface ResolvedView {
  content_hash: string;
  results: { key: string; value?: string; hidden: boolean; scope: string; alias_chain: { key: string; scope: string }[] }[];
}

function kindDefined(kind: string): boolean {
  return SERVICE_KIND_DEFINITIONS.some((definition) => definition.kind === kind);
}

describe('service hostnames', () => {
  const id = '0190f0b2-6c5e-7000-8000-00000000000a';

  it('are <service>-<environment>-<8 base32 characters of the id> as one DNS label, under the apps domain', () => {
    const label = hostnameLabelCandidate({ id, name: 'Api' }, 'Prod_EU (west)', 0);
    expect(label).toMatch(/^api-prod-eu-west-[a-z2-7]{8}$/);
    // Derived, not drawn: the same service gets the same label; another id or attempt, another suffix.
    expect(hostnameLabelCandidate({ id, name: 'Api' }, 'Prod_EU (west)', 0)).toBe(label);
    expect(hostnameLabelCandidate({ id: '0190f0b2-6c5e-7000-8000-00000000000b', name: 'Api' }, 'Prod_EU (west)', 0).slice(-8)).not.toBe(label.slice(-8));
    expect(hostnameLabelCandidate({ id, name: 'Api' }, 'Prod_EU (west)', 1).slice(-8)).not.toBe(label.slice(-8));
    expect(publicHostname(label, 'Apps.Example.com.')).toBe(`${label}.apps.example.com`);
  });

  it('cut long names so that the label stays within 63 characters with its suffix whole, and never end on a dash', () => {
    const label = hostnameLabelCandidate({ id, name: 'a'.repeat(50) }, `${'b'.repeat(3)}-${'c'.repeat(40)}`, 0);
    expect(label.length).toBeLessThanOrEqual(63);
    expect(label).toMatch(/^a{50}-bbb-[a-z2-7]{8}$/);
    expect(hostnameLabelCandidate({ id, name: 'a'.repeat(53) }, 'prod', 0)).toMatch(/^a{53}-[a-z2-7]{8}$/);
    expect(hostnameLabelCandidate({ id, name: 'x' }, '——', 0)).toMatch(/^x-[a-z2-7]{8}$/);
    expect(hostnameLabelCandidate({ id, name: '' }, '', 0)).toMatch(/^service-[a-z2-7]{8}$/);
  });
});

describe('service kind registry', () => {
  it('gives every kind its own paths, id parameter and operation ids', () => {
    const ids = SERVICE_KIND_DEFINITIONS.flatMap((definition) => Object.values(definition.operations));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(SERVICE_KIND_DEFINITIONS.map((definition) => definition.idParam)).size).toBe(SERVICE_KIND_DEFINITIONS.length);
    expect(SERVICE_KIND_DEFINITIONS.map((definition) => definition.kind)).toContain('APPLICATION');
  });
});

describeEachDatabase('services', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let projectId: string;
  let clusterId: string;
  let environmentId: string;

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function created<T>(method: 'POST' | 'PUT', url: string, payload: unknown, status = 201, auth = owner.auth): Promise<T> {
    const response = await call(method, url, payload, auth);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  function applicationBody(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { name, git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB', branch: 'main' }, healthchecks: {}, ...extra };
  }

  async function createApplication(name = uniqueName('app'), extra: Record<string, unknown> = {}, inEnvironment = environmentId): Promise<ServiceView> {
    return created<ServiceView>('POST', `/environment/${inEnvironment}/application`, applicationBody(name, extra));
  }

  async function createEnvironment(inProject = projectId): Promise<string> {
    return (await created<{ id: string }>('POST', `/project/${inProject}/environment`, { name: uniqueName('env'), cluster: clusterId })).id;
  }

  async function serviceRows(environment: string) {
    return ctx().database.db.selectFrom('services').selectAll().where('environment_id', '=', environment).execute();
  }

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    projectId = (await created<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    clusterId = (
      await created<{ id: string }>('POST', `/organization/${organizationId}/cluster`, {
        name: uniqueName('cluster'),
        region: 'eu-west-3',
        cloud_provider: 'AWS',
        kubernetes: 'MANAGED',
      })
    ).id;
    environmentId = await createEnvironment();
  });

  describe('generic routes (APPLICATION)', () => {
    it('creates (201), gets, lists, edits and deletes (204) an application', async () => {
      const name = uniqueName('Shop-Api');
      const app = await createApplication(name, { description: 'the shop' });
      expect(app).toMatchObject({ name, description: 'the shop', environment: { id: environmentId }, service_type: 'APPLICATION' });
      expect(app.created_at).toMatch(/\.\d{3}Z$/);

      expect(await created('PUT', `/application/${app.id}`, { description: 'unchanged shape', healthchecks: {} }, 200)).toMatchObject({ id: app.id, name });
      const got = await call('GET', `/application/${app.id}`);
      expect(got.statusCode, got.body).toBe(200);
      expect(got.json<ServiceView>()).toMatchObject({ id: app.id, name, description: 'unchanged shape' });

      const listed = await call('GET', `/environment/${environmentId}/application`);
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json<{ results: ServiceView[] }>().results.map((service) => service.id)).toContain(app.id);

      const renamed = uniqueName('renamed');
      expect(await created<ServiceView>('PUT', `/application/${app.id}`, { name: renamed, healthchecks: {} }, 200)).toMatchObject({ id: app.id, name: renamed });

      const removed = await call('DELETE', `/application/${app.id}`);
      expect(removed.statusCode, removed.body).toBe(204);
      expect(removed.body).toBe('');
      expectErrorBody(await call('GET', `/application/${app.id}`), 404);
      expectErrorBody(await call('DELETE', `/application/${app.id}`), 404);
      expect((await serviceRows(environmentId)).map((row) => row.id)).not.toContain(app.id);
    });

    it('refuses names that are not DNS labels (400) and writes nothing', async () => {
      const before = (await serviceRows(environmentId)).length;
      for (const name of ['has space', 'under_score', '-leading', 'trailing-', 'dot.ted', '', 'a'.repeat(64), 'ünï']) {
        expectErrorBody(await call('POST', `/environment/${environmentId}/application`, applicationBody(name)), 400);
      }
      const app = await createApplication();
      expectErrorBody(await call('PUT', `/application/${app.id}`, { name: 'no_underscores', healthchecks: {} }), 400);
      expect((await serviceRows(environmentId)).length).toBe(before + 1);
      expect((await call('GET', `/application/${app.id}`)).json<ServiceView>().name).toBe(app.name);
    });

    it('keeps names unique per environment, case-insensitively (409), and lets another environment reuse one', async () => {
      const app = await createApplication(uniqueName('Unique'));
      const again = expectErrorBody(await call('POST', `/environment/${environmentId}/application`, applicationBody(app.name.toLowerCase())), 409);
      expect(again.message).toMatch(/already exists/);
      const other = await createApplication();
      expectErrorBody(await call('PUT', `/application/${other.id}`, { name: app.name.toUpperCase(), healthchecks: {} }), 409);

      const elsewhere = await createEnvironment();
      expect((await createApplication(app.name, {}, elsewhere)).name).toBe(app.name);
    });

    it('lets exactly one of concurrent creates of one name win', async () => {
      const name = uniqueName('race');
      const answers = await Promise.all([0, 1, 2, 3].map(() => call('POST', `/environment/${environmentId}/application`, applicationBody(name))));
      expect(answers.map((response) => response.statusCode).sort()).toEqual([201, 409, 409, 409]);
      expect((await serviceRows(environmentId)).filter((row) => row.name === name)).toHaveLength(1);
    });

    it('answers 404 for unknown environments and services, and for another organization\'s', async () => {
      expectErrorBody(await call('POST', `/environment/${randomUUID()}/application`, applicationBody(uniqueName('app'))), 404);
      expectErrorBody(await call('GET', `/environment/${randomUUID()}/application`), 404);
      expectErrorBody(await call('GET', `/application/${randomUUID()}`), 404);
      expectErrorBody(await call('PUT', `/application/${randomUUID()}`, { name: 'x', healthchecks: {} }), 404);

      const app = await createApplication();
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await call('GET', `/application/${app.id}`, undefined, stranger.owner.auth), 404);
      expectErrorBody(await call('DELETE', `/application/${app.id}`, undefined, stranger.owner.auth), 404);
      expectErrorBody(await call('GET', `/environment/${environmentId}/application`, undefined, stranger.owner.auth), 404);
      expect((await call('GET', `/application/${app.id}`)).statusCode).toBe(200);
    });

    it('lets a viewer read services but not create, edit or delete them (403)', async () => {
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      const app = await createApplication();
      expect((await call('GET', `/application/${app.id}`, undefined, viewer.auth)).statusCode).toBe(200);
      expect((await call('GET', `/environment/${environmentId}/application`, undefined, viewer.auth)).statusCode).toBe(200);
      expectErrorBody(await call('POST', `/environment/${environmentId}/application`, applicationBody(uniqueName('app')), viewer.auth), 403);
      expectErrorBody(await call('PUT', `/application/${app.id}`, { name: uniqueName('x'), healthchecks: {} }, viewer.auth), 403);
      expectErrorBody(await call('DELETE', `/application/${app.id}`, undefined, viewer.auth), 403);
    });

    it('finds a service only under its own kind\'s path', async () => {
      const app = await createApplication();
      const others = SERVICE_KIND_DEFINITIONS.filter((definition) => definition.kind !== 'APPLICATION');
      for (const definition of others) expectErrorBody(await call('GET', `/${definition.item}/${app.id}`), 404);
      if (kindDefined('DATABASE')) expectErrorBody(await call('DELETE', `/database/${app.id}`), 404);
      expect((await call('GET', `/application/${app.id}`)).statusCode).toBe(200);
    });

    it('lets rebootServices name the environment\'s services by kind (400 for any other id)', async () => {
      const app = await createApplication();
      const elsewhere = await createApplication(uniqueName('app'), {}, await createEnvironment());
      const restart = (body: Record<string, unknown>) => call('POST', `/environment/${environmentId}/service/restart-service`, body);
      const wrongKind = expectErrorBody(await restart({ container_ids: [app.id], application_ids: [app.id, elsewhere.id] }), 400);
      expect(wrongKind.details?.map((detail) => detail.field)).toEqual(['/application_ids/1', '/container_ids/0']);
      // Named rightly, the request reaches the state check: this environment was never deployed.
      expect(expectErrorBody(await restart({ application_ids: [app.id] }), 409).message).toMatch(/never been deployed|READY/);
    });

    it('goes with its environment', async () => {
      const environment = await createEnvironment();
      const app = await createApplication(uniqueName('app'), {}, environment);
      expect((await call('DELETE', `/environment/${environment}`)).statusCode).toBe(204);
      expectErrorBody(await call('GET', `/application/${app.id}`), 404);
      expect(await serviceRows(environment)).toEqual([]);
      expect(await ctx().database.db.selectFrom('service_references').selectAll().where('service_id', '=', app.id).execute()).toEqual([]);
    });
  });

  describe('references and usage', () => {
    it('checks the git token in the organization and lists the services using it', async () => {
      const token = await created<{ id: string }>('POST', `/organization/${organizationId}/gitToken`, { name: uniqueName('token'), type: 'GITHUB', token: 'ghp_servicesTestValue123' });
      const git = (gitTokenId: string) => ({ url: 'https://github.com/acme/private', provider: 'GITHUB', branch: 'main', git_token_id: gitTokenId });

      const before = (await serviceRows(environmentId)).length;
      expectErrorBody(await call('POST', `/environment/${environmentId}/application`, applicationBody(uniqueName('app'), { git_repository: git(randomUUID()) })), 404);
      const stranger = await ctx().signUpWithOrganization();
      const foreignToken = await created<{ id: string }>(
        'POST',
        `/organization/${stranger.organizationId}/gitToken`,
        { name: uniqueName('token'), type: 'GITHUB', token: 'ghp_foreignValue123' },
        201,
        stranger.owner.auth,
      );
      expectErrorBody(await call('POST', `/environment/${environmentId}/application`, applicationBody(uniqueName('app'), { git_repository: git(foreignToken.id) })), 404);
      expect((await serviceRows(environmentId)).length).toBe(before);

      const app = await createApplication(uniqueName('private'), { git_repository: git(token.id) });
      const associated = await call('GET', `/organization/${organizationId}/gitToken/${token.id}/associatedServices`);
      expect(associated.statusCode, associated.body).toBe(200);
      const environment = (await call('GET', `/environment/${environmentId}`)).json<{ name: string }>();
      const project = (await call('GET', `/project/${projectId}`)).json<{ name: string }>();
      expect(associated.json()).toEqual({
        results: [
          {
            project_id: projectId,
            project_name: project.name,
            environment_id: environmentId,
            environment_name: environment.name,
            service_id: app.id,
            service_name: app.name,
            service_type: 'APPLICATION',
          },
        ],
      });
      expect((await call('GET', `/organization/${organizationId}/gitToken/${token.id}`)).json<{ associated_services_count: number }>().associated_services_count).toBe(1);
      expect(expectErrorBody(await call('DELETE', `/organization/${organizationId}/gitToken/${token.id}`), 409).message).toMatch(app.name);

      // Pointing the application elsewhere releases the token.
      await created('PUT', `/application/${app.id}`, { git_repository: { url: 'https://github.com/acme/public', provider: 'GITHUB', branch: 'main' }, healthchecks: {} }, 200);
      expect((await call('GET', `/organization/${organizationId}/gitToken/${token.id}/associatedServices`)).json()).toEqual({ results: [] });
      expect((await call('DELETE', `/organization/${organizationId}/gitToken/${token.id}`)).statusCode).toBe(204);
    });

    it('checks labels and annotations groups and reports the services they are attached to', async () => {
      const labels = await created<{ id: string }>('POST', `/organization/${organizationId}/labelsGroups`, { name: uniqueName('labels'), labels: [{ key: 'team', value: 'shop' }] });
      const annotations = await created<{ id: string }>('POST', `/organization/${organizationId}/annotationsGroups`, {
        name: uniqueName('annotations'),
        annotations: [{ key: 'example.com/owner', value: 'shop' }],
        scopes: ['DEPLOYMENTS'],
      });
      expectErrorBody(await call('POST', `/environment/${environmentId}/application`, applicationBody(uniqueName('app'), { labels_groups: [{ id: randomUUID() }] })), 404);
      const app = await createApplication(uniqueName('grouped'), { labels_groups: [{ id: labels.id }], annotations_groups: [{ id: annotations.id }] });

      const labelItems = await call('GET', `/organization/${organizationId}/labelsGroups/${labels.id}/associatedItems`);
      expect(labelItems.json()).toEqual({ results: [{ item_id: app.id, item_name: app.name, item_type: 'APPLICATION' }] });
      const annotationItems = await call('GET', `/organization/${organizationId}/annotationsGroups/${annotations.id}/associatedItems`);
      expect(annotationItems.json()).toEqual({ results: [{ item_id: app.id, item_name: app.name, item_type: 'APPLICATION' }] });
      expectErrorBody(await call('DELETE', `/organization/${organizationId}/labelsGroups/${labels.id}`), 409);
      expectErrorBody(await call('DELETE', `/organization/${organizationId}/annotationsGroups/${annotations.id}`), 409);

      expect((await call('DELETE', `/application/${app.id}`)).statusCode).toBe(204);
      expect((await call('DELETE', `/organization/${organizationId}/labelsGroups/${labels.id}`)).statusCode).toBe(204);
      expect((await call('DELETE', `/organization/${organizationId}/annotationsGroups/${annotations.id}`)).statusCode).toBe(204);
    });

    it('counts the services using a container registry or a Helm repository, which cannot go while used (409)', async () => {
      const registry = await created<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, {
        name: uniqueName('registry'),
        kind: 'GENERIC_CR',
        url: 'https://registry.slipway-services.invalid',
        config: { username: 'robot', password: 'fixture-pw' },
      });
      const charts = await created<{ id: string }>('POST', `/organization/${organizationId}/helmRepository`, {
        name: uniqueName('charts'),
        kind: 'HTTPS',
        url: 'https://charts.slipway-services.invalid/stable',
      });
      const usage = async (path: string) => (await call('GET', path)).json<{ associated_services_count: number }>().associated_services_count;
      const registryPath = `/organization/${organizationId}/containerRegistry/${registry.id}`;
      const chartsPath = `/organization/${organizationId}/helmRepository/${charts.id}`;

      const container = await created<ServiceView>('POST', `/environment/${environmentId}/container`, {
        name: uniqueName('web'),
        registry_id: registry.id,
        image_name: 'library/nginx',
        tag: '1.27-alpine',
        healthchecks: {},
      });
      const chart = await created<ServiceView>('POST', `/environment/${environmentId}/helm`, {
        name: uniqueName('chart'),
        source: { helm_repository: { repository: charts.id, chart_name: 'nginx', chart_version: '1.2.3' } },
      });
      expect(await usage(registryPath)).toBe(1);
      expect(await usage(chartsPath)).toBe(1);
      expectErrorBody(await call('DELETE', registryPath), 409);
      expectErrorBody(await call('DELETE', chartsPath), 409);

      expect((await call('DELETE', `/container/${container.id}`)).statusCode).toBe(204);
      expect((await call('DELETE', `/helm/${chart.id}`)).statusCode).toBe(204);
      expect(await usage(registryPath)).toBe(0);
      expect((await call('DELETE', registryPath)).statusCode).toBe(204);
      expect((await call('DELETE', chartsPath)).statusCode).toBe(204);
    });

    it('counts services per project in the project stats', async () => {
      const statsProject = (await created<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('stats') }, 200)).id;
      const first = await createEnvironment(statsProject);
      const second = await createEnvironment(statsProject);
      await createApplication(uniqueName('a'), {}, first);
      await createApplication(uniqueName('b'), {}, first);
      const third = await createApplication(uniqueName('c'), {}, second);
      const stats = async () =>
        (await call('GET', `/organization/${organizationId}/project/stats`))
          .json<{ results: { id: string; service_total_number: number; environment_total_number: number }[] }>()
          .results.find((entry) => entry.id === statsProject);
      expect(await stats()).toEqual({ id: statsProject, service_total_number: 3, environment_total_number: 2 });
      await call('DELETE', `/application/${third.id}`);
      expect(await stats()).toEqual({ id: statsProject, service_total_number: 2, environment_total_number: 2 });
    });
  });

  describe('variables of a service', () => {
    it('keeps an application\'s variables and secrets to that application, overriding the environment\'s', async () => {
      const app = await createApplication(uniqueName('vars'));
      const sibling = await createApplication(uniqueName('sibling'));
      await created('POST', `/environment/${environmentId}/environmentVariable`, { key: 'GREETING', value: 'from-environment' });
      const own = await created<VariableView>('POST', `/application/${app.id}/environmentVariable`, { key: 'GREETING', value: 'from-application' });
      expect(own).toMatchObject({ key: 'GREETING', value: 'from-application', scope: 'APPLICATION' });
      const secret = await created<{ id: string; key: string }>('POST', `/application/${app.id}/secret`, { key: 'API_KEY', value: 'sk-live-do-not-show' });
      expect(JSON.stringify(secret)).not.toContain('sk-live-do-not-show');

      const listed = await call('GET', `/application/${app.id}/environmentVariable`);
      expect(listed.statusCode, listed.body).toBe(200);
      const keys = listed.json<{ results: VariableView[] }>().results;
      expect(keys.find((variable) => variable.key === 'GREETING' && variable.scope === 'APPLICATION')?.value).toBe('from-application');
      const secrets = await call('GET', `/application/${app.id}/secret`);
      expect(secrets.json<{ results: { key: string }[] }>().results.map((entry) => entry.key)).toContain('API_KEY');
      expect(secrets.body).not.toContain('sk-live-do-not-show');

      const resolved = await call('GET', `/application/${app.id}/resolvedVariables`);
      expect(resolved.statusCode, resolved.body).toBe(200);
      const results = resolved.json<ResolvedView>().results;
      expect(results.find((variable) => variable.key === 'GREETING')).toMatchObject({ value: 'from-application', scope: 'APPLICATION' });
      expect(results.find((variable) => variable.key === 'API_KEY')).toMatchObject({ hidden: true, scope: 'APPLICATION' });
      expect(resolved.body).not.toContain('sk-live-do-not-show');

      const siblingResolved = (await call('GET', `/application/${sibling.id}/resolvedVariables`)).json<ResolvedView>().results;
      expect(siblingResolved.find((variable) => variable.key === 'GREETING')).toMatchObject({ value: 'from-environment', scope: 'ENVIRONMENT' });
      expect(siblingResolved.find((variable) => variable.key === 'API_KEY')).toBeUndefined();

      const edited = await created<VariableView>('PUT', `/application/${app.id}/environmentVariable/${own.id}`, { key: 'GREETING', value: 'edited' }, 200);
      expect(edited.value).toBe('edited');
      expectErrorBody(await call('PUT', `/application/${sibling.id}/environmentVariable/${own.id}`, { key: 'GREETING', value: 'not yours' }), 404);

      // The service's own rows go with it.
      expect((await call('DELETE', `/application/${app.id}`)).statusCode).toBe(204);
      expect(await ctx().database.db.selectFrom('variables').select('id').where('owner_id', '=', app.id).execute()).toEqual([]);
      expectErrorBody(await call('GET', `/application/${app.id}/environmentVariable`), 404);
    });

    it('gives each application its hostname built-in, hidden unless revealed, and its git branch', async () => {
      const name = uniqueName('Web-Front');
      const app = await createApplication(name, { git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'release-7' } });
      const key = `PLATFORM_APPLICATION_${name.toUpperCase().replace(/-/g, '_')}_HOSTNAME`;

      const hidden = (await call('GET', `/environment/${environmentId}/resolvedVariables`)).json<ResolvedView>().results.find((variable) => variable.key === key);
      expect(hidden).toMatchObject({ hidden: true, scope: 'BUILT_IN' });
      expect(hidden?.value).toBeUndefined();
      const revealed = (await call('GET', `/environment/${environmentId}/resolvedVariables?reveal=true`)).json<ResolvedView>().results.find((variable) => variable.key === key);
      expect(revealed?.value).toBe(`${name.toLowerCase()}.${environmentId}.slipway.internal`);

      const own = (await call('GET', `/application/${app.id}/resolvedVariables`)).json<ResolvedView>().results;
      expect(own.find((variable) => variable.key === 'PLATFORM_BRANCH_NAME')?.value).toBe('release-7');

      // What a service's built-ins say follows its edits at once (the resolution keeps what each row says while it is unchanged).
      const renamed = uniqueName('Web-Back');
      await created('PUT', `/application/${app.id}`, { name: renamed, git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'release-8' }, healthchecks: {} }, 200);
      const edited = (await call('GET', `/application/${app.id}/resolvedVariables?reveal=true`)).json<ResolvedView>().results;
      expect(edited.find((variable) => variable.key === 'PLATFORM_BRANCH_NAME')?.value).toBe('release-8');
      const renamedKey = `PLATFORM_APPLICATION_${renamed.toUpperCase().replace(/-/g, '_')}_HOSTNAME`;
      expect(edited.find((variable) => variable.key === renamedKey)?.value).toBe(`${renamed.toLowerCase()}.${environmentId}.slipway.internal`);
      expect(edited.some((variable) => variable.key === key)).toBe(false);
    });

    it.runIf(kindDefined('DATABASE'))('refuses a database type it does not know, naming the types it does', async () => {
      const refused = await call('POST', `/environment/${environmentId}/database`, { name: uniqueName('db'), type: 'MARIADB', version: '11', mode: 'CONTAINER' });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json<{ details: unknown[] }>().details).toEqual([{ field: '/type', message: `must be one of ${DATABASE_TYPES.map((type) => `"${type}"`).join(', ')}` }]);
    });

    it.runIf(kindDefined('DATABASE'))('gives a database its eleven built-ins with generated credentials, sealed at rest', async () => {
      const name = uniqueName('Main-Db');
      const database = await created<ServiceView>('POST', `/environment/${environmentId}/database`, {
        name,
        type: 'POSTGRESQL',
        version: '16',
        mode: 'CONTAINER',
        accessibility: 'PRIVATE',
      });
      const part = name.toUpperCase().replace(/-/g, '_');
      const revealed = (await call('GET', `/environment/${environmentId}/resolvedVariables?reveal=true`)).json<ResolvedView>().results;
      const value = (suffix: string) => revealed.find((variable) => variable.key === `PLATFORM_DATABASE_${part}_${suffix}`)?.value;
      const password = value('PASSWORD') ?? '';
      const username = value('USERNAME') ?? '';
      expect(password.length).toBeGreaterThanOrEqual(24);
      expect(username).toMatch(/^u[0-9a-f]{16}$/);
      expect(value('TYPE')).toBe('POSTGRESQL');
      expect(value('VERSION')).toBe('16');
      expect(value('NAME')).toBe(name);
      expect(value('PORT')).toBe('5432');
      expect(value('HOST')).toBe(`${name.toLowerCase()}.${environmentId}.slipway.internal`);
      expect(value('CONNECTION_URI')).toBe(`postgresql://${username}:${password}@${value('HOST')}:5432/${value('DATABASE')}`);

      const row = await ctx().database.db.selectFrom('services').selectAll().where('id', '=', database.id).executeTakeFirstOrThrow();
      expect(row.credentials_envelope).toMatch(/^v1\./);
      expect(JSON.stringify(row)).not.toContain(password);
      const answer = await call('GET', `/database/${database.id}`);
      expect(answer.body).not.toContain(password);
      expectErrorBody(await call('GET', `/database/${database.id}/environmentVariable`), 404);
    });
  });

  describe('public hostnames and links', () => {
    /** A link as the reference's Link schema answers it. */
    type LinkView = Static<typeof Link>;

    async function linksOf(noun: 'application' | 'container', id: string, auth = owner.auth): Promise<LinkView[]> {
      const response = await call('GET', `/${noun}/${id}/link`, undefined, auth);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ results: LinkView[] }>().results;
    }

    async function environmentNamed(name: string, inProject = projectId): Promise<string> {
      return (await created<{ id: string }>('POST', `/project/${inProject}/environment`, { name, cluster: clusterId })).id;
    }

    const PUBLIC_PORTS = { ports: [{ internal_port: 9090, publicly_accessible: false }, { internal_port: 8080, publicly_accessible: true }] };

    it("answers an application's links per the reference: its own hostname, then its verified custom domains; none without a public port", async () => {
      const environmentName = uniqueName('staging');
      const inEnvironment = await environmentNamed(environmentName);
      const name = uniqueName('web');
      const app = await createApplication(name, PUBLIC_PORTS, inEnvironment);
      const [own, ...others] = await linksOf('application', app.id);
      expect(others).toEqual([]);
      // The test app serves apps on the defaults: SLIPWAY_APPS_DOMAIN localhost, SLIPWAY_APPS_PORT 8000.
      expect(own).toEqual({
        service_id: app.id,
        service_type: 'APPLICATION',
        url: expect.stringMatching(new RegExp(`^http://${name}-${environmentName}-[a-z2-7]{8}\\.localhost:8000$`)),
        internal_port: 8080,
        external_port: 8000,
        is_platform_domain: true,
        is_default: true,
      });

      // Custom domains are links once their DNS check passed (the check itself: custom-domains.test.ts); a wildcard is no URL.
      const domain = `${uniqueName('shop')}.example.com`.toLowerCase();
      for (const added of [domain, `*.${domain}`, `pending.${domain}`]) {
        expect((await call('POST', `/application/${app.id}/customDomain`, { domain: added, generate_certificate: false })).statusCode).toBe(201);
      }
      await ctx().database.db.updateTable('service_custom_domains').set({ status: 'VALIDATED' }).where('service_id', '=', app.id).where('domain', 'in', [domain, `*.${domain}`]).execute();
      expect(await linksOf('application', app.id)).toEqual([
        own,
        { ...own, url: `http://${domain}:8000`, is_platform_domain: false, is_default: false },
      ]);

      const hidden = await createApplication(uniqueName('worker'), { ports: [{ internal_port: 8080, publicly_accessible: false }] }, inEnvironment);
      expect(await linksOf('application', hidden.id)).toEqual([]);
      expect(await linksOf('application', (await createApplication(uniqueName('cli'), {}, inEnvironment)).id)).toEqual([]);
    });

    it('keeps a service\'s hostname when the service or its environment is renamed', async () => {
      const inEnvironment = await environmentNamed(uniqueName('env'));
      const app = await createApplication(uniqueName('web'), PUBLIC_PORTS, inEnvironment);
      const before = await linksOf('application', app.id);
      expect((await call('PUT', `/application/${app.id}`, { name: uniqueName('renamed'), healthchecks: {} })).statusCode).toBe(200);
      expect((await call('PUT', `/environment/${inEnvironment}`, { name: uniqueName('moved') })).statusCode).toBe(200);
      expect(await linksOf('application', app.id)).toEqual(before);
    });

    it("gives another organization's same-named environment and service a hostname of its own, and hides each from the other (404)", async () => {
      const stranger = await ctx().signUpWithOrganization();
      const strangerProject = (await created<{ id: string }>('POST', `/organization/${stranger.organizationId}/project`, { name: uniqueName('project') }, 200, stranger.owner.auth)).id;
      const strangerCluster = (
        await created<{ id: string }>('POST', `/organization/${stranger.organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201, stranger.owner.auth)
      ).id;
      const environmentName = uniqueName('staging');
      const mine = await createApplication('web', PUBLIC_PORTS, await environmentNamed(environmentName));
      const theirsEnvironment = (await created<{ id: string }>('POST', `/project/${strangerProject}/environment`, { name: environmentName, cluster: strangerCluster }, 201, stranger.owner.auth)).id;
      const theirs = await created<ServiceView>('POST', `/environment/${theirsEnvironment}/application`, applicationBody('web', PUBLIC_PORTS), 201, stranger.owner.auth);

      const [myLink] = await linksOf('application', mine.id);
      const [theirLink] = await linksOf('application', theirs.id, stranger.owner.auth);
      const shape = new RegExp(`^http://web-${environmentName}-[a-z2-7]{8}\\.localhost:8000$`);
      expect(myLink?.url).toMatch(shape);
      expect(theirLink?.url).toMatch(shape);
      expect(myLink?.url).not.toBe(theirLink?.url);
      expect((await serviceRows(theirsEnvironment))[0]?.hostname_label).not.toBe((await ctx().database.db.selectFrom('services').select('hostname_label').where('id', '=', mine.id).executeTakeFirstOrThrow()).hostname_label);

      expectErrorBody(await call('GET', `/application/${mine.id}/link`, undefined, stranger.owner.auth), 404);
      expectErrorBody(await call('GET', `/application/${theirs.id}/link`), 404);
      expectErrorBody(await call('GET', `/application/${randomUUID()}/link`), 404);
      expectErrorBody(await call('GET', '/application/not-an-id/link'), 400);
    });

    it("answers a container's links under its own path, and neither kind's under the other's", async () => {
      const registry = await created<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, {
        name: uniqueName('registry'),
        kind: 'GENERIC_CR',
        url: 'https://registry.slipway-links.invalid',
        config: { username: 'robot', password: 'fixture-pw' },
      });
      const container = await created<ServiceView>('POST', `/environment/${environmentId}/container`, {
        name: uniqueName('proxy'),
        registry_id: registry.id,
        image_name: 'library/nginx',
        tag: '1.27-alpine',
        healthchecks: {},
        ports: [{ internal_port: 80, publicly_accessible: true }],
      });
      expect(await linksOf('container', container.id)).toEqual([
        expect.objectContaining({ service_id: container.id, service_type: 'CONTAINER', internal_port: 80, is_platform_domain: true, is_default: true }),
      ]);
      const app = await createApplication(uniqueName('web'), PUBLIC_PORTS);
      expectErrorBody(await call('GET', `/application/${container.id}/link`), 404);
      expectErrorBody(await call('GET', `/container/${app.id}/link`), 404);
    });

    it("answers an environment's links as each of its applications' and containers' own, nothing for the others (listEnvironmentServicesLinks)", async () => {
      const inEnvironment = await createEnvironment();
      const web = await createApplication(uniqueName('web'), PUBLIC_PORTS, inEnvironment);
      const api = await createApplication(uniqueName('api'), PUBLIC_PORTS, inEnvironment);
      await createApplication(uniqueName('worker'), { ports: [{ internal_port: 9090, publicly_accessible: false }] }, inEnvironment);
      await created('POST', `/environment/${inEnvironment}/database`, { name: uniqueName('db'), type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
      const response = await call('GET', `/environment/${inEnvironment}/link`);
      expect(response.statusCode, response.body).toBe(200);
      const expected = [...(await linksOf('application', web.id)), ...(await linksOf('application', api.id))];
      expect(response.json<{ results: LinkView[] }>().results).toEqual(expect.arrayContaining(expected));
      expect(response.json<{ results: LinkView[] }>().results).toHaveLength(expected.length);

      expect((await call('GET', `/environment/${await createEnvironment()}/link`)).json()).toEqual({ results: [] });
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await call('GET', `/environment/${inEnvironment}/link`, undefined, stranger.owner.auth), 404);
      expectErrorBody(await call('GET', `/environment/${randomUUID()}/link`), 404);
      expectErrorBody(await call('GET', '/environment/not-an-id/link'), 400);
    });

    it('gives a service the next candidate when another service holds the hostname its id hashes to', async () => {
      const environmentName = uniqueName('env');
      const inEnvironment = await environmentNamed(environmentName);
      const holder = await createApplication(uniqueName('web'), PUBLIC_PORTS, inEnvironment);
      const claimant = await createApplication(uniqueName('web'), PUBLIC_PORTS, inEnvironment);
      // As if the claimant's first candidate had been given to the holder before the claimant claimed its own.
      const first = hostnameLabelCandidate({ id: claimant.id, name: claimant.name }, environmentName, 0);
      await ctx().database.db.updateTable('services').set({ hostname_label: null }).where('id', '=', claimant.id).execute();
      await ctx().database.db.updateTable('services').set({ hostname_label: first }).where('id', '=', holder.id).execute();

      const [claimed] = await linksOf('application', claimant.id);
      expect(claimed?.url).toBe(`http://${hostnameLabelCandidate({ id: claimant.id, name: claimant.name }, environmentName, 1)}.localhost:8000`);
      expect((await linksOf('application', holder.id))[0]?.url).toBe(`http://${first}.localhost:8000`);
      // Claimed once: read again, it stays.
      expect((await linksOf('application', claimant.id))[0]?.url).toBe(claimed?.url);
    });
  });
});

describeEachDatabase('services of an installation upgraded to per-service hostnames (0026_service_hostnames)', (ctx) => {
  it('gives every existing service its own label, <service>-<environment>-<suffix>, unique in the installation, which its links then name', async () => {
    const call = (auth: string, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
      ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
    // Two organizations with the same environment and service names: before the upgrade, one hostname for both.
    const tenants: Array<{ auth: string; serviceId: string }> = [];
    for (const tenant of [await ctx().signUpWithOrganization(), await ctx().signUpWithOrganization()]) {
      const projectId = (await call(tenant.owner.auth, 'POST', `/organization/${tenant.organizationId}/project`, { name: uniqueName('project') })).json<{ id: string }>().id;
      const clusterId = (
        await call(tenant.owner.auth, 'POST', `/organization/${tenant.organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' })
      ).json<{ id: string }>().id;
      const environmentId = (await call(tenant.owner.auth, 'POST', `/project/${projectId}/environment`, { name: 'staging', cluster: clusterId })).json<{ id: string }>().id;
      const created = await call(tenant.owner.auth, 'POST', `/environment/${environmentId}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB' },
        healthchecks: {},
        ports: [{ internal_port: 8080, publicly_accessible: true }],
      });
      expect(created.statusCode, created.body).toBe(201);
      tenants.push({ auth: tenant.owner.auth, serviceId: created.json<{ id: string }>().id });
    }
    // The services table as 0025 left it: no label column.
    const { db } = ctx().database;
    await db.schema.dropIndex('services_hostname_label').execute();
    await db.schema.alterTable('services').dropColumn('hostname_label').execute();

    await addServiceHostnames(db as unknown as Kysely<unknown>);

    const labels = await db.selectFrom('services').select(['id', 'hostname_label']).execute();
    expect(labels.every((row) => row.hostname_label !== null)).toBe(true);
    expect(new Set(labels.map((row) => row.hostname_label)).size).toBe(labels.length);
    for (const tenant of tenants) {
      const label = labels.find((row) => row.id === tenant.serviceId)?.hostname_label;
      expect(label).toBe(hostnameLabelCandidate({ id: tenant.serviceId, name: 'web' }, 'staging', 0));
      const links = await call(tenant.auth, 'GET', `/application/${tenant.serviceId}/link`);
      expect(links.json<{ results: Array<{ url: string }> }>().results.map((link) => link.url)).toEqual([`http://${label}.localhost:8000`]);
    }
    // The index is back: a label is one service's.
    const [first, second] = tenants;
    if (first === undefined || second === undefined) throw new Error('two tenants were set up');
    const taken = labels.find((row) => row.id === first.serviceId)?.hostname_label ?? '';
    await expect(db.updateTable('services').set({ hostname_label: taken }).where('id', '=', second.serviceId).execute()).rejects.toSatisfy(isUniqueViolation);
  });
});
