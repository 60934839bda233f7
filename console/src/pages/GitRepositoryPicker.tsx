import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, fetchClient, messageOf, type components } from '../api/client.ts';
import { Button, ErrorMessage, SelectField, TextField } from '../ui/controls.tsx';

type Provider = components['schemas']['GitProviderEnum'];
type GitRepository = components['schemas']['GitRepository'];

/** The wizard's git source as its fields hold it; `gitProvider` is the chosen account's provider ('' when none). */
export interface GitSource {
  gitTokenId: string;
  gitProvider: Provider | '';
  repository: string;
  branch: string;
  rootPath: string;
}

/**
 * A provider account the repositories can be listed from: one of the organization's git tokens
 * (getOrganizationGitProviderAccount), or the person's own provider login (getGitProviderAccount).
 */
interface Account {
  key: string;
  source: 'organization' | 'person';
  provider: Provider;
  /** The git token the organization's listings read with. */
  gitTokenId?: string;
  label: string;
}

const PROVIDER_LABELS: Record<Provider, string> = { GITHUB: 'GitHub', GITLAB: 'GitLab', BITBUCKET: 'Bitbucket' };

function isProvider(name: string): name is Provider {
  return name === 'GITHUB' || name === 'GITLAB' || name === 'BITBUCKET';
}

/** A typed-client answer's list, or its error body thrown (for the query's error state). */
function resultsOf<T>(answer: { data?: { results: T[] }; error?: unknown }): T[] {
  if (answer.data === undefined) throw answer.error ?? new Error('no answer');
  return answer.data.results;
}

/** The account's repositories, through the listing of its provider (each provider has its own operation). */
async function repositoriesOf(organizationId: string, account: Account): Promise<GitRepository[]> {
  if (account.source === 'person') {
    if (account.provider === 'GITLAB') return resultsOf(await fetchClient.GET('/account/gitlab/repository'));
    if (account.provider === 'BITBUCKET') return resultsOf(await fetchClient.GET('/account/bitbucket/repository'));
    return resultsOf(await fetchClient.GET('/account/github/repository'));
  }
  const params = { params: { path: { organizationId }, query: { gitTokenId: account.gitTokenId } } };
  if (account.provider === 'GITLAB') return resultsOf(await fetchClient.GET('/organization/{organizationId}/account/gitlab/repository', params));
  if (account.provider === 'BITBUCKET') return resultsOf(await fetchClient.GET('/organization/{organizationId}/account/bitbucket/repository', params));
  return resultsOf(await fetchClient.GET('/organization/{organizationId}/account/github/repository', params));
}

/** The branches of the repository the listing named `name`. */
async function branchesOf(organizationId: string, account: Account, name: string): Promise<string[]> {
  let branches: { name: string }[];
  if (account.source === 'person') {
    const params = { params: { query: { name } } };
    if (account.provider === 'GITLAB') branches = resultsOf(await fetchClient.GET('/account/gitlab/repository/branch', params));
    else if (account.provider === 'BITBUCKET') branches = resultsOf(await fetchClient.GET('/account/bitbucket/repository/branch', params));
    else branches = resultsOf(await fetchClient.GET('/account/github/repository/branch', params));
  } else {
    const params = { params: { path: { organizationId }, query: { name, gitTokenId: account.gitTokenId } } };
    if (account.provider === 'GITLAB') branches = resultsOf(await fetchClient.GET('/organization/{organizationId}/account/gitlab/repository/branch', params));
    else if (account.provider === 'BITBUCKET') branches = resultsOf(await fetchClient.GET('/organization/{organizationId}/account/bitbucket/repository/branch', params));
    else branches = resultsOf(await fetchClient.GET('/organization/{organizationId}/account/github/repository/branch', params));
  }
  return branches.map((branch) => branch.name);
}

/** The accounts offered: the organization's git tokens (the GitHub App's installation lists nothing itself), then the person's own. */
function useAccounts(organizationId: string): { accounts: Account[]; error: unknown } {
  const organizationPath = { params: { path: { organizationId } } };
  const organizationAccounts = api.useQuery('get', '/organization/{organizationId}/account/gitAuthProvider', organizationPath);
  const personalAccounts = api.useQuery('get', '/account/gitAuthProvider');
  const gitTokens = api.useQuery('get', '/organization/{organizationId}/gitToken', organizationPath);
  const accounts: Account[] = [];
  for (const account of organizationAccounts.data?.results ?? []) {
    if (account.use_bot === true || account.id === undefined || !isProvider(account.name)) continue;
    const tokenName = gitTokens.data?.results.find((token) => token.id === account.id)?.name ?? account.owner;
    const owner = account.owner === tokenName ? '' : `, ${account.owner}`;
    accounts.push({ key: `token:${account.id}`, source: 'organization', provider: account.name, gitTokenId: account.id, label: `${tokenName} (${PROVIDER_LABELS[account.name]}${owner})` });
  }
  for (const account of personalAccounts.data?.results ?? []) {
    if (!isProvider(account.name)) continue;
    accounts.push({ key: `person:${account.name}:${account.owner}`, source: 'person', provider: account.name, label: `Your ${PROVIDER_LABELS[account.name]} account (${account.owner})` });
  }
  return { accounts, error: organizationAccounts.error ?? gitTokens.error ?? undefined };
}

