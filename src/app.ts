import type { Config } from './config.ts';
import { createOidcVerifier } from './auth/oidc.ts';
import type { Principal } from './auth/principal.ts';
import type { Database } from './db/db.client.ts';
import { createAuthenticator } from './http/authenticate.ts';
import { createAuthorizer } from './http/authorize.ts';
import type { FastifyTypeBox } from './http/fastify.types.ts';
import { registerOpenApiDocuments, registerOpenApiGenerator } from './http/openapi.ts';
import { installSecurity, requireAccessDeclarations } from './http/security.ts';
import { createHttpServer } from './http/server.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { registerApiTokenRoutes } from './modules/api-tokens/api-tokens.routes.ts';
import { createApiTokensService } from './modules/api-tokens/api-tokens.service.ts';
import { registerIpRoutes } from './modules/ips/ips.routes.ts';
import { createMembersService } from './modules/members/members.service.ts';
import { registerOnboardingRoutes } from './modules/onboarding/onboarding.routes.ts';
import { createOnboardingService } from './modules/onboarding/onboarding.service.ts';
import { registerOrganizationRoutes } from './modules/organizations/organizations.routes.ts';
import { createOrganizationsService } from './modules/organizations/organizations.service.ts';
import { registerPolicyTokenRoutes } from './modules/policy-tokens/policy-tokens.routes.ts';
import { createPolicyTokensService } from './modules/policy-tokens/policy-tokens.service.ts';
import { createRegoPolicyEngine } from './policy/policy.engine.ts';
import { registerProjectRoutes } from './modules/projects/projects.routes.ts';
import { createProjectsService } from './modules/projects/projects.service.ts';
import { registerRoleRoutes } from './modules/roles/roles.routes.ts';
import { createRolesService } from './modules/roles/roles.service.ts';
import { createUsersService } from './modules/users/users.service.ts';

/** What the composition root needs from the process: configuration, an open and migrated database, a clock. */
export interface AppDeps {
  config: Pick<Config, 'oidc' | 'egressIps' | 'logLevel'>;
  database: Database;
  clock?: Clock;
  logStream?: NodeJS.WritableStream;
}

export type Services = ReturnType<typeof createServices>;

/** Wires services over the database; shared by the HTTP app and by CLI commands that work on the database. */
export function createServices(database: Database, clock: Clock = systemClock) {
  const { db } = database;
  const roles = createRolesService({ db, clock });
  const members = createMembersService({ db, clock });
  const onboarding = createOnboardingService({ db, clock });
  const users = createUsersService({ db, clock });
  const organizations = createOrganizationsService({ db, clock, roles, members, onboarding });
  const apiTokens = createApiTokensService({ db, clock, roles });
  const policyTokens = createPolicyTokensService({ db, clock, engine: createRegoPolicyEngine(clock) });
  // No module owns environments or services yet, so every project holds none.
  const projects = createProjectsService({ db, clock, contents: { countsByProject: async () => new Map() } });
  return { roles, members, onboarding, users, organizations, apiTokens, policyTokens, projects };
}

/** The buildable application: every route, its security and its documentation. Tests boot exactly this. */
export async function buildApp(deps: AppDeps): Promise<FastifyTypeBox> {
  const services = createServices(deps.database, deps.clock ?? systemClock);
  const app = createHttpServer({
    logLevel: deps.config.logLevel,
    ...(deps.logStream === undefined ? {} : { logStream: deps.logStream }),
  });

  const verifyUserJwt = deps.config.oidc === undefined ? undefined : createOidcVerifier(deps.config.oidc);
  installSecurity(app, {
    authenticate: createAuthenticator({
      resolveApiToken: services.apiTokens.resolveApiToken,
      resolvePolicyToken: services.policyTokens.resolvePolicyToken,
      resolveUserJwt:
        verifyUserJwt === undefined
          ? undefined
          : async (jwt): Promise<Principal> => {
              const user = await services.users.userForIdentity(await verifyUserJwt(jwt));
              return { kind: 'user', userId: user.id, email: user.email, name: user.name };
            },
    }),
    authorize: createAuthorizer({
      membershipRole: services.members.roleOf,
      ownerOf: { project: services.projects.organizationOf },
      policyVerdict: services.policyTokens.policyVerdict,
    }),
  });

  await registerOpenApiGenerator(app);
  await app.register(async (api) => {
    requireAccessDeclarations(api);
    registerIpRoutes(api, deps.config.egressIps);
    registerOrganizationRoutes(api, services.organizations);
    registerRoleRoutes(api, services.roles);
    registerOnboardingRoutes(api, services.onboarding);
    registerApiTokenRoutes(api, services.apiTokens);
    registerPolicyTokenRoutes(api, services.policyTokens);
    registerProjectRoutes(api, services.projects);
  });
  await registerOpenApiDocuments(app);
  await app.ready();
  return app;
}
