import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.ts';
import { AppError } from '../src/lib/errors.ts';
import { createAnnotationsGroupsService } from '../src/modules/annotations-groups/annotations-groups.service.ts';
import { createLabelsGroupsService, labelValueProblem, qualifiedNameProblem, type GroupUsage } from '../src/modules/labels-groups/labels-groups.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * Labels groups and annotations groups: CRUD, Kubernetes validation of keys and values, 409 on taken names (also
 * concurrently), 409 when deleting a group still attached, and the lookup other modules resolve group ids with.
 */

describe('Kubernetes metadata rules', () => {
  it('accepts qualified names with an optional DNS-subdomain prefix', () => {
    for (const key of ['app', 'app.kubernetes.io/name', 'example.com/team_name', 'a', 'A-b.c_d', `${'a'.repeat(63)}`, `${'p'.repeat(63)}.${'q'.repeat(63)}/n`]) {
      expect(qualifiedNameProblem(key), key).toBeUndefined();
    }
  });

  it('refuses malformed keys, saying which part is wrong', () => {
    expect(qualifiedNameProblem('a/b/c')).toMatch(/at most one/);
    expect(qualifiedNameProblem('/name')).toMatch(/prefix .* empty/);
    expect(qualifiedNameProblem('Example.com/name')).toMatch(/DNS subdomain/);
    expect(qualifiedNameProblem('-bad.com/name')).toMatch(/DNS subdomain/);
    expect(qualifiedNameProblem(`${'a'.repeat(250)}.com/name`)).toMatch(/at most 253/);
    expect(qualifiedNameProblem('example.com/')).toMatch(/name must not be empty/);
    expect(qualifiedNameProblem('a'.repeat(64))).toMatch(/at most 63/);
    expect(qualifiedNameProblem('-name')).toMatch(/starting and ending alphanumeric/);
    expect(qualifiedNameProblem('name.')).toMatch(/starting and ending alphanumeric/);
  });

  it('checks label values: empty or ≤ 63 of [A-Za-z0-9._-], alphanumeric at both ends', () => {
    for (const value of ['', 'v1', 'prod_eu-west.1', 'x'.repeat(63)]) expect(labelValueProblem(value), value).toBeUndefined();
    for (const value of ['x'.repeat(64), '-v', 'v-', 'has space', 'ünïcode']) expect(labelValueProblem(value), value).toBeDefined();
  });
});

