import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { AppError } from '../src/lib/errors.ts';
import { builtInId, type EnvironmentForVariables, type ServiceForVariables } from '../src/modules/variables/variables.builtins.ts';
import {
  createVariablesService,
  MAX_VARIABLES_PER_SCOPE,
  variablesFingerprintKey,
  type VariablesService,
} from '../src/modules/variables/variables.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createRevealFixture, expectMasked, expectRevealed, expectRevealRefused, revealingUrls } from './support/secret-reveal.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Variables and secrets (SPEC.md "Environment variable scopes and behaviour", rules 1–6) through real HTTP requests on
 * a real database, and — for what needs services, which no module owns yet — through the variables service over the
 * same database with the services of an environment described as the services module will describe them.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '0190f0b2-6c5e-7000-8000-000000000000';

interface VariableView {
  id: string;
  created_at: string;
  updated_at?: string;
  key: string;
  value?: string;
  mount_path: string | null;
  description: string | null;
  enable_interpolation_in_file: boolean | null;
  overridden_variable?: { id: string; key: string; value?: string; scope: string; variable_type: string };
  aliased_variable?: { id: string; key: string; value?: string; scope: string; variable_type: string };
  scope: string;
  variable_type: string;
  service_id?: string;
  service_name?: string;
  service_type?: string;
}

interface ResolvedView {
  key: string;
  value?: string;
  hidden: boolean;
  scope: string;
  variable_id: string;
  variable_type: string;
  is_secret: boolean;
  alias_chain: { id: string; key: string; scope: string }[];
  unresolved_alias: string | null;
  overrides: { key: string; scope: string }[];
}

