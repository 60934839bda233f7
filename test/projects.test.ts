import type { InjectOptions } from 'fastify';
import { expect, it } from 'vitest';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';
import { expectErrorBody } from './support/error-body.ts';

/**
 * Projects: createProject / listProject / getOrganizationProjectStats under the organization, and the single
 * project operations under /project/{projectId}, on each database.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A uuid no row will ever have. */
const UNKNOWN_ID = '0190f0b2-6c5e-7000-8000-000000000000';

interface ProjectView {
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  description?: string;
  organization: { id: string };
  associated_environments_count: number;
}

describeEachDatabase('projects', (ctx) => {

  function createProject(auth: string, organizationId: string, payload: InjectOptions['payload']) {
    return ctx().call(auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload });
  }

  async function createdProject(auth: string, organizationId: string, name: string, description?: string): Promise<ProjectView> {
    const response = await createProject(auth, organizationId, description === undefined ? { name } : { name, description });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ProjectView>();
  }

  function projectRows(organizationId: string) {
    return ctx().database.db.selectFrom('projects').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute();
  }

  it('createProject answers 200 (not 201) with the reference shape, and stores the row', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const response = await createProject(owner.auth, organizationId, { name: '  Web Shop ', description: 'the storefront' });
    expect(response.statusCode, response.body).toBe(200);
    const project = response.json<ProjectView>();
    expect(project).toEqual({
      id: expect.stringMatching(UUID),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
      name: 'Web Shop',
      description: 'the storefront',
      organization: { id: organizationId },
      associated_environments_count: 0,
    });
    const rows = await projectRows(organizationId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: project.id, name: 'Web Shop', description: 'the storefront' });

    const withoutDescription = await createdProject(owner.auth, organizationId, 'api');
    expect(withoutDescription).not.toHaveProperty('description');
    const nullDescription = await createProject(owner.auth, organizationId, { name: 'worker', description: null });
    expect(nullDescription.statusCode, nullDescription.body).toBe(200);
    expect(nullDescription.json<ProjectView>()).not.toHaveProperty('description');
  });

  it('accepts a name of exactly 255 characters', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const name = 'p'.repeat(255);
    expect((await createdProject(owner.auth, organizationId, name)).name).toBe(name);
  });

  it('accepts any printable Unicode name and multi-line descriptions', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, '\u00a0Café 🚀 — 東京', 'line one\nline two\ttabbed');
    expect(project.name).toBe('Café 🚀 — 東京');
    expect(project.description).toBe('line one\nline two\ttabbed');
  });

  it('answers 409 for a name taken in the organization, whatever its case, and allows it in another organization', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    await createdProject(owner.auth, organizationId, 'Web Shop');
    for (const name of ['Web Shop', 'web shop', 'WEB SHOP', '  wEb ShOp  ']) {
      expectErrorBody(await createProject(owner.auth, organizationId, { name }), 409);
    }
    expect(await projectRows(organizationId)).toHaveLength(1);

    const otherOrganizationId = await ctx().createOrganization(owner);
    const elsewhere = await createdProject(owner.auth, otherOrganizationId, 'web shop');
    expect(elsewhere.organization.id).toBe(otherOrganizationId);
  });

  it('lets exactly one of many concurrent creates of one name succeed', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) => createProject(owner.auth, organizationId, { name: index % 2 === 0 ? 'Race' : 'race' })),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409)) expectErrorBody(response, 409);
    expect(await projectRows(organizationId)).toHaveLength(1);
  });

  it('listProject answers the organization’s projects sorted by name, and only those', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const otherOrganizationId = await ctx().createOrganization(owner);
    await createdProject(owner.auth, otherOrganizationId, 'aardvark');
    for (const name of ['gamma', 'Beta', 'alpha', 'Delta']) await createdProject(owner.auth, organizationId, name);

    const response = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/project` });
    expect(response.statusCode).toBe(200);
    const { results } = response.json<{ results: ProjectView[] }>();
    expect(results.map((project) => project.name)).toEqual(['alpha', 'Beta', 'Delta', 'gamma']);
    for (const project of results) {
      expect(project.organization).toEqual({ id: organizationId });
      expect(project.associated_environments_count).toBe(0);
    }

    const emptyOrganizationId = await ctx().createOrganization(owner);
    const empty = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${emptyOrganizationId}/project` });
    expect(empty.json()).toEqual({ results: [] });
  });

  it('getOrganizationProjectStats answers the totals of every project of the organization', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const first = await createdProject(owner.auth, organizationId, 'one');
    const second = await createdProject(owner.auth, organizationId, 'two');
    const response = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/project/stats` });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json<{ results: unknown[] }>();
    expect(results).toHaveLength(2);
    expect(results).toEqual(
      expect.arrayContaining([
        { id: first.id, service_total_number: 0, environment_total_number: 0 },
        { id: second.id, service_total_number: 0, environment_total_number: 0 },
      ]),
    );
  });

  it('getProject answers what createProject answered', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const created = await createdProject(owner.auth, organizationId, 'shown', 'described');
    const response = await ctx().call(owner.auth, { method: 'GET', url: `/project/${created.id}` });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(created);
  });

  it('editProject replaces name and description, moves updated_at, and keeps created_at', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const created = await createdProject(owner.auth, organizationId, 'before', 'old text');
    ctx().clock.advance(1_000);
    const response = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${created.id}`, payload: { name: 'after', description: 'new text' } });
    expect(response.statusCode, response.body).toBe(200);
    const edited = response.json<ProjectView>();
    expect(edited).toEqual({ ...created, name: 'after', description: 'new text', updated_at: expect.stringMatching(ISO_TIMESTAMP) });
    expect(edited.updated_at > created.updated_at).toBe(true);

    // ProjectRequest is a whole replacement: leaving description out clears it.
    const cleared = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${created.id}`, payload: { name: 'after' } });
    expect(cleared.json<ProjectView>()).not.toHaveProperty('description');

    // Renaming a project to its own name in another case is not a conflict with itself.
    const recased = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${created.id}`, payload: { name: 'AFTER' } });
    expect(recased.statusCode, recased.body).toBe(200);
    expect(recased.json<ProjectView>().name).toBe('AFTER');

    const fetched = await ctx().call(owner.auth, { method: 'GET', url: `/project/${created.id}` });
    expect(fetched.json()).toEqual(recased.json());
  });

  it('editProject answers 409 for a name another project of the organization holds, and changes nothing', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    await createdProject(owner.auth, organizationId, 'taken');
    const project = await createdProject(owner.auth, organizationId, 'mine', 'kept');
    const response = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${project.id}`, payload: { name: 'Taken', description: 'lost' } });
    expectErrorBody(response, 409);
    const fetched = await ctx().call(owner.auth, { method: 'GET', url: `/project/${project.id}` });
    expect(fetched.json()).toEqual(project);

    // A name held in another organization is free here.
    const otherOrganizationId = await ctx().createOrganization(owner);
    await createdProject(owner.auth, otherOrganizationId, 'elsewhere');
    const renamed = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${project.id}`, payload: { name: 'elsewhere' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
  });

  it('deleteProject answers 204 with no body; the project is gone and its name free again', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, 'doomed');
    const response = await ctx().call(owner.auth, { method: 'DELETE', url: `/project/${project.id}` });
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/project/${project.id}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/project/${project.id}` }), 404);
    expect(await projectRows(organizationId)).toHaveLength(0);
    await createdProject(owner.auth, organizationId, 'doomed');
  });

  it('answers 404 for an unknown project id and 400 for an id that is not a uuid', async () => {
    const { owner } = await ctx().signUpWithOrganization();
    const payload = { name: 'x' };
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/project/${UNKNOWN_ID}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: `/project/${UNKNOWN_ID}`, payload }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/project/${UNKNOWN_ID}` }), 404);
    for (const id of ['not-a-uuid', '1234', `${UNKNOWN_ID}0`, "x'%20or%201=1"]) {
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/project/${id}` }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: `/project/${id}`, payload }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/project/${id}` }), 400);
    }
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: '/organization/not-a-uuid/project' }), 400);
  });

  it('refuses the upper-case spelling of an existing id as invalid rather than answering for no row', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, 'shouting');
    const upper = project.id.toUpperCase();
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/project/${upper}` }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId.toUpperCase()}/project` }), 400);
    expect((await ctx().call(owner.auth, { method: 'GET', url: `/project/${project.id}` })).statusCode).toBe(200);
  });

  it('answers 404 for the projects of an organization the caller is not in, and changes nothing there', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, 'private', 'secret');
    const outsider = await ctx().signUp();
    await ctx().createOrganization(outsider);

    expectErrorBody(await ctx().call(outsider.auth, { method: 'GET', url: `/project/${project.id}` }), 404);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'PUT', url: `/project/${project.id}`, payload: { name: 'mine now' } }), 404);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'DELETE', url: `/project/${project.id}` }), 404);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'GET', url: `/organization/${organizationId}/project` }), 404);
    expectErrorBody(await ctx().call(outsider.auth, { method: 'GET', url: `/organization/${organizationId}/project/stats` }), 404);
    expectErrorBody(await createProject(outsider.auth, organizationId, { name: 'planted' }), 404);
    // An outsider learns nothing from a malformed body either: still 404, not 400.
    expectErrorBody(await createProject(outsider.auth, organizationId, { nope: true }), 404);

    const rows = await projectRows(organizationId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: project.id, name: 'private', description: 'secret' });
  });

  it('answers 401 without a valid token', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, 'guarded');
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url: `/organization/${organizationId}/project` }), 401);
    expectErrorBody(await createProject('Bearer nonsense', organizationId, { name: 'x' }), 401);
    expectErrorBody(await ctx().call(undefined, { method: 'DELETE', url: `/project/${project.id}` }), 401);
    expect(await projectRows(organizationId)).toHaveLength(1);
  });

  const badBodies: { title: string; options: Partial<InjectOptions> }[] = [
    { title: 'an unknown field', options: { payload: { name: 'ok', colour: 'blue' } } },
    { title: 'no name', options: { payload: { description: 'nameless' } } },
    { title: 'an empty name', options: { payload: { name: '' } } },
    { title: 'a blank name', options: { payload: { name: '   \t ' } } },
    { title: 'a 256-character name', options: { payload: { name: 'n'.repeat(256) } } },
    { title: 'a name with a NUL character', options: { payload: { name: 'nul\u0000name' } } },
    { title: 'a name with a tab', options: { payload: { name: 'tab\tname' } } },
    { title: 'a name with a line break', options: { payload: { name: 'two\nlines' } } },
    { title: 'a description with a NUL character', options: { payload: { name: 'ok', description: 'a\u0000b' } } },
    { title: 'a numeric name', options: { payload: { name: 123 } } },
    { title: 'a null name', options: { payload: { name: null } } },
    { title: 'an object name', options: { payload: { name: { first: 'a' } } } },
    { title: 'a numeric description', options: { payload: { name: 'ok', description: 5 } } },
    { title: 'a 2001-character description', options: { payload: { name: 'ok', description: 'd'.repeat(2001) } } },
    { title: 'an array body', options: { payload: [{ name: 'ok' }] } },
    { title: 'a JSON null body', options: { payload: 'null', headers: { 'content-type': 'application/json' } } },
    { title: 'malformed JSON', options: { payload: '{"name": "ok"', headers: { 'content-type': 'application/json' } } },
    { title: 'an empty JSON body', options: { payload: '', headers: { 'content-type': 'application/json' } } },
    { title: 'no body at all', options: {} },
  ];

  for (const { title, options } of badBodies) {
    it(`answers 400 and writes nothing for ${title}`, async () => {
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const project = await createdProject(owner.auth, organizationId, 'existing', 'unchanged');

      const created = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, ...options });
      expectErrorBody(created, 400);
      const edited = await ctx().call(owner.auth, { method: 'PUT', url: `/project/${project.id}`, ...options });
      expectErrorBody(edited, 400);

      const rows = await projectRows(organizationId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ id: project.id, name: 'existing', description: 'unchanged', updated_at: project.updated_at });
    });
  }

  it('names the offending field of a bad body', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const response = await createProject(owner.auth, organizationId, { name: 'ok', colour: 'blue' });
    expectErrorBody(response, 400);
    expect(response.json<{ details?: { field: string }[] }>().details).toEqual(expect.arrayContaining([expect.objectContaining({ field: '/colour' })]));
  });

  it('lets a VIEWER member read projects but not create, edit or delete them (403)', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, 'watched', 'as is');
    const viewer = await ctx().signUp(uniqueName('viewer'));
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');

    const list = await ctx().call(viewer.auth, { method: 'GET', url: `/organization/${organizationId}/project` });
    expect(list.statusCode).toBe(200);
    expect(list.json<{ results: ProjectView[] }>().results.map((p) => p.id)).toEqual([project.id]);
    expect((await ctx().call(viewer.auth, { method: 'GET', url: `/project/${project.id}` })).statusCode).toBe(200);
    expect((await ctx().call(viewer.auth, { method: 'GET', url: `/organization/${organizationId}/project/stats` })).statusCode).toBe(200);

    expectErrorBody(await createProject(viewer.auth, organizationId, { name: 'not allowed' }), 403);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'PUT', url: `/project/${project.id}`, payload: { name: 'renamed' } }), 403);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'DELETE', url: `/project/${project.id}` }), 403);

    const rows = await projectRows(organizationId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: project.id, name: 'watched', description: 'as is' });
  });

  it('lets a DEVELOPER member create, edit and delete projects', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const developer = await ctx().signUp(uniqueName('developer'));
    await ctx().addMemberDirectly(organizationId, developer, 'DEVELOPER');
    const project = await createdProject(developer.auth, organizationId, 'built by a developer');
    const edited = await ctx().call(developer.auth, { method: 'PUT', url: `/project/${project.id}`, payload: { name: 'edited' } });
    expect(edited.statusCode, edited.body).toBe(200);
    expect((await ctx().call(developer.auth, { method: 'DELETE', url: `/project/${project.id}` })).statusCode).toBe(204);
    expect(await projectRows(organizationId)).toHaveLength(0);
    // The owner still sees an empty list: the developer's work happened in the owner's organization.
    const list = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/project` });
    expect(list.json()).toEqual({ results: [] });
  });

  it('removes the projects of a deleted organization', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createdProject(owner.auth, organizationId, 'orphan');
    const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await projectRows(organizationId)).toHaveLength(0);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/project/${project.id}` }), 404);
  });
});
