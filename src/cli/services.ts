import { connect, dataOf, type AnswerOf, type ApiClient, type RequestOf } from './api-client.ts';
import { clusterNamed } from './clusters.ts';
import { printJson, printTable } from './output.ts';
import { CliError, type CliIo } from './sign-in.ts';
import { organizationScope, type OrganizationOptions } from './team.ts';
import type { CommandIo } from './terminal.ts';
import { settledLine, waitUntilSettled, wantsWait, type Settling, type WaitOptions } from './wait.ts';

/**
 * The deployment commands: environments, services, deploy and status, each a few REST calls with the caller's token
 * (docs/cli.md), and the naming of projects, environments and services that the other deployment commands
 * (variables.ts, service-actions.ts, environments.ts, service-logs.ts) share. A service is named by id, or by name
 * within --env; its kind is found by asking the kinds' own paths, so every command works for every kind.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Api = ApiClient['api'];

/**
 * What the commands read of a service and of its deployments, from the API description. Every kind's answers must be
 * assignable to these (tsc checks it through KINDS), so the kinds cannot drift apart under the CLI unnoticed.
 */
type ServiceRow = Pick<AnswerOf<'getApplication'>, 'id' | 'name'>;
export type ServiceStatus = AnswerOf<'getApplicationStatus'>;
type ServiceDeployment = Pick<AnswerOf<'getApplicationDeployment'>, 'id' | 'state' | 'variables'>;
type EnvironmentMode = NonNullable<RequestOf<'createEnvironment'>['mode']>;
type ServiceLink = Pick<AnswerOf<'listApplicationLinks'>['results'][number], 'url' | 'is_default'>;

/**
 * One kind of service and its operations: each kind has paths of its own (`/environment/{id}/<collection>`,
 * `/<item>/{<item>Id}`), so each is written out, and each call is checked against the API description.
 */
export interface ServiceKind {
  kind: 'APPLICATION' | 'CONTAINER' | 'DATABASE' | 'JOB' | 'HELM' | 'TERRAFORM';
  /** The kind's path segment, as users name it (`slipway service create application …`). */
  path: string;
  get(api: Api, id: string): Promise<ServiceRow>;
  list(api: Api, environmentId: string): Promise<{ results: ServiceRow[] }>;
  /** The body is the user's --settings with the git flags: the server validates it, and answers what is wrong. */
  create(api: Api, environmentId: string, body: Record<string, unknown>): Promise<ServiceRow>;
  status(api: Api, id: string): Promise<ServiceStatus>;
  deploy(api: Api, id: string, body: RequestOf<'deployApplication'>): Promise<ServiceStatus>;
  deployment(api: Api, id: string, deploymentId: string): Promise<ServiceDeployment>;
  /** Where the service is reached from outside; absent for a kind that serves no public port. */
  links?(api: Api, id: string): Promise<{ results: ServiceLink[] }>;
}

