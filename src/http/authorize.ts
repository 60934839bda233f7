import type { FastifyRequest } from 'fastify';
import { grantsOfRole, requirementOf } from '../auth/permissions.ts';
import { actingUserId, type Access, type Principal } from '../auth/principal.ts';
import { badRequest, forbidden, notFound } from '../lib/errors.ts';
import { isUuid } from '../lib/ids.ts';
import { TARGET_PARAMS, type AccessTarget, type OwnedTarget, type RouteAccess } from './route-access.ts';

/**
 * The one authorizer. It finds the organization a request acts on, establishes what the principal may do there
 * and checks the route's permission against it. An organization the caller does not belong to answers 404,
 * exactly like one that does not exist, so ids of other tenants cannot be probed; a member without the
 * permission gets 403.
 */
export interface AuthorizationPorts {
  /** The role name of a person in an organization, or undefined when they are not a member. */
  membershipRole(organizationId: string, userId: string): Promise<string | undefined>;
  /** The organization owning a resource addressed without its organization in the path. */
  ownerOf: Record<OwnedTarget, (id: string) => Promise<string | undefined>>;
}

const TARGET_NOUNS: Record<Exclude<AccessTarget, 'none'>, string> = {
  organization: 'organization',
  project: 'project',
};

async function accessIn(ports: AuthorizationPorts, principal: Principal, organizationId: string): Promise<Access | undefined> {
  if (principal.kind === 'api_token') {
    return principal.organizationId === organizationId
      ? { organizationId, grants: principal.grants, roleName: null }
      : undefined;
  }
  const roleName = await ports.membershipRole(organizationId, principal.userId);
  return roleName === undefined ? undefined : { organizationId, grants: grantsOfRole(roleName), roleName };
}

export function createAuthorizer(ports: AuthorizationPorts) {
  return async function authorize(request: FastifyRequest, principal: Principal, access: Exclude<RouteAccess, { public: true }>): Promise<Access | undefined> {
    const requirement = requirementOf(access.permission);
    if (requirement === 'person' && principal.kind !== 'user') {
      throw forbidden(`${access.permission} is for signed-in people, not API tokens`);
    }
    if (requirement === 'creator' && actingUserId(principal) === undefined) {
      throw forbidden(`${access.permission} needs a signed-in person or an ADMIN API token acting for its creator`);
    }
    if (access.target === 'none') return undefined;

    const noun = TARGET_NOUNS[access.target];
    const id = (request.params as Record<string, unknown> | undefined)?.[TARGET_PARAMS[access.target]];
    if (typeof id !== 'string' || !isUuid(id)) {
      throw badRequest(`invalid path parameters`, [{ field: `/${TARGET_PARAMS[access.target]}`, message: 'must be a uuid' }]);
    }
    const organizationId = access.target === 'organization' ? id : await ports.ownerOf[access.target](id);
    const granted = organizationId === undefined ? undefined : await accessIn(ports, principal, organizationId);
    if (granted === undefined) throw notFound(`${noun} ${id} not found`);

    const needsGrant = requirement !== 'person' && requirement !== 'creator' && requirement !== 'authenticated';
    if (needsGrant && !granted.grants.has(requirement)) {
      throw forbidden(`${access.permission} requires the ${requirement} permission, which this caller does not have`);
    }
    return granted;
  };
}
