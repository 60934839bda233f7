import type { Permission } from '../auth/permissions.ts';
import { actingUserId, principalDisplayName, type Access, type Principal, type Requester } from '../auth/principal.ts';
import { originOf } from '../lib/request-origin.ts';

/**
 * What every route declares in `config.access`: either public, or the permission it needs and where the
 * organization it acts on comes from — plus, for a route that can answer secret values in plain text, the query
 * parameter that asks for them (`reveal`, below). A route without a declaration is refused when it is registered, so
 * no route can escape authentication or the route-security test.
 *
 *   target        the organization is …
 *   none          not involved (list or create organizations)
 *   organization  the `organizationId` path parameter
 *   project       the owner of the project named by the `projectId` path parameter
 *   cluster       the owner of the cluster named by the `clusterId` path parameter (`/cluster/{clusterId}/…`)
 *   environment   the owner of the environment named by the `environmentId` path parameter
 *   service       the owner of the service named by the first of `applicationId`, `containerId`, `databaseId`,
 *                 `jobId`, `helmId`, `terraformId`, `agenticWorkflowId`, `serviceId` the path has (every kind lives
 *                 in one table)
 *   deployment_request  the owner of the environment whose deployment request (an environment's or a service's
 *                 deployment record) the `deploymentRequestId` path parameter names, or else the query parameter of
 *                 that name (GET /environment/deploymentStatus addresses it in the query)
 *   deployment_stage  the owner of the environment whose deployment stage the `deploymentStageId` path parameter names
 */
export type AccessTarget = 'none' | 'organization' | 'project' | 'cluster' | 'environment' | 'service' | 'deployment_request' | 'deployment_stage';

/**
 * A route whose answer masks secret values unless the boolean query parameter `query` asks for them in plain text.
 * Only such a request needs `permission` as well as the route's own, so the masked answer stays available with the
 * route's permission alone. The authorizer checks it (authorize.ts), never the handler: a handler cannot forget it.
 */
export interface RevealDeclaration {
  query: string;
  permission: Permission;
}

/** `?reveal=true` on the variable listings and explanations: hidden built-ins (database credentials, hostnames). */
export const REVEAL_SECRETS: RevealDeclaration = { query: 'reveal', permission: 'secrets:reveal' };

export type RouteAccess =
  | { public: true }
  | {
      permission: Permission;
      target: AccessTarget;
      reveal?: RevealDeclaration;
      /**
       * With target `none`: the route finds the owner it acts on itself (in the query, the body or a stored row: the
       * unified `/variable` API) and authorizes there, so until it did the request addresses no organization of the
       * caller's — a refused probe of another organization's id is not the caller's organization's record either.
       */
      ownerFoundByHandler?: true;
    };

/** Resources that belong to an organization and are addressed without it in the path. */
export type OwnedTarget = Exclude<AccessTarget, 'none' | 'organization'>;

export const TARGET_PARAMS: Record<Exclude<AccessTarget, 'none'>, readonly string[]> = {
  organization: ['organizationId'],
  project: ['projectId'],
  cluster: ['clusterId'],
  environment: ['environmentId'],
  service: ['applicationId', 'containerId', 'databaseId', 'jobId', 'helmId', 'terraformId', 'agenticWorkflowId', 'serviceId'],
  deployment_request: ['deploymentRequestId'],
  deployment_stage: ['deploymentStageId'],
};

/** Targets whose id may also come from the query string when the path does not name it. */
export const QUERY_ADDRESSED_TARGETS: ReadonlySet<AccessTarget> = new Set(['deployment_request']);

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** A read recorded in the audit log as writes are (audit.ts): one that reveals a secret. */
    audited?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
    access: Access | undefined;
  }
}

/**
 * Whether a request asks a revealing route for plain values. The authorizer runs before validation, so the query is
 * still text: absent or `false` (also repeated) does not ask; `true` asks, and so does any other value. Validation
 * refuses those (400) later, but a caller without the permission gets its 403 first: fail closed, so no spelling the
 * validator would read as true can pass this check as false.
 */
export function asksToReveal(query: unknown, declaration: RevealDeclaration): boolean {
  if (query === null || typeof query !== 'object') return false;
  const raw = (query as Record<string, unknown>)[declaration.query];
  if (raw === undefined) return false;
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  return !values.every((value) => value === 'false' || value === false);
}

/** The authorized access of a request, for handlers behind a non-public route (set by the authorizer). */
export function requireAccess(request: { access: Access | undefined }): Access {
  if (request.access === undefined) throw new Error('route reached without authorization');
  return request.access;
}

/** The person a `creator` route acts for (the authorizer has already refused principals acting for no one). */
export function requireActingUserId(request: { principal: Principal | undefined }): string {
  const userId = actingUserId(requirePrincipal(request));
  if (userId === undefined) throw new Error('creator route reached by a principal acting for no one');
  return userId;
}

export function requirePrincipal(request: { principal: Principal | undefined }): Principal {
  if (request.principal === undefined) throw new Error('route reached without authentication');
  return request.principal;
}

/** Who a request asks as and from where, for the deployment records it writes: its caller and its client's origin. */
export function requesterOf(request: { principal: Principal | undefined; headers: { 'user-agent'?: string | undefined } }): Requester {
  return { name: principalDisplayName(requirePrincipal(request)), origin: originOf(request.headers['user-agent']) };
}

/** The person behind a request on a `person`-only route (the authorizer has already refused tokens). */
export function requireUserId(request: { principal: Principal | undefined }): string {
  const principal = requirePrincipal(request);
  if (principal.kind !== 'user') throw new Error('person-only route reached by a token');
  return principal.userId;
}
