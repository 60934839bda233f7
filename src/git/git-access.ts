/**
 * The git access port: everything in Slipway that reads a repository (listing directories for a Terraform root path,
 * later cloning for builds) goes through it, so credentials handling, address checks and limits live in one place.
 * The implementation speaks the git protocol (system-git.ts), never a provider's REST API, so any git host works.
 */
export const GIT_PROVIDERS = ['BITBUCKET', 'GITHUB', 'GITLAB'] as const;
export type GitProvider = (typeof GIT_PROVIDERS)[number];

/** A token for a git host and the provider whose HTTPS user-name convention it follows. */
export interface GitCredentials {
  provider: GitProvider;
  token: string;
}

export interface DirectoryListingRequest {
  /** The repository's HTTPS clone URL. */
  url: string;
  /** Absent: the repository's default branch (its HEAD). */
  branch?: string | undefined;
  /** A directory of the repository, `/` or empty for the top. */
  rootPath: string;
  /** Absent for a public repository. */
  credentials?: GitCredentials | undefined;
}

export interface GitAccess {
  /**
   * The names of the immediate subdirectories at `rootPath` on `branch`, sorted. Every failure the caller can fix
   * (unknown branch, missing path, repository not found, authentication refused, host unreachable or refused) is a
   * bad-request AppError whose message says which.
   */
  listDirectories(request: DirectoryListingRequest): Promise<string[]>;
}

/** The HTTPS user name each provider expects in front of a token (the password). */
export const TOKEN_USER_NAME: Record<GitProvider, string> = {
  GITHUB: 'x-access-token',
  GITLAB: 'oauth2',
  BITBUCKET: 'x-token-auth',
};