const KINDS: readonly ServiceKind[] = [
  {
    kind: 'APPLICATION',
    path: 'application',
    get: (api, id) => dataOf(api.GET('/application/{applicationId}', { params: { path: { applicationId: id } } })),
    list: (api, environmentId) => dataOf(api.GET('/environment/{environmentId}/application', { params: { path: { environmentId } } })),
    create: (api, environmentId, body) =>
      dataOf(api.POST('/environment/{environmentId}/application', { params: { path: { environmentId } }, body: body as RequestOf<'createApplication'> })),
    status: (api, id) => dataOf(api.GET('/application/{applicationId}/status', { params: { path: { applicationId: id } } })),
    deploy: (api, id, body) => dataOf(api.POST('/application/{applicationId}/deploy', { params: { path: { applicationId: id } }, body })),
    deployment: (api, id, deploymentId) =>
      dataOf(api.GET('/application/{applicationId}/deploymentHistory/{deploymentId}', { params: { path: { applicationId: id, deploymentId } } })),
    links: (api, id) => dataOf(api.GET('/application/{applicationId}/link', { params: { path: { applicationId: id } } })),
  },
  {
    kind: 'CONTAINER',
    path: 'container',
    get: (api, id) => dataOf(api.GET('/container/{containerId}', { params: { path: { containerId: id } } })),
    list: (api, environmentId) => dataOf(api.GET('/environment/{environmentId}/container', { params: { path: { environmentId } } })),
    create: (api, environmentId, body) =>
      dataOf(api.POST('/environment/{environmentId}/container', { params: { path: { environmentId } }, body: body as RequestOf<'createContainer'> })),
    status: (api, id) => dataOf(api.GET('/container/{containerId}/status', { params: { path: { containerId: id } } })),
    deploy: (api, id, body) => dataOf(api.POST('/container/{containerId}/deploy', { params: { path: { containerId: id } }, body })),
    deployment: (api, id, deploymentId) =>
      dataOf(api.GET('/container/{containerId}/deploymentHistory/{deploymentId}', { params: { path: { containerId: id, deploymentId } } })),
    links: (api, id) => dataOf(api.GET('/container/{containerId}/link', { params: { path: { containerId: id } } })),
  },
  {
    kind: 'DATABASE',
    path: 'database',
    get: (api, id) => dataOf(api.GET('/database/{databaseId}', { params: { path: { databaseId: id } } })),
    list: (api, environmentId) => dataOf(api.GET('/environment/{environmentId}/database', { params: { path: { environmentId } } })),
    create: (api, environmentId, body) =>
      dataOf(api.POST('/environment/{environmentId}/database', { params: { path: { environmentId } }, body: body as RequestOf<'createDatabase'> })),
    status: (api, id) => dataOf(api.GET('/database/{databaseId}/status', { params: { path: { databaseId: id } } })),
    deploy: (api, id, body) => dataOf(api.POST('/database/{databaseId}/deploy', { params: { path: { databaseId: id } }, body })),
    deployment: (api, id, deploymentId) =>
      dataOf(api.GET('/database/{databaseId}/deploymentHistory/{deploymentId}', { params: { path: { databaseId: id, deploymentId } } })),
  },
  {
    kind: 'JOB',
    path: 'job',
    get: (api, id) => dataOf(api.GET('/job/{jobId}', { params: { path: { jobId: id } } })),
    list: (api, environmentId) => dataOf(api.GET('/environment/{environmentId}/job', { params: { path: { environmentId } } })),
    create: (api, environmentId, body) =>
      dataOf(api.POST('/environment/{environmentId}/job', { params: { path: { environmentId } }, body: body as RequestOf<'createJob'> })),
    status: (api, id) => dataOf(api.GET('/job/{jobId}/status', { params: { path: { jobId: id } } })),
    deploy: (api, id, body) => dataOf(api.POST('/job/{jobId}/deploy', { params: { path: { jobId: id } }, body })),
    deployment: (api, id, deploymentId) =>
      dataOf(api.GET('/job/{jobId}/deploymentHistory/{deploymentId}', { params: { path: { jobId: id, deploymentId } } })),
  },
  {
    kind: 'HELM',
    path: 'helm',
    get: (api, id) => dataOf(api.GET('/helm/{helmId}', { params: { path: { helmId: id } } })),
    list: (api, environmentId) => dataOf(api.GET('/environment/{environmentId}/helm', { params: { path: { environmentId } } })),
    create: (api, environmentId, body) =>
      dataOf(api.POST('/environment/{environmentId}/helm', { params: { path: { environmentId } }, body: body as RequestOf<'createHelm'> })),
    status: (api, id) => dataOf(api.GET('/helm/{helmId}/status', { params: { path: { helmId: id } } })),
    deploy: (api, id, body) => dataOf(api.POST('/helm/{helmId}/deploy', { params: { path: { helmId: id } }, body })),
    deployment: (api, id, deploymentId) =>
      dataOf(api.GET('/helm/{helmId}/deploymentHistory/{deploymentId}', { params: { path: { helmId: id, deploymentId } } })),
  },
  {
    kind: 'TERRAFORM',
    path: 'terraform',
    get: (api, id) => dataOf(api.GET('/terraform/{terraformId}', { params: { path: { terraformId: id } } })),
    list: (api, environmentId) => dataOf(api.GET('/environment/{environmentId}/terraform', { params: { path: { environmentId } } })),
    create: (api, environmentId, body) =>
      dataOf(api.POST('/environment/{environmentId}/terraform', { params: { path: { environmentId } }, body: body as RequestOf<'createTerraform'> })),
    status: (api, id) => dataOf(api.GET('/terraform/{terraformId}/status', { params: { path: { terraformId: id } } })),
    deploy: (api, id, body) => dataOf(api.POST('/terraform/{terraformId}/deploy', { params: { path: { terraformId: id } }, body })),
    deployment: (api, id, deploymentId) =>
      dataOf(api.GET('/terraform/{terraformId}/deploymentHistory/{deploymentId}', { params: { path: { terraformId: id, deploymentId } } })),
  },
];

