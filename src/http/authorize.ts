import type { FastifyRequest } from 'fastify';
import { GRANTS, grantsOfRole, requirementOf, type Grant, type Permission } from '../auth/permissions.ts';
import { actingUserId, type Access, type Placement, type Principal } from '../auth/principal.ts';
import { badRequest, forbidden, notFound } from '../lib/errors.ts';
import { isUuid } from '../lib/ids.ts';
import type { PolicyVerdict } from '../policy/policy.engine.ts';
import { policyInputOf, type PolicyInput, type RevealQueryInput } from './policy-input.ts';
import { asksToReveal, QUERY_ADDRESSED_TARGETS, TARGET_PARAMS, type AccessTarget, type OwnedTarget, type RevealDeclaration, type RouteAccess } from './route-access.ts';

/**
 * The one authorizer. It finds the organization a request acts on, establishes what the principal may do there
 * and checks the route's permission against it. An organization the caller does not belong to answers 404,
 * exactly like one that does not exist, so ids of other tenants cannot be probed; a member without the
 * permission gets 403.
 *
 * A policy API token holds no grants: once the organization is established as its own, its Rego policy decides
 * the request, and only `allow == true` lets it through with organization-admin reach (never beyond its
 * organization). Person-only and on-behalf-of operations stay closed to it: it acts for no one.
 *
 * A custom role (docs/roles.md) grants by where the addressed resource lives: the authorizer hands the role the
 * request's placement (organization, project, environment mode, and the cluster when the path names one) and gets
 * the grants that hold there. A token carrying a custom role keeps only what its scope also allows.
 *
 * A route that can answer secret values in plain text declares the query parameter that asks for them
 * (`config.access.reveal`, route-access.ts). A request that asks needs the declared permission (`secrets:reveal`) on
 * top of the route's own, from every kind of caller: for a policy token its policy sees the ask as a boolean
 * (`input.query.reveal`) and must allow it, and the grants the token holds must still include it. A request that
 * does not ask gets the masked answer with the route's permission alone.
 */

export interface AuthorizationPorts {
  /** The role of a person in an organization, or undefined when they are not a member. */
  membership(organizationId: string, userId: string): Promise<{ roleId: string; roleName: string; roleKind: string } | undefined>;
  /** What a custom role grants where a request acts. */
  customRoleGrants(roleId: string, placement: Placement): Promise<ReadonlySet<Grant>>;
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
  deployment_request: 'deployment request',
  deployment_stage: 'deployment stage',
};

function isGrant(requirement: string): requirement is Grant {
  return (GRANTS as readonly string[]).includes(requirement);
}

function refuseReveal(declaration: RevealDeclaration): never {
  throw forbidden(`revealing secret values (${declaration.query}=true) requires the ${declaration.permission} permission, which this caller does not have`);
}

function intersection(a: ReadonlySet<Grant>, b: ReadonlySet<Grant>): ReadonlySet<Grant> {
  return new Set([...a].filter((grant) => b.has(grant)));
}

/** What the principal may do where `placement` lives; undefined when it does not reach that organization. */
export async function accessIn(ports: AuthorizationPorts, principal: Principal, placement: Placement): Promise<Access | undefined> {
  const organizationId = placement.organizationId;
  if (principal.kind === 'api_token') {
    if (principal.organizationId !== organizationId) return undefined;
    const grants =
      principal.customRoleId === null ? principal.grants : intersection(principal.grants, await ports.customRoleGrants(principal.customRoleId, placement));
    return { organizationId, grants, roleName: null };
  }
  if (principal.kind === 'policy_token') {
    // The policy is asked next; reaching this organization is all the token has by itself.
    return principal.organizationId === organizationId ? { organizationId, grants: ALL_GRANTS, roleName: null } : undefined;
  }
  const membership = await ports.membership(organizationId, principal.userId);
  if (membership === undefined) return undefined;
  const grants = membership.roleKind === 'CUSTOM' ? await ports.customRoleGrants(membership.roleId, placement) : grantsOfRole(membership.roleName);
  return { organizationId, grants, roleName: membership.roleName };
}

/**
 * Creating an environment, also by cloning one (addressed by the source environment), is decided on the project: the
 * new environment's type is in the body, which the placement does not know, so a custom role's rights on the
 * source's type must not decide it (docs/roles.md).
 */
