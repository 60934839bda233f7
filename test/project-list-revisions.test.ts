import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { readListRevision } from '../src/db/db.list-revisions.ts';
import { newId } from '../src/lib/ids.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The project list is answered from its last serialization while its revision is unchanged (src/http/list-answers.ts,
 * migrations/0060_list_revisions.ts). Every way a row it shows can change must move that revision, whoever writes:
 * the API of this replica, the API of another replica on the same database (a second app here, with its own kept
 * answers), the operator's own SQL. Each case first lists (so the answer is kept), writes, and lists again. The lists
 * are made larger than the smallest answer kept, so the kept answer is really what is compared.
 */

interface ProjectView {
  id: string;
  name: string;
  description?: string;
  associated_environments_count: number;
}

/** Enough projects that their list (about 230 bytes a project) is kept (SMALLEST_KEPT_BYTES: 8 KiB). */
const PROJECTS = 60;

describeEachDatabase('project list answered from its revision', (ctx) => {
  async function organizationWithProjects(): Promise<{ owner: TestUser; organizationId: string; projectIds: string[] }> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const projectIds: string[] = [];
    for (let index = 0; index < PROJECTS; index += 1) {
      const response = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/project`,
        payload: { name: `project-${String(index).padStart(3, '0')}`, description: 'a project whose description makes its row longer' },
      });
      expect(response.statusCode, response.body).toBe(200);
      projectIds.push(response.json<{ id: string }>().id);
    }
    return { owner, organizationId, projectIds };
  }

  async function listed(auth: string, organizationId: string, app = ctx().app): Promise<ProjectView[]> {
    const response = await app.inject({ method: 'GET', url: `/organization/${organizationId}/project`, headers: { authorization: auth } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    return response.json<{ results: ProjectView[] }>().results;
  }

  function revision(organizationId: string): Promise<string> {
    return readListRevision(ctx().database.db, organizationId, 'projects');
  }

  async function createdCluster(auth: string, organizationId: string): Promise<string> {
    const response = await ctx().call(auth, {
      method: 'POST',
      url: `/organization/${organizationId}/cluster`,
      payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  }

  it('shows every write through the API at once: a new project, a rename, a deletion, a new environment', async () => {
    const { owner, organizationId, projectIds } = await organizationWithProjects();
    const first = await listed(owner.auth, organizationId);
    expect(first).toHaveLength(PROJECTS);
    // The same answer twice (the second from the kept bytes), with nothing written in between.
    expect(await listed(owner.auth, organizationId)).toEqual(first);

    const created = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'zz-late' } });
    expect(created.statusCode, created.body).toBe(200);
    expect((await listed(owner.auth, organizationId)).map((project) => project.name)).toContain('zz-late');

    const renamedId = projectIds[3] as string;
    const renamed = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${renamedId}`, payload: { name: 'renamed-project' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const afterRename = await listed(owner.auth, organizationId);
    expect(afterRename.find((project) => project.id === renamedId)).toMatchObject({ name: 'renamed-project' });
    // The rename was a whole replacement: the description it did not send is gone from the list too.
    expect(afterRename.find((project) => project.id === renamedId)).not.toHaveProperty('description');

    const deletedId = projectIds[5] as string;
    const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/project/${deletedId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect((await listed(owner.auth, organizationId)).map((project) => project.id)).not.toContain(deletedId);

    const clusterId = await createdCluster(owner.auth, organizationId);
    const withEnvironmentId = projectIds[7] as string;
    const environment = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/project/${withEnvironmentId}/environment`,
      payload: { name: 'staging', mode: 'STAGING', cluster: clusterId },
    });
    expect(environment.statusCode, environment.body).toBe(201);
    expect((await listed(owner.auth, organizationId)).find((project) => project.id === withEnvironmentId)).toMatchObject({ associated_environments_count: 1 });
  });

  it("shows writes made in the database by anything else: a project's row, an environment added, moved and removed", async () => {
    const { owner, organizationId, projectIds } = await organizationWithProjects();
    const { db } = ctx().database;
    await listed(owner.auth, organizationId);
    const before = await revision(organizationId);

    const editedId = projectIds[0] as string;
    await db.updateTable('projects').set({ description: 'changed by an operator' }).where('id', '=', editedId).execute();
    expect((await listed(owner.auth, organizationId)).find((project) => project.id === editedId)).toMatchObject({ description: 'changed by an operator' });

    const clusterId = await createdCluster(owner.auth, organizationId);
    const environment = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/project/${projectIds[1] as string}/environment`,
      payload: { name: 'production', mode: 'PRODUCTION', cluster: clusterId },
    });
    expect(environment.statusCode, environment.body).toBe(201);
    const environmentId = environment.json<{ id: string }>().id;
    const countOf = async (projectId: string) => (await listed(owner.auth, organizationId)).find((project) => project.id === projectId)?.associated_environments_count;
    expect(await countOf(projectIds[1] as string)).toBe(1);

    await db.updateTable('environments').set({ project_id: projectIds[2] as string }).where('id', '=', environmentId).execute();
    expect(await countOf(projectIds[1] as string)).toBe(0);
    expect(await countOf(projectIds[2] as string)).toBe(1);

    // A change the list does not show leaves the revision (and the kept answer) as it was.
    const beforeStatus = await revision(organizationId);
    await db.updateTable('environments').set({ updated_at: new Date().toISOString() }).where('id', '=', environmentId).execute();
    expect(await revision(organizationId)).toBe(beforeStatus);

    await db.deleteFrom('environments').where('id', '=', environmentId).execute();
    expect(await countOf(projectIds[2] as string)).toBe(0);

    const insertedId = newId();
    const now = new Date().toISOString();
    await db
      .insertInto('projects')
      .values({ id: insertedId, organization_id: organizationId, name: 'aaa-inserted', name_key: 'aaa-inserted', description: null, created_at: now, updated_at: now })
      .execute();
    expect((await listed(owner.auth, organizationId))[0]).toMatchObject({ id: insertedId, name: 'aaa-inserted' });
    expect(Number(await revision(organizationId))).toBeGreaterThan(Number(before));
  });

  it('moves the revision with the commit: a write rolled back leaves it and the list as they were', async () => {
    const { owner, organizationId } = await organizationWithProjects();
    const { db } = ctx().database;
    const answer = await listed(owner.auth, organizationId);
    const before = await revision(organizationId);
    const now = new Date().toISOString();
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('projects')
          .values({ id: newId(), organization_id: organizationId, name: 'never-committed', name_key: 'never-committed', description: null, created_at: now, updated_at: now })
          .execute();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await revision(organizationId)).toBe(before);
    expect(await listed(owner.auth, organizationId)).toEqual(answer);
  });

  it('counts each organization on its own: a write in one leaves the other\'s revision alone', async () => {
    const one = await ctx().signUpWithOrganization();
    const other = await ctx().signUpWithOrganization();
    const create = (auth: string, organizationId: string) =>
      ctx().call(auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
    expect((await create(other.owner.auth, other.organizationId)).statusCode).toBe(200);
    const otherRevision = await revision(other.organizationId);
    expect((await create(one.owner.auth, one.organizationId)).statusCode).toBe(200);
    expect((await create(one.owner.auth, one.organizationId)).statusCode).toBe(200);
    expect(await revision(other.organizationId)).toBe(otherRevision);
    expect(await revision(one.organizationId)).not.toBe('0');
  });

  it('a second replica on the same database answers with what the first one wrote, and the first with what the second wrote', async () => {
    const { owner, organizationId } = await organizationWithProjects();
    const second = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent' },
      database: ctx().database,
      clock: ctx().clock,
      jobs: { pollIntervalMs: 50, retryBaseMs: 50, run: false },
    });
    try {
      // Both keep the answer first.
      expect(await listed(owner.auth, organizationId, second)).toEqual(await listed(owner.auth, organizationId));

      const throughFirst = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'from-the-first' } });
      expect(throughFirst.statusCode, throughFirst.body).toBe(200);
      expect((await listed(owner.auth, organizationId, second)).map((project) => project.name)).toContain('from-the-first');

      const throughSecond = await second.inject({
        method: 'POST',
        url: `/organization/${organizationId}/project`,
        headers: { authorization: owner.auth },
        payload: { name: 'from-the-second' },
      });
      expect(throughSecond.statusCode, throughSecond.body).toBe(200);
      expect((await listed(owner.auth, organizationId)).map((project) => project.name)).toContain('from-the-second');
    } finally {
      await second.close();
    }
  });

  it("keeps no counter for an organization once it is deleted, and a member of another organization never sees the kept answer", async () => {
    const { owner, organizationId } = await organizationWithProjects();
    await listed(owner.auth, organizationId);
    const stranger = await ctx().signUpWithOrganization();
    const refused = await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${organizationId}/project` });
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain('project-000');

    const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    await ctx().organizationPurged(organizationId);
    const { rows } = await sql<{ count: number | string }>`select count(*) as count from list_revisions where scope_id = ${organizationId}`.execute(ctx().database.db);
    expect(Number(rows[0]?.count)).toBe(0);
  });
});
