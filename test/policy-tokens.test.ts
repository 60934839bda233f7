import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { mintToken, recogniseToken } from '../src/auth/tokens.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';
import { expectErrorBody, type ErrorBody } from './support/error-body.ts';
import { createRevealWorld, expectMasked, expectRevealed, revealingUrls } from './support/secret-reveal.ts';

/**
 * Organization policy API tokens (SPEC.md, DESIGN.md §5), through real HTTP requests on a real database: minting
 * (value shown once, hashed at rest, 409 on a taken name, only owners and admins), refusal of bad policies with a
 * 400 naming line and column, expiry and revocation, and what a token may do as its Rego policy decides each
 * request — never more than organization admin, never outside its own organization, never minting tokens.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_PATTERN_IN_REGO = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const POLICY_TOKEN_VALUE = /^slwp_[0-9A-Za-z]{49}$/;
const UNKNOWN_ID = '0190f0b2-6c5e-7000-8000-000000000000';
const HOUR = 60 * 60 * 1000;
const LINE_AND_COLUMN = /line (\d+), column (\d+)/;

const ALLOW_ALL = 'package agent\n\nallow := true\n';
const ALLOW_GET_ONLY = 'package agent\n\ndefault allow := false\n\nallow if input.method == "GET"\n';

interface PolicyTokenView {
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  description?: string;
  opa_policy: string;
  creator_name: string | null;
  expires_at: string | null;
  token_start: string;
}
type CreatedPolicyToken = PolicyTokenView & { token: string };

/** The 403 of a policy that said no, naming the token and why. */
function expectPolicyDenial(response: LightMyRequestResponse, tokenName: string): string {
  const body = expectErrorBody(response, 403);
  expect(body.message).toContain(`the policy of policy API token "${tokenName}" denied this request: `);
  return body.message;
}

/** A bad policy is a 400 whose details point at /opa_policy with a line and column. */
function expectPolicyRefusedAt(response: LightMyRequestResponse, line?: number, column?: number): ErrorBody {
  const body = expectErrorBody(response, 400);
  const detail = body.details?.find((entry) => entry.field === '/opa_policy');
  expect(detail, response.body).toBeDefined();
  const position = LINE_AND_COLUMN.exec(detail?.message ?? '');
  expect(position, response.body).not.toBeNull();
  if (line !== undefined) expect(Number(position?.[1]), response.body).toBe(line);
  if (column !== undefined) expect(Number(position?.[2]), response.body).toBe(column);
  return body;
}

/** The read-only policy of the README's walkthrough: the `opa_policy` of its createOrganizationPolicyApiToken call. */
function readmeReadOnlyPolicy(): string {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const call = /\/policyApiToken \\\n[^\n]*\n\s*-d '(\{[^']*\})'/.exec(readme);
  if (call?.[1] === undefined) throw new Error('the README has no createOrganizationPolicyApiToken example');
  return (JSON.parse(call[1]) as { opa_policy: string }).opa_policy;
}

