import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { parseHcl } from '../src/modules/service-insights/service-insights.hcl.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

const run = promisify(execFile);
// Each call reaches a real git server or database server with real tools: on a loaded machine that takes long.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

/**
 * What Slipway reads of repositories for a service's pages (docs/service-insights.md), against a real git server
 * (git http-backend over HTTP) holding a repository made here with real commits by two authors: an application's
 * contributors from its branch's history, a Terraform module's .tfvars files and variable blocks. Also the
 * Terraform resources of a Terraform service (empty: Slipway keeps no state) and an environment's Terraform export,
 * parsed back. Bad input, another organization's caller and a viewer's rights on both stores.
 */

const FILES: Record<string, string> = {
  'infra/variables.tf': `# Inputs of the module
variable "region" {
  type        = string
  default     = "eu-west-3"
  description = "Where it runs"
}

variable "replicas" {
  type    = number
  default = 3 // three by default
}

variable "db_password" {
  type      = string
  sensitive = true
  nullable  = false
}

variable "tags" {
  type = map(string)
  default = {
    team = "core"
  }
  validation {
    condition     = length(var.tags) > 0
    error_message = "Give a tag."
  }
}
`,
  'infra/main.tf': `/* the resources */
variable "note" {
  description = <<-EOT
    Two
    lines
  EOT
}

resource "null_resource" "x" {
  triggers = { a = "b", c = "\${var.region}" }
}
`,
  'infra/prod.tfvars': 'region = "eu-west-1"\nreplicas = 5\ntags = { team = "ops" } # comment\n',
  'infra/staging.tfvars.json': '{"region": "us-east-1", "replicas": 2}\n',
  'infra/README.md': 'not a variable file\n',
  'infra/envs/dev.tfvars': 'region = "local"\n',
  'broken/bad.tf': 'variable "x" {\n  default = "y"\n',
  'empty/README.md': 'nothing here\n',
};

async function git(args: string[], cwd: string, author: string): Promise<void> {
  await run('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: author,
      GIT_AUTHOR_EMAIL: `${author.split(' ')[0]?.toLowerCase()}@example.com`,
      GIT_COMMITTER_NAME: author,
      GIT_COMMITTER_EMAIL: 'ci@example.com',
    },
  });
}

