import { connect, resultsOf, type ApiClient } from './api-client.ts';
import { printJson, printTable } from './output.ts';
import { CliError, type CliIo } from './sign-in.ts';
import { organizationScope, type CommandOptions, type OrganizationOptions } from './team.ts';

/**
 * The deployment commands: environments, services, variables, deploy and logs, each a few REST calls with the
 * caller's token (docs/cli.md). A service is named by id, or by name within --env; its kind is found by asking the
 * kinds' own paths, so every command works for every kind.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The kinds' path segments (`/environment/{id}/<collection>`, `/<item>/{id}`), as services.kind-*.ts define them. */
const KINDS = [
  { kind: 'APPLICATION', path: 'application' },
  { kind: 'CONTAINER', path: 'container' },
  { kind: 'DATABASE', path: 'database' },
  { kind: 'JOB', path: 'job' },
  { kind: 'HELM', path: 'helm' },
  { kind: 'TERRAFORM', path: 'terraform' },
] as const;
type KindEntry = (typeof KINDS)[number];

/** Service scopes with variables of their own (a database provides built-ins instead). */
const VARIABLE_KINDS: ReadonlySet<string> = new Set(['APPLICATION', 'CONTAINER', 'JOB', 'HELM', 'TERRAFORM']);

interface ServiceRef {
  id: string;
  name: string;
  kind: KindEntry;
}

interface StatusAnswer {
  state: string;
  service_deployment_status: string;
  deployment_request_id: string | null;
  message: string | null;
}

interface DeploymentAnswer {
  id: string;
  state: string;
  variables: { content_hash: string; results: Array<{ key: string; scope: string; sealed: boolean; value?: string }> } | null;
}

interface LogAnswer {
  created_at: string;
  stream: string;
  message: string;
  seq: number;
}

function kindNamed(wanted: string): KindEntry {
  const entry = KINDS.find((candidate) => candidate.kind === wanted.toUpperCase() || candidate.path === wanted.toLowerCase());
  if (entry === undefined) throw new CliError(`unknown service kind "${wanted}"; one of ${KINDS.map((candidate) => candidate.path).join(', ')}`);
  return entry;
}

function requireUuid(value: string, what: string): string {
  if (!UUID.test(value)) throw new CliError(`"${value}" is not ${what} id`);
  return value.toLowerCase();
}

/** A service by id (its kind found by asking each kind's path) or by name among the services of --env. */
async function serviceNamed(client: ApiClient, wanted: string, environmentId: string | undefined): Promise<ServiceRef> {
  if (UUID.test(wanted)) {
    for (const kind of KINDS) {
      try {
        const service = (await client.call('GET', `/${kind.path}/${wanted.toLowerCase()}`)) as { id: string; name: string };
        return { id: service.id, name: service.name, kind };
      } catch (error) {
        if (!(error instanceof CliError) || !/not found/i.test(error.message)) throw error;
      }
    }
    throw new CliError(`no service with id ${wanted}`);
  }
  if (environmentId === undefined) throw new CliError(`name the environment of service "${wanted}" with --env <id>, or give the service's id`);
  const env = requireUuid(environmentId, 'an environment');
  for (const kind of KINDS) {
    const found = resultsOf<{ id: string; name: string }>(await client.call('GET', `/environment/${env}/${kind.path}`)).find(
      (service) => service.name.toLowerCase() === wanted.toLowerCase(),
    );
    if (found !== undefined) return { id: found.id, name: found.name, kind };
  }
  throw new CliError(`environment ${env} has no service named "${wanted}"`);
}

// Environments

async function projectNamed(client: ApiClient, organizationId: string, wanted: string): Promise<string> {
  if (UUID.test(wanted)) return wanted.toLowerCase();
  const matching = resultsOf<{ id: string; name: string }>(await client.call('GET', `/organization/${organizationId}/project`)).filter(
    (project) => project.name.toLowerCase() === wanted.toLowerCase(),
  );
  if (matching.length !== 1) throw new CliError(matching.length === 0 ? `no project named "${wanted}"; see slipway projects list` : `several projects are named "${wanted}"; give its id`);
  return (matching[0] as { id: string }).id;
}

export async function createEnvironment(
  name: string,
  options: OrganizationOptions & { project: string; mode?: string | undefined; cluster?: string | undefined },
  io: CliIo,
): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const projectId = await projectNamed(client, organizationId, options.project);
  const body = {
    name,
    ...(options.mode === undefined ? {} : { mode: options.mode.toUpperCase() }),
    ...(options.cluster === undefined ? {} : { cluster: requireUuid(options.cluster, 'a cluster') }),
  };
  const created = (await client.call('POST', `/project/${projectId}/environment`, body)) as { id: string; name: string; mode: string; cluster_id: string };
  if (options.json === true) return printJson(io, created);
  io.out(`Created environment ${created.name} (${created.id}), ${created.mode}, on cluster ${created.cluster_id}.\n`);
}

