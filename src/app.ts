import { randomBytes } from 'node:crypto';
import type { Config, SecretKeySource } from './config.ts';
import { createOidcVerifier } from './auth/oidc.ts';
import type { Principal } from './auth/principal.ts';
import type { Database } from './db/db.client.ts';
import { createSystemGitAccess } from './git/system-git.ts';
import { createAuthenticator } from './http/authenticate.ts';
import { createAuthorizer } from './http/authorize.ts';
import type { FastifyTypeBox } from './http/fastify.types.ts';
import { registerOpenApiDocuments, registerOpenApiGenerator } from './http/openapi.ts';
import { installIdempotency } from './http/idempotency.ts';
import { installRateLimit } from './http/rate-limit.ts';
import { installSecurity, requireAccessDeclarations } from './http/security.ts';
import { createHttpServer } from './http/server.ts';
import { setUpBuiltInIdentity } from './identity/identity.setup.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createSecretBox, loadOrCreateKeyFile, SECRET_KEY_BYTES } from './lib/secret-box.ts';
import type { Mailer } from './mail/mailer.ts';
import { createOutboxMailer } from './mail/outbox-mailer.ts';
import { createSmtpMailer } from './mail/smtp-mailer.ts';
import { registerGitTokenRoutes } from './modules/git-tokens/git-tokens.routes.ts';
import { createGitTokensService, NO_GIT_TOKEN_USAGE } from './modules/git-tokens/git-tokens.service.ts';
import { registerApiTokenRoutes } from './modules/api-tokens/api-tokens.routes.ts';
import { createApiTokensService } from './modules/api-tokens/api-tokens.service.ts';
import { createIdempotencyService } from './modules/idempotency/idempotency.service.ts';
import { registerIpRoutes } from './modules/ips/ips.routes.ts';
import { registerInvitationRoutes } from './modules/invitations/invitations.routes.ts';
import { createInvitationsService } from './modules/invitations/invitations.service.ts';
import { registerMemberRoutes } from './modules/members/members.routes.ts';
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
  /**
   * Without `oidc`, a `publicUrl` turns the built-in identity provider on (its issuer is `${publicUrl}/oidc`).
   * Without `smtpUrl`, outgoing mail is kept in the outbox table. Without `rateLimitPerMinute` (or with 0), no rate
   * limit applies.
   */
  config: Pick<Config, 'oidc' | 'egressIps' | 'logLevel'> &
    Partial<Pick<Config, 'publicUrl' | 'smtpUrl' | 'mailFrom' | 'secretKey' | 'gitAllowPrivateHosts' | 'gitAllowedHosts' | 'rateLimitPerMinute'>>;
  database: Database;
  clock?: Clock;
  logStream?: NodeJS.WritableStream;
}

export type Services = ReturnType<typeof createServices>;

/** How outgoing mail leaves and where the links in it point. */
export interface MailWiring {
  mailer: Mailer;
  publicUrl: string;
}

/** Links in mail point here when no public URL is configured (the default listening address). */
const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';

/** Wires services over the database; shared by the HTTP app and by CLI commands that work on the database. */
export function createServices(database: Database, clock: Clock = systemClock, mail?: MailWiring) {
  const { db } = database;
  const roles = createRolesService({ db, clock });
  const members = createMembersService({ db, clock, roles });
  const onboarding = createOnboardingService({ db, clock });
  const users = createUsersService({ db, clock });
  const invitations = createInvitationsService({
    db,
    clock,
    mailer: mail?.mailer ?? createOutboxMailer({ db, clock }),
    publicUrl: mail?.publicUrl ?? DEFAULT_PUBLIC_URL,
    roles,
    members,
    users,
  });
  const organizations = createOrganizationsService({ db, clock, roles, members, onboarding });
  const apiTokens = createApiTokensService({ db, clock, roles });
  const policyTokens = createPolicyTokensService({ db, clock, engine: createRegoPolicyEngine(clock) });
  // No module owns environments or services yet, so every project holds none.
  const projects = createProjectsService({ db, clock, contents: { countsByProject: async () => new Map() } });
  const idempotency = createIdempotencyService({ db, clock });
  return { roles, members, invitations, onboarding, users, organizations, apiTokens, policyTokens, projects, idempotency };
}

/** The buildable application: every route, its security and its documentation. Tests boot exactly this. */
export async function buildApp(deps: AppDeps): Promise<FastifyTypeBox> {
  const clock = deps.clock ?? systemClock;
  const app = createHttpServer({
    logLevel: deps.config.logLevel,
    ...(deps.logStream === undefined ? {} : { logStream: deps.logStream }),
  });
  const mailer = createMailer(app, deps);
  const services = createServices(deps.database, clock, {
    mailer,
    publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
  });

  // Without an external issuer, Slipway's own provider signs users in; its tokens are verified the same way.
  const builtInIdentity =
    deps.config.oidc === undefined && deps.config.publicUrl !== undefined
      ? await setUpBuiltInIdentity({ database: deps.database, clock, publicUrl: deps.config.publicUrl, mailer })
      : undefined;
  const trustedIssuer = deps.config.oidc ?? builtInIdentity?.verifier;
  const verifyUserJwt = trustedIssuer === undefined ? undefined : createOidcVerifier(trustedIssuer);
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

  const gitTokens = createGitTokensService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKeyOf(deps.config.secretKey)),
    git: createSystemGitAccess({ allowPrivateHosts: deps.config.gitAllowPrivateHosts ?? false, allowedHosts: deps.config.gitAllowedHosts ?? [] }),
    // No module owns services yet, so no service uses a git token.
    usage: NO_GIT_TOKEN_USAGE,
  });

  const perMinute = deps.config.rateLimitPerMinute ?? 0;
  if (perMinute > 0) await installRateLimit(app, perMinute);
  await installIdempotency(app, services.idempotency);

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
    registerMemberRoutes(api, services.members);
    registerInvitationRoutes(api, services.invitations);
    registerGitTokenRoutes(api, gitTokens);
  });
  await builtInIdentity?.registerRoutes(app);
  await registerOpenApiDocuments(app);
  await app.ready();
  return app;
}

/**
 * The key that seals secrets at rest. loadConfig always names one (the variable, or the key file under the data
 * directory); only in-process apps built without it (tests) get a key of their own that dies with them.
 */
function secretKeyOf(source: SecretKeySource | undefined): Buffer {
  if (source === undefined) return randomBytes(SECRET_KEY_BYTES);
  return source.kind === 'value' ? source.key : loadOrCreateKeyFile(source.file);
}

/** SMTP delivery when a relay is configured (closed with the app), else the outbox, logged through the app's logger. */
function createMailer(app: FastifyTypeBox, deps: AppDeps): Mailer {
  const smtpUrl = deps.config.smtpUrl;
  if (smtpUrl === undefined) return createOutboxMailer({ db: deps.database.db, clock: deps.clock ?? systemClock, log: app.log });
  const smtp = createSmtpMailer({ smtpUrl, from: deps.config.mailFrom ?? 'Slipway <slipway@localhost>' });
  app.addHook('onClose', async () => smtp.close());
  return smtp;
}
