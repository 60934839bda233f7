import type { Generated } from 'kysely';

/**
 * Row types of the tables of one area (db.schema.ts has the DB interface and the conventions). People, organizations
 * and their access: accounts, roles, members, tokens, invitations, projects.
 */

export interface UsersTable {
  id: string;
  issuer: string | null;
  subject: string | null;
  email: string | null;
  name: string | null;
  picture: string | null;
  /** 1 when the identity provider vouched for `email` (the email_verified claim), else 0. */
  email_verified: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** What a person set on their own account (migrations/0046_account_settings.ts); no row: nothing set yet. */
export interface AccountSettingsTable {
  user_id: string;
  /** Where the person wants to be written to (editAccountInformation). */
  communication_email: string;
  updated_at: string;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  /** Normalised name (NFC, lower case) carrying the unique index, so "Acme" and "acme" collide. */
  name_key: string;
  description: string | null;
  plan: string;
  website_url: string | null;
  repository: string | null;
  logo_url: string | null;
  icon_url: string | null;
  admin_emails: unknown;
  created_at: string;
  updated_at: string;
  /** Set when the organization was deleted; the row goes once its workloads are torn down (0028_organization_deletion). */
  deleted_at: string | null;
}

export interface RolesTable {
  id: string;
  organization_id: string;
  name: string;
  /** BUILT_IN for the four roles every organization has; CUSTOM for roles an organization defines. */
  kind: string;
  created_at: string;
}

/** The definition of a CUSTOM role (migrations/0015_custom_roles.ts): permissions are roles.rules.ts's enums. */
export interface CustomRolesTable {
  role_id: string;
  description: string | null;
  /** VIEWER or MANAGER: what the role may do on organization-level resources. */
  organization_permission: string;
  /** Per environment type, the permission on the projects the role does not list in custom_role_projects. */
  development: string;
  preview: string;
  staging: string;
  production: string;
  /** Per environment type, whether the role reveals secret values there (1/0; 0027_custom_role_reveal). */
  development_reveal: number;
  preview_reveal: number;
  staging_reveal: number;
  production_reveal: number;
  updated_at: string;
}

/** A project a custom role lists: project admin (1/0), the permission and the reveal flag per environment type. */
export interface CustomRoleProjectsTable {
  role_id: string;
  project_id: string;
  is_admin: number;
  development: string;
  preview: string;
  staging: string;
  production: string;
  development_reveal: number;
  preview_reveal: number;
  staging_reveal: number;
  production_reveal: number;
}

/** A cluster a custom role lists, with its permission (VIEWER, ENV_CREATOR or ADMIN). */
export interface CustomRoleClustersTable {
  role_id: string;
  cluster_id: string;
  permission: string;
}

export interface MembersTable {
  organization_id: string;
  user_id: string;
  role_id: string;
  created_at: string;
  updated_at: string;
}

export interface OnboardingTable {
  organization_id: string;
  user_id: string;
  use_cases: string | null;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface ApiTokensTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** SHA-256 (hex) of the whole token value; the value itself is never stored. */
  token_hash: string;
  /** The first characters of the value, shown in listings so a user can recognise a token. */
  token_start: string;
  role_id: string | null;
  scope: string | null;
  creator_user_id: string | null;
  creator_name: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface PolicyTokensTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** The Rego source as the creator wrote it; compiled on first use and cached. */
  opa_policy: string;
  /** SHA-256 (hex) of the whole token value; the value itself is never stored. */
  token_hash: string;
  token_start: string;
  creator_user_id: string | null;
  creator_name: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface LocalAccountsTable {
  id: string;
  email: string;
  name: string | null;
  /** scrypt$N$r$p$salt$hash (salt and hash base64url); see identity/identity.passwords.ts. */
  password_hash: string;
  email_verified_at: string | null;
  verification_hash: string | null;
  verification_expires_at: string | null;
  failed_sign_ins: Generated<number>;
  locked_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdentityKeysTable {
  id: string;
  use: string;
  material: string;
  created_at: string;
  retired_at: string | null;
}

/** Protocol state of the built-in identity provider, one row per (model, id); payload is JSON text on both dialects. */
export interface OidcRecordsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

export interface InvitationsTable {
  id: string;
  organization_id: string;
  email: string;
  email_key: string;
  role_id: string;
  inviter_user_id: string | null;
  inviter_name: string;
  /** PENDING or ACCEPTED; EXPIRED is computed from expires_at. */
  status: string;
  expires_at: string;
  accepted_by_user_id: string | null;
  accepted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Mail kept instead of sent when no SMTP relay is configured. */
export interface OutboxTable {
  id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: string;
}

export interface IdempotencyKeysTable {
  scope_hash: string;
  request_hash: string;
  /** PENDING while the first request runs; DONE once its answer is kept; SECRET when the answer may not be kept. */
  state: string;
  status: number | null;
  content_type: string | null;
  body: string | null;
  created_at: string;
  expires_at: string;
}

export interface GitTokensTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** GITHUB, GITLAB or BITBUCKET: the host's user-name convention for the token. */
  type: string;
  workspace: string | null;
  git_api_url: string;
  /** The token value sealed by lib/secret-box.ts (AES-256-GCM, bound to this row's id and organization). */
  token_envelope: string;
  /** The token's expiry date (YYYY-MM-DD) when known; null otherwise. */
  expired_at: string | null;
  creator_user_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectsTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}