export interface ServiceRef {
  id: string;
  name: string;
  kind: ServiceKind;
}

function kindNamed(wanted: string): ServiceKind {
  const entry = KINDS.find((candidate) => candidate.kind === wanted.toUpperCase() || candidate.path === wanted.toLowerCase());
  if (entry === undefined) throw new CliError(`unknown service kind "${wanted}"; one of ${KINDS.map((candidate) => candidate.path).join(', ')}`);
  return entry;
}

export function requireUuid(value: string, what: string): string {
  if (!UUID.test(value)) throw new CliError(`"${value}" is not ${what} id`);
  return value.toLowerCase();
}

/** A service by id (its kind found by asking each kind's path) or by name among the services of --env. */
export async function serviceNamed(client: ApiClient, wanted: string, options: EnvironmentOptions, io: CliIo): Promise<ServiceRef> {
  if (UUID.test(wanted)) {
    for (const kind of KINDS) {
      try {
        const service = await kind.get(client.api, wanted.toLowerCase());
        return { id: service.id, name: service.name, kind };
      } catch (error) {
        if (!(error instanceof CliError) || !/not found/i.test(error.message)) throw error;
      }
    }
    throw new CliError(`no service with id ${wanted}`);
  }
  if (options.env === undefined) throw new CliError(`name the environment of service "${wanted}" with --env <id|name>, or give the service's id`);
  const env = await environmentNamed(client, options, io);
  for (const kind of KINDS) {
    const found = (await kind.list(client.api, env.id)).results.find((service) => service.name.toLowerCase() === wanted.toLowerCase());
    if (found !== undefined) return { id: found.id, name: found.name, kind };
  }
  throw new CliError(`environment ${env.label} has no service named "${wanted}"`);
}

// Environments

/** How a command names an environment: --env <id|name>, a name looked up within --project (else every project). */
export interface EnvironmentOptions extends OrganizationOptions {
  env?: string | undefined;
  project?: string | undefined;
}

export interface EnvironmentRef {
  id: string;
  /** How messages name it: the name it was given by, or its id. */
  label: string;
}

/**
 * The environment of --env: an id is passed on as it is (the API answers for an unknown one); a name is looked up,
 * case-insensitively, among the environments of --project, or of every project of the organization without it.
 * An unknown or ambiguous name is an error that lists the environments there are.
 */
export async function environmentNamed(client: ApiClient, options: EnvironmentOptions, io: CliIo): Promise<EnvironmentRef> {
  const wanted = options.env;
  if (wanted === undefined) throw new CliError('name the environment with --env <id|name>');
  if (UUID.test(wanted)) return { id: wanted.toLowerCase(), label: wanted.toLowerCase() };
  const { organizationId } = await organizationScope(options, io);
  const projects =
    options.project === undefined
      ? (await dataOf(client.api.GET('/organization/{organizationId}/project', { params: { path: { organizationId } } }))).results
      : [{ id: await projectNamed(client, organizationId, options.project), name: options.project }];
  const environments: Array<{ id: string; name: string; project: string }> = [];
  for (const project of projects) {
    const { results } = await dataOf(client.api.GET('/project/{projectId}/environment', { params: { path: { projectId: project.id } } }));
    environments.push(...results.map((environment) => ({ id: environment.id, name: environment.name, project: project.name })));
  }
  const matching = environments.filter((environment) => environment.name.toLowerCase() === wanted.toLowerCase());
  const where = options.project === undefined ? 'the organization' : `project ${options.project}`;
  const [environment] = matching;
  if (environment !== undefined && matching.length === 1) return { id: environment.id, label: environment.name };
  if (matching.length > 1) {
    const candidates = matching.map((candidate) => `${candidate.id} (project ${candidate.project})`).join(', ');
    throw new CliError(`several environments of ${where} are named "${wanted}": ${candidates}; give --project or the environment's id`);
  }
  const known = environments.map((candidate) => (options.project === undefined ? `${candidate.name} (project ${candidate.project})` : candidate.name));
  throw new CliError(`${where} has no environment named "${wanted}"; ${known.length === 0 ? 'it has no environments' : `there are: ${known.join(', ')}`}`);
}

