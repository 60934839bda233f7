import { expect, it } from 'vitest';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase } from './support/test-app.ts';

/** `Idempotency-Key` on POST (DESIGN.md §4): a retried request gets the first answer, never a second effect. */
describeEachDatabase('Idempotency-Key', (ctx) => {
  function createProject(auth: string, organizationId: string, body: unknown, key?: string) {
    return ctx().call(auth, {
      method: 'POST',
      url: `/organization/${organizationId}/project`,
      payload: body as Record<string, unknown>,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  }

  async function projectNames(organizationId: string): Promise<string[]> {
    const rows = await ctx().database.db.selectFrom('projects').select('name').where('organization_id', '=', organizationId).execute();
    return rows.map((row) => row.name).sort();
  }

  it('replays the first answer to a retry of the same request, and creates once', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const first = await createProject(owner.auth, organizationId, { name: 'web' }, 'retry-1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await createProject(owner.auth, organizationId, { name: 'web' }, 'retry-1');
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await projectNames(organizationId)).toEqual(['web']);
  });

  it('without the header, a repeated request is a new request (here: a name conflict)', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    expect((await createProject(owner.auth, organizationId, { name: 'api' })).statusCode).toBe(200);
    expectErrorBody(await createProject(owner.auth, organizationId, { name: 'api' }), 409);
  });

  it('refuses the same key for a different request with 422 and does nothing', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    expect((await createProject(owner.auth, organizationId, { name: 'one' }, 'k')).statusCode).toBe(200);
    expectErrorBody(await createProject(owner.auth, organizationId, { name: 'two' }, 'k'), 422);
    expect(await projectNames(organizationId)).toEqual(['one']);
  });

  it('keeps keys per caller: another person may use the same key for their own request', async () => {
    const alice = await ctx().signUpWithOrganization();
    const bob = await ctx().signUpWithOrganization();
    expect((await createProject(alice.owner.auth, alice.organizationId, { name: 'same' }, 'shared-key')).statusCode).toBe(200);
    const other = await createProject(bob.owner.auth, bob.organizationId, { name: 'same' }, 'shared-key');
    expect(other.statusCode).toBe(200);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(await projectNames(bob.organizationId)).toEqual(['same']);
  });

  it('replays a client error too: the retry of a refused request is refused the same way', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    expect((await createProject(owner.auth, organizationId, { name: 'taken' })).statusCode).toBe(200);
    const refused = await createProject(owner.auth, organizationId, { name: 'taken' }, 'conflicting');
    expectErrorBody(refused, 409);
    const replay = await createProject(owner.auth, organizationId, { name: 'taken' }, 'conflicting');
    expect(replay.statusCode).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(refused.json());
  });

  it('never keeps an answer that carries a secret: a retried token creation gets 409, not the token again', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const call = () =>
      ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/apiToken`,
        payload: { name: 'ci', scope: 'READ' },
        headers: { 'idempotency-key': 'token-once' },
      });
    const first = await call();
    expect(first.statusCode, first.body).toBe(201);
    const token = first.json<{ token: string }>().token;
    const rows = await ctx().database.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
    const retry = await call();
    expectErrorBody(retry, 409);
    expect(retry.body).not.toContain(token);
    const tokens = await ctx().database.db.selectFrom('api_tokens').select('name').where('organization_id', '=', organizationId).execute();
    expect(tokens.map((row) => row.name).sort()).toEqual(['ci']);
  });

  it('creates once when the same request races under one key', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const answers = await Promise.all(Array.from({ length: 6 }, () => createProject(owner.auth, organizationId, { name: 'raced' }, 'race')));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    expect(statuses.filter((status, index) => status === 200 && answers[index]?.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await projectNames(organizationId)).toEqual(['raced']);
  });

  it('refuses a malformed key with 400 before doing anything', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    for (const key of ['has space', 'x'.repeat(256), 'tab\there']) {
      expectErrorBody(await createProject(owner.auth, organizationId, { name: 'never' }, key), 400);
    }
    expect(await projectNames(organizationId)).toEqual([]);
  });

  it('forgets a key after 24 hours: the same request then runs again', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    expect((await createProject(owner.auth, organizationId, { name: 'daily' }, 'day')).statusCode).toBe(200);
    ctx().clock.advance(25 * 60 * 60 * 1000);
    const later = await createProject(owner.auth, organizationId, { name: 'daily' }, 'day');
    expectErrorBody(later, 409);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
  });
});
