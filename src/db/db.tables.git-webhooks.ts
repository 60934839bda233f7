/** Git webhooks and the preview environments pull requests open (migrations/0049_git_webhooks.ts, docs/git-webhooks.md). */

/** A service's webhook: the secret deliveries are verified with, sealed for the service, and the provider's hook id. */
export interface GitWebhooksTable {
  service_id: string;
  organization_id: string;
  /** GITHUB, GITLAB or BITBUCKET: the provider whose signature scheme deliveries are verified with. */
  provider: string;
  secret_envelope: string;
  /** The hook's id at the provider once sync registered it; null before. */
  provider_hook_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A delivery acted on, under the provider's delivery id: a replay of it finds this row and acts no more. */
export interface GitWebhookDeliveriesTable {
  id: string;
  service_id: string;
  delivery_id: string;
  /** The provider's event name (push, pull_request, Push Hook, repo:push, …). */
  event: string;
  /** DEPLOYED, IGNORED, PREVIEW_DEPLOYED, PREVIEW_DELETED. */
  outcome: string;
  message: string | null;
  received_at: string;
}

/** An environment cloned from a blueprint environment for a pull request; deleted with it when the request closes. */
export interface PreviewEnvironmentsTable {
  environment_id: string;
  blueprint_environment_id: string;
  /** `owner/name`, lower case. */
  repository: string;
  pull_request: number;
  branch: string;
  created_at: string;
  updated_at: string;
}
