import type { FastifyRequest } from 'fastify';
import { GRANTS, grantsOfRole, requirementOf } from '../auth/permissions.ts';
import { actingUserId, type Access, type Placement, type Principal } from '../auth/principal.ts';
import { badRequest, forbidden, notFound } from '../lib/errors.ts';
import { isUuid } from '../lib/ids.ts';
import type { PolicyVerdict } from '../policy/policy.engine.ts';
import { policyInputOf, type PolicyInput } from './policy-input.ts';
import { TARGET_PARAMS, type AccessTarget, type OwnedTarget, type RouteAccess } from './route-access.ts';

/**
 * The one authorizer. It finds the organization a request acts on, establishes what the principal may do there
 * and checks the route's permission against it. An organization the caller does not belong to answers 404,
 * exactly like one that does not exist, so ids of other tenants cannot be probed; a member without the
 * permission gets 403.
 *
 * A policy API token holds no grants: once the organization is established as its own, its Rego policy decides
 * the request, and only `allow == true` lets it through with organization-admin reach (never beyond its
 * organization). Person-only and on-behalf-of operations stay closed to it: it acts for no one.
 */

export interface AuthorizationPorts {
  /** The role name of a person in an organization, or undefined when they are not a member. */
  membershipRole(organizationId: string, userId: string): Promise<string | undefined>;
  /** Where a resource addressed without its organization in the path lives (undefined: no such resource). */
  placementOf: Record<OwnedTarget, (id: string) => Promise<Placement | undefined>>;
  /** Evaluates a policy token's policy on the input of one request. */
  policyVerdict(tokenId: string, input: PolicyInput): Promise<PolicyVerdict>;
}

const ALL_GRANTS = new Set(GRANTS);

const TARGET_NOUNS: Record<Exclude<AccessTarget, 'none'>, string> = {
  organization: 'organization',
  project: 'project',
  cluster: 'cluster',
  environment: 'environment',
  service: 'service',
};

async function accessIn(ports: AuthorizationPorts, principal: Principal, organizationId: string): Promise<Access | undefined> {
  if (principal.kind === 'api_token') {
    return principal.organizationId === organizationId
      ? { organizationId, grants: principal.grants, roleName: null }
      : undefined;
  }
  if (principal.kind === 'policy_token') {
    // The policy is asked next; reaching this organization is all the token has by itself.
    return principal.organizationId === organizationId ? { organizationId, grants: ALL_GRANTS, roleName: null } : undefined;
  }
  const roleName = await ports.membershipRole(organizationId, principal.userId);
  return roleName === undefined ? undefined : { organizationId, grants: grantsOfRole(roleName), roleName };
}

export function createAuthorizer(ports: AuthorizationPorts) {
  async function enforcePolicy(
    request: FastifyRequest,
    token: Extract<Principal, { kind: 'policy_token' }>,
    organizationId: string,
  ): Promise<void> {
    const input = policyInputOf(request, organizationId, { id: token.tokenId, name: token.tokenName });
    const verdict = await ports.policyVerdict(token.tokenId, input);
    if (!verdict.allow) throw forbidden(`the policy of policy API token "${token.tokenName}" denied this request: ${verdict.reason}`);
  }

  return async function authorize(request: FastifyRequest, principal: Principal, access: Exclude<RouteAccess, { public: true }>): Promise<Access | undefined> {
    const requirement = requirementOf(access.permission);
    if (requirement === 'person' && principal.kind !== 'user') {
      throw forbidden(`${access.permission} is for signed-in people, not tokens`);
    }
    if (requirement === 'creator' && actingUserId(principal) === undefined) {
      throw forbidden(`${access.permission} needs a signed-in person or an ADMIN API token acting for its creator`);
    }
    if (access.target === 'none') {
      if (principal.kind === 'policy_token') await enforcePolicy(request, principal, principal.organizationId);
      return undefined;
    }

    const noun = TARGET_NOUNS[access.target];
    const params = (request.params ?? {}) as Record<string, unknown>;
    const param = TARGET_PARAMS[access.target].find((name) => params[name] !== undefined) ?? TARGET_PARAMS[access.target][0];
    const id = param === undefined ? undefined : params[param];
    if (typeof id !== 'string' || !isUuid(id)) {
      throw badRequest(`invalid path parameters`, [{ field: `/${param ?? ''}`, message: 'must be a uuid' }]);
    }
    const placement = access.target === 'organization' ? { organizationId: id } : await ports.placementOf[access.target](id);
    const granted = placement === undefined ? undefined : await accessIn(ports, principal, placement.organizationId);
    if (granted === undefined) throw notFound(`${noun} ${id} not found`);
    if (principal.kind === 'policy_token') {
      await enforcePolicy(request, principal, granted.organizationId);
      return granted;
    }

    const needsGrant = requirement !== 'person' && requirement !== 'creator' && requirement !== 'authenticated';
    if (needsGrant && !granted.grants.has(requirement)) {
      throw forbidden(`${access.permission} requires the ${requirement} permission, which this caller does not have`);
    }
    return granted;
  };
}
