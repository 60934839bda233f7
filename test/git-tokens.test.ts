import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import { systemClock } from '../src/lib/clock.ts';
import { AppError } from '../src/lib/errors.ts';
import { createSecretBox, decodeSecretKey, loadOrCreateKeyFile } from '../src/lib/secret-box.ts';
import { createGitTokensService, type GitTokenAssociatedService } from '../src/modules/git-tokens/git-tokens.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Git tokens (SPEC.md "Git tokens and git repositories") through real HTTP requests on a real database: the
 * reference's shapes, 201/200/204 and 409 on a taken name, the value never answered and never stored in plain text,
 * an edit without a value keeping the stored one, who may read and who may manage them, and organizations kept apart.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '0190f0b2-6c5e-7000-8000-000000000000';

interface GitTokenView {
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  description?: string;
  type: string;
  expired_at?: string;
  workspace?: string;
  associated_services_count: number;
  git_api_url: string;
}

function secretValue(): string {
  return `ghp_${uniqueName('secret').replace(/-/g, '')}Zq9`;
}

async function createToken(ctx: TestApp, auth: string, organizationId: string, body: Record<string, unknown>) {
  return ctx.call(auth, { method: 'POST', url: `/organization/${organizationId}/gitToken`, payload: body });
}

describe('secret box', () => {
  const key = Buffer.alloc(32, 11);

  it('opens what it sealed, with a fresh nonce each time, and refuses a tampered envelope, other associated data or another key', () => {
    const box = createSecretBox(key);
    const sealed = box.seal('glpat-value', 'git_tokens:org:1');
    expect(sealed).not.toContain('glpat-value');
    expect(box.seal('glpat-value', 'git_tokens:org:1')).not.toBe(sealed);
    expect(box.open(sealed, 'git_tokens:org:1')).toBe('glpat-value');
    expect(() => box.open(sealed, 'git_tokens:org:2')).toThrow();
    expect(() => createSecretBox(Buffer.alloc(32, 12)).open(sealed, 'git_tokens:org:1')).toThrow();
    const parts = sealed.split('.');
    const ciphertext = Buffer.from(parts[3] as string, 'base64url');
    ciphertext[0] = (ciphertext[0] as number) ^ 1;
    expect(() => box.open([parts[0], parts[1], parts[2], ciphertext.toString('base64url')].join('.'), 'git_tokens:org:1')).toThrow();
    expect(() => box.open(`v2.${parts.slice(1).join('.')}`, 'git_tokens:org:1')).toThrow(/v1/);
    expect(() => createSecretBox(Buffer.alloc(16))).toThrow();
  });

  it('generates the key file once, 0600, and reads the same key afterwards', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'slipway-key-'));
    try {
      const file = path.join(dir, 'nested', 'secret.key');
      const first = loadOrCreateKeyFile(file);
      expect(first.length).toBe(32);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(loadOrCreateKeyFile(file).equals(first)).toBe(true);
      expect(decodeSecretKey(await readFile(file, 'utf8'))?.equals(first)).toBe(true);
      // No temporary candidate files are left next to it.
      expect(await readdir(path.dirname(file))).toEqual(['secret.key']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeEachDatabase('git tokens', (ctx) => {
  let owner: TestUser;
  let organizationId: string;

  it('creates a token (201) in the reference shape, with the provider default API URL, and never answers the value', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const value = secretValue();
    const response = await createToken(ctx(), owner.auth, organizationId, { name: 'GitHub bot', type: 'GITHUB', token: value, description: 'CI' });
    expect(response.statusCode, response.body).toBe(201);
    const created = response.json<GitTokenView>();
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      name: 'GitHub bot',
      description: 'CI',
      type: 'GITHUB',
      associated_services_count: 0,
      git_api_url: 'https://api.github.com',
    });
    expect(response.body).not.toContain(value);

    const gitlab = await createToken(ctx(), owner.auth, organizationId, {
      name: 'Self-hosted GitLab',
      type: 'GITLAB',
      token: secretValue(),
      git_api_url: 'https://gitlab.example.com/api/v4',
    });
    expect(gitlab.json<GitTokenView>().git_api_url).toBe('https://gitlab.example.com/api/v4');
    const bitbucket = await createToken(ctx(), owner.auth, organizationId, { name: 'Bitbucket', type: 'BITBUCKET', token: secretValue(), workspace: 'acme' });
    expect(bitbucket.json<GitTokenView>()).toMatchObject({ workspace: 'acme', git_api_url: 'https://api.bitbucket.org/2.0' });

    const list = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken` });
    expect(list.statusCode).toBe(200);
    expect(list.json<{ results: GitTokenView[] }>().results.map((token) => token.name)).toEqual(['GitHub bot', 'Self-hosted GitLab', 'Bitbucket']);
    expect(list.body).not.toContain(value);

    const one = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${created.id}` });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(created);
  });

  it('stores the value sealed (not in plain text, not as a hash) in every column', async () => {
    const value = secretValue();
    const response = await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('sealed'), type: 'GITLAB', token: value });
    const id = response.json<GitTokenView>().id;
    const row = await ctx().database.db.selectFrom('git_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(value);
    expect(row.token_envelope).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    // Two tokens with one value are sealed with different nonces.
    const twin = await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('twin'), type: 'GITLAB', token: value });
    const twinRow = await ctx().database.db.selectFrom('git_tokens').select('token_envelope').where('id', '=', twin.json<GitTokenView>().id).executeTakeFirstOrThrow();
    expect(twinRow.token_envelope).not.toBe(row.token_envelope);
  });

  it('answers 409 for a name taken in the organization (case-insensitive), and allows it in another organization', async () => {
    const name = uniqueName('Deploy Key');
    expect((await createToken(ctx(), owner.auth, organizationId, { name, type: 'GITHUB', token: secretValue() })).statusCode).toBe(201);
    const taken = await createToken(ctx(), owner.auth, organizationId, { name: name.toUpperCase(), type: 'GITLAB', token: secretValue() });
    expect(expectErrorBody(taken, 409).message).toContain('already exists');
    const other = await ctx().signUpWithOrganization();
    expect((await createToken(ctx(), other.owner.auth, other.organizationId, { name, type: 'GITHUB', token: secretValue() })).statusCode).toBe(201);
  });

  it('edits a token: without a value the sealed one is kept, with one it is replaced; 409 on a taken name', async () => {
    const created = (await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('edit'), type: 'GITHUB', token: secretValue() })).json<GitTokenView>();
    const before = await ctx().database.db.selectFrom('git_tokens').select('token_envelope').where('id', '=', created.id).executeTakeFirstOrThrow();
    ctx().clock.advance(1000);
    const renamed = await ctx().call(owner.auth, {
      method: 'PUT',
      url: `/organization/${organizationId}/gitToken/${created.id}`,
      payload: { name: 'renamed token', type: 'GITLAB', description: 'moved' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: created.id, name: 'renamed token', type: 'GITLAB', description: 'moved', git_api_url: 'https://gitlab.com/api/v4' });
    expect(renamed.json<GitTokenView>().updated_at > created.updated_at).toBe(true);
    const kept = await ctx().database.db.selectFrom('git_tokens').select('token_envelope').where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(kept.token_envelope).toBe(before.token_envelope);

    const value = secretValue();
    const replaced = await ctx().call(owner.auth, {
      method: 'PUT',
      url: `/organization/${organizationId}/gitToken/${created.id}`,
      payload: { name: 'renamed token', type: 'GITLAB', token: value },
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.body).not.toContain(value);
    const after = await ctx().database.db.selectFrom('git_tokens').select('token_envelope').where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(after.token_envelope).not.toBe(before.token_envelope);
    expect(after.token_envelope).not.toContain(value);

    const otherName = uniqueName('other');
    await createToken(ctx(), owner.auth, organizationId, { name: otherName, type: 'GITHUB', token: secretValue() });
    const clash = await ctx().call(owner.auth, {
      method: 'PUT',
      url: `/organization/${organizationId}/gitToken/${created.id}`,
      payload: { name: otherName, type: 'GITHUB' },
    });
    expectErrorBody(clash, 409);
  });

  it('refuses bad input with 400 and writes nothing', async () => {
    const countBefore = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken` })).json<{ results: unknown[] }>().results.length;
    const bad: Record<string, unknown>[] = [
      {},
      { name: 'x', type: 'GITHUB' },
      { name: 'x', type: 'SVN', token: 'abc' },
      { name: '', type: 'GITHUB', token: 'abc' },
      { name: 'x', type: 'GITHUB', token: '' },
      { name: 'x', type: 'GITHUB', token: 'abc\r\nX-Injected: 1' },
      { name: 'x', type: 'GITHUB', token: 'has space' },
      { name: 'x', type: 'GITHUB', token: 'abc', git_api_url: 'not a url' },
      { name: 'x', type: 'GITHUB', token: 'abc', git_api_url: 'ftp://example.com' },
      { name: 'x', type: 'GITHUB', token: 'abc', unexpected: true },
      { name: 'x\u0000', type: 'GITHUB', token: 'abc' },
    ];
    for (const body of bad) expectErrorBody(await createToken(ctx(), owner.auth, organizationId, body), 400);
    const countAfter = (await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken` })).json<{ results: unknown[] }>().results.length;
    expect(countAfter).toBe(countBefore);
  });

  it('lists no associated services (no service uses a token yet) and deletes a token (204), then 404', async () => {
    const created = (await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('gone'), type: 'GITHUB', token: secretValue() })).json<GitTokenView>();
    const services = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${created.id}/associatedServices` });
    expect(services.statusCode).toBe(200);
    expect(services.json()).toEqual({ results: [] });

    const removed = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/gitToken/${created.id}` });
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/associatedServices'],
    ] as const) {
      expectErrorBody(await ctx().call(owner.auth, { method, url: `/organization/${organizationId}/gitToken/${created.id}${suffix}` }), 404);
    }
    expectErrorBody(
      await ctx().call(owner.auth, { method: 'PUT', url: `/organization/${organizationId}/gitToken/${created.id}`, payload: { name: 'n', type: 'GITHUB' } }),
      404,
    );
    expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${UNKNOWN_ID}` }), 404);
  });

  it('keeps organizations apart: another organization\'s owner gets 404 on every token route, and its list is its own', async () => {
    const created = (await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('private'), type: 'GITHUB', token: secretValue() })).json<GitTokenView>();
    const stranger = await ctx().signUpWithOrganization();
    // Addressing the victim's token under the stranger's own organization: not there.
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/associatedServices'],
    ] as const) {
      expectErrorBody(await ctx().call(stranger.owner.auth, { method, url: `/organization/${stranger.organizationId}/gitToken/${created.id}${suffix}` }), 404);
    }
    const edit = await ctx().call(stranger.owner.auth, {
      method: 'PUT',
      url: `/organization/${stranger.organizationId}/gitToken/${created.id}`,
      payload: { name: 'stolen', type: 'GITHUB', token: 'mine' },
    });
    expectErrorBody(edit, 404);
    // Addressing the victim's organization directly: not a member.
    const direct = await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${created.id}` });
    expect([403, 404]).toContain(direct.statusCode);
    const list = await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${stranger.organizationId}/gitToken` });
    expect(list.json()).toEqual({ results: [] });
    const still = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${created.id}` });
    expect(still.json<GitTokenView>().name).toBe(created.name);
  });

  it('lets members who read see tokens, and only owners and admins create, edit and delete them', async () => {
    const created = (await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('roles'), type: 'GITHUB', token: secretValue() })).json<GitTokenView>();
    for (const role of ['DEVELOPER', 'VIEWER']) {
      const member = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, member, role);
      expect((await ctx().call(member.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken` })).statusCode).toBe(200);
      expect((await ctx().call(member.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${created.id}` })).statusCode).toBe(200);
      expectErrorBody(await createToken(ctx(), member.auth, organizationId, { name: uniqueName('no'), type: 'GITHUB', token: secretValue() }), 403);
      expectErrorBody(
        await ctx().call(member.auth, { method: 'PUT', url: `/organization/${organizationId}/gitToken/${created.id}`, payload: { name: 'n', type: 'GITHUB' } }),
        403,
      );
      expectErrorBody(await ctx().call(member.auth, { method: 'DELETE', url: `/organization/${organizationId}/gitToken/${created.id}` }), 403);
    }
    const admin = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, admin, 'ADMIN');
    expect((await createToken(ctx(), admin.auth, organizationId, { name: uniqueName('admin'), type: 'GITLAB', token: secretValue() })).statusCode).toBe(201);

    const readToken = await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('reader'), scope: 'READ' });
    expect((await ctx().call(`Token ${readToken}`, { method: 'GET', url: `/organization/${organizationId}/gitToken` })).statusCode).toBe(200);
    expectErrorBody(await createToken(ctx(), `Token ${readToken}`, organizationId, { name: uniqueName('no'), type: 'GITHUB', token: secretValue() }), 403);
  });

  it('reports services that use a token through the usage port: counted, listed, and a delete refused with 409 naming them', async () => {
    const created = (await createToken(ctx(), owner.auth, organizationId, { name: uniqueName('in-use'), type: 'GITHUB', token: secretValue() })).json<GitTokenView>();
    const service: GitTokenAssociatedService = {
      project_id: '0190f0b2-6c5e-7000-8000-000000000001',
      project_name: 'shop',
      environment_id: '0190f0b2-6c5e-7000-8000-000000000002',
      environment_name: 'production',
      service_id: '0190f0b2-6c5e-7000-8000-000000000003',
      service_name: 'terraform-network',
      service_type: 'TERRAFORM',
    };
    // The services module's side of the port, as it will answer once it exists: this one token is used by one service.
    const gitTokens = createGitTokensService({
      db: ctx().database.db,
      clock: systemClock,
      secrets: createSecretBox(Buffer.alloc(32, 5)),
      git: createSystemGitAccess({ allowPrivateHosts: false }),
      usage: {
        servicesUsing: async (_organization, tokenId) => (tokenId === created.id ? [service] : []),
        countsByToken: async (_organization, tokenIds) => new Map(tokenIds.filter((id) => id === created.id).map((id) => [id, 1])),
      },
    });
    expect((await gitTokens.getGitToken(organizationId, created.id)).associated_services_count).toBe(1);
    expect((await gitTokens.listOrganizationGitTokens(organizationId)).find((token) => token.id === created.id)?.associated_services_count).toBe(1);
    expect(await gitTokens.associatedServices(organizationId, created.id)).toEqual([service]);
    const refusal = await gitTokens.removeGitToken(organizationId, created.id).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).kind).toBe('conflict');
    expect((refusal as AppError).message).toContain('"terraform-network"');
    expect((await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/gitToken/${created.id}` })).statusCode).toBe(200);
  });
});