describeEachDatabase('labels groups', (ctx) => {
  it('creates, lists, reads, edits and deletes a labels group', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/labelsGroups`;
    const name = uniqueName('team');
    const created = await ctx().call(owner.auth, {
      method: 'POST',
      url: base,
      payload: { name, labels: [{ key: 'app.kubernetes.io/team', value: 'payments', propagate_to_cloud_provider: true }, { key: 'tier', value: '' }] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const group = created.json<{ id: string; created_at: string }>();
    expect(group).toMatchObject({
      name,
      labels: [
        { key: 'app.kubernetes.io/team', value: 'payments', propagate_to_cloud_provider: true },
        { key: 'tier', value: '', propagate_to_cloud_provider: false },
      ],
    });
    const listed = await ctx().call(owner.auth, { method: 'GET', url: base });
    expect(listed.json()).toEqual({ results: [group] });
    expect((await ctx().call(owner.auth, { method: 'GET', url: `${base}/${group.id}` })).json()).toEqual(group);

    const edited = await ctx().call(owner.auth, { method: 'PUT', url: `${base}/${group.id}`, payload: { name: 'renamed', labels: [{ key: 'env', value: 'prod' }] } });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({ id: group.id, name: 'renamed', labels: [{ key: 'env', value: 'prod', propagate_to_cloud_provider: false }] });
    expect((await ctx().call(owner.auth, { method: 'GET', url: `${base}/${group.id}/associatedItems` })).json()).toEqual({ results: [] });

    expect((await ctx().call(owner.auth, { method: 'DELETE', url: `${base}/${group.id}` })).statusCode).toBe(204);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}/${group.id}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `${base}/${group.id}` }), 404);
  });

  it('refuses keys and values Kubernetes would refuse, naming each, and writes nothing', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/labelsGroups`;
    const refused = expectErrorBody(
      await ctx().call(owner.auth, {
        method: 'POST',
        url: base,
        payload: { name: uniqueName('bad'), labels: [{ key: 'Bad.Prefix/x', value: 'ok' }, { key: 'ok', value: '-bad' }, { key: 'ok', value: 'twice' }, { key: 'a/b/c', value: '' }] },
      }),
      400,
    );
    expect(refused.details?.map((detail) => detail.field)).toEqual(['/labels/0/key', '/labels/2/key', '/labels/3/key', '/labels/1/value']);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('bad'), labels: [{ key: 'k', value: 'x'.repeat(64) }] } }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('bad'), labels: [{ key: 'has space', value: 'v' }] } }), 400);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('bad') } }), 400);
    expect((await ctx().call(owner.auth, { method: 'GET', url: base })).json()).toEqual({ results: [] });
  });

  it('keeps names unique per organization (case-insensitively, concurrently) but not across organizations', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/labelsGroups`;
    const name = uniqueName('Shared');
    expect((await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name, labels: [] } })).statusCode).toBe(201);
    expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: name.toUpperCase(), labels: [] } }), 409);
    const raced = uniqueName('raced');
    const answers = await Promise.all([0, 1, 2].map(() => ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: raced, labels: [] } })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
    const other = await ctx().createOrganization(owner);
    expect((await ctx().call(owner.auth, { method: 'POST', url: `/organization/${other}/labelsGroups`, payload: { name, labels: [] } })).statusCode).toBe(201);
  });

  it('resolves group ids for other modules, refuses unknown or foreign ids, and will not delete an attached group', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/labelsGroups`;
    const first = (await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('a'), labels: [{ key: 'team', value: 'a' }, { key: 'env', value: 'dev' }] } })).json<{ id: string }>();
    const second = (await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('b'), labels: [{ key: 'env', value: 'prod' }] } })).json<{ id: string }>();
    const foreignOrganization = await ctx().createOrganization(owner);
    const foreign = (await ctx().call(owner.auth, { method: 'POST', url: `/organization/${foreignOrganization}/labelsGroups`, payload: { name: uniqueName('f'), labels: [] } })).json<{ id: string }>();

    // A cluster attached to the second group, as the clusters module would report it through the port.
    const usage: GroupUsage = {
      itemsUsing: async (organization, groupId) => (organization === organizationId && groupId === second.id ? [{ item_id: first.id, item_name: 'eu-cluster', item_type: 'CLUSTER' }] : []),
    };
    const service = createLabelsGroupsService({ db: ctx().database.db, clock: systemClock, usage });
    expect(await service.labelsOf(organizationId, [first.id, second.id])).toEqual([
      { key: 'team', value: 'a', propagate_to_cloud_provider: false },
      { key: 'env', value: 'prod', propagate_to_cloud_provider: false },
    ]);
    const unknown = await service.resolveLabelsGroups(organizationId, [first.id, foreign.id]).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(AppError);
    expect((unknown as AppError).kind).toBe('bad_request');
    expect((unknown as AppError).details).toEqual([{ field: '/labels_groups/1/id', message: 'unknown labels group' }]);

    const attached = await service.deleteOrganizationLabelsGroup(organizationId, second.id).catch((error: unknown) => error);
    expect((attached as AppError).kind).toBe('conflict');
    expect((attached as AppError).message).toMatch(/CLUSTER "eu-cluster"/);
    expect(await service.associatedItems(organizationId, second.id)).toHaveLength(1);
    expect((await ctx().call(owner.auth, { method: 'GET', url: `${base}/${second.id}` })).statusCode).toBe(200);
  });

  it('lets members read groups and only writers change them', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    const base = `/organization/${organizationId}/labelsGroups`;
    expect((await ctx().call(viewer.auth, { method: 'GET', url: base })).statusCode).toBe(200);
    expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: base, payload: { name: uniqueName('v'), labels: [] } }), 403);
    expect((await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('o'), labels: [] } })).statusCode).toBe(201);
  });
});

