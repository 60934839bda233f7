/**
 * The git access port: everything in Slipway that reads a repository (listing directories for a Terraform root path,
 * checking out a commit for a build) goes through it, so credentials handling, address checks and limits live in one place.
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

export interface CheckoutRequest {
  /** The repository's HTTPS clone URL. */
  url: string;
  /** Absent: the repository's default branch (its HEAD). Ignored for the fetch when `commitId` is given. */
  branch?: string | undefined;
  /** A full commit id (40 hex digits) to check out; absent: the head of `branch`. */
  commitId?: string | undefined;
  /** Absent for a public repository. */
  credentials?: GitCredentials | undefined;
  /** Where the working tree goes: a directory that does not exist yet or is empty. */
  destination: string;
  /** Aborting ends git at once (a canceled deployment); the checkout then rejects. */
  signal?: AbortSignal | undefined;
}

export interface CommitListingRequest {
  /** The repository's HTTPS clone URL. */
  url: string;
  branch: string;
  /** How many commits, newest first, from the head of `branch`. */
  maxCount: number;
  /** Absent for a public repository. */
  credentials?: GitCredentials | undefined;
}

/** One commit of a branch's history. */
export interface GitCommit {
  id: string;
  authorName: string;
  /** The author date, ISO 8601 with the author's offset. */
  authoredAt: string;
  /** The whole message: subject, blank line, body. */
  message: string;
}

export interface GitAccess {
  /**
   * The names of the immediate subdirectories at `rootPath` on `branch`, sorted. Every failure the caller can fix
   * (unknown branch, missing path, repository not found, authentication refused, host unreachable or refused) is a
   * bad-request AppError whose message says which.
   */
  listDirectories(request: DirectoryListingRequest): Promise<string[]>;
  /**
   * Fetches one commit (`commitId`, else the head of `branch`) without history into `destination` and checks it
   * out; answers the id of the commit checked out. Failures the user can fix are bad-request AppErrors as for
   * listDirectories; the credentials never reach the destination's git configuration.
   */
  checkout(request: CheckoutRequest): Promise<string>;
  /**
   * The last `maxCount` commits of `branch`, newest first, fetched without file contents. Failures the user can fix
   * are bad-request AppErrors as for listDirectories.
   */
  listCommits(request: CommitListingRequest): Promise<GitCommit[]>;
  /**
   * Refuses (a bad-request AppError naming `/url`) a URL this access would refuse before reaching the network: not
   * http(s), credentials in it, http:// or a host outside the allowed list where the installation does not allow
   * them (git-urls.ts). The same check opens listDirectories and checkout.
   */
  checkUrl(url: string): void;
}

/** The HTTPS user name each provider expects in front of a token (the password). */
export const TOKEN_USER_NAME: Record<GitProvider, string> = {
  GITHUB: 'x-access-token',
  GITLAB: 'oauth2',
  BITBUCKET: 'x-token-auth',
};
