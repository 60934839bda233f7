import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The mixed load of `npm run bench:scale`: CONNECTIONS virtual users, each one keep-alive connection to the balancer
 * and one request at a time, each request's tenant chosen at random. A user picks an operation by weight:
 *
 *   reads   listProject, getEnvironment, listServicesByEnvironmentId, getEnvironmentStatus
 *   writes  createProject, createEnvironmentEnvironmentVariable, editEnvironmentEnvironmentVariable
 *   deploys deployEnvironment (a job the workers run, a task the LOCAL cluster's agent carries out, reported back)
 *
 * Every acknowledged (2xx) write goes into the phase's ledger, which the bench checks against PostgreSQL afterwards.
 * A user edits only the variables it created itself, one request at a time, so the value an edit acknowledged last
 * is the one the database must hold (or a later edit's whose answer was lost). A deploy is asked only of an
 * environment the load has not seen busy: a status read that finds it settled makes it eligible again, as a client
 * polling its deployment would.
 *
 * autocannon (bench/load.ts) sends one fixed request per run; here the next request depends on earlier answers
 * (ids of created variables, environments that settled), so the loop is the bench's own, on node:http with the
 * least work per request: bodies are read only where an id or a state is needed.
 */

export interface TenantEnvironment {
  id: string;
  /** Believed busy: a deploy was asked and no status read has seen it settle yet. */
  deploying: boolean;
}

export interface Tenant {
  organizationId: string;
  authorization: string;
  environments: TenantEnvironment[];
}

export const OPERATIONS = [
  'listProject',
  'getEnvironment',
  'listServices',
  'getEnvironmentStatus',
  'createProject',
  'createVariable',
  'editVariable',
  'deployEnvironment',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Shares of the mix, in percent. */
const WEIGHTS: Record<Operation, number> = {
  listProject: 25,
  getEnvironment: 15,
  listServices: 15,
  getEnvironmentStatus: 10,
  createProject: 10,
  createVariable: 10,
  editVariable: 10,
  deployEnvironment: 5,
};

/** States in which an environment's action is still under way (src/engine/deployment-states.ts). */
const BUSY_STATES = new Set(['QUEUED', 'BUILDING', 'DEPLOYING', 'STOPPING', 'RESTARTING', 'CANCELING', 'DELETING']);

export interface OperationStats {
  /** Latencies of the 2xx answers of the measured window, ms. */
  latencies: number[];
  /** 2xx answers before the fault (all of them when the phase has none). */
  okBeforeFault: number;
  /** Answers other than 2xx in the measured window, by status. */
  statuses: Record<string, number>;
  /** Requests without an answer (connection reset, timeout) in the measured window. */
  errors: number;
  /** Those requests by error code (ECONNRESET, …). */
  errorCodes: Record<string, number>;
}

export interface OwnedVariable {
  id: string;
  environmentId: string;
  key: string;
  /** The value of the last acknowledged create or edit. */
  acknowledged: string;
  /** Values sent after it whose answer was not a 2xx or never came: any of them may be stored. */
  unconfirmed: string[];
}

/** What the load was told was written (2xx), for the bench to look up in the database. */
export interface Ledger {
  projectIds: string[];
  variables: OwnedVariable[];
  deploys: { deploymentId: string; jobId: string; environmentId: string }[];
  /** Creates whose answer was not a 2xx (a 5xx, or none): they may or may not be stored. */
  unconfirmedProjectNames: string[];
  /** Non-2xx answers to writes, by operation and status, over warm-up and measured window alike. */
  refusedWrites: Record<string, number>;
}

export interface LoadResult {
  byOperation: Record<Operation, OperationStats>;
  ledger: Ledger;
  measuredSeconds: number;
  /** Seconds of the measured window before the fault began (the whole window when there was none). */
  secondsBeforeFault: number;
}

export interface LoadOptions {
  baseUrl: string;
  tenants: Tenant[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Names of created things start with it, so phases never collide. */
  phaseTag: string;
  signal: AbortSignal;
  /** Run once, in the middle of the measured window, while the load goes on. */
  fault?: () => Promise<void>;
}

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function pick<T>(items: readonly T[]): T | undefined {
  return items[Math.floor(Math.random() * items.length)];
}

const cumulative = (() => {
  let sum = 0;
  return OPERATIONS.map((operation) => ({ operation, upTo: (sum += WEIGHTS[operation]) }));
})();
const TOTAL_WEIGHT = cumulative.at(-1)?.upTo ?? 1;

function chooseOperation(): Operation {
  const roll = Math.random() * TOTAL_WEIGHT;
  return (cumulative.find((entry) => roll < entry.upTo) ?? cumulative[0])?.operation ?? 'listProject';
}

export async function runMixedLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const ledger: Ledger = { projectIds: [], variables: [], deploys: [], unconfirmedProjectNames: [], refusedWrites: {} };
  const emptyStats = (): OperationStats => ({ latencies: [], okBeforeFault: 0, statuses: {}, errors: 0, errorCodes: {} });
  const stats = Object.fromEntries(OPERATIONS.map((operation) => [operation, emptyStats()])) as Record<Operation, OperationStats>;
  const environments = options.tenants.flatMap((tenant) => tenant.environments.map((environment) => ({ tenant, environment })));

  const begin = performance.now();
  const measuredFrom = begin + options.warmupSeconds * 1_000;
  const measuredUntil = measuredFrom + options.seconds * 1_000;
  const faultAt = options.fault === undefined ? Number.POSITIVE_INFINITY : measuredFrom + (options.seconds * 1_000) / 2;
  let faultDone: Promise<void> = Promise.resolve();
  let faultError: unknown;
  if (options.fault !== undefined) {
    const fault = options.fault;
    const timer = setTimeout(() => {
      faultDone = fault().catch((error: unknown) => {
        faultError = error;
      });
    }, faultAt - begin);
    options.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }

  function send(method: string, path: string, authorization: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: target.hostname,
          port: target.port,
          method,
          path,
          agent,
          headers: {
            authorization,
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
          timeout: 30_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', reject);
      request.end(payload);
    });
  }

  function record(operation: Operation, answer: Answer | undefined, at: number, error: unknown): void {
    if (at < measuredFrom || at >= measuredUntil) return;
    const entry = stats[operation];
    if (answer === undefined) {
      entry.errors++;
      const code = (error as { code?: unknown } | undefined)?.code;
      const key = typeof code === 'string' ? code : error instanceof Error ? error.message : 'unknown';
      entry.errorCodes[key] = (entry.errorCodes[key] ?? 0) + 1;
    } else if (answer.status >= 200 && answer.status < 300) {
      entry.latencies.push(answer.ms);
      if (at < faultAt) entry.okBeforeFault++;
    } else {
      entry.statuses[answer.status] = (entry.statuses[answer.status] ?? 0) + 1;
    }
  }

  function refused(operation: Operation, answer: Answer | undefined): void {
    const key = `${operation} ${answer === undefined ? 'no answer' : answer.status}`;
    ledger.refusedWrites[key] = (ledger.refusedWrites[key] ?? 0) + 1;
  }

  const ok = (answer: Answer | undefined): answer is Answer => answer !== undefined && answer.status >= 200 && answer.status < 300;

  async function user(index: number): Promise<void> {
    const owned: OwnedVariable[] = [];
    const ownerAuthorization = new Map<string, string>();
    let sequence = 0;
    while (performance.now() < measuredUntil && !options.signal.aborted) {
      let operation = chooseOperation();
      const tenant = pick(options.tenants);
      const environment = tenant === undefined ? undefined : pick(tenant.environments);
      if (tenant === undefined || environment === undefined) throw new Error('the load needs tenants with environments');
      if (operation === 'editVariable' && owned.length === 0) operation = 'createVariable';
      let answer: Answer | undefined;
      let failure: unknown;
      const name = `${options.phaseTag}_${index}_${++sequence}`;
      try {
        switch (operation) {
          case 'listProject':
            answer = await send('GET', `/organization/${tenant.organizationId}/project`, tenant.authorization);
            break;
          case 'getEnvironment':
            answer = await send('GET', `/environment/${environment.id}`, tenant.authorization);
            break;
          case 'listServices':
            answer = await send('GET', `/environment/${environment.id}/services`, tenant.authorization);
            break;
          case 'getEnvironmentStatus': {
            // Half the status reads follow a deployment under way, as its client would.
            const busy = Math.random() < 0.5 ? pick(environments.filter((candidate) => candidate.environment.deploying)) : undefined;
            const polled = busy ?? { tenant, environment };
            answer = await send('GET', `/environment/${polled.environment.id}/status`, polled.tenant.authorization);
            if (ok(answer)) {
              const { state } = JSON.parse(answer.body) as { state: string };
              polled.environment.deploying = BUSY_STATES.has(state);
            }
            break;
          }
          case 'createProject':
            try {
              answer = await send('POST', `/organization/${tenant.organizationId}/project`, tenant.authorization, { name, description: 'bench:scale' });
            } finally {
              if (ok(answer)) ledger.projectIds.push((JSON.parse(answer.body) as { id: string }).id);
              else {
                ledger.unconfirmedProjectNames.push(name);
                refused(operation, answer);
              }
            }
            break;
          case 'createVariable': {
            const value = `created ${name}`;
            try {
              answer = await send('POST', `/environment/${environment.id}/environmentVariable`, tenant.authorization, { key: name, value });
            } finally {
              if (ok(answer)) {
                const variable = { id: (JSON.parse(answer.body) as { id: string }).id, environmentId: environment.id, key: name, acknowledged: value, unconfirmed: [] };
                owned.push(variable);
                ownerAuthorization.set(variable.id, tenant.authorization);
                ledger.variables.push(variable);
              } else {
                refused(operation, answer);
              }
            }
            break;
          }
          case 'editVariable': {
            const variable = pick(owned);
            if (variable === undefined) break;
            const value = `edited ${name}`;
            try {
              answer = await send('PUT', `/environment/${variable.environmentId}/environmentVariable/${variable.id}`, ownerAuthorization.get(variable.id) ?? '', {
                key: variable.key,
                value,
              });
            } finally {
              if (ok(answer)) {
                variable.acknowledged = value;
                variable.unconfirmed = [];
              } else {
                variable.unconfirmed.push(value);
                refused(operation, answer);
              }
            }
            break;
          }
          case 'deployEnvironment': {
            const idle = environments.filter((candidate) => !candidate.environment.deploying);
            const chosen = pick(idle);
            if (chosen === undefined) {
              operation = 'getEnvironmentStatus';
              answer = await send('GET', `/environment/${environment.id}/status`, tenant.authorization);
              break;
            }
            chosen.environment.deploying = true;
            try {
              answer = await send('POST', `/environment/${chosen.environment.id}/deploy`, chosen.tenant.authorization);
            } finally {
              if (ok(answer)) {
                const view = JSON.parse(answer.body) as { deployment_request_id: string; execution_id: string };
                ledger.deploys.push({ deploymentId: view.deployment_request_id, jobId: view.execution_id, environmentId: chosen.environment.id });
              } else {
                refused(operation, answer);
              }
            }
            break;
          }
        }
      } catch (error) {
        failure = error;
        answer = undefined;
      }
      record(operation, answer, performance.now(), failure);
    }
  }

  try {
    await Promise.all(Array.from({ length: options.connections }, (_, index) => user(index + 1)));
    await faultDone;
    if (faultError !== undefined) throw faultError instanceof Error ? faultError : new Error(String(faultError));
  } finally {
    agent.destroy();
  }
  options.signal.throwIfAborted();
  return {
    byOperation: stats,
    ledger,
    measuredSeconds: options.seconds,
    secondsBeforeFault: Number.isFinite(faultAt) ? (faultAt - measuredFrom) / 1_000 : options.seconds,
  };
}
