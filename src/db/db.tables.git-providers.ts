/**
 * The GitHub App connections (migrations/0048_github_app_connections.ts, docs/git-providers.md): which installation
 * of the GitHub App an organization connected (organizationGithubAppConnect), one per organization.
 */
export interface GithubAppConnectionsTable {
  organization_id: string;
  /** GitHub's id of the installation, digits as text (they exceed 2^31). */
  installation_id: string;
  /** The person who connected it, when a person did (null for a token, or once the person is deleted). */
  connected_by_user_id: string | null;
  created_at: string;
  updated_at: string;
}