function placementForGrants(permission: Permission, placement: Placement): Placement {
  if (permission !== 'environments:create' || placement.projectId === undefined) return placement;
  return { organizationId: placement.organizationId, projectId: placement.projectId };
}

/** The cluster a request names: its target, or the `clusterId` of an organization-addressed cluster path. */
function clusterIdOf(target: AccessTarget, id: string, params: Record<string, unknown>): string | undefined {
  if (target === 'cluster') return id;
  const clusterId = params.clusterId;
  return typeof clusterId === 'string' && isUuid(clusterId) ? clusterId : undefined;
}

export function createAuthorizer(ports: AuthorizationPorts) {
  async function enforcePolicy(
    request: FastifyRequest,
    token: Extract<Principal, { kind: 'policy_token' }>,
    organizationId: string,
    reveal: RevealQueryInput | undefined,
  ): Promise<void> {
    const input = policyInputOf(request, organizationId, { id: token.tokenId, name: token.tokenName }, reveal);
    const verdict = await ports.policyVerdict(token.tokenId, input);
    if (!verdict.allow) throw forbidden(`the policy of policy API token "${token.tokenName}" denied this request: ${verdict.reason}`);
  }

  /**
   * `targetId`, when given, names the target instead of the path: for routes whose target is in their body, query or a
   * stored row (the unified /variable operations), which call this from a route-level pre-validation hook once they
   * have found it.
   */
  return async function authorize(
    request: FastifyRequest,
    principal: Principal,
    access: Exclude<RouteAccess, { public: true }>,
    targetId?: string,
  ): Promise<Access | undefined> {
    const requirement = requirementOf(access.permission);
    if (requirement === 'person' && principal.kind !== 'user') {
      throw forbidden(`${access.permission} is for signed-in people, not tokens`);
    }
    if (requirement === 'creator' && actingUserId(principal) === undefined) {
      throw forbidden(`${access.permission} needs a signed-in person or an ADMIN API token acting for its creator`);
    }
    const reveal = access.reveal;
    const revealAsked = reveal !== undefined && asksToReveal(request.query, reveal);
    const revealInput = reveal === undefined ? undefined : { parameter: reveal.query, asked: revealAsked };
    if (access.target === 'none') {
      // No organization, so no grants to reveal with: a declaration here could never be satisfied.
      if (reveal !== undefined && revealAsked) refuseReveal(reveal);
      if (principal.kind === 'policy_token') await enforcePolicy(request, principal, principal.organizationId, revealInput);
      return undefined;
    }

    const noun = TARGET_NOUNS[access.target];
    const pathParams = (request.params ?? {}) as Record<string, unknown>;
    // Only a target declared query-addressed reads the query: no other route may be authorized on an id it does not act on.
    const params = QUERY_ADDRESSED_TARGETS.has(access.target) ? { ...((request.query ?? {}) as Record<string, unknown>), ...pathParams } : pathParams;
    const param = TARGET_PARAMS[access.target].find((name) => params[name] !== undefined) ?? TARGET_PARAMS[access.target][0];
    const id = targetId ?? (param === undefined ? undefined : params[param]);
    if (typeof id !== 'string' || !isUuid(id)) {
      const inPath = param === undefined || pathParams[param] !== undefined || !QUERY_ADDRESSED_TARGETS.has(access.target);
      throw badRequest(inPath ? 'invalid path parameters' : 'invalid query string', [{ field: `/${param ?? ''}`, message: 'must be a uuid' }]);
    }
    const found = access.target === 'organization' ? { organizationId: id } : await ports.placementOf[access.target](id);
    const clusterId = clusterIdOf(access.target, id, params);
    const placement = found === undefined ? undefined : placementForGrants(access.permission, clusterId === undefined ? found : { ...found, clusterId });
    const granted = placement === undefined ? undefined : await accessIn(ports, principal, placement);
    if (granted === undefined) throw notFound(`${noun} ${id} not found`);
    if (principal.kind === 'policy_token') {
      await enforcePolicy(request, principal, granted.organizationId, revealInput);
    } else if (isGrant(requirement) && !granted.grants.has(requirement)) {
      throw forbidden(`${access.permission} requires the ${requirement} permission, which this caller does not have`);
    }
    if (reveal !== undefined && revealAsked) {
      const needed = requirementOf(reveal.permission);
      if (!isGrant(needed) || !granted.grants.has(needed)) refuseReveal(reveal);
    }
    return found?.projectId === undefined ? granted : { ...granted, projectId: found.projectId };
  };
}
