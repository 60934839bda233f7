import type { Kysely } from 'kysely';
import type { Access, Principal } from '../../auth/principal.ts';
import type { DB } from '../../db/db.schema.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import type { GitAccess, GitCredentials, GitProvider } from '../../git/git-access.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { deleteGitToken, findGitToken, insertGitToken, listGitTokens, updateGitToken, type GitTokenRow } from './git-tokens.repo.ts';

/** A service built from a repository with a given git token (the reference's GitTokenAssociatedServiceResponse). */
export interface GitTokenAssociatedService {
  project_id: string;
  project_name: string;
  environment_id: string;
  environment_name: string;
  service_id: string;
  service_name: string;
  service_type: 'APPLICATION' | 'CRON' | 'LIFECYCLE' | 'HELM' | 'TERRAFORM' | 'AGENTIC_WORKFLOW';
}

/**
 * Services are owned by a later module; it reports which of them use a git token through this port. Until it
 * exists no service uses any token (every list empty, every count zero).
 */
export interface GitTokenUsage {
  servicesUsing(organizationId: string, gitTokenId: string): Promise<GitTokenAssociatedService[]>;
  countsByToken(organizationId: string, gitTokenIds: string[]): Promise<Map<string, number>>;
}

export const NO_GIT_TOKEN_USAGE: GitTokenUsage = {
  servicesUsing: async () => [],
  countsByToken: async () => new Map(),
};

export interface GitTokensDeps {
  db: Kysely<DB>;
  clock: Clock;
  secrets: SecretBox;
  git: GitAccess;
  usage: GitTokenUsage;
}

export interface GitTokenInput {
  name: string;
  description?: string | null | undefined;
  type: GitProvider;
  token?: string | undefined;
  workspace?: string | null | undefined;
  git_api_url?: string | null | undefined;
}

export interface DirectoryListingInput {
  url: string;
  branch?: string | undefined;
  root_path?: string | undefined;
  git_token_id?: string | null | undefined;
  provider: GitProvider;
}

/** The provider's public API endpoint, answered as git_api_url when the request names none (its hosted service). */
const DEFAULT_API_URL: Record<GitProvider, string> = {
  GITHUB: 'https://api.github.com',
  GITLAB: 'https://gitlab.com/api/v4',
  BITBUCKET: 'https://api.bitbucket.org/2.0',
};

/** Binds a sealed value to its row: an envelope copied into another row or organization does not open. */
function associatedData(row: Pick<GitTokenRow, 'id' | 'organization_id'>): string {
  return `git_tokens:${row.organization_id}:${row.id}`;
}

function nameTakenMessage(name: string): string {
  return `a git token named "${name}" already exists in this organization`;
}

/**
 * Git tokens (SPEC.md "Git tokens and git repositories"): credentials *for* git hosts, so unlike API tokens the value
 * must be usable again: it is sealed with AES-256-GCM (lib/secret-box.ts) and opened only to hand it to git. No
 * operation returns it and nothing logs it.
 */