export async function listEnvironments(options: OrganizationOptions & { project: string }, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const projectId = await projectNamed(client, organizationId, options.project);
  const body = await client.call('GET', `/project/${projectId}/environment`);
  if (options.json === true) return printJson(io, body);
  const rows = resultsOf<{ id: string; name: string; mode: string; cluster_name?: string }>(body).map((env) => [env.id, env.name, env.mode, env.cluster_name ?? '']);
  printTable(io, ['ID', 'NAME', 'MODE', 'CLUSTER'], rows, 'No environments.');
}

// Services

/** Git provider of a repository URL by its host; GITHUB for any other host (the reference's three providers). */
function providerOf(repository: string): string {
  const host = (() => {
    try {
      return new URL(repository).hostname;
    } catch {
      throw new CliError(`"${repository}" is not a repository URL`);
    }
  })();
  if (host.includes('gitlab')) return 'GITLAB';
  if (host.includes('bitbucket')) return 'BITBUCKET';
  return 'GITHUB';
}

function settingsOf(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Answered below, as for any other non-object.
  }
  throw new CliError('--settings takes a JSON object: the request body fields of the kind (see the API documentation)');
}

export interface CreateServiceOptions extends CommandOptions {
  env: string;
  repository?: string | undefined;
  branch?: string | undefined;
  rootPath?: string | undefined;
  gitToken?: string | undefined;
  settings?: string | undefined;
}

/**
 * Creates a service of a kind: the request body is --settings (the kind's fields as JSON), with the common git
 * flags filled in for kinds built from a repository; an application or container gets no health checks unless
 * --settings names them.
 */
export async function createService(kindName: string, name: string, options: CreateServiceOptions, io: CliIo): Promise<void> {
  const kind = kindNamed(kindName);
  const environmentId = requireUuid(options.env, 'an environment');
  const client = await connect(options, io);
  const body: Record<string, unknown> = { ...settingsOf(options.settings), name };
  if (options.repository !== undefined) {
    body.git_repository = {
      url: options.repository,
      provider: providerOf(options.repository),
      ...(options.branch === undefined ? {} : { branch: options.branch }),
      ...(options.rootPath === undefined ? {} : { root_path: options.rootPath }),
      ...(options.gitToken === undefined ? {} : { git_token_id: requireUuid(options.gitToken, 'a git token') }),
    };
  }
  if ((kind.kind === 'APPLICATION' || kind.kind === 'CONTAINER') && body.healthchecks === undefined) body.healthchecks = {};
  const created = (await client.call('POST', `/environment/${environmentId}/${kind.path}`, body)) as { id: string; name: string };
  if (options.json === true) return printJson(io, created);
  io.out(`Created ${kind.path} ${created.name} (${created.id}).\n`);
}

export async function listServices(options: CommandOptions & { env: string }, io: CliIo): Promise<void> {
  const environmentId = requireUuid(options.env, 'an environment');
  const client = await connect(options, io);
  const rows: string[][] = [];
  const all: Array<Record<string, unknown>> = [];
  for (const kind of KINDS) {
    for (const service of resultsOf<{ id: string; name: string }>(await client.call('GET', `/environment/${environmentId}/${kind.path}`))) {
      const status = (await client.call('GET', `/${kind.path}/${service.id}/status`)) as unknown as StatusAnswer;
      all.push({ id: service.id, name: service.name, kind: kind.kind, state: status.state, deployment_status: status.service_deployment_status });
      rows.push([service.id, service.name, kind.kind, status.state, status.service_deployment_status]);
    }
  }
  if (options.json === true) return printJson(io, { results: all });
  printTable(io, ['ID', 'NAME', 'KIND', 'STATE', 'DEPLOYMENT'], rows, 'No services.');
}

// Variables

export interface VariableScopeOptions extends OrganizationOptions {
  project?: string | undefined;
  env?: string | undefined;
  service?: string | undefined;
  secret?: boolean | undefined;
}

