import { beforeAll, describe, expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { createRevealFixture, expectMasked, expectRevealed, expectRevealRefused, revealingUrls, type RevealFixture } from './support/secret-reveal.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Custom roles (docs/roles.md), end to end over HTTP on both databases: an organization defines a role that may deploy
 * on STAGING and only look at PRODUCTION; a member invited with it, and an API token carrying it, get exactly that.
 */

interface EnvironmentTypePermission {
  environment_type: string;
  permission: string;
  reveal_secrets?: boolean;
}

interface CustomRoleView {
  id: string;
  name: string;
  description?: string;
  organization_permission: string;
  default_project_permissions: EnvironmentTypePermission[];
  cluster_permissions: { cluster_id: string; cluster_name: string; permission: string }[];
  project_permissions: { project_id: string; project_name: string; is_admin: boolean; permissions: EnvironmentTypePermission[] }[];
}

function permissionsOf(list: EnvironmentTypePermission[]): Record<string, string> {
  return Object.fromEntries(list.map((entry) => [entry.environment_type, entry.permission]));
}

/** The environment types an entry list reveals secret values on. */
function revealsOf(list: EnvironmentTypePermission[]): string[] {
  return list.filter((entry) => entry.reveal_secrets === true).map((entry) => entry.environment_type);
}

describeEachDatabase('custom roles', (ctx) => {
  let owner: TestUser;
  let member: TestUser;
  let organizationId: string;
  let projectId: string;
  let otherProjectId: string;
  let clusterId: string;
  let otherClusterId: string;
  let stagingId: string;
  let secondStagingId: string;
  let productionId: string;
  let otherProjectEnvironmentId: string;

  async function call(auth: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await call(auth, 'POST', url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  const rolesUrl = () => `/organization/${organizationId}/customRole`;

  /** Deploy on STAGING, look at PRODUCTION, nothing on DEVELOPMENT and PREVIEW, in the one project. */
  const stagingDeployer = () => ({
    name: uniqueName('staging-deployer'),
    description: 'Ships to staging',
    project_permissions: [
      {
        project_id: projectId,
        permissions: [
          { environment_type: 'STAGING', permission: 'DEPLOYER' },
          { environment_type: 'PRODUCTION', permission: 'VIEWER' },
        ],
      },
    ],
  });

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    member = await ctx().signUp(uniqueName('member'));
    projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('shop') }, 200);
    otherProjectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('billing') }, 200);
    const cluster = { region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' };
    clusterId = await created(owner.auth, `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), ...cluster });
    otherClusterId = await created(owner.auth, `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), ...cluster });
    const environment = async (project: string, mode: string) =>
      created(owner.auth, `/project/${project}/environment`, { name: uniqueName(mode.toLowerCase()), cluster: clusterId, mode });
    stagingId = await environment(projectId, 'STAGING');
    secondStagingId = await environment(projectId, 'STAGING');
    productionId = await environment(projectId, 'PRODUCTION');
    otherProjectEnvironmentId = await environment(otherProjectId, 'STAGING');
  });

  describe('definitions', () => {
    it('creates a role with the reference shape: one entry per project and per cluster of the organization', async () => {
      const body = stagingDeployer();
      const response = await call(owner.auth, 'POST', rolesUrl(), body);
      expect(response.statusCode, response.body).toBe(201);
      const role = response.json<CustomRoleView>();
      expect(role).toMatchObject({ name: body.name, description: 'Ships to staging', organization_permission: 'VIEWER' });
      expect(permissionsOf(role.default_project_permissions)).toEqual({ DEVELOPMENT: 'NO_ACCESS', PREVIEW: 'NO_ACCESS', STAGING: 'NO_ACCESS', PRODUCTION: 'NO_ACCESS' });
      const listed = role.project_permissions.find((entry) => entry.project_id === projectId);
      expect(listed).toMatchObject({ is_admin: false });
      expect(permissionsOf(listed?.permissions ?? [])).toEqual({ DEVELOPMENT: 'NO_ACCESS', PREVIEW: 'NO_ACCESS', STAGING: 'DEPLOYER', PRODUCTION: 'VIEWER' });
      expect(role.project_permissions.map((entry) => entry.project_id).sort()).toEqual([projectId, otherProjectId].sort());
      expect(role.cluster_permissions.map((entry) => [entry.cluster_id, entry.permission]).sort()).toEqual(
        [
          [clusterId, 'VIEWER'],
          [otherClusterId, 'VIEWER'],
        ].sort(),
      );

      const fetched = await call(owner.auth, 'GET', `${rolesUrl()}/${role.id}`);
      expect(fetched.statusCode, fetched.body).toBe(200);
      expect(fetched.json()).toEqual(role);
      const list = await call(owner.auth, 'GET', rolesUrl());
      expect(list.json<{ results: CustomRoleView[] }>().results.map((entry) => entry.id)).toContain(role.id);
      const available = await call(owner.auth, 'GET', `/organization/${organizationId}/availableRole`);
      expect(available.json<{ results: { id: string; name: string }[] }>().results).toEqual(
        expect.arrayContaining([{ id: role.id, name: body.name }, expect.objectContaining({ name: 'VIEWER' })]),
      );
    });

    it('refuses unknown permissions, environment types, foreign projects and clusters, and repeated entries with 400', async () => {
      const foreign = await ctx().signUpWithOrganization();
      const foreignProject = await created(foreign.owner.auth, `/organization/${foreign.organizationId}/project`, { name: uniqueName('theirs') }, 200);
      const base = stagingDeployer();
      const cases: [string, Record<string, unknown>][] = [
        ['unknown permission', { ...base, project_permissions: [{ project_id: projectId, permissions: [{ environment_type: 'STAGING', permission: 'SUPERUSER' }] }] }],
        ['unknown environment type', { ...base, project_permissions: [{ project_id: projectId, permissions: [{ environment_type: 'QA', permission: 'VIEWER' }] }] }],
        ['unknown cluster permission', { ...base, cluster_permissions: [{ cluster_id: clusterId, permission: 'OWNER' }] }],
        ['unknown organization permission', { ...base, organization_permission: 'ADMIN' }],
        ['project of another organization', { ...base, project_permissions: [{ project_id: foreignProject, permissions: [] }] }],
        ['cluster that does not exist', { ...base, cluster_permissions: [{ cluster_id: '00000000-0000-4000-8000-000000000000', permission: 'ADMIN' }] }],
        ['project named twice', { ...base, project_permissions: [{ project_id: projectId }, { project_id: projectId }] }],
        [
          'environment type named twice',
          {
            ...base,
            project_permissions: [
              {
                project_id: projectId,
                permissions: [
                  { environment_type: 'STAGING', permission: 'VIEWER' },
                  { environment_type: 'STAGING', permission: 'MANAGER' },
                ],
              },
            ],
          },
        ],
        [
          'reveal_secrets without access',
          { ...base, project_permissions: [{ project_id: projectId, permissions: [{ environment_type: 'STAGING', permission: 'NO_ACCESS', reveal_secrets: true }] }] },
        ],
        ['reveal_secrets not a boolean', { ...base, default_project_permissions: [{ environment_type: 'STAGING', permission: 'VIEWER', reveal_secrets: 'yes' }] }],
        ['unknown field', { ...base, admin: true }],
        ['blank name', { ...base, name: '   ' }],
      ];
      for (const [label, body] of cases) {
        const response = await call(owner.auth, 'POST', rolesUrl(), body);
        expect(response.statusCode, `${label}: ${response.body}`).toBe(400);
        expectErrorBody(response, 400);
      }
      const names = (await call(owner.auth, 'GET', rolesUrl())).json<{ results: CustomRoleView[] }>().results.map((role) => role.name);
      expect(names).not.toContain(base.name);
    });

    it('answers 409 for a name already taken, by a built-in role or by two concurrent creates', async () => {
      expectErrorBody(await call(owner.auth, 'POST', rolesUrl(), { name: 'ADMIN' }), 409);
      const name = uniqueName('twin');
      const answers = await Promise.all([call(owner.auth, 'POST', rolesUrl(), { name }), call(owner.auth, 'POST', rolesUrl(), { name })]);
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);
    });

    it('edits a role: the lists replace its rules, the Slipway fields keep their value when left out', async () => {
      const role = (await call(owner.auth, 'POST', rolesUrl(), { ...stagingDeployer(), organization_permission: 'MANAGER' })).json<CustomRoleView>();
      const name = uniqueName('renamed');
      const response = await call(owner.auth, 'PUT', `${rolesUrl()}/${role.id}`, {
        name,
        cluster_permissions: [{ cluster_id: otherClusterId, permission: 'VIEWER' }],
        project_permissions: [{ project_id: otherProjectId, is_admin: true }],
      });
      expect(response.statusCode, response.body).toBe(200);
      const edited = response.json<CustomRoleView>();
      expect(edited).toMatchObject({ name, description: 'Ships to staging', organization_permission: 'MANAGER' });
      expect(edited.project_permissions.find((entry) => entry.project_id === otherProjectId)?.is_admin).toBe(true);
      // No longer listed: the project falls back to the defaults.
      expect(permissionsOf(edited.project_permissions.find((entry) => entry.project_id === projectId)?.permissions ?? [])).toEqual({
        DEVELOPMENT: 'NO_ACCESS',
        PREVIEW: 'NO_ACCESS',
        STAGING: 'NO_ACCESS',
        PRODUCTION: 'NO_ACCESS',
      });
      // A cluster the role does not list follows the organization-level permission: a MANAGER administers it.
      expect(Object.fromEntries(edited.cluster_permissions.map((entry) => [entry.cluster_id, entry.permission]))).toEqual({
        [clusterId]: 'ADMIN',
        [otherClusterId]: 'VIEWER',
      });
      expectErrorBody(await call(owner.auth, 'PUT', `${rolesUrl()}/${role.id}`, { name: 'OWNER', cluster_permissions: [], project_permissions: [] }), 409);
      expectErrorBody(await call(owner.auth, 'PUT', `${rolesUrl()}/${role.id}`, { name }), 400);
      const builtIn = await ctx().database.db.selectFrom('roles').select('id').where('organization_id', '=', organizationId).where('name', '=', 'VIEWER').executeTakeFirstOrThrow();
      expectErrorBody(await call(owner.auth, 'PUT', `${rolesUrl()}/${builtIn.id}`, { name: 'x', cluster_permissions: [], project_permissions: [] }), 404);
      expectErrorBody(await call(owner.auth, 'DELETE', `${rolesUrl()}/${builtIn.id}`), 404);
    });
  });

  describe('enforcement', () => {
    let roleId: string;
    let tokenValue: string;

    beforeAll(async () => {
      roleId = await created(owner.auth, rolesUrl(), stagingDeployer());
      // The member joins the real way: invited with the custom role, accepting as themselves.
      const inviteId = await created(owner.auth, `/organization/${organizationId}/inviteMember`, { email: member.email, role_id: roleId });
      const accepted = await call(member.auth, 'POST', `/organization/${organizationId}/inviteMember/${inviteId}`);
      expect(accepted.statusCode, accepted.body).toBe(201);
      tokenValue = await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('ci'), role_id: roleId });
    });

    it('shows the custom role on the member', async () => {
      const members = (await call(owner.auth, 'GET', `/organization/${organizationId}/member`)).json<{ results: { id: string; role_id: string }[] }>();
      expect(members.results.find((entry) => entry.id === member.id)?.role_id).toBe(roleId);
      // `role` stays in the reference's enum: the built-in role the custom role's organization permission matches.
      expect(members.results.find((entry) => entry.id === member.id)).toMatchObject({ role: 'VIEWER', role_name: expect.stringMatching(/^staging-deployer/) });
    });

    it('lets the member deploy an environment on STAGING and answers 403 on PRODUCTION', async () => {
      const deployed = await call(member.auth, 'POST', `/environment/${stagingId}/deploy`);
      expect(deployed.statusCode, deployed.body).toBe(202);
      const refused = expectErrorBody(await call(member.auth, 'POST', `/environment/${productionId}/deploy`), 403);
      expect(refused.message).toMatch(/deploy/);
      // PRODUCTION is visible, not changeable; STAGING is deployable, not changeable.
      expect((await call(member.auth, 'GET', `/environment/${productionId}`)).statusCode).toBe(200);
      expectErrorBody(await call(member.auth, 'PUT', `/environment/${stagingId}`, { name: uniqueName('renamed') }), 403);
      expectErrorBody(await call(member.auth, 'DELETE', `/environment/${productionId}`), 403);
      const status = await call(owner.auth, 'GET', `/environment/${productionId}/status`);
      expect(status.json<{ state: string }>().state).toBe('READY');
    });

    it('gives the member read on the project and the organization, and nothing on a project the role leaves out', async () => {
      expect((await call(member.auth, 'GET', `/project/${projectId}`)).statusCode).toBe(200);
      expectErrorBody(await call(member.auth, 'PUT', `/project/${projectId}`, { name: uniqueName('renamed') }), 403);
      expectErrorBody(await call(member.auth, 'POST', `/project/${projectId}/environment`, { name: uniqueName('dev'), cluster: clusterId, mode: 'DEVELOPMENT' }), 403);
      expect((await call(member.auth, 'GET', `/organization/${organizationId}`)).statusCode).toBe(200);
      expectErrorBody(await call(member.auth, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('mine') }), 403);
      expectErrorBody(await call(member.auth, 'GET', `/project/${otherProjectId}`), 403);
      expectErrorBody(await call(member.auth, 'GET', `/environment/${otherProjectEnvironmentId}`), 403);
      expectErrorBody(await call(member.auth, 'POST', `/environment/${otherProjectEnvironmentId}/deploy`), 403);
      // Governance never comes with a custom role.
      expectErrorBody(await call(member.auth, 'POST', rolesUrl(), { name: uniqueName('escalate') }), 403);
      expectErrorBody(await call(member.auth, 'GET', `/organization/${organizationId}/apiToken`), 403);
      // Clusters the role does not list are visible (VIEWER), never changed.
      expect((await call(member.auth, 'GET', `/organization/${organizationId}/cluster/${clusterId}/status`)).statusCode).toBe(200);
      expectErrorBody(await call(member.auth, 'POST', `/organization/${organizationId}/cluster/${clusterId}/deploy`), 403);
    });

    it('gives an API token carrying the role the same reach, narrowed further by its scope', async () => {
      const token = `Token ${tokenValue}`;
      expect((await call(token, 'POST', `/environment/${secondStagingId}/deploy`)).statusCode).toBe(202);
      expectErrorBody(await call(token, 'POST', `/environment/${productionId}/deploy`), 403);
      expectErrorBody(await call(token, 'PUT', `/environment/${secondStagingId}`, { name: uniqueName('renamed') }), 403);
      expectErrorBody(await call(token, 'GET', `/environment/${otherProjectEnvironmentId}`), 403);
      const readOnly = `Token ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('ci-read'), role_id: roleId, scope: 'READ' })}`;
      expect((await call(readOnly, 'GET', `/environment/${stagingId}`)).statusCode).toBe(200);
      expectErrorBody(await call(readOnly, 'POST', `/environment/${stagingId}/deploy`), 403);
      // A custom role acts for no one: it cannot create organizations in its creator's name.
      expectErrorBody(await call(token, 'POST', '/organization', { name: uniqueName('org') }), 403);
    });

    it("decides on services by their environment's type: deploy on STAGING, 403 on PRODUCTION", async () => {
      const application = async (environmentId: string) =>
        created(owner.auth, `/environment/${environmentId}/application`, {
          name: uniqueName('web'),
          git_repository: { url: 'https://github.com/slipway-fixture/web.git', provider: 'GITHUB', branch: 'main' },
          healthchecks: {},
        });
      const stagingApp = await application(stagingId);
      const productionApp = await application(productionId);
      expect((await call(member.auth, 'GET', `/application/${productionApp}`)).statusCode).toBe(200);
      expectErrorBody(await call(member.auth, 'POST', `/application/${productionApp}/deploy`, {}), 403);
      expectErrorBody(await call(member.auth, 'PUT', `/application/${stagingApp}`, { name: uniqueName('renamed') }), 403);
      expectErrorBody(await call(member.auth, 'DELETE', `/application/${stagingApp}`), 403);
      const deployed = await call(member.auth, 'POST', `/application/${stagingApp}/deploy`, {});
      expect(deployed.statusCode, deployed.body).toBe(202);
    });

    it('applies an edited role on the next request', async () => {
      const edit = (permission: string) =>
        call(owner.auth, 'PUT', `${rolesUrl()}/${roleId}`, {
          name: uniqueName('staging-deployer'),
          cluster_permissions: [{ cluster_id: clusterId, permission: 'ADMIN' }],
          project_permissions: [{ project_id: projectId, permissions: [{ environment_type: 'PRODUCTION', permission }] }],
        });
      expect((await edit('MANAGER')).statusCode).toBe(200);
      const renamed = await call(member.auth, 'PUT', `/environment/${productionId}`, { name: uniqueName('prod') });
      expect(renamed.statusCode, renamed.body).toBe(200);
      // Creating an environment, by cloning too, is the project admin's: the clone's type is not the source's to decide.
      expectErrorBody(await call(member.auth, 'POST', `/environment/${productionId}/clone`, { name: uniqueName('copy'), mode: 'DEVELOPMENT' }), 403);
      // STAGING is no longer listed: NO_ACCESS.
      expectErrorBody(await call(member.auth, 'GET', `/environment/${stagingId}`), 403);
      const clusterStatus = await call(member.auth, 'GET', `/organization/${organizationId}/cluster/${clusterId}/status`);
      expect(clusterStatus.statusCode, clusterStatus.body).toBe(200);
      expect((await edit('NO_ACCESS')).statusCode).toBe(200);
      expectErrorBody(await call(member.auth, 'GET', `/environment/${productionId}`), 403);
      expectErrorBody(await call(member.auth, 'GET', `/project/${projectId}`), 403);
    });

    it('refuses to delete a role someone holds (409), and deletes it once nobody does', async () => {
      const inUse = expectErrorBody(await call(owner.auth, 'DELETE', `${rolesUrl()}/${roleId}`), 409);
      expect(inUse.message).toMatch(/1 member\(s\), 2 API token\(s\)/);
      const viewer = (await call(owner.auth, 'GET', `/organization/${organizationId}/availableRole`))
        .json<{ results: { id: string; name: string }[] }>()
        .results.find((role) => role.name === 'VIEWER');
      const demoted = await call(owner.auth, 'PUT', `/organization/${organizationId}/member`, { user_id: member.id, role_id: viewer?.id });
      expect(demoted.statusCode, demoted.body).toBe(200);
      const tokens = (await call(owner.auth, 'GET', `/organization/${organizationId}/apiToken`)).json<{ results: { id: string; role_id: string | null }[] }>();
      for (const token of tokens.results.filter((entry) => entry.role_id === roleId)) {
        expect((await call(owner.auth, 'DELETE', `/organization/${organizationId}/apiToken/${token.id}`)).statusCode).toBe(204);
      }
      const deleted = await call(owner.auth, 'DELETE', `${rolesUrl()}/${roleId}`);
      expect(deleted.statusCode, deleted.body).toBe(204);
      expectErrorBody(await call(owner.auth, 'GET', `${rolesUrl()}/${roleId}`), 404);
      const rules = await ctx().database.db.selectFrom('custom_role_projects').select('project_id').where('role_id', '=', roleId).execute();
      expect(rules).toEqual([]);
    });
  });

  describe('secrets:reveal', () => {
    let staging: RevealFixture;
    let production: RevealFixture;
    let password: string;
    let revealer: TestUser;
    let revealerRoleId: string;

    /** MANAGER on STAGING with reveal_secrets, VIEWER on PRODUCTION without, in the one project. */
    const stagingRevealer = () => ({
      name: uniqueName('staging-revealer'),
      project_permissions: [
        {
          project_id: projectId,
          permissions: [
            { environment_type: 'STAGING', permission: 'MANAGER', reveal_secrets: true },
            { environment_type: 'PRODUCTION', permission: 'VIEWER' },
          ],
        },
      ],
    });

    beforeAll(async () => {
      staging = await createRevealFixture(ctx(), owner.auth, projectId, { mode: 'STAGING', clusterId });
      production = await createRevealFixture(ctx(), owner.auth, projectId, { mode: 'PRODUCTION', clusterId });
      password = expectRevealed(await call(owner.auth, 'GET', `/environment/${staging.environmentId}/resolvedVariables?reveal=true`), staging);
      const created = await call(owner.auth, 'POST', rolesUrl(), stagingRevealer());
      expect(created.statusCode, created.body).toBe(201);
      const role = created.json<CustomRoleView>();
      revealerRoleId = role.id;
      revealer = await ctx().signUp(uniqueName('revealer'));
      const now = new Date().toISOString();
      await ctx().database.db.insertInto('members').values({ organization_id: organizationId, user_id: revealer.id, role_id: role.id, created_at: now, updated_at: now }).execute();
    });

    it('answers reveal_secrets on every entry: true where granted, false elsewhere and by default', async () => {
      const role = (await call(owner.auth, 'GET', `${rolesUrl()}/${revealerRoleId}`)).json<CustomRoleView>();
      const listed = role.project_permissions.find((entry) => entry.project_id === projectId)?.permissions ?? [];
      expect(revealsOf(listed)).toEqual(['STAGING']);
      expect(listed.every((entry) => typeof entry.reveal_secrets === 'boolean')).toBe(true);
      expect(role.default_project_permissions.every((entry) => entry.reveal_secrets === false)).toBe(true);
      expect(role.project_permissions.find((entry) => entry.project_id === otherProjectId)?.permissions.every((entry) => entry.reveal_secrets === false)).toBe(true);
    });

    it('lets a member holding the role reveal on STAGING, and gives 403 naming secrets:reveal and the masked answer on PRODUCTION', async () => {
      for (const url of revealingUrls(staging)) {
        expect(expectRevealed(await call(revealer.auth, 'GET', `${url}?reveal=true`), staging)).toBe(password);
      }
      for (const url of revealingUrls(production)) {
        expectRevealRefused(await call(revealer.auth, 'GET', `${url}?reveal=true`));
        expectMasked(await call(revealer.auth, 'GET', url), production);
      }
      // MANAGER never implies it, nor does project admin: only the flag does.
      const manager = await created(owner.auth, rolesUrl(), {
        name: uniqueName('project-admin'),
        project_permissions: [{ project_id: projectId, is_admin: true, permissions: [{ environment_type: 'STAGING', permission: 'MANAGER' }] }],
      });
      const managerMember = await ctx().signUp(uniqueName('manager'));
      await ctx().database.db
        .insertInto('members')
        .values({ organization_id: organizationId, user_id: managerMember.id, role_id: manager, created_at: new Date().toISOString(), updated_at: new Date().toISOString() })
        .execute();
      expectRevealRefused(await call(managerMember.auth, 'GET', `/environment/${staging.environmentId}/resolvedVariables?reveal=true`), password);
      expectMasked(await call(managerMember.auth, 'GET', `/environment/${staging.environmentId}/resolvedVariables`), staging, password);
    });

    it('reveals through defaults for projects the role does not list', async () => {
      const roleId = await created(owner.auth, rolesUrl(), {
        name: uniqueName('default-revealer'),
        default_project_permissions: [
          { environment_type: 'STAGING', permission: 'VIEWER' },
          { environment_type: 'PRODUCTION', permission: 'VIEWER', reveal_secrets: true },
        ],
      });
      const holder = await ctx().signUp(uniqueName('default-revealer'));
      const now = new Date().toISOString();
      await ctx().database.db.insertInto('members').values({ organization_id: organizationId, user_id: holder.id, role_id: roleId, created_at: now, updated_at: now }).execute();
      expectRevealed(await call(holder.auth, 'GET', `/application/${production.applicationId}/resolvedVariables?reveal=true`), production);
      expectRevealRefused(await call(holder.auth, 'GET', `/environment/${staging.environmentId}/resolvedVariables?reveal=true`), password);
      expectMasked(await call(holder.auth, 'GET', `/environment/${staging.environmentId}/resolvedVariables`), staging, password);
    });

    it('gives a token carrying the role reveal only within its scope: none or ADMIN reveals, READ and WRITE do not', async () => {
      const token = async (scope?: string) =>
        `Token ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('revealer-token'), role_id: revealerRoleId, ...(scope === undefined ? {} : { scope }) })}`;
      const url = `/application/${staging.applicationId}/resolvedVariables`;
      expect(expectRevealed(await call(await token(), 'GET', `${url}?reveal=true`), staging)).toBe(password);
      expect(expectRevealed(await call(await token('ADMIN'), 'GET', `${url}?reveal=true`), staging)).toBe(password);
      for (const scope of ['READ', 'WRITE']) {
        const auth = await token(scope);
        expectRevealRefused(await call(auth, 'GET', `${url}?reveal=true`), password);
        expectMasked(await call(auth, 'GET', url), staging, password);
      }
    });

    it('drops a project reveal_secrets that an edit in the reference shape leaves out, keeps the defaults', async () => {
      const roleId = await created(owner.auth, rolesUrl(), {
        name: uniqueName('edited-revealer'),
        default_project_permissions: [{ environment_type: 'DEVELOPMENT', permission: 'VIEWER', reveal_secrets: true }],
        project_permissions: [{ project_id: projectId, permissions: [{ environment_type: 'STAGING', permission: 'VIEWER', reveal_secrets: true }] }],
      });
      const edited = await call(owner.auth, 'PUT', `${rolesUrl()}/${roleId}`, {
        name: uniqueName('edited-revealer'),
        cluster_permissions: [],
        project_permissions: [{ project_id: projectId, permissions: [{ environment_type: 'STAGING', permission: 'VIEWER' }] }],
      });
      expect(edited.statusCode, edited.body).toBe(200);
      const role = edited.json<CustomRoleView>();
      expect(revealsOf(role.project_permissions.find((entry) => entry.project_id === projectId)?.permissions ?? [])).toEqual([]);
      expect(revealsOf(role.default_project_permissions)).toEqual(['DEVELOPMENT']);
      const rows = await ctx().database.db.selectFrom('custom_role_projects').selectAll().where('role_id', '=', roleId).execute();
      expect(rows.map((row) => row.staging_reveal)).toEqual([0]);
    });
  });
});