export function createGitTokensService(deps: GitTokensDeps) {
  const { db, clock, secrets, git, usage } = deps;

  function view(row: GitTokenRow, servicesCount: number) {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      name: row.name,
      // Not nullable in the reference: what a token does not have is left out.
      ...(row.description === null ? {} : { description: row.description }),
      type: row.type as GitProvider,
      ...(row.expired_at === null ? {} : { expired_at: row.expired_at }),
      ...(row.workspace === null ? {} : { workspace: row.workspace }),
      associated_services_count: servicesCount,
      git_api_url: row.git_api_url,
    };
  }

  async function requireToken(organizationId: string, gitTokenId: string): Promise<GitTokenRow> {
    const row = await findGitToken(db, organizationId, gitTokenId);
    if (row === undefined) throw notFound(`git token ${gitTokenId} not found`);
    return row;
  }

  async function countOf(row: GitTokenRow): Promise<number> {
    return (await usage.countsByToken(row.organization_id, [row.id])).get(row.id) ?? 0;
  }

  async function listOrganizationGitTokens(organizationId: string) {
    const rows = await listGitTokens(db, organizationId);
    const counts = await usage.countsByToken(organizationId, rows.map((row) => row.id));
    return rows.map((row) => view(row, counts.get(row.id) ?? 0));
  }

  async function getGitToken(organizationId: string, gitTokenId: string) {
    const row = await requireToken(organizationId, gitTokenId);
    return view(row, await countOf(row));
  }

  async function createGitToken(principal: Principal, access: Access, input: GitTokenInput & { token: string }) {
    const now = isoTimestamp(clock);
    const name = cleanName(input.name);
    const id = newId();
    const row: GitTokenRow = {
      id,
      organization_id: access.organizationId,
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      type: input.type,
      workspace: input.workspace ?? null,
      git_api_url: input.git_api_url ?? DEFAULT_API_URL[input.type],
      token_envelope: secrets.seal(input.token, associatedData({ id, organization_id: access.organizationId })),
      expired_at: null,
      creator_user_id: principal.kind === 'user' ? principal.userId : null,
      created_at: now,
      updated_at: now,
    };
    await uniqueOrConflict(() => insertGitToken(db, row), nameTakenMessage(name));
    return view(row, 0);
  }

  async function editGitToken(organizationId: string, gitTokenId: string, input: GitTokenInput) {
    const row = await requireToken(organizationId, gitTokenId);
    const name = cleanName(input.name);
    const changes = {
      name,
      name_key: nameKey(name),
      description: input.description ?? null,
      type: input.type,
      workspace: input.workspace ?? null,
      git_api_url: input.git_api_url ?? DEFAULT_API_URL[input.type],
      token_envelope: input.token === undefined ? row.token_envelope : secrets.seal(input.token, associatedData(row)),
      // A new value may expire at another date, which is not known.
      expired_at: input.token === undefined ? row.expired_at : null,
      updated_at: isoTimestamp(clock),
    };
    const updated = await uniqueOrConflict(() => updateGitToken(db, organizationId, gitTokenId, changes), nameTakenMessage(name));
    if (!updated) throw notFound(`git token ${gitTokenId} not found`);
    return view({ ...row, ...changes }, await countOf(row));
  }

  /** A token that services still build from is not deleted: they would fail at their next deployment. */
  async function removeGitToken(organizationId: string, gitTokenId: string): Promise<void> {
    await requireToken(organizationId, gitTokenId);
    const users = await usage.servicesUsing(organizationId, gitTokenId);
    if (users.length > 0) {
      const names = users.map((service) => `"${service.service_name}"`).join(', ');
      throw conflict(`git token ${gitTokenId} is used by ${users.length} service(s): ${names}; point them at another token first`);
    }
    if (!(await deleteGitToken(db, organizationId, gitTokenId))) throw notFound(`git token ${gitTokenId} not found`);
  }

  async function associatedServices(organizationId: string, gitTokenId: string) {
    await requireToken(organizationId, gitTokenId);
    return usage.servicesUsing(organizationId, gitTokenId);
  }

  /** The token's value and convention, for modules that read repositories (builds, listings). */
  async function credentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined> {
    const row = await findGitToken(db, organizationId, gitTokenId);
    if (row === undefined) return undefined;
    let token: string;
    try {
      token = secrets.open(row.token_envelope, associatedData(row));
    } catch {
      // Sealed under another key (SLIPWAY_SECRET_KEY or the key file changed): the value is lost, not exposed.
      throw badRequest(`git token ${gitTokenId} can no longer be decrypted (the server's secret key changed); edit it with its value again`, [
        { field: '/git_token_id', message: 'token unreadable' },
      ]);
    }
    return { provider: row.type as GitProvider, token };
  }

  async function listDirectories(organizationId: string, input: DirectoryListingInput): Promise<string[]> {
    let credentials: GitCredentials | undefined;
    if (input.git_token_id !== undefined && input.git_token_id !== null) {
      credentials = await credentialsOf(organizationId, input.git_token_id);
      if (credentials === undefined) {
        throw badRequest(`git token ${input.git_token_id} not found in this organization`, [{ field: '/git_token_id', message: 'unknown git token' }]);
      }
    }
    return git.listDirectories({ url: input.url, branch: input.branch, rootPath: input.root_path ?? '/', credentials });
  }

  return {
    listOrganizationGitTokens,
    getGitToken,
    createGitToken,
    editGitToken,
    removeGitToken,
    associatedServices,
    credentialsOf,
    listDirectories,
  };
}

export type GitTokensService = ReturnType<typeof createGitTokensService>;
