import type { Kysely } from 'kysely';
import { principalDisplayName, refuseMintingByPolicyToken, type Access, type Principal } from '../../auth/principal.ts';
import { hashToken, mintToken, requestedExpiry, storedTokenIsLive } from '../../auth/tokens.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { CompiledPolicy, PolicyEngine, PolicyVerdict } from '../../policy/policy.engine.ts';
import {
  deleteOrganizationPolicyTokens,
  deletePolicyToken,
  findPolicyTokenByHash,
  findPolicyTokenById,
  insertPolicyToken,
  listPolicyTokens,
  type PolicyTokenRow,
} from './policy-tokens.repo.ts';

export interface PolicyTokensDeps {
  db: Kysely<DB>;
  clock: Clock;
  engine: PolicyEngine;
}

export interface PolicyTokenInput {
  name: string;
  description?: string | null | undefined;
  opa_policy: string;
  role_id?: string | null | undefined;
  expires_at?: string | null | undefined;
}

function view(row: PolicyTokenRow) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    // Not nullable in the reference: a token without a description leaves it out, and a policy token has no role
    // (SPEC.md), so it has no role_name or role_id.
    ...(row.description === null ? {} : { description: row.description }),
    opa_policy: row.opa_policy,
    creator_name: row.creator_name,
    expires_at: row.expires_at,
    token_start: row.token_start,
  };
}

/** Compiled policies kept in memory; a token's policy never changes, so its compiled form is valid until revoked. */
const COMPILED_CACHE_SIZE = 1000;

/**
 * Organization policy API tokens for autonomous agents (SPEC.md): no role, a Rego policy that decides every request.
 * The value is shown once and stored as SHA-256, like API tokens; the policy is compiled at creation (so a bad
 * one is a 400 with line and column) and again, once, on the first request after a restart.
 */
export function createPolicyTokensService(deps: PolicyTokensDeps) {
  const { db, clock, engine } = deps;
  const compiled = new Map<string, CompiledPolicy>();

  function remember(tokenId: string, policy: CompiledPolicy): void {
    if (compiled.size >= COMPILED_CACHE_SIZE) {
      const oldest = compiled.keys().next().value;
      if (oldest !== undefined) compiled.delete(oldest);
    }
    compiled.set(tokenId, policy);
  }

  function compiledPolicyOf(row: PolicyTokenRow): CompiledPolicy {
    const known = compiled.get(row.id);
    if (known !== undefined) return known;
    const policy = engine.compile(row.opa_policy);
    remember(row.id, policy);
    return policy;
  }

  async function resolvePolicyToken(value: string): Promise<Principal | undefined> {
    const hash = hashToken(value);
    const row = await findPolicyTokenByHash(db, hash);
    if (row === undefined || !storedTokenIsLive(row, hash, isoTimestamp(clock))) return undefined;
    return { kind: 'policy_token', tokenId: row.id, tokenName: row.name, organizationId: row.organization_id };
  }

  /**
   * The decision of a token's policy on one request's input. A token revoked meanwhile decides nothing, and a stored
   * policy that no longer compiles (the engine's limits changed since it was created) denies everything.
   */
  async function policyVerdict(tokenId: string, input: unknown): Promise<PolicyVerdict> {
    let policy = compiled.get(tokenId);
    if (policy === undefined) {
      const row = await findPolicyTokenById(db, tokenId);
      if (row === undefined) return { allow: false, reason: 'the token has been revoked' };
      try {
        policy = compiledPolicyOf(row);
      } catch (error) {
        if (error instanceof AppError) return { allow: false, reason: `its policy no longer compiles: ${error.details?.[0]?.message ?? error.message}` };
        throw error;
      }
    }
    return engine.decide(policy, input);
  }

  async function createPolicyToken(principal: Principal, access: Access, input: PolicyTokenInput) {
    refuseMintingByPolicyToken(principal);
    if (input.role_id !== undefined && input.role_id !== null) {
      throw badRequest('a policy API token carries no role; its policy alone decides what it may do', [
        { field: '/role_id', message: 'must be null or absent' },
      ]);
    }
    const policy = engine.compile(input.opa_policy);
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const minted = mintToken('policy');
    const row: PolicyTokenRow = {
      id: newId(),
      organization_id: access.organizationId,
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      opa_policy: input.opa_policy,
      token_hash: minted.hash,
      token_start: minted.start,
      creator_user_id: principal.kind === 'user' ? principal.userId : null,
      creator_name: principalDisplayName(principal),
      expires_at: requestedExpiry(input.expires_at, now),
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(async () => {
      await insertPolicyToken(db, row);
    }, `a policy API token named "${name}" already exists in this organization`);
    remember(row.id, policy);
    return { ...view(row), token: minted.value };
  }

  async function listOrganizationPolicyTokens(organizationId: string) {
    return (await listPolicyTokens(db, organizationId)).map(view);
  }

  async function revokePolicyToken(organizationId: string, tokenId: string): Promise<void> {
    if (!(await deletePolicyToken(db, organizationId, tokenId))) throw notFound(`policy API token ${tokenId} not found`);
    compiled.delete(tokenId);
  }

  /** The dry run: what a policy would decide for an input, without creating a token. */
  function evaluatePolicy(source: string, input: unknown): PolicyVerdict {
    return engine.decide(engine.compile(source), input);
  }

  return {
    resolvePolicyToken,
    policyVerdict,
    createPolicyToken,
    listOrganizationPolicyTokens,
    revokePolicyToken,
    evaluatePolicy,
    removeOrganizationPolicyTokens: (trx: Queryable, organizationId: string) => deleteOrganizationPolicyTokens(trx, organizationId),
  };
}

export type PolicyTokensService = ReturnType<typeof createPolicyTokensService>;
