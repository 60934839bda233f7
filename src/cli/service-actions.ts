import { connect, dataOf, type AnswerOf, type Api } from './api-client.ts';
import { printJson, printTable } from './output.ts';
import { serviceNamed, serviceSettling, urlOf, type ServiceKind, type ServiceOptions, type ServiceStatus } from './services.ts';
import { CliError, type CliIo } from './sign-in.ts';
import type { CommandIo } from './terminal.ts';
import { settledLine, waitUntilSettled, wantsWait, type WaitOptions } from './wait.ts';

/**
 * `slipway service redeploy|restart|stop|delete|open` and `slipway history`: what the daily loop does to a service
 * once it exists. The actions only queue work for the cluster's agent; --wait follows the status until it settles.
 */

type HistoryPage = AnswerOf<'listApplicationDeploymentHistoryV2'>;
interface HistoryQuery {
  pageSize: number;
}

/** The action paths of each kind, written out so that each call is checked against the API description. */
interface ServiceActions {
  redeploy(api: Api, id: string): Promise<ServiceStatus>;
  stop(api: Api, id: string): Promise<ServiceStatus>;
  restart(api: Api, id: string): Promise<ServiceStatus>;
  remove(api: Api, id: string): Promise<unknown>;
  history(api: Api, id: string, query: HistoryQuery): Promise<HistoryPage>;
}

const ACTIONS: Record<ServiceKind['kind'], ServiceActions> = {
  APPLICATION: {
    redeploy: (api, applicationId) => dataOf(api.POST('/application/{applicationId}/redeploy', { params: { path: { applicationId } } })),
    stop: (api, applicationId) => dataOf(api.POST('/application/{applicationId}/stop', { params: { path: { applicationId } } })),
    restart: (api, applicationId) => dataOf(api.POST('/application/{applicationId}/restart-service', { params: { path: { applicationId } } })),
    remove: (api, applicationId) => api.DELETE('/application/{applicationId}', { params: { path: { applicationId } } }),
    history: (api, applicationId, query) => dataOf(api.GET('/application/{applicationId}/deploymentHistoryV2', { params: { path: { applicationId }, query } })),
  },
  CONTAINER: {
    redeploy: (api, containerId) => dataOf(api.POST('/container/{containerId}/redeploy', { params: { path: { containerId } } })),
    stop: (api, containerId) => dataOf(api.POST('/container/{containerId}/stop', { params: { path: { containerId } } })),
    restart: (api, containerId) => dataOf(api.POST('/container/{containerId}/restart-service', { params: { path: { containerId } } })),
    remove: (api, containerId) => api.DELETE('/container/{containerId}', { params: { path: { containerId } } }),
    history: (api, containerId, query) => dataOf(api.GET('/container/{containerId}/deploymentHistoryV2', { params: { path: { containerId }, query } })),
  },
  DATABASE: {
    redeploy: (api, databaseId) => dataOf(api.POST('/database/{databaseId}/redeploy', { params: { path: { databaseId } } })),
    stop: (api, databaseId) => dataOf(api.POST('/database/{databaseId}/stop', { params: { path: { databaseId } } })),
    restart: (api, databaseId) => dataOf(api.POST('/database/{databaseId}/restart-service', { params: { path: { databaseId } } })),
    remove: (api, databaseId) => api.DELETE('/database/{databaseId}', { params: { path: { databaseId } } }),
    history: (api, databaseId, query) => dataOf(api.GET('/database/{databaseId}/deploymentHistoryV2', { params: { path: { databaseId }, query } })),
  },
  JOB: {
    redeploy: (api, jobId) => dataOf(api.POST('/job/{jobId}/redeploy', { params: { path: { jobId } } })),
    stop: (api, jobId) => dataOf(api.POST('/job/{jobId}/stop', { params: { path: { jobId } } })),
    restart: (api, jobId) => dataOf(api.POST('/job/{jobId}/restart-service', { params: { path: { jobId } } })),
    remove: (api, jobId) => api.DELETE('/job/{jobId}', { params: { path: { jobId } } }),
    history: (api, jobId, query) => dataOf(api.GET('/job/{jobId}/deploymentHistoryV2', { params: { path: { jobId }, query } })),
  },
  HELM: {
    redeploy: (api, helmId) => dataOf(api.POST('/helm/{helmId}/redeploy', { params: { path: { helmId } } })),
    stop: (api, helmId) => dataOf(api.POST('/helm/{helmId}/stop', { params: { path: { helmId } } })),
    restart: (api, helmId) => dataOf(api.POST('/helm/{helmId}/restart-service', { params: { path: { helmId } } })),
    remove: (api, helmId) => api.DELETE('/helm/{helmId}', { params: { path: { helmId } } }),
    history: (api, helmId, query) => dataOf(api.GET('/helm/{helmId}/deploymentHistoryV2', { params: { path: { helmId }, query } })),
  },
  TERRAFORM: {
    redeploy: (api, terraformId) => dataOf(api.POST('/terraform/{terraformId}/redeploy', { params: { path: { terraformId } } })),
    stop: (api, terraformId) => dataOf(api.POST('/terraform/{terraformId}/stop', { params: { path: { terraformId } } })),
    restart: (api, terraformId) => dataOf(api.POST('/terraform/{terraformId}/restart-service', { params: { path: { terraformId } } })),
    remove: (api, terraformId) => api.DELETE('/terraform/{terraformId}', { params: { path: { terraformId } } }),
    history: (api, terraformId, query) => dataOf(api.GET('/terraform/{terraformId}/deploymentHistoryV2', { params: { path: { terraformId }, query } })),
  },
};

