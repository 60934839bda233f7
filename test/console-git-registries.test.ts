import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { checkScreen, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { startGitProviderServer, type TestGitProviderServer } from './support/git-provider-server.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { startOciRegistry, type TestOciRegistry } from './support/oci-registry-server.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

const GITHUB_TOKEN = 'ghp_console_picker_token_0123456789';
const REGISTRY_PASSWORD = 'registry-secret-value';

/** A Terraform module: two variables (one with a default) and a .tfvars file beside them. */
const MODULE_FILES: Record<string, string> = {
  'main.tf': 'variable "region" {\n  type        = string\n  default     = "eu-west-3"\n  description = "Where the network lives"\n}\n\nvariable "cidr" {\n  type = string\n}\n',
  'prod.tfvars': 'cidr = "10.0.0.0/16"\n',
};

function git(args: string[], cwd: string): Promise<void> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com' };
  return new Promise((resolve, reject) => execFile('git', args, { cwd, env }, (error, _stdout, stderr) => (error === null ? resolve() : reject(new Error(`git ${args.join(' ')}: ${stderr}`)))));
}

/** `<root>/acme/infra.git`: the module on main, and a branch staging made from it. */
async function createInfraRepository(root: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-console-infra-'));
  try {
    await git(['init', '--quiet', '--initial-branch=main', work], work);
    for (const [name, content] of Object.entries(MODULE_FILES)) await writeFile(path.join(work, name), content);
    await git(['add', '--all'], work);
    await git(['commit', '--quiet', '-m', 'network module'], work);
    await git(['branch', 'staging'], work);
    await mkdir(path.join(root, 'acme'), { recursive: true });
    await git(['clone', '--quiet', '--bare', work, path.join(root, 'acme', 'infra.git')], work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Git providers and registries in the console (issue 22, slice 7), in a real browser against the real server (SQLite):
 * the Terraform wizard's repository step picks a GitHub account (a git token whose API is the test provider server),
 * one of its repositories and a branch instead of a typed URL, then reads the module's declared variables and .tfvars
 * files from that repository; a container registry edited, its images listed from a test OCI registry, the services
 * using it; the registry and Helm repository kinds the API offers; the GitHub App connected and disconnected.
 * Photographs `360-…` to `366-…`.
 */
describe('web console: git provider accounts, registries and the GitHub App [sqlite]', () => {
  let world: ConsoleWorld;
  let server: SlipwayServer;
  let browser: Browser;
  let gitRoot: string;
  let gitServer: TestGitServer;
  let providers: TestGitProviderServer;
  let registry: TestOciRegistry;
  const owner = `console-git-registries-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-console-git-'));
    await createInfraRepository(gitRoot);
    gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
    const served = gitServer;
    providers = await startGitProviderServer({ pageSize: 2, cloneUrlOf: (_provider, fullName) => served.urlOf(fullName) });
    providers.addAccount(GITHUB_TOKEN, {
      repositories: [
        { fullName: 'acme/archive', isPrivate: true, defaultBranch: 'main', branches: ['main'] },
        { fullName: 'acme/infra', isPrivate: false, defaultBranch: 'main', branches: ['main', 'staging'] },
        { fullName: 'acme/website', isPrivate: false, defaultBranch: 'main', branches: ['main'] },
      ],
    });
    registry = await startOciRegistry({ mode: 'basic', username: 'robot', password: REGISTRY_PASSWORD, repositories: { 'shop/web': ['1.0', '1.1'], 'shop/worker': ['2.0'] } });
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Gita Providers' }, {
      // The provider API, the git server and the registry are on loopback, over plain http.
      SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
    });
    ({ server, browser } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.close();
    await registry?.close();
    await providers?.close();
    await gitServer?.close();
    if (gitRoot !== undefined) await rm(gitRoot, { recursive: true, force: true });
  }, 60_000);

  it('picks a repository and branch from a provider account, reads its Terraform variables, edits a registry and lists its images, and connects the GitHub App', { timeout: 120_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    watchPage(page, problems, () => false);
    try {
      await signIn(page, server, owner);
      const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Git');
      const cluster = await localCluster(server, organizationId, made);
      const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      const gitToken = await made<{ id: string }>('POST', `/organization/${organizationId}/gitToken`, { name: 'acme-github', type: 'GITHUB', token: GITHUB_TOKEN, git_api_url: providers.githubApiUrl });
      const shopRegistry = await made<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: 'shop-registry', kind: 'GENERIC_CR', url: registry.url, config: { username: 'robot', password: REGISTRY_PASSWORD } });
      await made('POST', `/environment/${environment.id}/container`, { name: 'proxy', registry_id: shopRegistry.id, image_name: 'shop/web', tag: '1.1', ports: [{ internal_port: 80, publicly_accessible: false, protocol: 'HTTP' }], healthchecks: {} });
      await made('POST', `/organization/${organizationId}/helmRepository`, { name: 'charts', kind: 'HTTPS', url: 'http://127.0.0.1:9/charts' });
      const settingsPath = `${server.baseUrl}/console/organization/${organizationId}/settings`;

      // The Terraform wizard: the account acme-github, its repository acme/infra (listed across the provider's
      // pages), the branch staging; then the module's variables and .tfvars files read from that repository.
      await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}/new/terraform`);
      await page.getByRole('heading', { level: 1, name: 'New terraform' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('network');
      await page.getByLabel('Git account').selectOption({ label: 'acme-github (GitHub)' });
      await page.getByLabel('Repository', { exact: true }).selectOption({ label: 'acme/infra' });
      expect(await page.getByLabel('Repository', { exact: true }).locator('option').allTextContents()).toEqual(['Choose a repository', 'acme/archive (private)', 'acme/infra', 'acme/website']);
      await page.getByLabel('Branch', { exact: true }).selectOption('staging');
      expect(await page.getByLabel('Branch', { exact: true }).locator('option').allTextContents()).toEqual(['main', 'staging']);
      await checkScreen(page, '360-wizard-repository-picker');
      // Typing stays possible: the URL the listing chose, editable.
      await page.getByRole('button', { name: 'Type the repository’s URL instead' }).click();
      expect(await page.getByLabel('Repository URL').inputValue()).toBe(gitServer.urlOf('acme/infra'));
      await page.getByRole('button', { name: 'Choose from the account’s repositories' }).click();
      expect(await page.getByLabel('Branch', { exact: true }).inputValue()).toBe('staging');
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByRole('heading', { name: 'Variables' }).waitFor();
      await page.getByRole('button', { name: 'Read the declared variables' }).click();
      const declared = page.getByRole('table', { name: 'Declared variables' });
      await declared.getByRole('row', { name: /region/ }).waitFor();
      expect(await declared.getByRole('row', { name: /region/ }).textContent()).toMatch(/Where the network lives.*eu-west-3.*main\.tf/);
      expect(await declared.getByRole('row', { name: /cidr/ }).textContent()).toContain('none (required)');
      await declared.getByRole('button', { name: 'Add region' }).click();
      expect(await page.getByLabel('Key 1').inputValue()).toBe('region');
      expect(await page.getByLabel('Value 1').inputValue()).toBe('eu-west-3');
      await page.getByRole('button', { name: 'Find .tfvars files' }).click();
      const found = page.getByRole('table', { name: 'Variable files found' });
      await found.getByRole('row', { name: /prod\.tfvars/ }).waitFor();
      await found.getByRole('button', { name: 'Use prod.tfvars' }).click();
      expect(await page.getByLabel('Variable files (optional)').inputValue()).toBe('prod.tfvars');
      await checkScreen(page, '361-terraform-variables-from-repository');
      await page.getByRole('button', { name: 'Next' }).click();
      await page.getByRole('heading', { name: 'Review' }).waitFor();
      await page.getByRole('button', { name: 'Create terraform' }).click();
      await page.getByRole('heading', { level: 1, name: 'network' }).waitFor();
      const terraformId = /\/terraform\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
      expect(await made('GET', `/terraform/${terraformId}`)).toMatchObject({
        terraform_files_source: { git_repository: { url: gitServer.urlOf('acme/infra'), branch: 'staging', git_token_id: gitToken.id, provider: 'GITHUB' } },
        terraform_variables_source: { tf_vars: [{ key: 'region', value: 'eu-west-3' }], tf_var_file_paths: ['prod.tfvars'] },
      });
      expect(providers.requests.some((request) => request.path.includes('/repos/acme/infra/branches') && request.authorization === `Bearer ${GITHUB_TOKEN}`)).toBe(true);

      // Container registries: the kinds the API offers, an edit, the images, the services using it.
      await page.goto(`${settingsPath}/container-registries`);
      const registries = page.getByRole('table', { name: 'Container registries' });
      await registries.getByRole('row', { name: /shop-registry/ }).waitFor();
      await page.getByRole('button', { name: 'New registry' }).click();
      const add = page.getByRole('dialog', { name: 'New container registry' });
      await expect.poll(() => add.getByLabel('Kind').locator('option').count()).toBe(11);
      await add.getByLabel('Kind').selectOption('SCALEWAY_CR');
      await add.getByLabel('Scaleway secret key').waitFor();
      await add.getByLabel('Region').waitFor();
      await checkScreen(page, '362-new-registry-kinds');
      await add.getByLabel('Kind').selectOption('DOCKER_HUB');
      expect(await add.getByLabel('URL (optional)').getAttribute('placeholder')).toBe('https://docker.io');
      await add.getByRole('button', { name: 'Cancel' }).click();
      await add.waitFor({ state: 'detached' });

      await page.getByRole('button', { name: 'Actions for shop-registry' }).click();
      await page.getByRole('menuitem', { name: 'Edit…' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit shop-registry' });
      expect(await edit.getByLabel('User name (optional)').inputValue()).toBe('robot');
      expect(await edit.getByLabel('Password or token (optional)').inputValue()).toBe('');
      await edit.getByLabel('Name', { exact: true }).fill('shop-images');
      await edit.getByLabel('Description (optional)').fill('Images CI pushes');
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      await registries.getByRole('row', { name: /shop-images/ }).waitFor();
      expect(await made('GET', `/organization/${organizationId}/containerRegistry/${shopRegistry.id}`)).toMatchObject({ name: 'shop-images', description: 'Images CI pushes', config: { username: 'robot' } });
      // The stored password was kept: the registry still lets it in.
      expect(await made('POST', `/organization/${organizationId}/containerRegistry/${shopRegistry.id}/check`)).toMatchObject({ authenticated: true });

      await page.getByRole('button', { name: 'Actions for shop-images' }).click();
      await page.getByRole('menuitem', { name: 'Images…' }).click();
      const images = page.getByRole('dialog', { name: 'Images of shop-images' });
      await images.getByLabel('Search (optional)').fill('shop');
      await images.getByRole('button', { name: 'List images' }).click();
      const imageTable = images.getByRole('table', { name: 'Images of shop-images' });
      await imageTable.getByRole('row', { name: /shop\/web/ }).waitFor();
      expect(await imageTable.getByRole('row', { name: /shop\/web/ }).textContent()).toMatch(/1\.0.*1\.1/);
      expect(await imageTable.getByRole('row', { name: /shop\/worker/ }).textContent()).toContain('2.0');
      await checkScreen(page, '363-registry-images');
      await images.getByRole('button', { name: 'Close' }).click();
      await images.waitFor({ state: 'detached' });

      await registries.getByRole('button', { name: '1 service using shop-images' }).click();
      const services = page.getByRole('dialog', { name: 'Services using shop-images' });
      await services.getByRole('link', { name: 'proxy' }).waitFor();
      expect(await services.textContent()).toMatch(/proxy.*\(container\).*shop › staging/);
      await checkScreen(page, '364-registry-services');
      await services.getByRole('button', { name: 'Close' }).click();
      expect(await page.content()).not.toContain(REGISTRY_PASSWORD);

      // Helm repositories: the kinds the API offers, the services using one (none).
      await page.goto(`${settingsPath}/helm-repositories`);
      await page.getByRole('button', { name: 'Actions for charts' }).click();
      await page.getByRole('menuitem', { name: 'Services using it…' }).click();
      const helmServices = page.getByRole('dialog', { name: 'Services using charts' });
      await helmServices.getByText('No service you can see uses it.').waitFor();
      await helmServices.getByRole('button', { name: 'Close' }).click();
      await page.getByRole('button', { name: 'New Helm repository' }).click();
      const newRepository = page.getByRole('dialog', { name: 'New Helm repository' });
      await expect.poll(() => newRepository.getByLabel('Kind').locator('option').count()).toBe(8);
      await newRepository.getByLabel('Kind').selectOption('OCI_ECR');
      await newRepository.getByText(/Requires the id of AWS credentials/).waitFor();
      await newRepository.getByRole('button', { name: 'Cancel' }).click();

      // The GitHub App: connected with an installation, then disconnected.
      await page.goto(`${settingsPath}/git-tokens`);
      const app = page.getByRole('region', { name: 'GitHub App' });
      await app.getByText('Not connected.').waitFor();
      await app.getByRole('button', { name: 'Connect the GitHub App' }).click();
      const connect = page.getByRole('dialog', { name: 'Connect the GitHub App' });
      await connect.getByLabel('Installation id').fill('41234567');
      await connect.getByLabel('Setup code').fill('1f2e3d4c5b6a79880a1b');
      await checkScreen(page, '365-github-app-connect');
      await connect.getByRole('button', { name: 'Connect' }).click();
      await connect.waitFor({ state: 'detached' });
      await app.getByText('Connected: installation 41234567').waitFor();
      expect((await made<{ results: { id: string; use_bot?: boolean }[] }>('GET', `/organization/${organizationId}/account/gitAuthProvider`)).results).toContainEqual(expect.objectContaining({ id: '41234567', use_bot: true }));
      // Scrolled to on the phone (photographed first), where the section is below the tokens.
      await page.setViewportSize({ width: 390, height: 844 });
      await app.scrollIntoViewIfNeeded();
      await checkScreen(page, '366-git-tokens-github-app');
      await app.getByRole('button', { name: 'Disconnect' }).click();
      const disconnect = page.getByRole('dialog', { name: 'Disconnect the GitHub App' });
      await disconnect.getByRole('button', { name: 'Disconnect' }).click();
      await app.getByText('Not connected.').waitFor();
      expect((await made<{ results: { use_bot?: boolean }[] }>('GET', `/organization/${organizationId}/account/gitAuthProvider`)).results.some((account) => account.use_bot === true)).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