describeEachDatabase('variables and secrets', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let projectId: string;
  let stagingId: string;
  let productionId: string;
  let otherProjectEnvironmentId: string;

  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created<T = VariableView>(url: string, payload: Record<string, unknown>): Promise<T> {
    const response = await call('POST', url, payload);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<T>();
  }

  async function environmentIn(testApp: TestApp, project: string, name: string, mode: string): Promise<string> {
    const response = await testApp.call(owner.auth, { method: 'POST', url: `/project/${project}/environment`, payload: { name, mode } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  }

  async function listed(url: string, auth = owner.auth): Promise<VariableView[]> {
    const response = await call('GET', url, undefined, auth);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: VariableView[] }>().results;
  }

  async function resolved(environmentId: string): Promise<Map<string, ResolvedView>> {
    const response = await call('GET', `/environment/${environmentId}/resolvedVariables`);
    expect(response.statusCode, response.body).toBe(200);
    return new Map(response.json<{ results: ResolvedView[] }>().results.map((variable) => [variable.key, variable]));
  }

  beforeAll(async () => {
    const testApp = ctx();
    ({ owner, organizationId } = await testApp.signUpWithOrganization());
    const cluster = await testApp.call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/cluster`,
      payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
    });
    expect(cluster.statusCode, cluster.body).toBe(201);
    const project = await testApp.call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('shop') } });
    projectId = project.json<{ id: string }>().id;
    stagingId = await environmentIn(testApp, projectId, 'staging', 'STAGING');
    productionId = await environmentIn(testApp, projectId, 'production', 'PRODUCTION');
    const otherProject = await testApp.call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('blog') } });
    otherProjectEnvironmentId = await environmentIn(testApp, otherProject.json<{ id: string }>().id, 'staging', 'STAGING');
  });

  it('creates, edits and deletes a PROJECT variable in the reference shape (201, 200, 204)', async () => {
    const variable = await created(`/project/${projectId}/environmentVariable`, { key: 'LOG_LEVEL', value: 'info', description: 'verbosity' });
    expect(variable).toEqual({
      id: expect.stringMatching(UUID),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      key: 'LOG_LEVEL',
      value: 'info',
      mount_path: null,
      description: 'verbosity',
      enable_interpolation_in_file: null,
      scope: 'PROJECT',
      variable_type: 'VALUE',
    });
    expect((await listed(`/project/${projectId}/environmentVariable`)).map((listedVariable) => listedVariable.key)).toContain('LOG_LEVEL');

    const edited = await call('PUT', `/project/${projectId}/environmentVariable/${variable.id}`, { key: 'LOG_LEVEL', value: 'debug' });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json<VariableView>()).toMatchObject({ id: variable.id, value: 'debug', description: 'verbosity' });

    const file = await created(`/project/${projectId}/environmentVariable`, { key: 'CA_BUNDLE', value: '-----BEGIN-----', mount_path: '/etc/ssl/ca.pem' });
    expect(file).toMatchObject({ variable_type: 'FILE', mount_path: '/etc/ssl/ca.pem' });

    const removed = await call('DELETE', `/project/${projectId}/environmentVariable/${file.id}`);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expectErrorBody(await call('DELETE', `/project/${projectId}/environmentVariable/${file.id}`), 404);
    expectErrorBody(await call('PUT', `/project/${projectId}/environmentVariable/${UNKNOWN_ID}`, { key: 'X', value: 'y' }), 404);
  });

  it('rule 1: ENVIRONMENT variables stay in their environment; PROJECT variables reach every environment of the project only', async () => {
    await created(`/project/${projectId}/environmentVariable`, { key: 'SHARED_FLAG', value: 'on' });
    await created(`/environment/${stagingId}/environmentVariable`, { key: 'STAGING_ONLY', value: 'yes' });

    const staging = await listed(`/environment/${stagingId}/environmentVariable`);
    const production = await listed(`/environment/${productionId}/environmentVariable`);
    const elsewhere = await listed(`/environment/${otherProjectEnvironmentId}/environmentVariable`);
    expect(staging.find((variable) => variable.key === 'SHARED_FLAG')?.scope).toBe('PROJECT');
    expect(staging.find((variable) => variable.key === 'STAGING_ONLY')?.scope).toBe('ENVIRONMENT');
    expect(production.find((variable) => variable.key === 'SHARED_FLAG')?.scope).toBe('PROJECT');
    expect(production.some((variable) => variable.key === 'STAGING_ONLY')).toBe(false);
    expect(elsewhere.some((variable) => variable.key === 'SHARED_FLAG' || variable.key === 'STAGING_ONLY')).toBe(false);

    expect((await resolved(stagingId)).get('STAGING_ONLY')?.value).toBe('yes');
    expect((await resolved(productionId)).has('STAGING_ONLY')).toBe(false);
    expect((await resolved(productionId)).get('SHARED_FLAG')).toMatchObject({ value: 'on', scope: 'PROJECT' });
    // The project listing holds PROJECT rows only.
    expect((await listed(`/project/${projectId}/environmentVariable`)).every((variable) => variable.scope === 'PROJECT')).toBe(true);
    // An environment's variable is not addressable through another environment.
    const stagingOnly = staging.find((variable) => variable.key === 'STAGING_ONLY') as VariableView;
    expectErrorBody(await call('PUT', `/environment/${productionId}/environmentVariable/${stagingOnly.id}`, { key: 'STAGING_ONLY', value: 'x' }), 404);
    expectErrorBody(await call('GET', `/environment/${UNKNOWN_ID}/environmentVariable`), 404);
  });

  it('rule 2: an alias $NAME resolves to that variable (chains through scopes, built-ins included), per environment', async () => {
    await created(`/project/${projectId}/environmentVariable`, { key: 'IS_PROD', value: '$PLATFORM_IS_PRODUCTION' });
    const chained = await created(`/environment/${stagingId}/environmentVariable`, { key: 'PROD_FLAG', value: '$IS_PROD' });
    expect(chained).toMatchObject({ variable_type: 'ALIAS', value: '$IS_PROD', aliased_variable: { key: 'IS_PROD', scope: 'PROJECT', value: '$PLATFORM_IS_PRODUCTION' } });

    const staging = await resolved(stagingId);
    expect(staging.get('IS_PROD')?.value).toBe('false');
    expect(staging.get('PROD_FLAG')).toMatchObject({ value: 'false', scope: 'ENVIRONMENT', variable_type: 'ALIAS', unresolved_alias: null });
    expect(staging.get('PROD_FLAG')?.alias_chain.map((link) => `${link.scope}:${link.key}`)).toEqual([
      'ENVIRONMENT:PROD_FLAG',
      'PROJECT:IS_PROD',
      'BUILT_IN:PLATFORM_IS_PRODUCTION',
    ]);
    expect((await resolved(productionId)).get('IS_PROD')?.value).toBe('true');

    // The alias operation names its target by id; a built-in's id is stable per environment and name.
    const viaEndpoint = await created(`/environment/${productionId}/environmentVariable/${builtInId(productionId, 'PLATFORM_BRANCH_NAME')}/alias`, { key: 'BRANCH' });
    expect(viaEndpoint).toMatchObject({ key: 'BRANCH', value: '$PLATFORM_BRANCH_NAME', variable_type: 'ALIAS', scope: 'ENVIRONMENT' });
    expect((await resolved(productionId)).get('BRANCH')?.value).toBe('production');

    const unknown = await call('POST', `/environment/${stagingId}/environmentVariable`, { key: 'DANGLING', value: '$NOT_DEFINED_ANYWHERE' });
    expect(expectErrorBody(unknown, 400).message).toContain('NOT_DEFINED_ANYWHERE');
    // A whole value of `$NAME` is an alias; other dollar signs are text.
    expect(await created(`/environment/${stagingId}/environmentVariable`, { key: 'PRICE', value: 'costs $5 or ${X}' })).toMatchObject({ variable_type: 'VALUE' });
  });

  it('rule 2: refuses an alias cycle at write time with 400 naming it, in the same scope and across scopes, changing nothing', async () => {
    const target = await created(`/project/${projectId}/environmentVariable`, { key: 'CYCLE_B', value: 'plain' });
    await created(`/project/${projectId}/environmentVariable`, { key: 'CYCLE_A', value: '$CYCLE_B' });
    const before = await listed(`/project/${projectId}/environmentVariable`);

    const sameScope = await call('PUT', `/project/${projectId}/environmentVariable/${target.id}`, { key: 'CYCLE_B', value: '$CYCLE_A' });
    expect(expectErrorBody(sameScope, 400).message).toContain('CYCLE_A → CYCLE_B → CYCLE_A');
    expect(await listed(`/project/${projectId}/environmentVariable`)).toEqual(before);

    // CYCLE_B overridden in staging by an alias back to CYCLE_A closes a cycle there only.
    const acrossScopes = await call('POST', `/environment/${stagingId}/environmentVariable`, { key: 'CYCLE_B', value: '$CYCLE_A' });
    expect(expectErrorBody(acrossScopes, 400).message).toMatch(/alias cycle: CYCLE_(A|B) → CYCLE_(A|B) → CYCLE_(A|B)/);
    expect((await listed(`/environment/${stagingId}/environmentVariable`)).some((variable) => variable.key === 'CYCLE_B' && variable.scope === 'ENVIRONMENT')).toBe(false);

    // A PROJECT change that closes a cycle in one environment only (through that environment's override) is refused.
    const first = await created(`/project/${projectId}/environmentVariable`, { key: 'LOOP_1', value: 'one' });
    const second = await created(`/project/${projectId}/environmentVariable`, { key: 'LOOP_2', value: 'two' });
    await created(`/environment/${productionId}/environmentVariable/${second.id}/override`, { value: '$LOOP_1' });
    const reachesProduction = await call('PUT', `/project/${projectId}/environmentVariable/${first.id}`, { key: 'LOOP_1', value: '$LOOP_2' });
    expect(expectErrorBody(reachesProduction, 400).message).toContain('alias cycle: LOOP_1 → LOOP_2 → LOOP_1');
    expect((await resolved(productionId)).get('LOOP_1')?.value).toBe('one');
    // A PROJECT alias may only name what the PROJECT scope sees.
    await created(`/environment/${productionId}/environmentVariable`, { key: 'ONLY_IN_PRODUCTION', value: 'p' });
    expectErrorBody(await call('PUT', `/project/${projectId}/environmentVariable/${first.id}`, { key: 'LOOP_1', value: '$ONLY_IN_PRODUCTION' }), 400);
    const self = await call('POST', `/environment/${stagingId}/environmentVariable`, { key: 'SELF', value: '$SELF' });
    expect(expectErrorBody(self, 400).message).toContain('SELF → SELF');
  });

  it('rule 2: a cycle that closes in one service only is refused; an environment value that cuts a project loop holds for its services', async () => {
    const environmentId = await environmentIn(ctx(), projectId, uniqueName('cycles'), 'DEVELOPMENT');
    const application = async () =>
      (
        await created<{ id: string }>(`/environment/${environmentId}/application`, {
          name: uniqueName('web'),
          git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' },
          healthchecks: {},
          ports: [{ internal_port: 8080, publicly_accessible: true }],
        })
      ).id;
    const aliasing = await application();
    const plain = await application();
    await created(`/application/${plain}/environmentVariable`, { key: 'SVC_PLAIN', value: 'no alias here' });

    // SVC_B is an alias of SVC_A in one application only; SVC_A → SVC_B at the project then loops there alone.
    const a = await created(`/project/${projectId}/environmentVariable`, { key: 'SVC_A', value: 'a' });
    await created(`/project/${projectId}/environmentVariable`, { key: 'SVC_B', value: 'b' });
    await created(`/application/${aliasing}/environmentVariable`, { key: 'SVC_B', value: '$SVC_A' });
    const closes = await call('PUT', `/project/${projectId}/environmentVariable/${a.id}`, { key: 'SVC_A', value: '$SVC_B' });
    expect(expectErrorBody(closes, 400).message).toMatch(/alias cycle: SVC_(A|B) → SVC_(A|B) → SVC_(A|B)/);
    expect((await listed(`/project/${projectId}/environmentVariable`)).find((variable) => variable.key === 'SVC_A')?.value).toBe('a');

    // CUT_Y → CUT_X at the project, CUT_Y a plain value in the environment: the application's CUT_X → CUT_Y ends
    // at that value, with no loop, though the project's rows alone would make one.
    await created(`/project/${projectId}/environmentVariable`, { key: 'CUT_X', value: 'x' });
    await created(`/project/${projectId}/environmentVariable`, { key: 'CUT_Y', value: '$CUT_X' });
    await created(`/environment/${environmentId}/environmentVariable`, { key: 'CUT_Y', value: 'cut' });
    await created(`/application/${aliasing}/environmentVariable`, { key: 'CUT_X', value: '$CUT_Y' });
    const seen = await call('GET', `/application/${aliasing}/resolvedVariables`);
    expect(seen.statusCode, seen.body).toBe(200);
    const values = new Map(seen.json<{ results: ResolvedView[] }>().results.map((variable) => [variable.key, variable.value]));
    expect(values.get('CUT_X')).toBe('cut');
    expect(values.get('SVC_B')).toBe('a');
  });

  it('rule 2: two concurrent writes that each add half of a cycle cannot both succeed', async () => {
    // Ten pairs at once: without the per-project serialisation, some pair would commit both halves.
    const pairs = await Promise.all(
      Array.from({ length: 10 }, async (_unused, index) => ({
        x: await created(`/project/${projectId}/environmentVariable`, { key: `RACE_${index}_X`, value: 'x' }),
        y: await created(`/project/${projectId}/environmentVariable`, { key: `RACE_${index}_Y`, value: 'y' }),
      })),
    );
    const answers = await Promise.all(
      pairs.flatMap(({ x, y }) => [
        call('PUT', `/project/${projectId}/environmentVariable/${x.id}`, { key: x.key, value: `$${y.key}` }),
        call('PUT', `/project/${projectId}/environmentVariable/${y.id}`, { key: y.key, value: `$${x.key}` }),
      ]),
    );
    for (let index = 0; index < pairs.length; index += 1) {
      const pair = [answers[2 * index], answers[2 * index + 1]];
      expect(pair.map((answer) => answer?.statusCode).sort()).toEqual([200, 400]);
      const refused = pair.find((answer) => answer?.statusCode === 400);
      expect(refused && expectErrorBody(refused, 400).message).toContain('alias cycle');
    }
    // Each winner's alias holds: both names of a pair end at the one value left.
    const staging = await resolved(stagingId);
    for (let index = 0; index < pairs.length; index += 1) {
      expect(staging.get(`RACE_${index}_X`)?.value).toBe(staging.get(`RACE_${index}_Y`)?.value);
      expect(['x', 'y']).toContain(staging.get(`RACE_${index}_X`)?.value);
    }
  });

  it('rule 3: a variable created again under its name in the same scope replaces it; deleting removes it', async () => {
    const first = await created(`/environment/${stagingId}/environmentVariable`, { key: 'API_URL', value: 'https://old.example.com' });
    const second = await created(`/environment/${stagingId}/environmentVariable`, { key: 'API_URL', value: 'https://new.example.com' });
    expect(second.id).not.toBe(first.id);
    const staging = await listed(`/environment/${stagingId}/environmentVariable`);
    expect(staging.filter((variable) => variable.key === 'API_URL').map((variable) => variable.value)).toEqual(['https://new.example.com']);
    expectErrorBody(await call('DELETE', `/environment/${stagingId}/environmentVariable/${first.id}`), 404);
    expect((await resolved(stagingId)).get('API_URL')?.value).toBe('https://new.example.com');

    // The same name at PROJECT scope is another definition: the narrower one wins, and deleting it uncovers the broader.
    await created(`/project/${projectId}/environmentVariable`, { key: 'API_URL', value: 'https://project.example.com' });
    expect((await resolved(stagingId)).get('API_URL')).toMatchObject({ value: 'https://new.example.com', scope: 'ENVIRONMENT', overrides: [{ key: 'API_URL', scope: 'PROJECT' }] });
    expect((await call('DELETE', `/environment/${stagingId}/environmentVariable/${second.id}`)).statusCode).toBe(204);
    expect((await resolved(stagingId)).get('API_URL')).toMatchObject({ value: 'https://project.example.com', scope: 'PROJECT' });

    // Renaming onto a taken name is a conflict, not a replacement.
    const other = await created(`/environment/${stagingId}/environmentVariable`, { key: 'OTHER', value: '1' });
    await created(`/environment/${stagingId}/environmentVariable`, { key: 'TAKEN', value: '2' });
    expectErrorBody(await call('PUT', `/environment/${stagingId}/environmentVariable/${other.id}`, { key: 'TAKEN' }), 409);
  });

  it('overrides: a narrower scope wins (APPLICATION > ENVIRONMENT > PROJECT > BUILT_IN), built-ins included', async () => {
    const parent = await created(`/project/${projectId}/environmentVariable`, { key: 'WORKERS', value: '4' });
    const override = await created(`/environment/${productionId}/environmentVariable/${parent.id}/override`, { value: '16' });
    expect(override).toMatchObject({
      key: 'WORKERS',
      value: '16',
      scope: 'ENVIRONMENT',
      variable_type: 'OVERRIDE',
      overridden_variable: { id: parent.id, key: 'WORKERS', value: '4', scope: 'PROJECT', variable_type: 'VALUE' },
    });
    expect((await resolved(productionId)).get('WORKERS')?.value).toBe('16');
    expect((await resolved(stagingId)).get('WORKERS')?.value).toBe('4');

    const builtIn = await created(`/environment/${stagingId}/environmentVariable/${builtInId(stagingId, 'PLATFORM_IS_PRODUCTION')}/override`, { value: 'true' });
    expect(builtIn).toMatchObject({ key: 'PLATFORM_IS_PRODUCTION', variable_type: 'OVERRIDE', overridden_variable: { scope: 'BUILT_IN', value: 'false' } });
    expect((await resolved(stagingId)).get('PLATFORM_IS_PRODUCTION')).toMatchObject({ value: 'true', scope: 'ENVIRONMENT', overrides: [{ scope: 'BUILT_IN' }] });
    // An override keeps the name it overrides.
    expectErrorBody(await call('PUT', `/environment/${stagingId}/environmentVariable/${builtIn.id}`, { key: 'RENAMED' }), 400);

    // Nothing is broader than PROJECT but the per-environment built-ins: an override there, or of the same scope, is refused.
    expectErrorBody(await call('POST', `/project/${projectId}/environmentVariable/${parent.id}/override`, { value: 'x' }), 400);
    expectErrorBody(await call('POST', `/environment/${productionId}/environmentVariable/${override.id}/override`, { value: 'x' }), 400);
    expectErrorBody(await call('POST', `/environment/${productionId}/environmentVariable/${UNKNOWN_ID}/override`, { value: 'x' }), 404);
  });

  it('rules 5 and 6 over HTTP: built-ins of the environment by their exact names; revealing needs secrets:reveal', async () => {
    const staging = await listed(`/environment/${stagingId}/environmentVariable`);
    const builtIns = staging.filter((variable) => variable.scope === 'BUILT_IN');
    expect(builtIns.map((variable) => variable.key).sort()).toEqual(['PLATFORM_BRANCH_NAME', 'PLATFORM_IS_PRODUCTION', 'PLATFORM_JSON_B64']);
    expect(builtIns.every((variable) => variable.variable_type === 'BUILT_IN' && variable.id === builtInId(stagingId, variable.key))).toBe(true);
    expect(JSON.parse(Buffer.from(builtIns.find((variable) => variable.key === 'PLATFORM_JSON_B64')?.value ?? '', 'base64').toString())).toMatchObject({
      id: stagingId,
      name: 'staging',
      mode: 'STAGING',
      project_id: projectId,
      organization_id: organizationId,
    });

    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    expect((await call('GET', `/environment/${stagingId}/environmentVariable`, undefined, viewer.auth)).statusCode).toBe(200);
    const refused = await call('GET', `/environment/${stagingId}/environmentVariable?reveal=true`, undefined, viewer.auth);
    expect(expectErrorBody(refused, 403).message).toContain('secrets:reveal');
    expectErrorBody(await call('GET', `/environment/${stagingId}/resolvedVariables?reveal=true`, undefined, viewer.auth), 403);
    const revealed = await call('GET', `/environment/${stagingId}/environmentVariable?reveal=true`);
    expect(revealed.statusCode).toBe(200);
    expect(revealed.headers['cache-control']).toBe('no-store');
    // Viewers may not write either.
    expectErrorBody(await call('POST', `/environment/${stagingId}/environmentVariable`, { key: 'NOPE', value: '1' }, viewer.auth), 403);
    expectErrorBody(await call('GET', `/environment/${stagingId}/environmentVariable?unknown=1`), 400);
  });

  it('secrets:reveal: OWNER and ADMIN see the database password; DEVELOPER and VIEWER get 403 naming it, and the masked answer', async () => {
    const project = await call('POST', `/organization/${organizationId}/project`, { name: uniqueName('reveal') });
    expect(project.statusCode, project.body).toBe(200);
    const fixture = await createRevealFixture(ctx(), owner.auth, project.json<{ id: string }>().id);
    const members: Record<string, string> = { OWNER: owner.auth };
    for (const role of ['ADMIN', 'DEVELOPER', 'VIEWER']) {
      const user = await ctx().signUp(uniqueName(role.toLowerCase()));
      await ctx().addMemberDirectly(organizationId, user, role);
      members[role] = user.auth;
    }
    const password = expectRevealed(await call('GET', `/environment/${fixture.environmentId}/resolvedVariables?reveal=true`), fixture);

    for (const url of revealingUrls(fixture)) {
      for (const role of ['OWNER', 'ADMIN']) {
        expect(expectRevealed(await call('GET', `${url}?reveal=true`, undefined, members[role]), fixture), `${role} ${url}`).toBe(password);
      }
      for (const role of ['DEVELOPER', 'VIEWER']) {
        expectRevealRefused(await call('GET', `${url}?reveal=true`, undefined, members[role]), password);
        expectMasked(await call('GET', url, undefined, members[role]), fixture, password);
        expectMasked(await call('GET', `${url}?reveal=false`, undefined, members[role]), fixture, password);
      }
    }
    // The authorizer reads the query before validation: any value but false asks, so a spelling the validator refuses
    // is never read as "not asked". Without the permission that is 403; with it, the validator's 400.
    for (const value of ['yes', '1', 'TRUE', '']) {
      expectRevealRefused(await call('GET', `/environment/${fixture.environmentId}/resolvedVariables?reveal=${value}`, undefined, members.VIEWER), password);
      expectErrorBody(await call('GET', `/environment/${fixture.environmentId}/resolvedVariables?reveal=${value}`), 400);
    }
    expectRevealRefused(await call('GET', `/environment/${fixture.environmentId}/resolvedVariables?reveal=false&reveal=true`, undefined, members.DEVELOPER), password);
  });

  it('secrets are write-only and sealed at rest: no answer carries the value and no column holds it', async () => {
    const value = `s3cr3t-${randomBytes(12).toString('hex')}`;
    const response = await call('POST', `/environment/${stagingId}/secret`, { key: 'STRIPE_KEY', value, description: 'payments' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.body).not.toContain(value);
    const secret = response.json<VariableView>();
    expect(secret).toEqual({
      id: expect.stringMatching(UUID),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      key: 'STRIPE_KEY',
      mount_path: null,
      scope: 'ENVIRONMENT',
      variable_type: 'VALUE',
      description: 'payments',
      enable_interpolation_in_file: null,
    });
    const projectSecret = await call('POST', `/project/${projectId}/secret`, { key: 'SHARED_TOKEN', value });
    expect(projectSecret.statusCode).toBe(201);

    const secrets = await call('GET', `/environment/${stagingId}/secret`);
    expect(secrets.json<{ results: VariableView[] }>().results.map((listedSecret) => `${listedSecret.scope}:${listedSecret.key}`).sort()).toEqual([
      'ENVIRONMENT:STRIPE_KEY',
      'PROJECT:SHARED_TOKEN',
    ]);
    const aliasToSecret = await created(`/environment/${stagingId}/environmentVariable`, { key: 'PAYMENT_KEY', value: '$STRIPE_KEY' });
    expect(aliasToSecret.aliased_variable).toMatchObject({ key: 'STRIPE_KEY', scope: 'ENVIRONMENT' });
    expect(aliasToSecret.aliased_variable?.value).toBe('');
    const everything = [
      secrets.body,
      (await call('GET', `/environment/${stagingId}/environmentVariable?reveal=true`)).body,
      (await call('GET', `/environment/${stagingId}/resolvedVariables?reveal=true`)).body,
      (await call('PUT', `/environment/${stagingId}/secret/${secret.id}`, { key: 'STRIPE_KEY', description: 'kept' })).body,
    ].join('\n');
    expect(everything).not.toContain(value);
    const explained = await resolved(stagingId);
    expect(explained.get('STRIPE_KEY')).toMatchObject({ hidden: true, is_secret: true });
    expect(explained.get('STRIPE_KEY')?.value).toBeUndefined();
    expect(explained.get('PAYMENT_KEY')).toMatchObject({ hidden: true, is_secret: false });

    const rows = await sql<Record<string, unknown>>`select * from variables`.execute(ctx().database.db);
    expect(JSON.stringify(rows.rows)).not.toContain(value);
    const stored = rows.rows.find((row) => row.id === secret.id) as { value: string | null; value_envelope: string };
    expect(stored.value).toBeNull();
    expect(stored.value_envelope).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

    // Secret aliases and overrides go through the secret operations and stay secrets.
    const alias = await created(`/environment/${stagingId}/secret/${secret.id}/alias`, { key: 'STRIPE_ALIAS' });
    expect(alias).toMatchObject({ key: 'STRIPE_ALIAS', variable_type: 'ALIAS', aliased_secret: { id: secret.id, key: 'STRIPE_KEY' } });
    const override = await created(`/environment/${productionId}/secret/${projectSecret.json<{ id: string }>().id}/override`, { value: 'prod-token' });
    expect(override).toMatchObject({ key: 'SHARED_TOKEN', variable_type: 'OVERRIDE', overridden_secret: { scope: 'PROJECT' } });
    // A variable id through the secret operations (and the reverse) names nothing.
    expectErrorBody(await call('DELETE', `/environment/${stagingId}/secret/${aliasToSecret.id}`), 404);
    expectErrorBody(await call('DELETE', `/environment/${stagingId}/environmentVariable/${secret.id}`), 404);
  });

  it('refuses bad input with 400 or 409 and the error body, writing nothing', async () => {
    const before = await listed(`/environment/${stagingId}/environmentVariable`);
    const bad: [Record<string, unknown>, number, string][] = [
      [{ key: '1ABC', value: 'x' }, 400, '/key'],
      [{ key: 'WITH-DASH', value: 'x' }, 400, '/key'],
      [{ key: 'PLATFORM_CUSTOM', value: 'x' }, 400, '/key'],
      [{ key: 'platform_lower', value: 'x' }, 400, '/key'],
      [{ key: 'BIG', value: 'x'.repeat(32_769) }, 400, '/value'],
      [{ key: 'NUL', value: 'a\u0000b' }, 400, '/value'],
      [{ key: 'MOUNT', value: 'x', mount_path: 'relative/path' }, 400, '/mount_path'],
      [{ key: 'MOUNT', value: 'x', mount_path: '/etc/../passwd' }, 400, '/mount_path'],
      [{ key: 'EXTRA', value: 'x', unknown_field: true }, 400, '/unknown_field'],
      [{ value: 'x' }, 400, '/key'],
      [{ key: 'STRIPE_KEY', value: 'plain now' }, 409, ''],
    ];
    for (const [payload, status, field] of bad) {
      const body = expectErrorBody(await call('POST', `/environment/${stagingId}/environmentVariable`, payload), status);
      if (field !== '') expect(body.details?.map((detail) => detail.field), JSON.stringify(payload)).toContain(field);
    }
    // A secret under a plain variable's name is refused too (no silent change of kind).
    expectErrorBody(await call('POST', `/environment/${stagingId}/secret`, { key: 'PRICE', value: 'x' }), 409);
    expect(await listed(`/environment/${stagingId}/environmentVariable`)).toEqual(before);
  });

  it('serialises concurrent creates of one name: each answers 201 or 409, one row remains', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_unused, index) => call('POST', `/environment/${productionId}/environmentVariable`, { key: 'RACE', value: `v${index}` })),
    );
    for (const answer of answers) expect([201, 409], answer.body).toContain(answer.statusCode);
    expect(answers.some((answer) => answer.statusCode === 201)).toBe(true);
    const rows = await ctx().database.db.selectFrom('variables').select('value').where('owner_id', '=', productionId).where('key', '=', 'RACE').execute();
    expect(rows).toHaveLength(1);
  });

  it('copies an environment’s own variables and secrets when it is cloned with its variables', async () => {
    const clone = await call('POST', `/environment/${stagingId}/clone`, { name: uniqueName('staging-copy'), clone_variables: true });
    expect(clone.statusCode, clone.body).toBe(201);
    const cloneId = clone.json<{ id: string }>().id;
    const copied = await listed(`/environment/${cloneId}/environmentVariable`);
    expect(copied.find((variable) => variable.key === 'STAGING_ONLY')).toMatchObject({ scope: 'ENVIRONMENT', value: 'yes' });
    const secrets = (await call('GET', `/environment/${cloneId}/secret`)).json<{ results: VariableView[] }>().results;
    expect(secrets.map((secret) => secret.key)).toContain('STRIPE_KEY');
    const without = await call('POST', `/environment/${stagingId}/clone`, { name: uniqueName('bare-copy') });
    expect((await listed(`/environment/${without.json<{ id: string }>().id}/environmentVariable`)).some((variable) => variable.scope === 'ENVIRONMENT')).toBe(false);
  });

  it('removes an environment’s variables with the environment, and a project’s with the project', async () => {
    const doomed = await environmentIn(ctx(), projectId, uniqueName('doomed'), 'DEVELOPMENT');
    await created(`/environment/${doomed}/environmentVariable`, { key: 'GONE', value: '1' });
    await created(`/environment/${doomed}/secret`, { key: 'GONE_TOO', value: '1' });
    const deleted = await call('DELETE', `/environment/${doomed}`);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await ctx().database.db.selectFrom('variables').select('id').where('environment_id', '=', doomed).execute()).toEqual([]);

    const project = await call('POST', `/organization/${organizationId}/project`, { name: uniqueName('doomed-project') });
    const doomedProject = project.json<{ id: string }>().id;
    await created(`/project/${doomedProject}/environmentVariable`, { key: 'GONE', value: '1' });
    expect((await call('DELETE', `/project/${doomedProject}`)).statusCode).toBe(204);
    expect(await ctx().database.db.selectFrom('variables').select('id').where('project_id', '=', doomedProject).execute()).toEqual([]);
  });

  describeServiceLevel(ctx, () => ({ owner, organizationId }), environmentIn);
});

const logLines: string[] = [];
const logStream = new PassThrough();
logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));

describeEachDatabase(
  'secrets in the logs',
  (ctx) => {
    it('never logs a secret value: writes, refusals, listings and explanations log their requests without it', async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const post = async (url: string, payload: Record<string, unknown>) => ctx().call(owner.auth, { method: 'POST', url, payload });
      await post(`/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      const projectId = (await post(`/organization/${organizationId}/project`, { name: uniqueName('logged') })).json<{ id: string }>().id;
      const environmentId = (await post(`/project/${projectId}/environment`, { name: 'staging', mode: 'STAGING' })).json<{ id: string }>().id;
      const value = `logged-secret-${randomBytes(10).toString('hex')}`;
      const secret = await post(`/environment/${environmentId}/secret`, { key: 'LOGGED', value });
      expect(secret.statusCode).toBe(201);
      const projectSecret = await post(`/project/${projectId}/secret`, { key: 'LOGGED_PROJECT', value });
      // Created again: it replaces the first (rule 3), and the edit below addresses the replacement.
      const replaced = await post(`/environment/${environmentId}/secret`, { key: 'LOGGED', value });
      const answers = [
        replaced,
        await post(`/environment/${environmentId}/environmentVariable`, { key: 'LOGGED', value }),
        await post(`/environment/${environmentId}/secret`, { key: 'PLATFORM_LOGGED', value }),
        await post(`/environment/${environmentId}/secret/${projectSecret.json<{ id: string }>().id}/override`, { value }),
        await ctx().call(owner.auth, { method: 'PUT', url: `/environment/${environmentId}/secret/${replaced.json<{ id: string }>().id}`, payload: { key: 'LOGGED', value } }),
        await ctx().call(owner.auth, { method: 'GET', url: `/environment/${environmentId}/resolvedVariables?reveal=true` }),
      ];
      expect(answers.map((answer) => answer.statusCode)).toEqual([201, 409, 400, 201, 200, 200]);
      for (const answer of answers) expect(answer.body).not.toContain(value);
      expect(logLines.length).toBeGreaterThan(5);
      expect(logLines.join('\n')).not.toContain(value);
    });
  },
  { logStream },
);

