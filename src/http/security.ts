import type { FastifyRequest } from 'fastify';
import type { Access, Principal } from '../auth/principal.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import type { RouteAccess } from './route-access.ts';
import { AppError } from '../lib/errors.ts';

/**
 * Puts authentication and authorization in front of every route, driven by the route's `config.access`:
 *
 *   onRoute        inside the API scope, a route that declares no access is refused at registration (startup
 *                  fails); a route elsewhere without a declaration fails closed at request time
 *   onRequest      authenticate (401) — before the body is read, so an anonymous caller learns nothing about
 *                  the request shape
 *   preValidation  authorize (404 for another tenant's ids, 403 for a missing permission) — before validation,
 *                  so an outsider cannot probe another organization with malformed bodies
 */
export interface SecurityPorts {
  authenticate(request: FastifyRequest): Promise<Principal>;
  authorize(request: FastifyRequest, principal: Principal, access: Exclude<RouteAccess, { public: true }>): Promise<Access | undefined>;
}

function declaredAccess(request: FastifyRequest): RouteAccess | undefined {
  return request.routeOptions.config.access;
}

export function installSecurity(app: FastifyTypeBox, ports: SecurityPorts): void {
  app.decorateRequest('principal', undefined);
  app.decorateRequest('access', undefined);

  app.addHook('onRequest', async (request) => {
    const access = declaredAccess(request);
    if (access === undefined) {
      // The not-found handler serves no resource; any other undeclared route is a programming error: refuse.
      if (request.is404) return;
      throw new AppError('internal', 'route without an access declaration');
    }
    if ('public' in access) return;
    request.principal = await ports.authenticate(request);
  });

  app.addHook('preValidation', async (request) => {
    const access = declaredAccess(request);
    if (access === undefined || 'public' in access || request.principal === undefined) return;
    request.access = await ports.authorize(request, request.principal, access);
  });
}

/** Within the scope it is called on, a route that declares no `config.access` is refused at registration. */
export function requireAccessDeclarations(app: FastifyTypeBox): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.access === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no config.access`);
    }
  });
}

/** Routes registered inside `register` are public: the API description and its documentation page. */
export function markRoutesPublic(app: FastifyTypeBox): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: { public: true } };
  });
}
