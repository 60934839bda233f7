import { forbidden } from '../lib/errors.ts';
import type { RequestOrigin } from '../lib/request-origin.ts';
import type { Grant } from './permissions.ts';

/**
 * Who is calling, as established by authentication (before any organization is considered): a person signed in
 * through OIDC, an organization API token (its rights are grants), or an organization policy API token (no grants
 * and no role: its Rego policy decides every request, DESIGN.md §5).
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
      /**
       * A token carrying a custom role: its grants depend on where a request acts, so the authorizer asks the role
       * and keeps what `grants` (the token's scope, never admin) also allows. Null for built-in roles and scopes.
       */
      customRoleId: string | null;
    }
  | { kind: 'policy_token'; tokenId: string; tokenName: string; organizationId: string };

/** What the caller may do in the organization a request addresses, as established by authorization. */
export interface Access {
  organizationId: string;
  /** The project the addressed resource lives in, when it lives in one (its placement, as the authorizer read it). */
  projectId?: string;
  grants: ReadonlySet<Grant>;
  /** The built-in or custom role of a person; null for tokens. */
  roleName: string | null;
}

/**
 * Where the resource a request addresses lives: always its organization, and as much of project and environment as
 * the target has (a project: its id; an environment or a service: its project, environment and environment mode).
 * Custom roles grant per project and per environment mode, so the authorizer needs the whole placement.
 */
export interface Placement {
  organizationId: string;
  projectId?: string;
  environmentId?: string;
  environmentMode?: 'PRODUCTION' | 'STAGING' | 'DEVELOPMENT' | 'PREVIEW';
  /** The cluster a request addresses (`clusterId` in its path), for custom roles' per-cluster permissions. */
  clusterId?: string;
}

/**
 * Slipway itself acting on a schedule someone set (a deployment rule's stop at night) or on a git provider's push: no
 * request, no one signed in, nothing to authorize — it acts on what its rule or push names. It only ever names who
 * did something, and from where.
 */
export interface ScheduledActor {
  kind: 'schedule';
  /** What the history shows as `triggered_by`, e.g. "deployment rule schedule". */
  name: string;
  /** What the history shows as `origin`: GIT for a push, PLATFORM_INTERNAL for Slipway's own schedules. */
  origin: Extract<RequestOrigin, 'GIT' | 'PLATFORM_INTERNAL'>;
}

/** Who an action is recorded as requested by: a caller, or one of Slipway's own schedules. */
export type Actor = Principal | ScheduledActor;

/**
 * Who asked for a deployment and from where, as its record shows them (`triggered_by`, `origin`): a caller and the
 * client its request came through (requesterOf in http/route-access.ts), or a ScheduledActor, which is one already.
 */
export interface Requester {
  name: string;
  origin: RequestOrigin;
}

/** A display name for "who did this", recorded as the creator of tokens and in audit entries. */
export function principalDisplayName(principal: Actor): string {
  if (principal.kind === 'schedule') return principal.name;
  if (principal.kind === 'user') return principal.name ?? principal.email ?? principal.userId;
  return `token:${principal.tokenName}`;
}

/**
 * The person a request acts for: the signed-in user, or the creator of an API token that holds the admin grant.
 * Undefined for tokens that act for no one (no creator recorded, less than admin, or a policy token).
 */
export function actingUserId(principal: Principal): string | undefined {
  if (principal.kind === 'user') return principal.userId;
  if (principal.kind === 'policy_token') return undefined;
  return principal.grants.has('admin') ? (principal.creatorUserId ?? undefined) : undefined;
}

/** Tokens only ever reach the organization they belong to. */
export function tokenOrganizationId(principal: Principal): string | undefined {
  return principal.kind === 'user' ? undefined : principal.organizationId;
}

/**
 * A policy token's rights are whatever its policy allows, which no grant set can express, so nothing minted from it
 * could be checked against it: a narrowly allowed agent could otherwise mint itself an unrestricted token. Tokens
 * are therefore minted only by people and API tokens.
 */
export function refuseMintingByPolicyToken(principal: Principal): void {
  if (principal.kind === 'policy_token') throw forbidden('a policy API token cannot create tokens');
}
