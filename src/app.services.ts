import { randomBytes } from 'node:crypto';
import type { SecretKeySource } from './config.ts';
import type { FastifyTypeBox } from './http/fastify.types.ts';
import { loadOrCreateKeyFile, SECRET_KEY_BYTES } from './lib/secret-box.ts';
import { createSmtpMailer } from './mail/smtp-mailer.ts';
import type { Database } from './db/db.client.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import type { Mailer } from './mail/mailer.ts';
import { createOutboxMailer } from './mail/outbox-mailer.ts';
import { createSignedLinks } from './modules/billing/billing.links.ts';
import { createBillingService, NO_PAYMENT_PROVIDER, type BillingDeps, type BillingService } from './modules/billing/billing.service.ts';
import { auditLogRetentionDays } from './modules/billing/billing.plans.ts';
import { createApiTokensService } from './modules/api-tokens/api-tokens.service.ts';
import { createIdempotencyService } from './modules/idempotency/idempotency.service.ts';
import { createInvitationsService } from './modules/invitations/invitations.service.ts';
import { createMembersService } from './modules/members/members.service.ts';
import { createOnboardingService } from './modules/onboarding/onboarding.service.ts';
import { createOrganizationsService } from './modules/organizations/organizations.service.ts';
import { createPolicyTokensService } from './modules/policy-tokens/policy-tokens.service.ts';
import { createRegoPolicyEngine } from './policy/policy.engine.ts';
import { createProjectsService, type ProjectsDeps } from './modules/projects/projects.service.ts';
import { createRolesService } from './modules/roles/roles.service.ts';
import { createUsersService } from './modules/users/users.service.ts';
import { environmentCountsOf } from './modules/environments/environments.service.ts';
import { serviceCountsOf } from './modules/services/services.service.ts';

/**
 * The services every process of an installation wires the same way over its database: the HTTP app (app.ts) and
 * the operator's commands that work on the database directly (`slipway admin …`). One wiring, so a command cannot
 * build a service differently from the server.
 */

export type Services = ReturnType<typeof createServices>;

/** How outgoing mail leaves and where the links in it point. */
export interface MailWiring {
  mailer: Mailer;
  publicUrl: string;
}

/** Where deleting a project or an organization meets what runs: absent for operator commands, where nothing runs. */
export interface WorkloadWiring {
  removeProjectContents: NonNullable<ProjectsDeps['removeContents']>;
  wakeWorkers: () => void;
}

/** Links in mail point here when no public URL is configured (the default listening address). */
export const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';

/** Wires services over the database; shared by the HTTP app and by CLI commands that work on the database. */
export function createServices(
  database: Database,
  clock: Clock = systemClock,
  mail?: MailWiring,
  workloads?: WorkloadWiring,
) {
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
  const apiTokens = createApiTokensService({ db, clock, roles });
  const policyTokens = createPolicyTokensService({ db, clock, engine: createRegoPolicyEngine(clock) });
  // Environments and services are counted by their modules (getOrganizationProjectStats).
  const projects = createProjectsService({
    db,
    clock,
    contents: environmentCountsOf(db, serviceCountsOf(db)),
    ...(workloads === undefined ? {} : { removeContents: workloads.removeProjectContents }),
  });
  const organizations = createOrganizationsService({
    db,
    clock,
    roles,
    members,
    onboarding,
    auditLogRetentionDays,
    // A deleted organization can no longer be reached by anyone, and what ran under it is torn down.
    removeContents: async (trx, organizationId) => {
      await members.removeOrganizationMembers(trx, organizationId);
      await invitations.removeOrganizationInvitations(trx, organizationId);
      await apiTokens.removeOrganizationApiTokens(trx, organizationId);
      await policyTokens.removeOrganizationPolicyTokens(trx, organizationId);
      return projects.removeOrganizationProjects(trx, organizationId);
    },
    ...(workloads === undefined ? {} : { wakeWorkers: workloads.wakeWorkers }),
  });
  const idempotency = createIdempotencyService({ db, clock });
  return { roles, members, invitations, onboarding, users, organizations, apiTokens, policyTokens, projects, idempotency };
}

/** Where notices about an organization go (billing's invoices, a disabled webhook): its owner's verified e-mail. */
export function ownerEmailOf(services: Services) {
  return async (organizationId: string): Promise<string | undefined> => {
    const ownerId = (await services.members.ownersOf([organizationId])).get(organizationId);
    return ownerId === undefined ? undefined : services.users.verifiedEmailOf(ownerId);
  };
}

/** Billing over the shared services: one wiring for the server and the operator's billing commands. */
export function createBilling(
  database: Database,
  services: Services,
  wiring: Pick<BillingDeps, 'clock' | 'publicUrl' | 'mailer' | 'clusters' | 'log'> & { secretKey: Buffer },
): BillingService {
  return createBillingService({
    db: database.db,
    dialect: database.dialect,
    clock: wiring.clock,
    links: createSignedLinks(wiring.secretKey),
    publicUrl: wiring.publicUrl,
    mailer: wiring.mailer,
    organizations: {
      changeOrganizationPlan: services.organizations.changeOrganizationPlan,
      getOrganization: services.organizations.getOrganization,
      ownerEmail: ownerEmailOf(services),
    },
    payments: NO_PAYMENT_PROVIDER,
    ...(wiring.clusters === undefined ? {} : { clusters: wiring.clusters }),
    ...(wiring.log === undefined ? {} : { log: wiring.log }),
  });
}

/**
 * The key that seals secrets at rest. loadConfig always names one (the variable, or the key file under the data
 * directory); only in-process apps built without it (tests) get a key of their own that dies with them.
 */
export function secretKeyOf(source: SecretKeySource | undefined): Buffer {
  if (source === undefined) return randomBytes(SECRET_KEY_BYTES);
  return source.kind === 'value' ? source.key : loadOrCreateKeyFile(source.file);
}

/** SMTP delivery when a relay is configured (closed with the app), else the outbox, logged through the app's logger. */
export function createMailer(
  app: Pick<FastifyTypeBox, 'addHook' | 'log'>,
  deps: { database: Database; clock?: Clock | undefined; config: { smtpUrl?: string | undefined; mailFrom?: string | undefined } },
): Mailer {
  const smtpUrl = deps.config.smtpUrl;
  if (smtpUrl === undefined) return createOutboxMailer({ db: deps.database.db, clock: deps.clock ?? systemClock, log: app.log });
  const smtp = createSmtpMailer({ smtpUrl, from: deps.config.mailFrom ?? 'Slipway <slipway@localhost>' });
  app.addHook('onClose', async () => smtp.close());
  return smtp;
}