export async function projectNamed(client: ApiClient, organizationId: string, wanted: string): Promise<string> {
  if (UUID.test(wanted)) return wanted.toLowerCase();
  const { results: projects } = await dataOf(client.api.GET('/organization/{organizationId}/project', { params: { path: { organizationId } } }));
  const matching = projects.filter((project) => project.name.toLowerCase() === wanted.toLowerCase());
  const [project] = matching;
  if (project === undefined || matching.length > 1) {
    throw new CliError(matching.length === 0 ? `no project named "${wanted}"; see slipway projects list` : `several projects are named "${wanted}"; give its id`);
  }
  return project.id;
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
    // Passed on unchecked (a cast, not a test): the server judges the mode, and refuses another in its own words.
    ...(options.mode === undefined ? {} : { mode: options.mode.toUpperCase() as EnvironmentMode }),
    ...(options.cluster === undefined ? {} : { cluster: (await clusterNamed(client, organizationId, options.cluster)).id }),
  };
  const created = await dataOf(client.api.POST('/project/{projectId}/environment', { params: { path: { projectId } }, body }));
  if (options.json === true) return printJson(io, created);
  io.out(`Created environment ${created.name} (${created.id}), ${created.mode}, on cluster ${created.cluster_name ?? created.cluster_id}.\n`);
}

