import { Type } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Url, Uuid } from '../../protocol/wire.ts';

/**
 * Plans an organization may be on. COMMUNITY and STARTUP are Slipway's own (SPEC.md's billing status rule);
 * the others are the reference's PlanEnum, accepted so existing clients can send them.
 */
export const PLANS = [
  'COMMUNITY',
  'STARTUP',
  'FREE',
  'TEAM',
  'TEAM_YEARLY',
  'ENTERPRISE',
  'ENTERPRISE_YEARLY',
  'PROFESSIONAL',
  'BUSINESS',
  'USER_2025',
  'TEAM_2025',
  'BUSINESS_2025',
  'ENTERPRISE_2025',
] as const;
export const DEFAULT_PLAN = 'COMMUNITY';

export const Plan = Type.Enum(PLANS, { $id: 'PlanEnum' });

/**
 * The plan an answer names. Clients generated from the reference decode `plan` as its PlanEnum and refuse other
 * values, so Slipway's own plans answer as the reference plan billed exactly like them (billing.plans.ts): COMMUNITY
 * as FREE (credits, nothing to pay monthly), STARTUP as PROFESSIONAL (invoiced, same price and terms). Requests
 * take either name.
 */
const ANSWERED_AS: Partial<Record<string, ReferencePlan>> = { COMMUNITY: 'FREE', STARTUP: 'PROFESSIONAL' };
const REFERENCE_PLANS = PLANS.filter((plan): plan is Exclude<(typeof PLANS)[number], 'COMMUNITY' | 'STARTUP'> => plan !== 'COMMUNITY' && plan !== 'STARTUP');
type ReferencePlan = (typeof REFERENCE_PLANS)[number];

/** An unknown code (an older installation's) is billed as COMMUNITY (billing.plans.ts), so it answers as FREE too. */
export function answeredPlan(plan: string): ReferencePlan {
  const answered = ANSWERED_AS[plan] ?? plan;
  return REFERENCE_PLANS.find((candidate) => candidate === answered) ?? 'FREE';
}

const AnsweredPlan = Type.Enum(REFERENCE_PLANS);

const AdminEmails = Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 50 });

const editableFields = {
  description: Type.Optional(Nullable(Description)),
  website_url: Type.Optional(Nullable(Url)),
  repository: Type.Optional(Nullable(Url)),
  logo_url: Type.Optional(Nullable(Url)),
  icon_url: Type.Optional(Nullable(Url)),
  admin_emails: Type.Optional(Nullable(AdminEmails)),
};

/**
 * `use_cases` is Slipway's addition: what the owner means to use the organization for, chosen when signing the
 * organization up; it is kept on their onboarding record (getOrganizationOnboarding answers it).
 */
export const OrganizationRequest = Type.Object(
  { name: Name, plan: Type.Optional(Plan), use_cases: Type.Optional(Nullable(Description)), ...editableFields },
  {
    $id: 'OrganizationRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'Acme',
        description: 'Web shop and back office of Acme Ltd.',
        website_url: 'https://acme.example',
        use_cases: 'Deploy our web applications with their databases',
      },
    ],
  },
);

/** `plan` is accepted so clients can send back what they read; changing it goes through changePlan. */
export const OrganizationEditRequest = Type.Object(
  { name: Name, plan: Type.Optional(Plan), ...editableFields },
  { $id: 'OrganizationEditRequest', additionalProperties: false },
);

export const Organization = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    description: Nullable(Type.String()),
    plan: AnsweredPlan,
    website_url: Nullable(Type.String()),
    repository: Nullable(Type.String()),
    logo_url: Nullable(Type.String()),
    icon_url: Nullable(Type.String()),
    admin_emails: Nullable(Type.Array(Type.String())),
    owner: Type.Optional(Uuid),
    billing_deployment_restriction: Nullable(Type.String()),
    organization_plan: Type.Object({ plan: AnsweredPlan, audit_logs_retention_in_days: Type.Number() }),
  },
  {
    $id: 'Organization',
    examples: [
      {
        id: '3f6c2a8e-5b1d-4c7a-9e2f-1a4b6c8d0e12',
        created_at: '2026-03-02T09:15:27.412Z',
        updated_at: '2026-03-02T09:15:27.412Z',
        name: 'Acme',
        description: 'Web shop and back office of Acme Ltd.',
        plan: 'FREE',
        website_url: 'https://acme.example',
        repository: null,
        logo_url: null,
        icon_url: null,
        admin_emails: null,
        owner: '7b9d4e21-0c3f-4a8b-b6d5-2e1f9a7c3d40',
        billing_deployment_restriction: null,
        organization_plan: { plan: 'FREE', audit_logs_retention_in_days: 7 },
      },
    ],
  },
);

export const OrganizationResponseList = ListOf(Organization, 'OrganizationResponseList');
