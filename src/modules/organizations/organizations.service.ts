import type { Kysely, Transaction } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { writeJson, readJson } from '../../db/db.json.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { MembersService } from '../members/members.service.ts';
import type { OnboardingService } from '../onboarding/onboarding.service.ts';
import type { RolesService } from '../roles/roles.service.ts';
import { enqueueJobOf } from '../../jobs/job-kinds.ts';
import { deletedNameKey, ORGANIZATION_PURGE, type OrganizationPurgePayload } from './organizations.purge.ts';
import {
  findOrganization,
  insertOrganization,
  listOrganizationsByIds,
  updateOrganization,
  type OrganizationRow,
} from './organizations.repo.ts';
import { answeredPlan, DEFAULT_PLAN } from './organizations.schemas.ts';

export interface OrganizationsDeps {
  db: Kysely<DB>;
  clock: Clock;
  roles: Pick<RolesService, 'createBuiltInRoles'>;
  members: Pick<MembersService, 'addMember' | 'organizationsOf' | 'ownersOf'>;
  onboarding: Pick<OnboardingService, 'startOnboarding'>;
  /** Audit log retention of a plan, from the billing module's plan data (modules/billing/billing.plans.ts). */
  auditLogRetentionDays: (plan: string) => number;
  /**
   * Inside the deletion's transaction: takes away every way into the organization (members, invitations, tokens) and
   * its projects, whose workloads are handed to the agents to tear down; answers the services removed and what to
   * run after the commit. The purge job (organizations.purge.ts) removes the row once their teardowns settled.
   */
  removeContents?: (trx: Transaction<DB>, organizationId: string) => Promise<{ serviceIds: readonly string[]; afterCommit(): Promise<void> }>;
  /** Called after a deletion committed, so a worker picks up its purge job at once. */
  wakeWorkers?: () => void;
}

export interface OrganizationInput {
  name: string;
  plan?: string | undefined;
  description?: string | null | undefined;
  website_url?: string | null | undefined;
  repository?: string | null | undefined;
  logo_url?: string | null | undefined;
  icon_url?: string | null | undefined;
  admin_emails?: string[] | null | undefined;
  /** Only at creation: the use cases the owner chose, kept on their onboarding record. */
  use_cases?: string | null | undefined;
}

function view(row: OrganizationRow, owner: string | undefined, auditLogRetentionDays: number) {
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    name: row.name,
    description: row.description,
    plan: answeredPlan(row.plan),
    website_url: row.website_url,
    repository: row.repository,
    logo_url: row.logo_url,
    icon_url: row.icon_url,
    admin_emails: row.admin_emails === null ? null : readJson<string[]>(row.admin_emails),
    // The reference's `owner` is a uuid and not nullable: without a recorded owner the field is left out.
    ...(owner === undefined ? {} : { owner }),
    billing_deployment_restriction: null,
    organization_plan: { plan: answeredPlan(row.plan), audit_logs_retention_in_days: auditLogRetentionDays },
  };
}

export type OrganizationView = ReturnType<typeof view>;

function nameTakenMessage(name: string): string {
  return `an organization named "${name}" already exists`;
}

/** Only the fields the caller sent change: absent optional fields keep their stored value. */
function editableColumns(input: OrganizationInput): Partial<OrganizationRow> {
  const columns: Partial<OrganizationRow> = {};
  if (input.description !== undefined) columns.description = input.description;
  if (input.website_url !== undefined) columns.website_url = input.website_url;
  if (input.repository !== undefined) columns.repository = input.repository;
  if (input.logo_url !== undefined) columns.logo_url = input.logo_url;
  if (input.icon_url !== undefined) columns.icon_url = input.icon_url;
  if (input.admin_emails !== undefined) columns.admin_emails = input.admin_emails === null ? null : writeJson(input.admin_emails);
  return columns;
}