describeEachDatabase('annotations groups', (ctx) => {
  it('creates, reads, edits and deletes an annotations group with its scopes', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/annotationsGroups`;
    const name = uniqueName('ingress');
    const value = 'nginx.ingress.kubernetes.io/rewrite-target: /$2\nmulti-line: "free text, any characters: ✓"';
    const created = await ctx().call(owner.auth, {
      method: 'POST',
      url: base,
      payload: { name, annotations: [{ key: 'nginx.ingress.kubernetes.io/configuration-snippet', value }], scopes: ['INGRESS', 'SERVICES'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const group = created.json<{ id: string }>();
    expect(group).toMatchObject({ name, annotations: [{ key: 'nginx.ingress.kubernetes.io/configuration-snippet', value }], scopes: ['INGRESS', 'SERVICES'] });
    expect((await ctx().call(owner.auth, { method: 'GET', url: base })).json()).toEqual({ results: [group] });
    const edited = await ctx().call(owner.auth, { method: 'PUT', url: `${base}/${group.id}`, payload: { name, annotations: [], scopes: ['PODS'] } });
    expect(edited.json()).toMatchObject({ annotations: [], scopes: ['PODS'] });
    expect((await ctx().call(owner.auth, { method: 'GET', url: `${base}/${group.id}/associatedItems` })).json()).toEqual({ results: [] });
    expect((await ctx().call(owner.auth, { method: 'DELETE', url: `${base}/${group.id}` })).statusCode).toBe(204);
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `${base}/${group.id}` }), 404);
  });

  it('refuses bad keys, unknown or missing scopes, duplicates, and more than 256 KiB in total', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/annotationsGroups`;
    const post = (payload: Record<string, unknown>) => ctx().call(owner.auth, { method: 'POST', url: base, payload });
    expect(expectErrorBody(await post({ name: uniqueName('x'), annotations: [{ key: 'UPPER.example.com/x', value: '' }], scopes: ['PODS'] }), 400).details?.[0]?.field).toBe('/annotations/0/key');
    expectErrorBody(await post({ name: uniqueName('x'), annotations: [], scopes: ['NOT_A_SCOPE'] }), 400);
    expectErrorBody(await post({ name: uniqueName('x'), annotations: [], scopes: [] }), 400);
    expectErrorBody(await post({ name: uniqueName('x'), annotations: [], scopes: ['PODS', 'PODS'] }), 400);
    expectErrorBody(await post({ name: uniqueName('x'), annotations: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }], scopes: ['PODS'] }), 400);
    const big = 'x'.repeat(100 * 1024);
    const tooBig = expectErrorBody(await post({ name: uniqueName('x'), annotations: [{ key: 'a', value: big }, { key: 'b', value: big }, { key: 'c', value: big }], scopes: ['PODS'] }), 400);
    expect(tooBig.message).toMatch(/262144/);
    expect((await post({ name: uniqueName('fits'), annotations: [{ key: 'a', value: big }, { key: 'b', value: big }], scopes: ['PODS'] })).statusCode).toBe(201);
    const name = uniqueName('Taken');
    expect((await post({ name, annotations: [], scopes: ['JOBS'] })).statusCode).toBe(201);
    expectErrorBody(await post({ name: name.toLowerCase(), annotations: [], scopes: ['JOBS'] }), 409);
  });

  it('resolves the annotations of a scope for other modules and refuses deleting an attached group', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const base = `/organization/${organizationId}/annotationsGroups`;
    const ingress = (await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('i'), annotations: [{ key: 'a', value: '1' }], scopes: ['INGRESS'] } })).json<{ id: string }>();
    const pods = (await ctx().call(owner.auth, { method: 'POST', url: base, payload: { name: uniqueName('p'), annotations: [{ key: 'b', value: '2' }], scopes: ['PODS', 'INGRESS'] } })).json<{ id: string }>();
    const service = createAnnotationsGroupsService({
      db: ctx().database.db,
      clock: systemClock,
      usage: { itemsUsing: async (_organization, groupId) => (groupId === pods.id ? [{ item_id: pods.id, item_name: 'web', item_type: 'APPLICATION' }] : []) },
    });
    expect(await service.annotationsFor(organizationId, [ingress.id, pods.id], 'INGRESS')).toEqual([{ key: 'a', value: '1' }, { key: 'b', value: '2' }]);
    expect(await service.annotationsFor(organizationId, [ingress.id, pods.id], 'PODS')).toEqual([{ key: 'b', value: '2' }]);
    const missing = await service.resolveAnnotationsGroups(organizationId, ['0190a0a0-0000-7000-8000-00000000dead']).catch((error: unknown) => error);
    expect((missing as AppError).details).toEqual([{ field: '/annotations_groups/0/id', message: 'unknown annotations group' }]);
    expect(((await service.deleteOrganizationAnnotationsGroup(organizationId, pods.id).catch((error: unknown) => error)) as AppError).kind).toBe('conflict');
  });
});