/** `<root>/infra.git`: three commits by Ada Lovelace and one by Grace Hopper on main. */
async function createRepository(root: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-insights-work-'));
  try {
    await git(['init', '--quiet', '--initial-branch=main', work], work, 'Ada Lovelace');
    const entries = Object.entries(FILES);
    const authors = ['Ada Lovelace', 'Grace Hopper', 'Ada Lovelace', 'Ada Lovelace'];
    for (const [index, author] of authors.entries()) {
      const batch = entries.filter((_, entry) => entry % authors.length === index);
      for (const [file, content] of batch) {
        await mkdir(path.join(work, path.dirname(file)), { recursive: true });
        await writeFile(path.join(work, file), content);
        await git(['add', '--', file], work, author);
      }
      await git(['commit', '--quiet', '-m', `commit ${index}`], work, author);
    }
    await git(['clone', '--quiet', '--bare', work, path.join(root, 'infra.git')], root, 'Ada Lovelace');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

let gitRoot: string;
let gitServer: TestGitServer;

beforeAll(async () => {
  gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-insights-git-'));
  await createRepository(gitRoot);
  gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
});

afterAll(async () => {
  await gitServer.close();
  await rm(gitRoot, { recursive: true, force: true });
});

describeEachDatabase(
  'service extras read from git, Terraform resources and export',
  (ctx) => {
    let owner: TestUser;
    let organizationId: string;
    let environmentId: string;
    let applicationId: string;
    let databaseId: string;
    let terraformId: string;

    const repository = (rootPath = '/infra') => ({ url: gitServer.urlOf('infra'), branch: 'main', provider: 'GITHUB', root_path: rootPath });

    async function ok<T>(method: 'GET' | 'POST', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
      const response = await ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
      expect(response.statusCode, response.body).toBe(status);
      return response.json<T>();
    }

    beforeAll(async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
      const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
      environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: 'staging "eu"', cluster: clusterId }, 201)).id;
      applicationId = (
        await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, { name: 'web', description: 'The shop ${front}', git_repository: repository('/'), healthchecks: {} }, 201)
      ).id;
      databaseId = (await ok<{ id: string }>('POST', `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '15', mode: 'CONTAINER' }, 201)).id;
      terraformId = (await ok<{ id: string }>('POST', `/environment/${environmentId}/terraform`, { name: 'infra', terraform_files_source: { git_repository: repository('/infra') } }, 201)).id;
    });

    it("lists the application's contributors from the history of its branch, most commits first", async () => {
      const { results } = await ok<{ results: Array<{ id: string; first_name: string; last_name: string; commits: number; created_at: string; updated_at: string }> }>(
        'GET',
        `/application/${applicationId}/contributor`,
        undefined,
        200,
      );
      expect(results.map((user) => [user.first_name, user.last_name, user.commits])).toEqual([
        ['Ada', 'Lovelace', 3],
        ['Grace', 'Hopper', 1],
      ]);
      expect((results[0]?.created_at ?? '') <= (results[0]?.updated_at ?? '')).toBe(true);
      // Ids are stable from one listing to the next.
      const again = await ok<{ results: Array<{ id: string }> }>('GET', `/application/${applicationId}/contributor`, undefined, 200);
      expect(again.results.map((user) => user.id)).toEqual(results.map((user) => user.id));
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/application/${crypto.randomUUID()}/contributor` }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/application/${databaseId}/contributor` }), 404);
    });

    it('reads the .tfvars files of a module, discovered or named', async () => {
      const discovered = await ok<{ results: Array<{ source: string; variables: Record<string, string> }> }>(
        'POST',
        `/organization/${organizationId}/listTfVarsFilesFromGitRepo`,
        { git_repository: repository(), mode: { type: 'AutoDiscover' } },
        200,
      );
      expect(discovered.results).toEqual([
        { source: 'prod.tfvars', variables: { region: 'eu-west-1', replicas: '5', tags: '{ team = "ops" }' } },
        { source: 'staging.tfvars.json', variables: { region: 'us-east-1', replicas: '2' } },
      ]);
      const named = await ok<{ results: Array<{ source: string; variables: Record<string, string> }> }>(
        'POST',
        `/organization/${organizationId}/listTfVarsFilesFromGitRepo`,
        { git_repository: repository(), mode: { type: 'SpecificPaths', paths: ['envs/dev.tfvars', '/prod.tfvars'] } },
        200,
      );
      expect(named.results.map((file) => [file.source, file.variables.region])).toEqual([
        ['envs/dev.tfvars', 'local'],
        ['prod.tfvars', 'eu-west-1'],
      ]);
      const missing = expectErrorBody(
        await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/listTfVarsFilesFromGitRepo`, payload: { git_repository: repository(), mode: { type: 'SpecificPaths', paths: ['prod.tfvars', 'nope.tfvars'] } } }),
        400,
      );
      expect(missing.details).toEqual([{ field: '/mode/paths/1', message: 'no such file' }]);
      expectErrorBody(
        await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/listTfVarsFilesFromGitRepo`, payload: { git_repository: repository(), mode: { type: 'SpecificPaths', paths: ['../../etc/passwd'] } } }),
        400,
      );
    });

    it('reads the variable blocks of a module: defaults, descriptions, sensitivity, nullability and the file', async () => {
      const { results } = await ok<{ results: unknown[] }>('POST', `/organization/${organizationId}/parseTerraformVariablesFromGitRepo`, { git_repository: repository() }, 200);
      expect(results).toEqual([
        { key: 'note', default: null, description: 'Two\nlines\n', nullable: true, sensitive: false, source: 'main.tf' },
        { key: 'region', default: 'eu-west-3', description: 'Where it runs', nullable: true, sensitive: false, source: 'variables.tf' },
        { key: 'replicas', default: '3', description: null, nullable: true, sensitive: false, source: 'variables.tf' },
        { key: 'db_password', default: null, description: null, nullable: false, sensitive: true, source: 'variables.tf' },
        { key: 'tags', default: '{\n    team = "core"\n  }', description: null, nullable: true, sensitive: false, source: 'variables.tf' },
      ]);
    });

    it('refuses bad input: a file that does not parse, no module, unknown branch, bad bodies', async () => {
      const url = `/organization/${organizationId}/parseTerraformVariablesFromGitRepo`;
      const broken = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { git_repository: repository('/broken') } }), 400);
      expect(broken.message).toMatch(/bad\.tf does not parse: line 1/);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { git_repository: repository('/empty') } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { git_repository: repository('/nowhere') } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { git_repository: { ...repository(), branch: 'no-such-branch' } } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: {} }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { git_repository: repository(), extra: 1 } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { git_repository: { ...repository(), git_token_id: crypto.randomUUID() } } }), 404);
      const tfvars = `/organization/${organizationId}/listTfVarsFilesFromGitRepo`;
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: tfvars, payload: { git_repository: repository() } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: tfvars, payload: { git_repository: repository(), mode: { type: 'Guess' } } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: tfvars, payload: { git_repository: repository(), mode: { type: 'SpecificPaths', paths: [] } } }), 400);
    });

    it('lists the resources of a Terraform service: none recorded, as Slipway keeps no state', async () => {
      expect(await ok('GET', `/terraform/${terraformId}/terraformResources`, undefined, 200)).toEqual({ results: [] });
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/terraform/${applicationId}/terraformResources` }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/terraform/${crypto.randomUUID()}/terraformResources` }), 404);
    });

    it('exports the environment as Terraform configuration that parses back to its services', async () => {
      const response = await ctx().call(owner.auth, { method: 'GET', url: `/environment/${environmentId}/terraformExport?exportSecrets=true` });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toBe('application/octet-stream');
      expect(response.headers['content-disposition']).toMatch(/^attachment; filename="staging_eu_\.tf"$/);
      const body = parseHcl(response.body);
      expect(body.blocks.map((block) => [block.type, ...block.labels])).toEqual([
        ['terraform'],
        ['resource', 'slipway_environment', 'staging_eu'],
        ['resource', 'slipway_database', 'orders'],
        ['resource', 'slipway_application', 'web'],
        ['resource', 'slipway_terraform', 'infra'],
      ]);
      const attribute = (index: number, name: string) => body.blocks[index]?.body.attributes.find((candidate) => candidate.name === name);
      expect(attribute(1, 'name')?.text).toBe('staging "eu"');
      expect(attribute(2, 'environment_id')?.expression).toBe('slipway_environment.staging_eu.id');
      expect(attribute(2, 'type')?.text).toBe('POSTGRESQL');
      expect(attribute(3, 'description')?.text).toBe('The shop ${front}');
      expect(attribute(3, 'git_repository')?.expression).toContain(`url = "${gitServer.urlOf('infra')}"`);
      // No secret of the database (its password) is in the file.
      expect(response.body).not.toMatch(/password/i);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/environment/${crypto.randomUUID()}/terraformExport` }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: `/environment/${environmentId}/terraformExport?exportSecrets=maybe` }), 400);
    });

    it('writes the build usage report of a deployment, served until deleted, for its environment only', async () => {
      const deployed = await ok<{ execution_id: string }>('POST', `/database/${databaseId}/deploy`, {}, 202);
      const url = `/environment/${environmentId}/deploymentBuildUsageReport`;
      const report = await ok<{ report_url: string; delete_report_url: string }>('POST', url, { execution_id: deployed.execution_id, report_expiration_in_seconds: 600 }, 201);
      const reportPath = new URL(report.report_url).pathname;
      expect(reportPath).toMatch(new RegExp(`^${url}/[0-9a-f-]{36}$`));
      const csv = await ctx().call(owner.auth, { method: 'GET', url: reportPath });
      expect(csv.statusCode, csv.body).toBe(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      const lines = csv.body.trim().split('\r\n');
      expect(lines[0]).toBe('service_id,service_name,service_type,action,status,queued_at,finished_at,duration_seconds');
      expect(lines.slice(1).map((line) => line.split(',').slice(0, 4))).toEqual([[databaseId, 'orders', 'DATABASE', 'DEPLOY']]);
      // Another environment's path does not reach it; a stranger does not reach the environment.
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: reportPath }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'POST', url, payload: { execution_id: deployed.execution_id, report_expiration_in_seconds: 600 } }), 404);
      // Bad input: an execution of no deployment here, lifetimes out of range, unknown fields.
      const unknown = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { execution_id: crypto.randomUUID(), report_expiration_in_seconds: 600 } }), 400);
      expect(unknown.details).toEqual([{ field: '/execution_id', message: 'unknown execution' }]);
      for (const payload of [{ execution_id: deployed.execution_id, report_expiration_in_seconds: 0 }, { execution_id: deployed.execution_id, report_expiration_in_seconds: 8 * 24 * 3600 }, { execution_id: deployed.execution_id }, { execution_id: deployed.execution_id, report_expiration_in_seconds: 60, from: 'x' }]) {
        expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload }), 400);
      }
      // Deleted through its delete URL: gone.
      const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: new URL(report.delete_report_url).pathname });
      expect(deleted.statusCode, deleted.body).toBe(204);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: reportPath }), 404);
      // Expired: gone too.
      const shortLived = await ok<{ report_url: string }>('POST', url, { execution_id: deployed.execution_id, report_expiration_in_seconds: 1 }, 201);
      ctx().clock.advance(2_000);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: new URL(shortLived.report_url).pathname }), 404);
    });

    it("keeps another organization's caller out, and a viewer from reading repositories with the organization's tokens", async () => {
      const stranger = await ctx().signUpWithOrganization();
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/application/${applicationId}/contributor` }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/terraform/${terraformId}/terraformResources` }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/environment/${environmentId}/terraformExport` }), 404);
      const foreign = await ctx().call(stranger.owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/parseTerraformVariablesFromGitRepo`,
        payload: { git_repository: repository() },
      });
      expect([403, 404]).toContain(foreign.statusCode);
      const viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      expect((await ok<{ results: unknown[] }>('GET', `/application/${applicationId}/contributor`, undefined, 200, viewer.auth)).results).toHaveLength(2);
      expectErrorBody(
        await ctx().call(viewer.auth, { method: 'POST', url: `/organization/${organizationId}/listTfVarsFilesFromGitRepo`, payload: { git_repository: repository(), mode: { type: 'AutoDiscover' } } }),
        403,
      );
    });
  },
  { gitAllowPrivateHosts: true },
);
