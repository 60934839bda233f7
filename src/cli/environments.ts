import { connect, dataOf, type AnswerOf, type ApiClient, type RequestOf } from './api-client.ts';
import { clusterNamed } from './clusters.ts';
import { printJson } from './output.ts';
import { environmentNamed, type EnvironmentOptions, type EnvironmentRef } from './services.ts';
import { CliError, type CliIo } from './sign-in.ts';
import { organizationScope } from './team.ts';
import type { CommandIo } from './terminal.ts';
import { settledLine, waitUntilSettled, wantsWait, type Settling, type WaitOptions } from './wait.ts';

/**
 * `slipway env deploy|stop|restart|status|delete|clone`: an environment as a whole (docs/environments.md). Its
 * actions become one deployment per service, carried out by the cluster's agent; --wait follows the environment's
 * status until it settles. The environment is named by id, or by name within --project (else any project).
 */

type EnvironmentStatus = AnswerOf<'getEnvironmentStatus'>;
type EnvironmentMode = NonNullable<RequestOf<'cloneEnvironment'>['mode']>;
type ActionName = 'deploy' | 'stop' | 'restart';

async function environmentOf(client: ApiClient, wanted: string, options: EnvironmentOptions, io: CliIo): Promise<EnvironmentRef> {
  return environmentNamed(client, { ...options, env: wanted }, io);
}

function environmentSettling(client: ApiClient, environment: EnvironmentRef): Settling<EnvironmentStatus> {
  return {
    subject: `environment ${environment.label}`,
    read: () => dataOf(client.api.GET('/environment/{environmentId}/status', { params: { path: { environmentId: environment.id } } })),
    phaseOf: (status) => status.state,
    messageOf: (status) => status.message,
  };
}

const ACTION_WORDS: Record<ActionName, string> = { deploy: 'Deploy', stop: 'Stop', restart: 'Restart' };

/**
 * Deploys (every service, databases first), stops or restarts (the deployed services) an environment; with --wait,
 * follows its status until it settles.
 */
export async function runEnvironmentAction(action: ActionName, wanted: string, options: EnvironmentOptions & WaitOptions, io: CommandIo): Promise<void> {
  const client = await connect(options, io);
  const environment = await environmentOf(client, wanted, options, io);
  const params = { path: { environmentId: environment.id } };
  const queued =
    action === 'deploy'
      ? await dataOf(client.api.POST('/environment/{environmentId}/deploy', { params }))
      : action === 'stop'
        ? await dataOf(client.api.POST('/environment/{environmentId}/stop', { params }))
        : await dataOf(client.api.POST('/environment/{environmentId}/service/restart-service', { params, body: {} }));
  const subject = `environment ${environment.label}`;
  if (!wantsWait(options)) {
    if (options.json === true) return printJson(io, queued);
    io.out(`${ACTION_WORDS[action]} of ${subject}: ${queued.state}${queued.message === null ? '' : ` — ${queued.message}`}\n`);
    return;
  }
  const settled = await waitUntilSettled(environmentSettling(client, environment), options, io);
  if (options.json === true) return printJson(io, settled.status);
  io.out(settledLine(subject, settled));
}

export async function environmentStatus(wanted: string, options: EnvironmentOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const environment = await environmentOf(client, wanted, options, io);
  const status = await environmentSettling(client, environment).read();
  if (options.json === true) return printJson(io, status);
  io.out(`environment ${environment.label}: ${status.state}, ${status.deployment_status}${status.message === null ? '' : ` — ${status.message}`}\n`);
}

/** Deletes an environment with its services (their workloads are torn down); --yes confirms. */
export async function deleteEnvironment(wanted: string, options: EnvironmentOptions & { yes?: boolean | undefined }, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const environment = await environmentOf(client, wanted, options, io);
  if (options.yes !== true) {
    throw new CliError(`deleting environment ${environment.label} removes it with all its services, variables and history, and stops what runs; run again with --yes`);
  }
  await client.api.DELETE('/environment/{environmentId}', { params: { path: { environmentId: environment.id } } });
  if (options.json === true) return printJson(io, { id: environment.id, deleted: true });
  io.out(`Deleted environment ${environment.label} (${environment.id}).\n`);
}

export interface CloneEnvironmentOptions extends EnvironmentOptions {
  mode?: string | undefined;
  cluster?: string | undefined;
  withVariables?: boolean | undefined;
}

/**
 * A new environment in the same project with the source's mode and cluster unless others are named, and its
 * environment variables and secrets with --with-variables. The API's clone copies no services and no history.
 */
export async function cloneEnvironment(wanted: string, name: string, options: CloneEnvironmentOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const environment = await environmentOf(client, wanted, options, io);
  const clusterId = options.cluster === undefined ? undefined : (await clusterNamed(client, (await organizationScope(options, io)).organizationId, options.cluster)).id;
  const body = {
    name,
    // Passed on unchecked (a cast, not a test): the server judges the mode, and refuses another in its own words.
    ...(options.mode === undefined ? {} : { mode: options.mode.toUpperCase() as EnvironmentMode }),
    ...(clusterId === undefined ? {} : { cluster_id: clusterId }),
    ...(options.withVariables === true ? { clone_variables: true } : {}),
  };
  const created = await dataOf(client.api.POST('/environment/{environmentId}/clone', { params: { path: { environmentId: environment.id } }, body }));
  if (options.json === true) return printJson(io, created);
  io.out(`Cloned environment ${environment.label} as ${created.name} (${created.id}), ${created.mode}, on cluster ${created.cluster_name ?? created.cluster_id}.\n`);
}