/**
 * The repository step of the git-built services' wizards: a provider account, then one of its repositories, then one
 * of its branches, read from the provider (docs/git-providers.md); or the repository's URL and branch typed, with the
 * account's git token (or none, for a public repository). The root path is typed in both.
 */
export function GitRepositoryPicker(props: {
  organizationId: string;
  source: GitSource;
  onChange: (next: Partial<GitSource>) => void;
  errors: { gitTokenId?: string | undefined; url?: string | undefined; branch?: string | undefined; rootPath?: string | undefined };
}) {
  const { organizationId, source, onChange, errors } = props;
  const { accounts, error: accountsError } = useAccounts(organizationId);
  const [accountKey, setAccountKey] = useState(source.gitTokenId === '' ? '' : `token:${source.gitTokenId}`);
  const [typing, setTyping] = useState(source.gitTokenId === '');
  const account = accounts.find((candidate) => candidate.key === accountKey);
  const picking = account !== undefined && !typing;
  const repositories = useQuery({
    queryKey: ['git-repositories', organizationId, account?.key],
    queryFn: () => repositoriesOf(organizationId, account as Account),
    enabled: picking,
    retry: false,
  });
  const chosen = repositories.data?.find((repository) => repository.url === source.repository);
  const branches = useQuery({
    queryKey: ['git-branches', organizationId, account?.key, chosen?.name],
    queryFn: () => branchesOf(organizationId, account as Account, chosen?.name ?? ''),
    enabled: picking && chosen !== undefined,
    retry: false,
  });

  function chooseAccount(key: string) {
    const next = accounts.find((candidate) => candidate.key === key);
    setAccountKey(key);
    setTyping(next === undefined);
    onChange({ gitTokenId: next?.gitTokenId ?? '', gitProvider: next?.provider ?? '' });
  }
  function chooseRepository(url: string) {
    const repository = repositories.data?.find((candidate) => candidate.url === url);
    onChange({ repository: url, ...(repository?.default_branch === undefined ? {} : { branch: repository.default_branch }) });
  }

  const branchNames = branches.data ?? [];
  const branchOptions = branchNames.includes(source.branch) || source.branch === '' ? branchNames : [source.branch, ...branchNames];
  return (
    <>
      <SelectField
        id="git-token"
        label="Git account"
        value={accountKey}
        onChange={chooseAccount}
        options={[{ value: '', label: 'None: a public repository, by its URL' }, ...accounts.map((candidate) => ({ value: candidate.key, label: candidate.label }))]}
        errorMessage={errors.gitTokenId}
        description="The organization’s git tokens (Settings › Git tokens): choose one to pick among the repositories it can read."
      />
      <ErrorMessage message={accountsError === undefined ? undefined : messageOf(accountsError)} />
      {picking ? (
        <>
          <SelectField
            id="git-repository"
            label="Repository"
            value={chosen?.url ?? ''}
            onChange={chooseRepository}
            options={[
              { value: '', label: repositories.isPending ? 'Reading the repositories…' : 'Choose a repository' },
              ...(repositories.data ?? []).map((repository) => ({ value: repository.url, label: `${repository.name}${repository.is_private === true ? ' (private)' : ''}` })),
            ]}
            errorMessage={errors.url}
            description={repositories.isSuccess && repositories.data.length === 0 ? 'This account sees no repository.' : undefined}
          />
          <ErrorMessage message={repositories.isError ? messageOf(repositories.error) : undefined} />
          <div className="field-row">
            <SelectField
              id="git-branch"
              label="Branch"
              value={source.branch}
              onChange={(branch) => onChange({ branch })}
              options={(chosen === undefined ? [source.branch] : branchOptions).map((branch) => ({ value: branch, label: branch === '' ? 'Choose a repository first' : branch }))}
              errorMessage={errors.branch}
            />
            <TextField label="Root path" value={source.rootPath} onChange={(rootPath) => onChange({ rootPath })} errorMessage={errors.rootPath} description="The directory to build in." />
          </div>
          <ErrorMessage message={branches.isError ? messageOf(branches.error) : undefined} />
          <div className="form-actions form-actions-start">
            <Button variant="secondary" onPress={() => setTyping(true)}>
              Type the repository’s URL instead
            </Button>
          </div>
        </>
      ) : (
        <>
          <TextField label="Repository URL" value={source.repository} onChange={(repository) => onChange({ repository })} isRequired type="url" placeholder="https://github.com/acme/shop.git" errorMessage={errors.url} />
          <div className="field-row">
            <TextField label="Branch" value={source.branch} onChange={(branch) => onChange({ branch })} isRequired errorMessage={errors.branch} />
            <TextField label="Root path" value={source.rootPath} onChange={(rootPath) => onChange({ rootPath })} errorMessage={errors.rootPath} description="The directory to build in." />
          </div>
          {account === undefined ? null : (
            <div className="form-actions form-actions-start">
              <Button variant="secondary" onPress={() => setTyping(false)}>
                Choose from the account’s repositories
              </Button>
            </div>
          )}
        </>
      )}
    </>
  );
}