export function createOrganizationsService(deps: OrganizationsDeps) {
  const { db, clock } = deps;

  async function viewOf(row: OrganizationRow): Promise<OrganizationView> {
    const owners = await deps.members.ownersOf([row.id]);
    return view(row, owners.get(row.id), deps.auditLogRetentionDays(row.plan));
  }

  async function getOrganization(id: string): Promise<OrganizationView> {
    const row = await findOrganization(db, id);
    if (row === undefined) throw notFound(`organization ${id} not found`);
    return viewOf(row);
  }

  /** The creator becomes OWNER; the organization, its roles, membership and onboarding are one transaction. */
  async function createOrganization(creatorUserId: string, input: OrganizationInput): Promise<OrganizationView> {
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const row: OrganizationRow = {
      id: newId(),
      name,
      name_key: nameKey(name),
      description: null,
      plan: input.plan ?? DEFAULT_PLAN,
      website_url: null,
      repository: null,
      logo_url: null,
      icon_url: null,
      admin_emails: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      ...editableColumns(input),
    };
    await uniqueOrConflict(async () => {
      await db.transaction().execute(async (trx) => {
        await insertOrganization(trx, row);
        const roles = await deps.roles.createBuiltInRoles(trx, row.id);
        await deps.members.addMember(trx, row.id, creatorUserId, roles.OWNER.id);
        await deps.onboarding.startOnboarding(trx, row.id, creatorUserId, input.use_cases ?? null);
      });
    }, nameTakenMessage(name));
    return view(row, creatorUserId, deps.auditLogRetentionDays(row.plan));
  }

  async function listOrganizations(principal: Principal): Promise<OrganizationView[]> {
    const ids = principal.kind === 'user' ? await deps.members.organizationsOf(principal.userId) : [principal.organizationId];
    const rows = await listOrganizationsByIds(db, ids);
    const owners = await deps.members.ownersOf(rows.map((row) => row.id));
    return rows.map((row) => view(row, owners.get(row.id), deps.auditLogRetentionDays(row.plan)));
  }

  async function editOrganization(id: string, input: OrganizationInput): Promise<OrganizationView> {
    const current = await findOrganization(db, id);
    if (current === undefined) throw notFound(`organization ${id} not found`);
    // A client sends back the plan it read, which may be the name the plan answers as.
    if (input.plan !== undefined && input.plan !== current.plan && input.plan !== answeredPlan(current.plan)) {
      throw badRequest('the plan cannot be changed by editing the organization; use changePlan', [
        { field: '/plan', message: `differs from the current plan ${current.plan}` },
      ]);
    }
    const name = cleanName(input.name);
    await uniqueOrConflict(async () => {
      await updateOrganization(db, id, { name, name_key: nameKey(name), updated_at: isoTimestamp(clock), ...editableColumns(input) });
    }, nameTakenMessage(name));
    return getOrganization(id);
  }

  /**
   * Deleting is two steps (docs/decisions.md "Deleting an organization"): here, in one transaction, the organization
   * disappears for every caller, its name is free again and its workloads' teardowns are queued (409, deleting
   * nothing, while an agent works on one of its services); the purge job deletes the row once they settled, so the
   * clusters and agents that carry the teardowns out outlive it that long.
   */
  async function removeOrganization(id: string): Promise<void> {
    const now = isoTimestamp(clock);
    const removed = await db.transaction().execute(async (trx) => {
      if ((await findOrganization(trx, id)) === undefined) throw notFound(`organization ${id} not found`);
      const contents = await deps.removeContents?.(trx, id);
      await updateOrganization(trx, id, { deleted_at: now, name_key: deletedNameKey(id), updated_at: now });
      const payload: OrganizationPurgePayload = { organizationId: id, serviceIds: [...(contents?.serviceIds ?? [])], deletedAt: now };
      await enqueueJobOf(trx, clock, ORGANIZATION_PURGE, payload, { serialKey: `organization:${id}` });
      return contents;
    });
    await removed?.afterCommit();
    deps.wakeWorkers?.();
  }

  /** The billing module's changePlan (modules/billing), inside its transaction; the plan code is already checked there. */
  async function changeOrganizationPlan(trx: Transaction<DB>, id: string, plan: string): Promise<boolean> {
    return updateOrganization(trx, id, { plan, updated_at: isoTimestamp(clock) });
  }

  return { createOrganization, getOrganization, listOrganizations, editOrganization, removeOrganization, changeOrganizationPlan };
}

export type OrganizationsService = ReturnType<typeof createOrganizationsService>;