/**
 * What needs services (APPLICATION scope, per-service and per-database built-ins, rule 4's snapshot): the variables
 * service over the test app's database, with an environment's services given as the services module will give them.
 */
function describeServiceLevel(
  ctx: () => TestApp,
  world: () => { owner: TestUser; organizationId: string },
  environmentIn: (testApp: TestApp, project: string, name: string, mode: string) => Promise<string>,
): void {
  const servicesByEnvironment = new Map<string, ServiceForVariables[]>();
  const changes: { projectId: string; environmentId: string | null }[] = [];
  let variables: VariablesService;
  // A project of its own: this service instance seals with its own key, so it reads only what it wrote.
  let ids: { projectId: string; stagingId: string; productionId: string };
  const fixture = () => ({ ...world(), ...ids });

  function api(environmentId: string): ServiceForVariables {
    return { id: `0190f0b2-6c5e-7000-8000-${environmentId.slice(-12)}`.replace(/.$/, 'a'), kind: 'APPLICATION', name: 'api-v2', hostname: `api-v2.${environmentId.slice(0, 8)}.internal`, branch: 'main' };
  }
  function shopDb(environmentId: string): ServiceForVariables {
    return {
      id: `0190f0b2-6c5e-7000-8000-${environmentId.slice(-12)}`.replace(/.$/, 'd'),
      kind: 'DATABASE',
      name: 'shop-db',
      database: { type: 'POSTGRESQL', version: '16', host: 'shop-db.internal', port: 5432, username: 'shop', password: 'db-password-Zq9', dbName: 'orders' },
    };
  }

  beforeAll(async () => {
    const project = await ctx().call(world().owner.auth, { method: 'POST', url: `/organization/${world().organizationId}/project`, payload: { name: uniqueName('services') } });
    const projectId = project.json<{ id: string }>().id;
    ids = {
      projectId,
      stagingId: await environmentIn(ctx(), projectId, 'staging', 'STAGING'),
      productionId: await environmentIn(ctx(), projectId, 'production', 'PRODUCTION'),
    };
    const key = randomBytes(32);
    variables = createVariablesService({
      db: ctx().database.db,
      dialect: ctx().database.dialect,
      clock: ctx().clock,
      secrets: createSecretBox(key),
      fingerprintKey: variablesFingerprintKey(key),
      environments: {
        // The environment as its module answers it over HTTP.
        findEnvironmentSummary: async (environmentId): Promise<EnvironmentForVariables & { createdAt: string } | undefined> => {
          const response = await ctx().call(fixture().owner.auth, { method: 'GET', url: `/environment/${environmentId}` });
          if (response.statusCode === 404) return undefined;
          const body = response.json<{ id: string; name: string; mode: string; cluster_id: string; created_at: string; project: { id: string }; organization: { id: string } }>();
          return { id: body.id, name: body.name, mode: body.mode, clusterId: body.cluster_id, createdAt: body.created_at, projectId: body.project.id, organizationId: body.organization.id };
        },
      },
      services: { services: async (environmentId) => servicesByEnvironment.get(environmentId) ?? [] },
      changes: { variablesChanged: async (_trx, change) => void changes.push(change) },
    });
  });

  it('service level: APPLICATION scope wins over ENVIRONMENT and sees per-service and per-database built-ins (rule 6)', async () => {
    const { stagingId } = fixture();
    const application = api(stagingId);
    servicesByEnvironment.set(stagingId, [application, shopDb(stagingId)]);
    const environmentOwner = await variables.environmentOwner(stagingId);
    await variables.createVariable(environmentOwner, { key: 'TIER', value: 'environment' });
    const serviceOwner = await variables.serviceOwner(stagingId, application.id);
    const own = await variables.createVariable(serviceOwner, { key: 'TIER', value: 'application' });
    expect(own).toMatchObject({ scope: 'APPLICATION', service_id: application.id, service_name: 'api-v2', service_type: 'APPLICATION' });
    await variables.createVariable(serviceOwner, { key: 'DATABASE_URL', value: '$PLATFORM_DATABASE_SHOP_DB_CONNECTION_URI' });

    const forService = await variables.explain(stagingId, application.id, false);
    const byKey = new Map(forService.results.map((variable) => [variable.key, variable]));
    expect(byKey.get('TIER')).toMatchObject({ value: 'application', scope: 'APPLICATION', overrides: [{ scope: 'ENVIRONMENT' }] });
    expect(byKey.get('PLATFORM_BRANCH_NAME')?.value).toBe('main');
    expect(byKey.get('PLATFORM_DATABASE_SHOP_DB_NAME')?.value).toBe('shop-db');
    expect(byKey.get('DATABASE_URL')).toMatchObject({ hidden: true, scope: 'APPLICATION' });
    expect(byKey.get('DATABASE_URL')?.value).toBeUndefined();
    const revealed = await variables.explain(stagingId, application.id, true);
    expect(revealed.results.find((variable) => variable.key === 'DATABASE_URL')?.value).toBe('postgresql://shop:db-password-Zq9@shop-db.internal:5432/orders');
    // The environment itself sees the built-ins but not the application's own rows (rule 1).
    const forEnvironment = await variables.explain(stagingId, undefined, false);
    expect(forEnvironment.results.find((variable) => variable.key === 'TIER')?.value).toBe('environment');
    expect(forEnvironment.results.some((variable) => variable.key === 'DATABASE_URL')).toBe(false);
    await expect(variables.serviceOwner(stagingId, shopDb(stagingId).id)).rejects.toThrow(AppError);
  });

  it('service level, rule 5: hidden built-in values are left out of listings unless revealed', async () => {
    const { stagingId } = fixture();
    const owner = await variables.environmentOwner(stagingId);
    const hidden = await variables.listVariables(owner, false);
    const password = hidden.find((variable) => variable.key === 'PLATFORM_DATABASE_SHOP_DB_PASSWORD');
    expect(password).toMatchObject({ scope: 'BUILT_IN', variable_type: 'BUILT_IN', service_name: 'shop-db', service_type: 'DATABASE' });
    expect(password && 'value' in password).toBe(false);
    expect(JSON.stringify(hidden)).not.toContain('db-password-Zq9');
    expect(hidden.find((variable) => variable.key === 'PLATFORM_APPLICATION_API_V2_HOSTNAME')?.value).toBeUndefined();
    expect(hidden.find((variable) => variable.key === 'PLATFORM_DATABASE_SHOP_DB_TYPE')?.value).toBe('POSTGRESQL');
    const revealed = await variables.listVariables(owner, true);
    expect(revealed.find((variable) => variable.key === 'PLATFORM_DATABASE_SHOP_DB_PASSWORD')?.value).toBe('db-password-Zq9');
  });

  it('rule 4: the deployment snapshot carries secrets sealed and a content hash that changes exactly with what it carries', async () => {
    const { productionId } = fixture();
    servicesByEnvironment.set(productionId, [shopDb(productionId)]);
    const owner = await variables.environmentOwner(productionId);
    const secretValue = `sk_live_${randomBytes(10).toString('hex')}`;
    const secret = await variables.createSecret(owner, { key: 'PAYMENT_SECRET', value: secretValue });
    changes.length = 0;

    const first = await variables.resolveForDeployment(productionId);
    const again = await variables.resolveForDeployment(productionId);
    expect(again.content_hash).toBe(first.content_hash);
    expect(first.content_hash).toMatch(/^[0-9a-f]{64}$/);
    const text = JSON.stringify(first);
    expect(text).not.toContain(secretValue);
    expect(text).not.toContain('db-password-Zq9');
    const sealedSecret = first.variables.find((variable) => variable.key === 'PAYMENT_SECRET');
    expect(sealedSecret?.sealed).toBeDefined();
    expect(sealedSecret && variables.openSnapshotValue(sealedSecret)).toBe(secretValue);
    const sealedPassword = first.variables.find((variable) => variable.key === 'PLATFORM_DATABASE_SHOP_DB_PASSWORD');
    expect(sealedPassword && variables.openSnapshotValue(sealedPassword)).toBe('db-password-Zq9');
    expect(first.variables.find((variable) => variable.key === 'PLATFORM_IS_PRODUCTION')).toMatchObject({ value: 'true', scope: 'BUILT_IN' });

    // The same value written again is no change; a new value is.
    await variables.editSecret(owner, secret.id, { key: 'PAYMENT_SECRET', value: secretValue });
    expect((await variables.resolveForDeployment(productionId)).content_hash).toBe(first.content_hash);
    await variables.editSecret(owner, secret.id, { key: 'PAYMENT_SECRET', value: `${secretValue}-rotated` });
    const rotated = await variables.resolveForDeployment(productionId);
    expect(rotated.content_hash).not.toBe(first.content_hash);
    // A PROJECT change reaches the environment's hash; another environment's change does not.
    const projectOwner = variables.projectOwner(fixture().organizationId, fixture().projectId);
    await variables.createVariable(projectOwner, { key: 'NEW_PROJECT_FLAG', value: '1' });
    const afterProject = await variables.resolveForDeployment(productionId);
    expect(afterProject.content_hash).not.toBe(rotated.content_hash);
    await variables.createVariable(await variables.environmentOwner(fixture().stagingId), { key: 'STAGING_ONLY_2', value: '1' });
    expect((await variables.resolveForDeployment(productionId)).content_hash).toBe(afterProject.content_hash);
    // Every write told the listener, inside its transaction, which scope changed.
    expect(changes).toEqual([
      { projectId: fixture().projectId, environmentId: productionId },
      { projectId: fixture().projectId, environmentId: productionId },
      { projectId: fixture().projectId, environmentId: null },
      { projectId: fixture().projectId, environmentId: fixture().stagingId },
    ]);

    // A deployment with an alias naming nothing is refused: the database it aliased went away.
    await variables.createVariable(owner, { key: 'DB_HOST', value: '$PLATFORM_DATABASE_SHOP_DB_HOST' });
    servicesByEnvironment.set(productionId, []);
    await expect(variables.resolveForDeployment(productionId)).rejects.toThrow(/DB_HOST → \$PLATFORM_DATABASE_SHOP_DB_HOST/);
  });

  it('service level: one scope holds at most MAX_VARIABLES_PER_SCOPE names', async () => {
    const { organizationId } = fixture();
    const response = await ctx().call(fixture().owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('full') } });
    const owner = variables.projectOwner(organizationId, response.json<{ id: string }>().id);
    const now = new Date().toISOString();
    await ctx()
      .database.db.insertInto('variables')
      .values(
        Array.from({ length: MAX_VARIABLES_PER_SCOPE }, (_unused, index) => ({
          id: `0190f0b2-6c5e-7000-8000-${String(index).padStart(12, '0')}`.replace('7000', '7001'),
          organization_id: organizationId,
          project_id: owner.projectId,
          environment_id: null,
          service_id: null,
          owner_id: owner.projectId,
          scope: 'PROJECT',
          key: `FILLER_${index}`,
          is_secret: 0,
          variable_type: 'VALUE',
          value: 'x',
          value_envelope: null,
          alias_of: null,
          mount_path: null,
          description: null,
          enable_interpolation_in_file: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    await expect(variables.createVariable(owner, { key: 'ONE_TOO_MANY', value: 'x' })).rejects.toThrow(/1000/);
    // Replacing an existing name is not a new one.
    await expect(variables.createVariable(owner, { key: 'FILLER_1', value: 'y' })).resolves.toMatchObject({ value: 'y' });
  });
}