/** The Rego examples of docs/policy-tokens.md. */
function documentedPolicies(): string[] {
  const document = readFileSync(new URL('../docs/policy-tokens.md', import.meta.url), 'utf8');
  return [...document.matchAll(/```rego\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

/** A policy that allows exactly one input document, written as a Rego object literal (JSON is one). */
function exactInputPolicy(expectedWithoutToken: Record<string, unknown>, tokenName: string): string {
  return [
    'package agent',
    '',
    `expected := ${JSON.stringify(expectedWithoutToken)}`,
    '',
    'allow if {',
    '\tobject.remove(input, {"token"}) == expected',
    '\tobject.keys(input.token) == {"id", "name"}',
    `\tinput.token.name == ${JSON.stringify(tokenName)}`,
    `\tregex.match(${JSON.stringify(UUID_PATTERN_IN_REGO)}, input.token.id)`,
    '}',
    '',
  ].join('\n');
}

describeEachDatabase('policy API tokens', (ctx) => {

  function postPolicyToken(auth: string, organizationId: string, payload: InjectOptions['payload']) {
    return ctx().call(auth, { method: 'POST', url: `/organization/${organizationId}/policyApiToken`, payload });
  }

  async function createdPolicyToken(auth: string, organizationId: string, body: Record<string, unknown>): Promise<CreatedPolicyToken> {
    const response = await postPolicyToken(auth, organizationId, body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<CreatedPolicyToken>();
  }

  /** A policy token with `policy`, as the `Authorization` header value, with its name for denial messages. */
  async function agent(ownerAuth: string, organizationId: string, policy: string): Promise<{ auth: string; name: string; id: string }> {
    const created = await createdPolicyToken(ownerAuth, organizationId, { name: uniqueName('agent'), opa_policy: policy });
    return { auth: `Bearer ${created.token}`, name: created.name, id: created.id };
  }

  function dryRun(auth: string, organizationId: string, payload: InjectOptions['payload']) {
    return ctx().call(auth, { method: 'POST', url: `/organization/${organizationId}/policyApiToken/evaluate`, payload });
  }

  function policyTokenRows(organizationId: string) {
    return ctx().database.db.selectFrom('policy_tokens').selectAll().where('organization_id', '=', organizationId).execute();
  }

  function projectNames(organizationId: string): Promise<string[]> {
    return ctx()
      .database.db.selectFrom('projects')
      .select('name')
      .where('organization_id', '=', organizationId)
      .orderBy('name')
      .execute()
      .then((rows) => rows.map((row) => row.name));
  }

  async function createProject(auth: string, organizationId: string, name = uniqueName('project')): Promise<string> {
    const response = await ctx().call(auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ id: string }>().id;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Minting, listing, storage

  it('createOrganizationPolicyApiToken answers 201, no-store, with an slwp_ value shown this once', async () => {
    const userName = uniqueName('Ada Lovelace');
    const { owner, organizationId } = await ctx().signUpWithOrganization(userName);
    const response = await postPolicyToken(owner.auth, organizationId, {
      name: 'deploy agent',
      description: 'an autonomous agent',
      opa_policy: ALLOW_GET_ONLY,
      role_id: null,
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const created = response.json<CreatedPolicyToken>();
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
      name: 'deploy agent',
      description: 'an autonomous agent',
      opa_policy: ALLOW_GET_ONLY,
      creator_name: userName,
      expires_at: null,
      token_start: expect.any(String),
      token: expect.stringMatching(POLICY_TOKEN_VALUE),
    });
    expect(recogniseToken(created.token)).toBe('policy');
    expect(created.token.startsWith(created.token_start)).toBe(true);
    expect(created.token_start.length).toBeLessThan(created.token.length - 20);

    // The value works at once, with either authorization word.
    for (const word of ['Bearer', 'Token']) {
      const listed = await ctx().call(`${word} ${created.token}`, { method: 'GET', url: `/organization/${organizationId}/project` });
      expect(listed.statusCode, listed.body).toBe(200);
    }

    const second = await createdPolicyToken(owner.auth, organizationId, { name: 'second agent', opa_policy: ALLOW_ALL });
    expect(second.token).not.toBe(created.token);
  });

  it('lists each token with its policy but never the value or its hash', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const first = await createdPolicyToken(owner.auth, organizationId, { name: 'lister one', opa_policy: ALLOW_GET_ONLY });
    const second = await createdPolicyToken(owner.auth, organizationId, { name: 'lister two', opa_policy: ALLOW_ALL, description: 'two' });

    const response = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/policyApiToken` });
    expect(response.statusCode, response.body).toBe(200);
    for (const created of [first, second]) {
      expect(response.body).not.toContain(created.token);
      expect(response.body).not.toContain(created.token.slice(12));
      expect(response.body).not.toContain(createHash('sha256').update(created.token).digest('hex'));
    }
    expect(response.body).not.toContain('token_hash');
    expect(response.body).not.toContain('"token"');
    const { results } = response.json<{ results: Record<string, unknown>[] }>();
    const strip = ({ token: _value, ...shown }: CreatedPolicyToken) => shown;
    expect(results).toEqual([strip(first), strip(second)]);
    expect(results.map((item) => item.opa_policy)).toEqual([ALLOW_GET_ONLY, ALLOW_ALL]);

    // Another organization's list does not show them.
    const other = await ctx().signUpWithOrganization();
    const foreign = await ctx().call(other.owner.auth, { method: 'GET', url: `/organization/${other.organizationId}/policyApiToken` });
    expect(foreign.statusCode).toBe(200);
    expect(foreign.json<{ results: unknown[] }>().results).toEqual([]);
  });

  it('stores only the SHA-256 of the value', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const created = await createdPolicyToken(owner.auth, organizationId, { name: 'hashed agent', opa_policy: ALLOW_ALL });
    const rows = await policyTokenRows(organizationId);
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    expect(row.token_hash).toBe(createHash('sha256').update(created.token).digest('hex'));
    for (const value of Object.values(row)) {
      if (typeof value === 'string') expect(value.includes(created.token.slice(12))).toBe(false);
    }
  });

  it('answers 409 for a name taken in the organization, whatever its case, and allows it elsewhere', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    await createdPolicyToken(owner.auth, organizationId, { name: 'Agent Smith', opa_policy: ALLOW_ALL });
    for (const name of ['Agent Smith', 'agent smith', '  AGENT SMITH ']) {
      const body = expectErrorBody(await postPolicyToken(owner.auth, organizationId, { name, opa_policy: ALLOW_GET_ONLY }), 409);
      expect(body.message).toContain('already exists');
    }
    expect(await policyTokenRows(organizationId)).toHaveLength(1);

    // An API token of the same name does not collide: the two kinds have their own names.
    await ctx().createApiToken(owner.auth, organizationId, { name: 'Agent Smith', scope: 'READ' });
    const other = await ctx().signUpWithOrganization();
    await createdPolicyToken(other.owner.auth, other.organizationId, { name: 'Agent Smith', opa_policy: ALLOW_ALL });
  });

  it('lets exactly one of several concurrent creations with the same name succeed', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => postPolicyToken(owner.auth, organizationId, { name: 'racer', opa_policy: ALLOW_ALL })),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((candidate) => candidate.statusCode === 409)) expectErrorBody(response, 409);
    expect(await policyTokenRows(organizationId)).toHaveLength(1);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // Who may mint

  it('lets only an OWNER, an ADMIN member or an ADMIN API token create one', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const admin = await ctx().signUp();
    const developer = await ctx().signUp();
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, admin, 'ADMIN');
    await ctx().addMemberDirectly(organizationId, developer, 'DEVELOPER');
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    const adminToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: 'admin token', scope: 'ADMIN' })}`;
    const writeToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: 'write token', scope: 'WRITE' })}`;
    const readToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: 'read token', scope: 'READ' })}`;
    const deployToken = `Bearer ${await ctx().createApiToken(owner.auth, organizationId, { name: 'deploy token', scope: 'DEPLOY' })}`;

    for (const [who, auth] of [
      ['developer', developer.auth],
      ['viewer', viewer.auth],
      ['write token', writeToken],
      ['read token', readToken],
      ['deploy token', deployToken],
    ] as const) {
      const response = await postPolicyToken(auth, organizationId, { name: `by ${who}`, opa_policy: ALLOW_ALL });
      expectErrorBody(response, 403);
      // Nor may they look at policies or revoke tokens.
      expectErrorBody(await ctx().call(auth, { method: 'GET', url: `/organization/${organizationId}/policyApiToken` }), 403);
    }
    expect(await policyTokenRows(organizationId)).toEqual([]);

    const byOwner = await createdPolicyToken(owner.auth, organizationId, { name: 'by owner', opa_policy: ALLOW_ALL });
    const byAdmin = await createdPolicyToken(admin.auth, organizationId, { name: 'by admin', opa_policy: ALLOW_ALL });
    const byAdminToken = await createdPolicyToken(adminToken, organizationId, { name: 'by admin token', opa_policy: ALLOW_ALL });
    expect(byAdminToken.creator_name).toBe('token:admin token');
    expect((await policyTokenRows(organizationId)).map((row) => row.id).sort()).toEqual([byOwner.id, byAdmin.id, byAdminToken.id].sort());

    for (const auth of [developer.auth, viewer.auth, writeToken, readToken]) {
      expectErrorBody(await ctx().call(auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/${byOwner.id}` }), 403);
    }
    expect(await policyTokenRows(organizationId)).toHaveLength(3);
  });

  it('never lets a policy token mint a token, create an organization or act as a person, even when its policy allows everything', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const unbounded = await agent(owner.auth, organizationId, ALLOW_ALL);

    const apiToken = await ctx().call(unbounded.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/apiToken`,
      payload: { name: 'escape hatch', scope: 'ADMIN' },
    });
    expectErrorBody(apiToken, 403);
    const policyToken = await postPolicyToken(unbounded.auth, organizationId, { name: 'offspring', opa_policy: ALLOW_ALL });
    expectErrorBody(policyToken, 403);
    const organization = await ctx().call(unbounded.auth, { method: 'POST', url: '/organization', payload: { name: uniqueName('agent-org') } });
    expectErrorBody(organization, 403);
    const onboarding = await ctx().call(unbounded.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/onboarding`,
      payload: { status: 'DONE' },
    });
    expectErrorBody(onboarding, 403);

    const apiTokens = await ctx().database.db.selectFrom('api_tokens').select('id').where('organization_id', '=', organizationId).execute();
    expect(apiTokens).toEqual([]);
    expect((await policyTokenRows(organizationId)).map((row) => row.id)).toEqual([unbounded.id]);
    const organizations = await ctx().database.db.selectFrom('organizations').select('id').where('name', 'like', 'agent-org%').execute();
    expect(organizations).toEqual([]);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // Bad requests and bad policies

  it('refuses a role: a policy token carries none', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const roles = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/availableRole` });
    const adminRole = roles.json<{ results: { id: string; name: string }[] }>().results.find((role) => role.name === 'ADMIN');
    expect(adminRole).toBeDefined();
    const body = expectErrorBody(await postPolicyToken(owner.auth, organizationId, { name: 'roled', opa_policy: ALLOW_ALL, role_id: adminRole?.id }), 400);
    expect(body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: '/role_id' })]));
    expectErrorBody(await postPolicyToken(owner.auth, organizationId, { name: 'roled', opa_policy: ALLOW_ALL, role_id: 'not-a-uuid' }), 400);
    expect(await policyTokenRows(organizationId)).toEqual([]);
  });

  it('refuses malformed requests with 400 and writes nothing', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const bodies: unknown[] = [
      {},
      { name: 'no policy' },
      { opa_policy: ALLOW_ALL },
      { name: '', opa_policy: ALLOW_ALL },
      { name: 'empty policy', opa_policy: '' },
      { name: 'number policy', opa_policy: 42 },
      { name: 'nul policy', opa_policy: 'package agent\n\nallow := true\n\u0000' },
      { name: 'unknown field', opa_policy: ALLOW_ALL, scope: 'ADMIN' },
      { name: 'bad expiry', opa_policy: ALLOW_ALL, expires_at: 'tomorrow' },
      [ALLOW_ALL],
    ];
    for (const payload of bodies) {
      expectErrorBody(await postPolicyToken(owner.auth, organizationId, payload as InjectOptions['payload']), 400);
    }
    const notJson = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/policyApiToken`,
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "broken", "opa_policy": ',
    });
    expectErrorBody(notJson, 400);
    expect(await policyTokenRows(organizationId)).toEqual([]);
  });

  it('refuses a policy that does not parse or compile with 400 naming the line and column, never 500', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const refusals: { what: string; policy: string; line?: number; column?: number; says: RegExp }[] = [
      {
        what: 'a parse error',
        policy: 'package agent\n\nallow if {\n\tinput.method == "GET"\n\tinput.path[0] ==\n}\n',
        line: 6,
        column: 1,
        says: /unexpected/,
      },
      { what: 'an unsafe variable', policy: 'package agent\n\nallow if {\n\tx == 1\n}\n', line: 4, column: 2, says: /var x is unsafe/ },
      {
        what: 'an unknown builtin',
        policy: 'package agent\n\nallow if {\n\tno.such.builtin(input.method)\n}\n',
        line: 4,
        column: 2,
        says: /undefined function no\.such\.builtin/,
      },
      { what: 'recursion', policy: 'package agent\n\nallow if f\n\nf if g\n\ng if f\n', says: /recursive/ },
      { what: 'no package', policy: 'allow := true\n', line: 1, says: /package/ },
      {
        what: 'nesting beyond the limit',
        policy: `package agent\n\nallow if {\n\tx := ${'['.repeat(40)}1${']'.repeat(40)}\n\tx != null\n}\n`,
        line: 4,
        says: /nest/,
      },
      {
        what: 'nesting thousands deep',
        policy: `package agent\n\nallow if {\n\tx := ${'['.repeat(5000)}1${']'.repeat(5000)}\n\tx != null\n}\n`,
        says: /nest/,
      },
      {
        what: 'parentheses thousands deep',
        policy: `package agent\n\nallow if {\n\tx := ${'('.repeat(5000)}1${')'.repeat(5000)}\n\tx != null\n}\n`,
        says: /nest/,
      },
      {
        what: 'an operator chain thousands long',
        policy: `package agent\n\nallow if {\n\tx := 1${' + 1'.repeat(12_000)}\n\tx > 0\n}\n`,
        says: /nest/,
      },
      {
        what: 'a policy under 64 Ki characters but over 64 KiB of UTF-8',
        policy: `package agent\n\n# ${'é'.repeat(40_000)}\nallow := true\n`,
        says: /exceeds/,
      },
      {
        what: 'more rules than allowed',
        policy: `package agent\n\nallow := true\n\n${Array.from({ length: 600 }, (_, index) => `r${index} := ${index}`).join('\n')}\n`,
        says: /rule/,
      },
    ];
    for (const refusal of refusals) {
      const response = await postPolicyToken(owner.auth, organizationId, { name: uniqueName('bad'), opa_policy: refusal.policy });
      expect(response.statusCode, `${refusal.what}: ${response.body.slice(0, 300)}`).toBe(400);
      const body = expectPolicyRefusedAt(response, refusal.line, refusal.column);
      expect(`${body.message} ${JSON.stringify(body.details)}`, refusal.what).toMatch(refusal.says);
    }
    expect(await policyTokenRows(organizationId)).toEqual([]);
  });

  it('refuses a policy without an allow rule, and one over 64 KiB, with 400 on /opa_policy', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const noAllow = expectErrorBody(await postPolicyToken(owner.auth, organizationId, { name: 'no allow', opa_policy: 'package agent\n\ndeny if true\n' }), 400);
    expect(noAllow.message).toContain('allow');
    expect(noAllow.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: '/opa_policy' })]));

    const oversize = `package agent\n\nallow := true\n\n# ${'x'.repeat(65 * 1024)}\n`;
    const tooLarge = expectErrorBody(await postPolicyToken(owner.auth, organizationId, { name: 'too large', opa_policy: oversize }), 400);
    expect(tooLarge.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: '/opa_policy' })]));
    expect(await policyTokenRows(organizationId)).toEqual([]);
  });

  it('accepts the policies OPA users write: import rego.v1, a dotted package, default and else', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const listProjects = { method: 'GET', url: `/organization/${organizationId}/project` } as const;
    const createRequest = { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'refused' } } as const;
    const policies = [
      'package agent\n\nimport rego.v1\n\nallow if input.method == "GET"\n',
      'package slipway.agents.reader\n\ndefault allow := false\n\nallow if input.method in {"GET", "HEAD"}\n',
      'package agent\n\nallow := true if {\n\tinput.method == "GET"\n} else := false\n',
      'package agent\n\nread_only contains method if some method in ["GET", "HEAD"]\n\nallow if input.method in read_only\n',
    ];
    for (const policy of policies) {
      const token = await agent(owner.auth, organizationId, policy);
      const listed = await ctx().call(token.auth, listProjects);
      expect(listed.statusCode, `${policy}: ${listed.body}`).toBe(200);
      expectPolicyDenial(await ctx().call(token.auth, createRequest), token.name);
    }
    expect(await projectNames(organizationId)).toEqual([]);
  });

  it('refuses a rule body without `if`, as Rego v1 (OPA 1.x) does', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const v0 = 'package agent\n\nallow {\n\tinput.method == "GET"\n}\n';
    expectPolicyRefusedAt(await postPolicyToken(owner.auth, organizationId, { name: 'rego v0', opa_policy: v0 }), 3);
    expect(await policyTokenRows(organizationId)).toEqual([]);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // Expiry and revocation

  it('refuses an expiry in the past and stops authenticating a token once it expires', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const past = new Date(ctx().clock.now().getTime() - HOUR).toISOString();
    const refused = expectErrorBody(await postPolicyToken(owner.auth, organizationId, { name: 'stale', opa_policy: ALLOW_ALL, expires_at: past }), 400);
    expect(refused.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: '/expires_at' })]));

    const expiresAt = new Date(ctx().clock.now().getTime() + HOUR).toISOString();
    const created = await createdPolicyToken(owner.auth, organizationId, { name: 'ephemeral', opa_policy: ALLOW_ALL, expires_at: expiresAt });
    expect(created.expires_at).toBe(expiresAt);
    const auth = `Bearer ${created.token}`;
    const listProjects = { method: 'GET', url: `/organization/${organizationId}/project` } as const;
    expect((await ctx().call(auth, listProjects)).statusCode).toBe(200);

    ctx().clock.advance(HOUR + 1000);
    const expired = expectErrorBody(await ctx().call(auth, listProjects), 401);
    expect(expired.message).toContain('policy API token');
  });

  it('deleteOrganizationPolicyApiToken answers 204 and the token is refused at once; unknown or foreign ids are 404', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const doomed = await agent(owner.auth, organizationId, ALLOW_ALL);
    const listProjects = { method: 'GET', url: `/organization/${organizationId}/project` } as const;
    expect((await ctx().call(doomed.auth, listProjects)).statusCode).toBe(200);

    const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/${doomed.id}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(deleted.body).toBe('');
    expectErrorBody(await ctx().call(doomed.auth, listProjects), 401);
    expect(await policyTokenRows(organizationId)).toEqual([]);

    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/${doomed.id}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/${UNKNOWN_ID}` }), 404);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/not-a-uuid` }), 400);

    // A token of another organization cannot be deleted through this one.
    const other = await ctx().signUpWithOrganization();
    const foreign = await agent(other.owner.auth, other.organizationId, ALLOW_ALL);
    expectErrorBody(await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/${foreign.id}` }), 404);
    expect((await ctx().call(foreign.auth, { method: 'GET', url: `/organization/${other.organizationId}/project` })).statusCode).toBe(200);
  });

  it('is honoured and revoked at once on a second server over the same database (a replica, or a restart)', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const replica = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent' },
      database: ctx().database,
      clock: ctx().clock,
    });
    try {
      const reader = await agent(owner.auth, organizationId, ALLOW_GET_ONLY);
      const onReplica = (options: InjectOptions) => replica.inject({ ...options, headers: { authorization: reader.auth } });
      // The replica never saw the token created: it compiles the stored policy on first use and applies it.
      expect((await onReplica({ method: 'GET', url: `/organization/${organizationId}/project` })).statusCode).toBe(200);
      expectPolicyDenial(await onReplica({ method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'x' } }), reader.name);

      const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/policyApiToken/${reader.id}` });
      expect(deleted.statusCode).toBe(204);
      expectErrorBody(await onReplica({ method: 'GET', url: `/organization/${organizationId}/project` }), 401);
    } finally {
      await replica.close();
    }
  });

  it('denies, rather than failing the request, when a stored policy no longer compiles', async () => {
    // A row written before the engine's limits or grammar changed: its policy is compiled on first use only.
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const minted = mintToken('policy');
    const now = new Date().toISOString();
    await ctx()
      .database.db.insertInto('policy_tokens')
      .values({
        id: '0190f0b2-6c5e-7000-8000-0000000000aa',
        organization_id: organizationId,
        name: 'legacy agent',
        name_key: 'legacy agent',
        description: null,
        opa_policy: 'package agent\n\nallow if {\n',
        token_hash: minted.hash,
        token_start: minted.start,
        creator_user_id: owner.id,
        creator_name: null,
        expires_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const response = await ctx().call(`Bearer ${minted.value}`, { method: 'GET', url: `/organization/${organizationId}/project` });
    expectPolicyDenial(response, 'legacy agent');
  });

  // ---------------------------------------------------------------------------------------------------------------
  // Decisions on real requests

  it('gives a policy that allows everything organization-admin reach in its own organization', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const existing = await createProject(owner.auth, organizationId, 'owner-project');
    const unbounded = await agent(owner.auth, organizationId, ALLOW_ALL);

    const listed = await ctx().call(unbounded.auth, { method: 'GET', url: `/organization/${organizationId}/project` });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<{ results: { id: string }[] }>().results.map((project) => project.id)).toEqual([existing]);

    const created = await createProject(unbounded.auth, organizationId, 'agent-made');
    const got = await ctx().call(unbounded.auth, { method: 'GET', url: `/project/${created}` });
    expect(got.statusCode, got.body).toBe(200);
    const edited = await ctx().call(unbounded.auth, { method: 'PUT', url: `/project/${created}`, payload: { name: 'agent-renamed' } });
    expect(edited.statusCode, edited.body).toBe(200);
    const removed = await ctx().call(unbounded.auth, { method: 'DELETE', url: `/project/${existing}` });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await projectNames(organizationId)).toEqual(['agent-renamed']);

    const renamed = uniqueName('renamed-by-agent');
    const organization = await ctx().call(unbounded.auth, { method: 'PUT', url: `/organization/${organizationId}`, payload: { name: renamed } });
    expect(organization.statusCode, organization.body).toBe(200);
    expect(organization.json<{ name: string }>().name).toBe(renamed);

    for (const url of [
      `/organization/${organizationId}`,
      `/organization/${organizationId}/availableRole`,
      `/organization/${organizationId}/apiToken`,
      `/organization/${organizationId}/policyApiToken`,
      `/organization/${organizationId}/onboarding`,
      `/organization/${organizationId}/project/stats`,
    ]) {
      const response = await ctx().call(unbounded.auth, { method: 'GET', url });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    }
  });

  it('reveals secret values with a policy that allows everything, as an organization ADMIN may', async () => {
    const { owner, organizationId, fixture } = await createRevealWorld(ctx());
    const unbounded = await agent(owner.auth, organizationId, ALLOW_ALL);
    const password = expectRevealed(await ctx().call(owner.auth, { method: 'GET', url: `${revealingUrls(fixture)[1]}?reveal=true` }), fixture);
    for (const url of revealingUrls(fixture)) {
      expect(expectRevealed(await ctx().call(unbounded.auth, { method: 'GET', url: `${url}?reveal=true` }), fixture)).toBe(password);
    }
  });

  it('can delete its own organization with a policy that allows everything, and then authenticates no more', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const unbounded = await agent(owner.auth, organizationId, ALLOW_ALL);
    const deleted = await ctx().call(unbounded.auth, { method: 'DELETE', url: `/organization/${organizationId}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await policyTokenRows(organizationId)).toEqual([]);
    expectErrorBody(await ctx().call(unbounded.auth, { method: 'GET', url: '/organization' }), 401);
  });

  it('lists only its own organization, even when its creator belongs to others', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const otherOfOwner = await ctx().createOrganization(owner);
    const unbounded = await agent(owner.auth, organizationId, ALLOW_ALL);

    const byOwner = await ctx().call(owner.auth, { method: 'GET', url: '/organization' });
    expect(byOwner.json<{ results: { id: string }[] }>().results.map((organization) => organization.id).sort()).toEqual(
      [organizationId, otherOfOwner].sort(),
    );
    const byAgent = await ctx().call(unbounded.auth, { method: 'GET', url: '/organization' });
    expect(byAgent.statusCode, byAgent.body).toBe(200);
    expect(byAgent.json<{ results: { id: string }[] }>().results.map((organization) => organization.id)).toEqual([organizationId]);
    expect(byAgent.body).not.toContain(otherOfOwner);

    // The owner's other organization is as closed to the agent as any stranger's.
    expectErrorBody(await ctx().call(unbounded.auth, { method: 'GET', url: `/organization/${otherOfOwner}` }), 404);
    expectErrorBody(await ctx().call(unbounded.auth, { method: 'GET', url: `/organization/${otherOfOwner}/project` }), 404);
  });

  it("answers 404 on every route of another organization, even with a policy that allows everything, and changes nothing", async () => {
    const home = await ctx().signUpWithOrganization();
    const victim = await ctx().signUpWithOrganization();
    const victimProject = await createProject(victim.owner.auth, victim.organizationId, 'victim-project');
    const victimApiToken = await ctx().call(victim.owner.auth, {
      method: 'POST',
      url: `/organization/${victim.organizationId}/apiToken`,
      payload: { name: 'victim token', scope: 'READ' },
    });
    expect(victimApiToken.statusCode).toBe(201);
    const victimPolicyToken = await agent(victim.owner.auth, victim.organizationId, ALLOW_GET_ONLY);
    const unbounded = await agent(home.owner.auth, home.organizationId, ALLOW_ALL);
    const org = `/organization/${victim.organizationId}`;

    const requests: InjectOptions[] = [
      { method: 'GET', url: org },
      { method: 'PUT', url: org, payload: { name: 'taken over' } },
      { method: 'DELETE', url: org },
      { method: 'GET', url: `${org}/availableRole` },
      { method: 'GET', url: `${org}/onboarding` },
      { method: 'GET', url: `${org}/apiToken` },
      { method: 'POST', url: `${org}/apiToken`, payload: { name: 'planted', scope: 'ADMIN' } },
      { method: 'DELETE', url: `${org}/apiToken/${victimApiToken.json<{ id: string }>().id}` },
      { method: 'GET', url: `${org}/policyApiToken` },
      { method: 'POST', url: `${org}/policyApiToken`, payload: { name: 'planted', opa_policy: ALLOW_ALL } },
      { method: 'POST', url: `${org}/policyApiToken/evaluate`, payload: { opa_policy: ALLOW_ALL, input: {} } },
      { method: 'DELETE', url: `${org}/policyApiToken/${victimPolicyToken.id}` },
      { method: 'GET', url: `${org}/project` },
      { method: 'POST', url: `${org}/project`, payload: { name: 'planted' } },
      { method: 'GET', url: `${org}/project/stats` },
      { method: 'GET', url: `/project/${victimProject}` },
      { method: 'PUT', url: `/project/${victimProject}`, payload: { name: 'taken over' } },
      { method: 'DELETE', url: `/project/${victimProject}` },
    ];
    for (const request of requests) {
      const response = await ctx().call(unbounded.auth, request);
      const body = expectErrorBody(response, 404);
      // Indistinguishable from a missing resource: the policy is never mentioned, so it was never asked.
      expect(body.message, `${request.method} ${request.url}`).not.toContain('policy of policy API token');
    }
    // Acting as a person is refused everywhere, whichever organization is named.
    expectErrorBody(await ctx().call(unbounded.auth, { method: 'POST', url: `${org}/onboarding`, payload: { status: 'DONE' } }), 403);

    expect(await projectNames(victim.organizationId)).toEqual(['victim-project']);
    expect((await policyTokenRows(victim.organizationId)).map((row) => row.id)).toEqual([victimPolicyToken.id]);
    const victimApiTokens = await ctx().database.db.selectFrom('api_tokens').select('name').where('organization_id', '=', victim.organizationId).execute();
    expect(victimApiTokens).toEqual([{ name: 'victim token' }]);
    const organization = await ctx().database.db.selectFrom('organizations').select('name').where('id', '=', victim.organizationId).executeTakeFirst();
    expect(organization?.name).not.toBe('taken over');
    const onboarding = await ctx().call(victim.owner.auth, { method: 'GET', url: `${org}/onboarding` });
    expect(onboarding.statusCode).toBe(200);
    expect(onboarding.body).not.toContain('DONE');
  });

  it('denies with 403 and the policy message what a method allow-list leaves out, and writes nothing', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createProject(owner.auth, organizationId, 'kept');
    const reader = await agent(owner.auth, organizationId, ALLOW_GET_ONLY);

    expect((await ctx().call(reader.auth, { method: 'GET', url: `/organization/${organizationId}/project` })).statusCode).toBe(200);
    expect((await ctx().call(reader.auth, { method: 'GET', url: `/project/${project}` })).statusCode).toBe(200);

    const created = await ctx().call(reader.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'refused' } });
    const message = expectPolicyDenial(created, reader.name);
    expect(message).toContain('allow is false');
    expectPolicyDenial(await ctx().call(reader.auth, { method: 'PUT', url: `/project/${project}`, payload: { name: 'renamed' } }), reader.name);
    expectPolicyDenial(await ctx().call(reader.auth, { method: 'DELETE', url: `/project/${project}` }), reader.name);
    expectPolicyDenial(await ctx().call(reader.auth, { method: 'DELETE', url: `/organization/${organizationId}` }), reader.name);
    expect(await projectNames(organizationId)).toEqual(['kept']);
  });

  it('decides on input.path and input.route', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const byPath = await agent(
      owner.auth,
      organizationId,
      `package agent\n\nallow if {\n\tinput.method == "GET"\n\tinput.path == ["organization", ${JSON.stringify(organizationId)}, "project"]\n}\n`,
    );
    expect((await ctx().call(byPath.auth, { method: 'GET', url: `/organization/${organizationId}/project` })).statusCode).toBe(200);
    expectPolicyDenial(await ctx().call(byPath.auth, { method: 'GET', url: `/organization/${organizationId}` }), byPath.name);
    expectPolicyDenial(await ctx().call(byPath.auth, { method: 'GET', url: `/organization/${organizationId}/project/stats` }), byPath.name);

    const byRoute = await agent(owner.auth, organizationId, 'package agent\n\nallow if input.route == "/organization/{organizationId}/project/stats"\n');
    expect((await ctx().call(byRoute.auth, { method: 'GET', url: `/organization/${organizationId}/project/stats` })).statusCode).toBe(200);
    expectPolicyDenial(await ctx().call(byRoute.auth, { method: 'GET', url: `/organization/${organizationId}/project` }), byRoute.name);

    // A path prefix rule: anything under /project/… but nothing of the organization itself.
    const byPrefix = await agent(owner.auth, organizationId, 'package agent\n\nallow if input.path[0] == "project"\n');
    const project = await createProject(owner.auth, organizationId);
    expect((await ctx().call(byPrefix.auth, { method: 'GET', url: `/project/${project}` })).statusCode).toBe(200);
    expectPolicyDenial(await ctx().call(byPrefix.auth, { method: 'GET', url: `/organization/${organizationId}/project` }), byPrefix.name);
  });

  it('decides on input.operation_id, input.params and input.query', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const mine = await createProject(owner.auth, organizationId, 'mine');
    const theirs = await createProject(owner.auth, organizationId, 'theirs');

    const byOperation = await agent(owner.auth, organizationId, 'package agent\n\nallow if input.operation_id in {"listProject", "getProject"}\n');
    expect((await ctx().call(byOperation.auth, { method: 'GET', url: `/organization/${organizationId}/project` })).statusCode).toBe(200);
    expect((await ctx().call(byOperation.auth, { method: 'GET', url: `/project/${theirs}` })).statusCode).toBe(200);
    expectPolicyDenial(await ctx().call(byOperation.auth, { method: 'PUT', url: `/project/${theirs}`, payload: { name: 'x' } }), byOperation.name);
    expectPolicyDenial(await ctx().call(byOperation.auth, { method: 'GET', url: `/organization/${organizationId}/project/stats` }), byOperation.name);

    const byParams = await agent(owner.auth, organizationId, `package agent\n\nallow if input.params.projectId == ${JSON.stringify(mine)}\n`);
    expect((await ctx().call(byParams.auth, { method: 'GET', url: `/project/${mine}` })).statusCode).toBe(200);
    const renamed = await ctx().call(byParams.auth, { method: 'PUT', url: `/project/${mine}`, payload: { name: 'mine-renamed' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expectPolicyDenial(await ctx().call(byParams.auth, { method: 'GET', url: `/project/${theirs}` }), byParams.name);
    expectPolicyDenial(await ctx().call(byParams.auth, { method: 'DELETE', url: `/project/${theirs}` }), byParams.name);

    const byQuery = await agent(owner.auth, organizationId, 'package agent\n\nallow if input.query.name == "deploy"\n');
    const filtered = await ctx().call(byQuery.auth, { method: 'GET', url: `/organization/${organizationId}/apiToken`, query: { name: 'deploy' } });
    expect(filtered.statusCode, filtered.body).toBe(200);
    expectPolicyDenial(await ctx().call(byQuery.auth, { method: 'GET', url: `/organization/${organizationId}/apiToken` }), byQuery.name);
    expect(await projectNames(organizationId)).toEqual(['mine-renamed', 'theirs']);
  });

  it('decides on input.body: only projects whose name starts with "agent-"', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const namer = await agent(
      owner.auth,
      organizationId,
      [
        'package agent',
        '',
        'allow if input.method == "GET"',
        '',
        'allow if {',
        '\tinput.operation_id in {"createProject", "editProject"}',
        '\tstartswith(input.body.name, "agent-")',
        '}',
        '',
      ].join('\n'),
    );
    const made = await createProject(namer.auth, organizationId, 'agent-one');
    expectPolicyDenial(
      await ctx().call(namer.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: 'human-one' } }),
      namer.name,
    );
    // No body, or a body whose name is not a string: the rule is undefined, so the request is denied.
    expectPolicyDenial(await ctx().call(namer.auth, { method: 'POST', url: `/organization/${organizationId}/project` }), namer.name);
    expectPolicyDenial(
      await ctx().call(namer.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: ['agent-x'] } }),
      namer.name,
    );
    expectPolicyDenial(await ctx().call(namer.auth, { method: 'PUT', url: `/project/${made}`, payload: { name: 'human-renamed' } }), namer.name);
    const renamed = await ctx().call(namer.auth, { method: 'PUT', url: `/project/${made}`, payload: { name: 'agent-renamed' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(await projectNames(organizationId)).toEqual(['agent-renamed']);
  });

  it('sees a reveal as input.query.reveal, a boolean, on every route that can reveal', async () => {
    const { owner, organizationId, fixture } = await createRevealWorld(ctx());
    const environmentUrl = `/environment/${fixture.environmentId}/resolvedVariables`;
    const expected = (reveal: boolean) => ({
      method: 'GET',
      path: ['environment', fixture.environmentId, 'resolvedVariables'],
      route: '/environment/{environmentId}/resolvedVariables',
      operation_id: 'listEnvironmentResolvedVariables',
      params: { environmentId: fixture.environmentId },
      query: { reveal },
      body: null,
      organization_id: organizationId,
    });
    const exact = async (reveal: boolean) => {
      const name = uniqueName(`reveal-${String(reveal)}`);
      const created = await createdPolicyToken(owner.auth, organizationId, { name, opa_policy: exactInputPolicy(expected(reveal), name) });
      return { auth: `Bearer ${created.token}`, name };
    };
    // Asked: true, whatever spelling asks (the validator then refuses what it cannot read, 400 after the policy).
    const asking = await exact(true);
    expectRevealed(await ctx().call(asking.auth, { method: 'GET', url: `${environmentUrl}?reveal=true` }), fixture);
    expectErrorBody(await ctx().call(asking.auth, { method: 'GET', url: `${environmentUrl}?reveal=yes` }), 400);
    expectPolicyDenial(await ctx().call(asking.auth, { method: 'GET', url: environmentUrl }), asking.name);
    // Not asked: false, also when the parameter is absent.
    const masked = await exact(false);
    expectMasked(await ctx().call(masked.auth, { method: 'GET', url: environmentUrl }), fixture);
    expectMasked(await ctx().call(masked.auth, { method: 'GET', url: `${environmentUrl}?reveal=false` }), fixture);
    expectPolicyDenial(await ctx().call(masked.auth, { method: 'GET', url: `${environmentUrl}?reveal=true` }), masked.name);

    // Every revealing route gives the policy the boolean, and a policy can decide on it alone.
    const onlyMasked = await agent(owner.auth, organizationId, 'package agent\n\nallow if input.query.reveal == false\n');
    for (const url of revealingUrls(fixture)) {
      expectMasked(await ctx().call(onlyMasked.auth, { method: 'GET', url }), fixture);
      expectPolicyDenial(await ctx().call(onlyMasked.auth, { method: 'GET', url: `${url}?reveal=true` }), onlyMasked.name);
    }
  });

  it("denies a reveal and allows the masked read under the README's read-only policy and the docs' examples", async () => {
    const { owner, organizationId, fixture } = await createRevealWorld(ctx());
    const password = expectRevealed(await ctx().call(owner.auth, { method: 'GET', url: `${revealingUrls(fixture)[1]}?reveal=true` }), fixture);
    const policies = [readmeReadOnlyPolicy(), ...documentedPolicies()];
    expect(policies.length).toBeGreaterThanOrEqual(2);
    for (const policy of policies) {
      const reader = await agent(owner.auth, organizationId, policy);
      for (const url of revealingUrls(fixture)) {
        const refused = await ctx().call(reader.auth, { method: 'GET', url: `${url}?reveal=true` });
        expectPolicyDenial(refused, reader.name);
        expect(refused.body).not.toContain(password);
        expectMasked(await ctx().call(reader.auth, { method: 'GET', url }), fixture, password);
        expectMasked(await ctx().call(reader.auth, { method: 'GET', url: `${url}?reveal=false` }), fixture, password);
      }
      // Still a reader of everything else, and no writer.
      expect((await ctx().call(reader.auth, { method: 'GET', url: `/organization/${organizationId}/project` })).statusCode).toBe(200);
      expectPolicyDenial(await ctx().call(reader.auth, { method: 'DELETE', url: `/environment/${fixture.environmentId}` }), reader.name);
    }
    // The dry run agrees with the real endpoint on the README's policy.
    const decide = async (reveal: boolean) =>
      (
        await dryRun(owner.auth, organizationId, {
          opa_policy: readmeReadOnlyPolicy(),
          input: { method: 'GET', route: '/environment/{environmentId}/resolvedVariables', query: { reveal } },
        })
      ).json<{ allow: boolean }>().allow;
    expect(await decide(true)).toBe(false);
    expect(await decide(false)).toBe(true);
  });

  it('sees the input document of DESIGN.md §5, exactly', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const project = await createProject(owner.auth, organizationId, 'shape-project');

    const listName = uniqueName('shape-list');
    const listShape = await createdPolicyToken(owner.auth, organizationId, {
      name: listName,
      opa_policy: exactInputPolicy(
        {
          method: 'GET',
          path: ['organization', organizationId, 'apiToken'],
          route: '/organization/{organizationId}/apiToken',
          operation_id: 'listOrganizationApiTokens',
          params: { organizationId },
          query: { name: 'ci' },
          body: null,
          organization_id: organizationId,
        },
        listName,
      ),
    });
    const listAuth = `Bearer ${listShape.token}`;
    const matching = await ctx().call(listAuth, { method: 'GET', url: `/organization/${organizationId}/apiToken?name=ci` });
    expect(matching.statusCode, matching.body).toBe(200);
    expectPolicyDenial(await ctx().call(listAuth, { method: 'GET', url: `/organization/${organizationId}/apiToken?name=cd` }), listName);

    // A project route: the organization comes from the project's owner, the body is the parsed JSON.
    const editName = uniqueName('shape-edit');
    const editShape = await createdPolicyToken(owner.auth, organizationId, {
      name: editName,
      opa_policy: exactInputPolicy(
        {
          method: 'PUT',
          path: ['project', project],
          route: '/project/{projectId}',
          operation_id: 'editProject',
          params: { projectId: project },
          query: {},
          body: { name: 'shape-renamed', description: 'by an agent' },
          organization_id: organizationId,
        },
        editName,
      ),
    });
    const editAuth = `Bearer ${editShape.token}`;
    const edited = await ctx().call(editAuth, {
      method: 'PUT',
      url: `/project/${project}`,
      payload: { name: 'shape-renamed', description: 'by an agent' },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expectPolicyDenial(await ctx().call(editAuth, { method: 'PUT', url: `/project/${project}`, payload: { name: 'shape-renamed' } }), editName);

    // A route that names no organization: the token's own organization is the one the request acts on.
    const rootName = uniqueName('shape-root');
    const rootShape = await createdPolicyToken(owner.auth, organizationId, {
      name: rootName,
      opa_policy: exactInputPolicy(
        {
          method: 'GET',
          path: ['organization'],
          route: '/organization',
          operation_id: 'listOrganization',
          params: {},
          query: {},
          body: null,
          organization_id: organizationId,
        },
        rootName,
      ),
    });
    const listedRoot = await ctx().call(`Bearer ${rootShape.token}`, { method: 'GET', url: '/organization' });
    expect(listedRoot.statusCode, listedRoot.body).toBe(200);

    // The token part carries this token's own id: shown by a policy whose allow is that object (not true, so denied).
    const probeName = uniqueName('shape-token');
    const probe = await createdPolicyToken(owner.auth, organizationId, { name: probeName, opa_policy: 'package agent\n\nallow := input.token\n' });
    const denied = expectPolicyDenial(await ctx().call(`Bearer ${probe.token}`, { method: 'GET', url: `/organization/${organizationId}` }), probeName);
    expect(denied).toContain(JSON.stringify({ id: probe.id, name: probeName }));
  });

  it('denies when allow is not exactly true: a string, a number, false, or undefined', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const listProjects = { method: 'GET', url: `/organization/${organizationId}/project` } as const;
    const cases: [string, RegExp][] = [
      ['package agent\n\nallow := "yes"\n', /allow is "yes", not true/],
      ['package agent\n\nallow := 1\n', /allow is 1, not true/],
      ['package agent\n\nallow := [true]\n', /not true/],
      ['package agent\n\nallow contains "everything" if true\n', /not true/],
      ['package agent\n\nallow.everything := true\n', /not true/],
      ['package agent\n\nallow(x) := true if x\n', /undefined/],
      ['package agent\n\nallow := false\n', /allow is false/],
      ['package agent\n\nallow if input.method == "DELETE"\n', /undefined/],
      ['package agent\n\nallow if to_number("not a number") > 0\n', /undefined/],
    ];
    for (const [policy, reason] of cases) {
      const token = await agent(owner.auth, organizationId, policy);
      const message = expectPolicyDenial(await ctx().call(token.auth, listProjects), token.name);
      expect(message, policy).toMatch(reason);
    }
  });

  it('denies with 403, not 500, when the policy fails at run time', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const listProjects = { method: 'GET', url: `/organization/${organizationId}/project` } as const;
    const failing = [
      // Two different values for one complete rule: a conflict error in OPA.
      'package agent\n\nallow := true if input.method == "GET"\n\nallow := false if startswith(input.path[0], "org")\n',
      // Two values for one key of an object rule.
      'package agent\n\nlimits[key] := value if {\n\tsome key in ["a"]\n\tsome value in [1, 2]\n}\n\nallow if limits.a == 1\n',
      // A function with two different outputs for one argument.
      'package agent\n\nf(x) := 1 if x == "GET"\n\nf(x) := 2 if x == "GET"\n\nallow if f(input.method) == 1\n',
    ];
    for (const policy of failing) {
      const token = await agent(owner.auth, organizationId, policy);
      const message = expectPolicyDenial(await ctx().call(token.auth, listProjects), token.name);
      expect(message, policy).toMatch(/evaluation failed|conflict/);
    }
    // Where only one of the conflicting rules applies, the same policy decides normally.
    const conflictToken = await agent(owner.auth, organizationId, failing[0] as string);
    const project = await createProject(owner.auth, organizationId);
    const unconflicted = await ctx().call(conflictToken.auth, { method: 'GET', url: `/project/${project}` });
    expect(unconflicted.statusCode, unconflicted.body).toBe(200);
  });

  it('denies a pathological policy within its budget instead of stalling the server', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const listProjects = { method: 'GET', url: `/organization/${organizationId}/project` } as const;
    const pathological = [
      'package agent\n\nallow if count([x | some x in numbers.range(0, 100000000)]) > 0\n',
      'package agent\n\nallow if {\n\tevery x in numbers.range(1, 100000) {\n\t\tevery y in numbers.range(1, 100000) {\n\t\t\tx + y > 0\n\t\t}\n\t}\n}\n',
      'package agent\n\nallow if {\n\tsome a in numbers.range(1, 1000)\n\tsome b in numbers.range(1, 1000)\n\tsome c in numbers.range(1, 1000)\n\ta + b + c == -1\n}\n',
      // Catastrophic backtracking for a backtracking engine; linear under RE2, and no match: "b" ends the subject.
      'package agent\n\nallow if regex.match("^(a+)+$", concat("", array.concat([s | some _ in numbers.range(1, 5000); s := "a"], ["b"])))\n',
    ];
    // Each rule ten times longer than the one before: 10^11 characters if nothing stopped it.
    const growing = ['package agent', '', 'r0 := "aaaaaaaaaa"'];
    for (let level = 1; level <= 10; level += 1) {
      growing.push(`r${level} := concat("", [${Array.from({ length: 10 }, () => `r${level - 1}`).join(', ')}])`);
    }
    growing.push('', 'allow if count(r10) > 0', '');
    pathological.push(growing.join('\n'));
    for (const policy of pathological) {
      const token = await agent(owner.auth, organizationId, policy);
      expectPolicyDenial(await ctx().call(token.auth, listProjects), token.name);
    }
    // The server still answers normally afterwards.
    expect((await ctx().call(owner.auth, listProjects)).statusCode).toBe(200);
  });

  it('denies within the budget when each builtin call is expensive, not only when there are many steps', async () => {
    // Few evaluation steps, each a glob match of a 4000-character pattern against a 5000-character subject.
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const expensive = [
      'package agent',
      '',
      'allow if {',
      '\tsome i in numbers.range(1, 30)',
      `\tglob.match("${'*a'.repeat(2000)}", [], concat("", [sprintf("%d", [i]), "${'a'.repeat(5000)}b"]))`,
      '}',
      '',
    ].join('\n');
    const token = await agent(owner.auth, organizationId, expensive);
    expectPolicyDenial(await ctx().call(token.auth, { method: 'GET', url: `/organization/${organizationId}/project` }), token.name);
  });

  it('refuses an input too deep to evaluate with a 4xx, never 500, and writes nothing', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const unbounded = await agent(owner.auth, organizationId, ALLOW_ALL);
    for (const depth of [5_000, 100_000]) {
      const response = await ctx().call(unbounded.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/project`,
        headers: { 'content-type': 'application/json' },
        payload: `{"name": "agent-deep", "description": ${'['.repeat(depth)}${']'.repeat(depth)}}`,
      });
      // Denied by the policy (an input it cannot evaluate) or refused as invalid: either way a 4xx with the error body.
      expect([400, 403], `depth ${depth}: ${response.body.slice(0, 300)}`).toContain(response.statusCode);
      expectErrorBody(response, response.statusCode);
    }
    expect(await projectNames(organizationId)).toEqual([]);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // Dry run

  it('evaluates a policy on a sample input without creating a token', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const policy = 'package agent\n\nallow if {\n\tinput.method == "GET"\n\tinput.path[0] == "project"\n}\n';

    const allowed = await dryRun(owner.auth, organizationId, { opa_policy: policy, input: { method: 'GET', path: ['project', UNKNOWN_ID] } });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(allowed.json()).toEqual({ allow: true, reason: expect.any(String) });

    const undefinedAllow = await dryRun(owner.auth, organizationId, { opa_policy: policy, input: { method: 'POST', path: ['project'] } });
    expect(undefinedAllow.statusCode).toBe(200);
    expect(undefinedAllow.json()).toEqual({ allow: false, reason: expect.stringContaining('undefined') });

    const notTrue = await dryRun(owner.auth, organizationId, { opa_policy: 'package agent\n\nallow := input.answer\n', input: { answer: 'yes' } });
    expect(notTrue.json()).toEqual({ allow: false, reason: expect.stringContaining('"yes"') });

    const conflict = await dryRun(owner.auth, organizationId, {
      opa_policy: 'package agent\n\nallow := true if input.a\n\nallow := false if input.b\n',
      input: { a: true, b: true },
    });
    expect(conflict.statusCode, conflict.body).toBe(200);
    expect(conflict.json<{ allow: boolean }>().allow).toBe(false);

    const budget = await dryRun(owner.auth, organizationId, {
      opa_policy: 'package agent\n\nallow if {\n\tevery x in numbers.range(1, 100000) {\n\t\tevery y in numbers.range(1, 100000) {\n\t\t\tx + y > 0\n\t\t}\n\t}\n}\n',
      input: {},
    });
    expect(budget.statusCode, budget.body).toBe(200);
    expect(budget.json<{ allow: boolean }>().allow).toBe(false);

    expectPolicyRefusedAt(await dryRun(owner.auth, organizationId, { opa_policy: 'package agent\n\nallow if {\n\tx == 1\n}\n', input: {} }), 4, 2);
    expectPolicyRefusedAt(await dryRun(owner.auth, organizationId, { opa_policy: 'package agent\n\nallow if {\n', input: {} }));
    expectErrorBody(await dryRun(owner.auth, organizationId, { opa_policy: policy }), 400);
    expectErrorBody(await dryRun(owner.auth, organizationId, { opa_policy: policy, input: 'GET' }), 400);
    expectErrorBody(await dryRun(owner.auth, organizationId, { opa_policy: policy, input: {}, name: 'extra' }), 400);
    expect(await policyTokenRows(organizationId)).toEqual([]);

    // Only those who may see policies may try them.
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    expectErrorBody(await dryRun(viewer.auth, organizationId, { opa_policy: policy, input: {} }), 403);
  });

  it('answers a dry run on an input too deep to evaluate with a denial or a 400, never 500', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const deep = await ctx().call(owner.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/policyApiToken/evaluate`,
      headers: { 'content-type': 'application/json' },
      payload: `{"opa_policy": ${JSON.stringify(ALLOW_ALL)}, "input": {"d": ${'['.repeat(20_000)}${']'.repeat(20_000)}}}`,
    });
    expect(deep.statusCode, deep.body.slice(0, 300)).toBeLessThan(500);
    if (deep.statusCode === 200) expect(deep.json<{ allow: boolean }>().allow).toBe(false);
    else expectErrorBody(deep, 400);
  });
});