export type ServiceActionOptions = ServiceOptions & WaitOptions;

type ActionName = 'redeploy' | 'stop' | 'restart';
const ACTION_WORDS: Record<ActionName, string> = { redeploy: 'Redeploy', stop: 'Stop', restart: 'Restart' };

/** Queues an action; with --wait, follows the status until it settles and fails the command if it ended in error. */
export async function runServiceAction(action: ActionName, wanted: string, options: ServiceActionOptions, io: CommandIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  const queued = await ACTIONS[service.kind.kind][action](client.api, service.id);
  const subject = `${service.kind.path} ${service.name}`;
  if (!wantsWait(options)) {
    if (options.json === true) return printJson(io, queued);
    io.out(`${ACTION_WORDS[action]} of ${subject}: ${queued.state}${queued.message === null ? '' : ` — ${queued.message}`}\n`);
    return;
  }
  const settled = await waitUntilSettled(serviceSettling(client.api, service), options, io);
  if (options.json === true) return printJson(io, settled.status);
  io.out(settledLine(subject, settled));
}

/** Deletes a service (its workload is torn down by the cluster's agent); --yes confirms, as nothing brings it back. */
export async function deleteService(wanted: string, options: ServiceOptions & { yes?: boolean | undefined }, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  if (options.yes !== true) {
    throw new CliError(`deleting ${service.kind.path} ${service.name} removes it, its variables and its history, and stops what runs; run again with --yes`);
  }
  await ACTIONS[service.kind.kind].remove(client.api, service.id);
  if (options.json === true) return printJson(io, { id: service.id, name: service.name, kind: service.kind.kind, deleted: true });
  io.out(`Deleted ${service.kind.path} ${service.name} (${service.id}).\n`);
}

/** Prints a service's URL; with --browser, on a terminal, opens it too. */
export async function openService(wanted: string, options: ServiceOptions & { browser?: boolean | undefined }, io: CommandIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  const url = await urlOf(service.kind, client.api, service.id);
  if (url === null) {
    throw new CliError(
      service.kind.links === undefined
        ? `a ${service.kind.path} has no URL`
        : `${service.kind.path} ${service.name} has no URL: none of its ports is publicly accessible`,
    );
  }
  if (options.json === true) printJson(io, { id: service.id, name: service.name, url });
  else io.out(`${url}\n`);
  if (options.browser === true && io.terminal.interactive) io.terminal.openInBrowser(url);
}

const HISTORY_DEFAULT_LIMIT = 20;

/** The newest deployments of a service (deploys, stops, restarts), newest first. */
export async function serviceHistory(wanted: string, options: ServiceOptions & { limit?: number | undefined }, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  const page = await ACTIONS[service.kind.kind].history(client.api, service.id, { pageSize: options.limit ?? HISTORY_DEFAULT_LIMIT });
  if (options.json === true) return printJson(io, page);
  const rows = page.results.map((entry) => [
    entry.deployment_id,
    entry.auditing_data.created_at,
    entry.status_details.action,
    entry.status,
    entry.details.commit?.git_commit_id.slice(0, 12) ?? entry.details.tag ?? '-',
    entry.total_duration,
    `${entry.auditing_data.triggered_by} (${entry.auditing_data.origin})`,
    entry.message ?? '',
  ]);
  printTable(io, ['DEPLOYMENT', 'CREATED', 'ACTION', 'STATE', 'VERSION', 'DURATION', 'BY', 'MESSAGE'], rows, `${service.kind.path} ${service.name} has no deployments yet.`);
  if (page.next_cursor !== null) io.out(`(the ${page.results.length} newest; --limit shows up to 100)\n`);
}