/** Where `var set` writes: the narrowest scope named (--service, else --env, else --project). */
async function variableBase(client: ApiClient, options: VariableScopeOptions, io: CliIo): Promise<{ base: string; label: string }> {
  if (options.service !== undefined) {
    const service = await serviceNamed(client, options.service, options.env);
    if (!VARIABLE_KINDS.has(service.kind.kind)) throw new CliError(`a ${service.kind.path} has no variables of its own; set them on the environment`);
    return { base: `/${service.kind.path}/${service.id}`, label: `${service.kind.path} ${service.name}` };
  }
  if (options.env !== undefined) return { base: `/environment/${requireUuid(options.env, 'an environment')}`, label: `environment ${options.env}` };
  if (options.project !== undefined) {
    const { organizationId } = await organizationScope(options, io);
    const projectId = await projectNamed(client, organizationId, options.project);
    return { base: `/project/${projectId}`, label: `project ${options.project}` };
  }
  throw new CliError('name the scope: --project <id|name>, --env <id> or --service <id|name> (with --env)');
}

/** Sets a variable (or with --secret a secret): a name already set at that scope is replaced (SPEC.md rule 3). */
export async function setVariable(key: string, value: string, options: VariableScopeOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const { base, label } = await variableBase(client, options, io);
  const collection = options.secret === true ? 'secret' : 'environmentVariable';
  const created = (await client.call('POST', `${base}/${collection}`, { key, value })) as { id: string; key: string; scope: string };
  if (options.json === true) return printJson(io, created);
  io.out(`Set ${options.secret === true ? 'secret' : 'variable'} ${created.key} on ${label} (${created.scope}).\n`);
}

// Deploy, status, logs

export interface ServiceOptions extends CommandOptions {
  env?: string | undefined;
}

/** Queues a deploy and shows where it stands and the variable snapshot it carries. */
export async function deployService(
  wanted: string,
  options: ServiceOptions & { commit?: string | undefined; tag?: string | undefined },
  io: CliIo,
): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options.env);
  const body = { ...(options.commit === undefined ? {} : { git_commit_id: options.commit }), ...(options.tag === undefined ? {} : { image_tag: options.tag }) };
  const status = (await client.call('POST', `/${service.kind.path}/${service.id}/deploy`, body)) as unknown as StatusAnswer;
  const deploymentId = status.deployment_request_id as string;
  const deployment = (await client.call('GET', `/${service.kind.path}/${service.id}/deploymentHistory/${deploymentId}`)) as unknown as DeploymentAnswer;
  if (options.json === true) return printJson(io, { status, deployment });
  io.out(`Deployment ${deploymentId} of ${service.kind.path} ${service.name}: ${status.state}\n`);
  if (status.message !== null) io.out(`${status.message}\n`);
  if (deployment.variables !== null) {
    const sealed = deployment.variables.results.filter((variable) => variable.sealed).length;
    io.out(`Variables snapshot ${deployment.variables.content_hash.slice(0, 12)}: ${deployment.variables.results.length} variables (${sealed} sealed)\n`);
  }
  io.out(`Follow it with: slipway logs ${service.id} --follow\n`);
}

export async function serviceStatus(wanted: string, options: ServiceOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options.env);
  const status = (await client.call('GET', `/${service.kind.path}/${service.id}/status`)) as unknown as StatusAnswer;
  if (options.json === true) return printJson(io, status);
  io.out(`${service.kind.path} ${service.name}: ${status.state}, ${status.service_deployment_status}${status.message === null ? '' : ` — ${status.message}`}\n`);
}

function logLine(line: LogAnswer): string {
  return `${line.created_at} [${line.stream}] ${line.message}\n`;
}

/** Prints a deployment's log (the newest by default); --follow keeps printing until the deployment settles. */
export async function serviceLogs(
  wanted: string,
  options: ServiceOptions & { deployment?: string | undefined; follow?: boolean | undefined },
  io: CliIo,
): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options.env);
  const query = options.deployment === undefined ? '' : `?deploymentId=${requireUuid(options.deployment, 'a deployment')}`;
  const path = `/${service.kind.path}/${service.id}/log${query}`;
  if (options.follow !== true) {
    const body = await client.call('GET', path);
    if (options.json === true) return printJson(io, body);
    const lines = resultsOf<LogAnswer>(body);
    if (lines.length === 0) io.out(`No log lines: ${service.kind.path} ${service.name} has not been deployed.\n`);
    for (const line of lines) io.out(logLine(line));
    return;
  }
  const response = await client.stream(path, 'application/x-ndjson');
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of response.body) {
    pending += decoder.decode(chunk as Uint8Array, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
      if (text.trim() === '') continue;
      const item = JSON.parse(text) as LogAnswer & { type: string; state?: string };
      if (options.json === true) io.out(`${text}\n`);
      else if (item.type === 'log') io.out(logLine(item));
      else if (item.type === 'end') io.out(`-- ${item.state ?? 'no deployment'}\n`);
    }
  }
}