export async function listEnvironments(options: OrganizationOptions & { project: string }, io: CliIo): Promise<void> {
  const { client, organizationId } = await organizationScope(options, io);
  const projectId = await projectNamed(client, organizationId, options.project);
  const body = await dataOf(client.api.GET('/project/{projectId}/environment', { params: { path: { projectId } } }));
  if (options.json === true) return printJson(io, body);
  const statuses = await Promise.all(
    body.results.map((env) => dataOf(client.api.GET('/environment/{environmentId}/status', { params: { path: { environmentId: env.id } } }))),
  );
  const rows = body.results.map((env, index) => [env.id, env.name, env.mode, env.cluster_name ?? '', statuses[index]?.state ?? '', statuses[index]?.deployment_status ?? '']);
  printTable(io, ['ID', 'NAME', 'MODE', 'CLUSTER', 'STATE', 'DEPLOYMENT'], rows, 'No environments.');
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

/** A git token by id, or by name among the organization's (case-insensitive). */
async function gitTokenNamed(client: ApiClient, wanted: string, options: OrganizationOptions, io: CliIo): Promise<string> {
  if (UUID.test(wanted)) return wanted.toLowerCase();
  const { organizationId } = await organizationScope(options, io);
  const { results: tokens } = await dataOf(client.api.GET('/organization/{organizationId}/gitToken', { params: { path: { organizationId } } }));
  const matching = tokens.filter((token) => token.name.toLowerCase() === wanted.toLowerCase());
  const [token] = matching;
  if (token !== undefined && matching.length === 1) return token.id;
  if (matching.length > 1) throw new CliError(`several git tokens are named "${wanted}"; give its id`);
  throw new CliError(`the organization has no git token named "${wanted}"; ${tokens.length === 0 ? 'it has none' : `there are: ${tokens.map((candidate) => candidate.name).join(', ')}`}`);
}

export interface CreateServiceOptions extends EnvironmentOptions {
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
  const client = await connect(options, io);
  const { id: environmentId } = await environmentNamed(client, options, io);
  const body: Record<string, unknown> = { ...settingsOf(options.settings), name };
  if (options.repository !== undefined) {
    body.git_repository = {
      url: options.repository,
      provider: providerOf(options.repository),
      ...(options.branch === undefined ? {} : { branch: options.branch }),
      ...(options.rootPath === undefined ? {} : { root_path: options.rootPath }),
      ...(options.gitToken === undefined ? {} : { git_token_id: await gitTokenNamed(client, options.gitToken, options, io) }),
    };
  }
  if ((kind.kind === 'APPLICATION' || kind.kind === 'CONTAINER') && body.healthchecks === undefined) body.healthchecks = {};
  const created = await kind.create(client.api, environmentId, body);
  if (options.json === true) return printJson(io, created);
  io.out(`Created ${kind.path} ${created.name} (${created.id}).\n`);
}

/** A service's URL: its default link (its public hostname), else its first; null without a public port. */
export async function urlOf(kind: ServiceKind, api: Api, id: string): Promise<string | null> {
  if (kind.links === undefined) return null;
  const { results } = await kind.links(api, id);
  return (results.find((link) => link.is_default) ?? results[0])?.url ?? null;
}

/** The services of an environment with their state, whether what runs is up to date, and their URL. */
export async function listServices(options: EnvironmentOptions & { env: string }, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const { id: environmentId } = await environmentNamed(client, options, io);
  const rows: string[][] = [];
  const all: Array<Record<string, unknown>> = [];
  for (const kind of KINDS) {
    for (const service of (await kind.list(client.api, environmentId)).results) {
      const [status, url] = await Promise.all([kind.status(client.api, service.id), urlOf(kind, client.api, service.id)]);
      all.push({ id: service.id, name: service.name, kind: kind.kind, state: status.state, deployment_status: status.service_deployment_status, url });
      rows.push([service.id, service.name, kind.kind, status.state, status.service_deployment_status, url ?? '-']);
    }
  }
  if (options.json === true) return printJson(io, { results: all });
  printTable(io, ['ID', 'NAME', 'KIND', 'STATE', 'DEPLOYMENT', 'URL'], rows, 'No services.');
}

// Deploy and status (the logs: service-logs.ts)

export type ServiceOptions = EnvironmentOptions;

/** A service's status polled until it settles (`--wait`). */
export function serviceSettling(api: Api, service: ServiceRef): Settling<ServiceStatus> {
  return {
    subject: `${service.kind.path} ${service.name}`,
    read: () => service.kind.status(api, service.id),
    phaseOf: (status) => status.state,
    messageOf: (status) => status.message,
  };
}

/**
 * Queues a deploy and shows where it stands and the variable snapshot it carries; with --wait, follows it until it
 * settles and fails the command when it ends in an error state.
 */
export async function deployService(
  wanted: string,
  options: ServiceOptions & WaitOptions & { commit?: string | undefined; tag?: string | undefined },
  io: CommandIo,
): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  const body = { ...(options.commit === undefined ? {} : { git_commit_id: options.commit }), ...(options.tag === undefined ? {} : { image_tag: options.tag }) };
  const status = await service.kind.deploy(client.api, service.id, body);
  // A deploy that was queued has its deployment request: the API answers 202 only after writing it.
  const deploymentId = status.deployment_request_id as string;
  const deployment = await service.kind.deployment(client.api, service.id, deploymentId);
  const waiting = wantsWait(options);
  if (options.json !== true) {
    io.out(`Deployment ${deploymentId} of ${service.kind.path} ${service.name}: ${status.state}\n`);
    if (status.message !== null) io.out(`${status.message}\n`);
    if (deployment.variables !== null) {
      const sealed = deployment.variables.results.filter((variable) => variable.sealed).length;
      io.out(`Variables snapshot ${deployment.variables.content_hash.slice(0, 12)}: ${deployment.variables.results.length} variables (${sealed} sealed)\n`);
    }
  }
  if (!waiting) {
    if (options.json === true) return printJson(io, { status, deployment });
    io.out(`Follow it with: slipway logs ${service.id} --follow\n`);
    return;
  }
  const settled = await waitUntilSettled(serviceSettling(client.api, service), options, io);
  if (options.json === true) return printJson(io, { status: settled.status, deployment });
  io.out(settledLine(`${service.kind.path} ${service.name}`, settled));
}

export async function serviceStatus(wanted: string, options: ServiceOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  const status = await service.kind.status(client.api, service.id);
  if (options.json === true) return printJson(io, status);
  io.out(`${service.kind.path} ${service.name}: ${status.state}, ${status.service_deployment_status}${status.message === null ? '' : ` — ${status.message}`}\n`);
}
