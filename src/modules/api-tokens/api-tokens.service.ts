import type { Kysely } from 'kysely';
import { covers, grantsOfToken, type TokenScope } from '../../auth/permissions.ts';
import { principalDisplayName, refuseMintingByPolicyToken, type Access, type Principal } from '../../auth/principal.ts';
import { hashToken, mintToken, requestedExpiry, storedTokenIsLive } from '../../auth/tokens.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, forbidden, notFound, unauthenticated } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { RolesService } from '../roles/roles.service.ts';
import {
  deleteOrganizationApiTokens,
  deleteApiToken,
  findApiToken,
  findApiTokenByHash,
  insertApiToken,
  listApiTokens,
  type ApiTokenWithRole,
} from './api-tokens.repo.ts';

export interface ApiTokensDeps {
  db: Kysely<DB>;
  clock: Clock;
  roles: Pick<RolesService, 'findRole'>;
}

export interface ApiTokenInput {
  name: string;
  description?: string | null | undefined;
  scope?: TokenScope | null | undefined;
  role_id?: string | null | undefined;
  expires_at?: string | null | undefined;
}

function view(row: ApiTokenWithRole) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    // Not nullable in the reference: what a token does not have is left out.
    ...(row.description === null ? {} : { description: row.description }),
    ...(row.role_id === null || row.role_name === null ? {} : { role_name: row.role_name, role_id: row.role_id }),
    scope: row.scope,
    expires_at: row.expires_at,
    creator_name: row.creator_name,
    token_start: row.token_start,
  };
}

/** Case-insensitive substring match; locale-independent, like name keys, so the server's locale cannot change it. */
function includesFolded(text: string | null, wanted: string | undefined): boolean {
  return wanted === undefined || (text ?? '').toLowerCase().includes(wanted.toLowerCase());
}

/**
 * Organization API tokens: minted once (the value is in the create answer and nowhere else), stored as SHA-256,
 * looked up by hash on every request, so revocation and expiry take effect on every replica at once.
 */
export function createApiTokensService(deps: ApiTokensDeps) {
  const { db, clock } = deps;

  async function resolveApiToken(value: string): Promise<Principal | undefined> {
    const hash = hashToken(value);
    const row = await findApiTokenByHash(db, hash);
    if (row === undefined || !storedTokenIsLive(row, hash, isoTimestamp(clock))) return undefined;
    return {
      kind: 'api_token',
      tokenId: row.id,
      tokenName: row.name,
      organizationId: row.organization_id,
      grants: grantsOfToken(row.role_name, row.scope as TokenScope | null, row.role_kind ?? undefined),
      creatorUserId: row.creator_user_id,
      customRoleId: row.role_kind === 'CUSTOM' ? row.role_id : null,
    };
  }

  /**
   * A token never outlives the token that minted it, or a short-lived token could hand its rights on forever: a
   * minted token's expiry defaults to its creator's and may not pass it. People mint tokens of any lifetime.
   */
  async function expiryWithin(principal: Principal, organizationId: string, requested: string | null): Promise<string | null> {
    if (principal.kind !== 'api_token') return requested;
    const creator = await findApiToken(db, organizationId, principal.tokenId);
    // Revoked between authentication and here: the caller no longer holds any right to hand on.
    if (creator === undefined) throw unauthenticated('the API token is invalid, expired or revoked');
    if (creator.expires_at === null) return requested;
    if (requested === null) return creator.expires_at;
    if (requested > creator.expires_at) {
      throw forbidden(`a token cannot outlive the token that creates it; this one expires at ${creator.expires_at}`);
    }
    return requested;
  }

  async function createApiToken(principal: Principal, access: Access, input: ApiTokenInput) {
    refuseMintingByPolicyToken(principal);
    const organizationId = access.organizationId;
    const roleId = input.role_id ?? null;
    const scope = input.scope ?? null;
    if (roleId === null && scope === null) {
      throw badRequest('a token needs a role_id, a scope, or both', [{ field: '/role_id', message: 'is required when scope is not given' }]);
    }
    let role: { name: string; kind: string } | null = null;
    if (roleId !== null) {
      role = (await deps.roles.findRole(organizationId, roleId)) ?? null;
      if (role === null) throw badRequest('unknown role', [{ field: '/role_id', message: 'is not a role of this organization' }]);
      if (role.kind !== 'CUSTOM' && role.name === 'OWNER') {
        throw badRequest('a token cannot carry the OWNER role', [{ field: '/role_id', message: 'must not be the OWNER role' }]);
      }
    }
    if (!covers(access.grants, grantsOfToken(role?.name ?? null, scope, role?.kind))) {
      throw forbidden('a token cannot have more rights than its creator');
    }
    const now = isoTimestamp(clock);
    const expiresAt = await expiryWithin(principal, organizationId, requestedExpiry(input.expires_at, now));
    const name = cleanName(input.name);
    const minted = mintToken('api');
    const row: ApiTokenWithRole = {
      id: newId(),
      organization_id: organizationId,
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      token_hash: minted.hash,
      token_start: minted.start,
      role_id: roleId,
      scope,
      creator_user_id: principal.kind === 'user' ? principal.userId : null,
      creator_name: principalDisplayName(principal),
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
      role_name: role?.name ?? null,
      role_kind: role?.kind ?? null,
    };
    const { role_name: _roleName, role_kind: _roleKind, ...columns } = row;
    await uniqueOrConflict(async () => {
      await insertApiToken(db, columns).catch((error: unknown) => {
        // A custom role deleted since it was read.
        if (isForeignKeyViolation(error)) throw badRequest('unknown role', [{ field: '/role_id', message: 'is not a role of this organization' }]);
        throw error;
      });
    }, `an API token named "${name}" already exists in this organization`);
    return { ...view(row), token: minted.value };
  }

  async function listOrganizationApiTokens(organizationId: string, filters: { name?: string | undefined; creatorName?: string | undefined }) {
    const rows = await listApiTokens(db, organizationId);
    return rows
      .filter((row) => includesFolded(row.name, filters.name) && includesFolded(row.creator_name, filters.creatorName))
      .map(view);
  }

  async function revokeApiToken(organizationId: string, tokenId: string): Promise<void> {
    if (!(await deleteApiToken(db, organizationId, tokenId))) throw notFound(`API token ${tokenId} not found`);
  }

  async function getApiToken(organizationId: string, tokenId: string) {
    const row = await findApiToken(db, organizationId, tokenId);
    if (row === undefined) throw notFound(`API token ${tokenId} not found`);
    return view(row);
  }

  return {
    resolveApiToken,
    createApiToken,
    listOrganizationApiTokens,
    revokeApiToken,
    getApiToken,
    removeOrganizationApiTokens: (trx: Queryable, organizationId: string) => deleteOrganizationApiTokens(trx, organizationId),
  };
}

export type ApiTokensService = ReturnType<typeof createApiTokensService>;
