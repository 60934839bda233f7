import type { Grant } from './permissions.ts';

/**
 * Who is calling, as established by authentication (before any organization is considered):
 * a person signed in through OIDC, or an organization API token.
 */
export type Principal =
  | { kind: 'user'; userId: string; email: string | null; name: string | null }
  | {
      kind: 'api_token';
      tokenId: string;
      tokenName: string;
      organizationId: string;
      grants: ReadonlySet<Grant>;
      creatorUserId: string | null;
    };

/** What the caller may do in the organization a request addresses, as established by authorization. */
export interface Access {
  organizationId: string;
  grants: ReadonlySet<Grant>;
  /** The built-in or custom role of a person; null for tokens. */
  roleName: string | null;
}

/** A display name for "who did this", recorded as the creator of tokens and in audit entries. */
export function principalDisplayName(principal: Principal): string {
  if (principal.kind === 'user') return principal.name ?? principal.email ?? principal.userId;
  return `token:${principal.tokenName}`;
}

/**
 * The person a request acts for: the signed-in user, or the creator of an API token that holds the admin grant.
 * Undefined for tokens that act for no one (no creator recorded, or less than admin).
 */
export function actingUserId(principal: Principal): string | undefined {
  if (principal.kind === 'user') return principal.userId;
  return principal.grants.has('admin') ? (principal.creatorUserId ?? undefined) : undefined;
}
