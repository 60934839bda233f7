import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { killProcessesUnder } from '../test/support/sample-apps.ts';
import { runNodeScript, scratchPostgresDatabase, startBenchRun } from './processes.ts';
import { postgresPids, startCpuMeter, type CpuFigures, type CpuMeter, type CpuRole } from './scale.cpu.ts';
import { OPERATIONS, runMixedLoad, type Ledger, type LoadResult, type Tenant } from './scale.load.ts';
import { slipwayEnv, slipwayNode, startBalancer, type Balancer, type ScaleEnvironment, type SlipwayNode } from './scale.topology.ts';

/**
 * `npm run bench:scale` (issue 26 part 3): several API replicas and two job workers on one PostgreSQL database, behind
 * a real HAProxy, under a mixed load from many organizations (bench/scale.load.ts), with one replica `kill -9`ed in the
 * middle of the measured window and started again. Then, against the database itself: every acknowledged write is
 * stored, no job or agent task ran twice, every acknowledged deployment reached a final state. The same mix runs on
 * the headline number of replicas first (with the kill), then on 1, 2, … fewer, so the ratios come from one run;
 * each phase says where the CPU went (replicas, workers, PostgreSQL, HAProxy, the load generator, everything else).
 *
 *   workers   worker 1: SLIPWAY_RUN_JOBS=true, SLIPWAY_LOCAL_AGENT=true (the agent of every LOCAL cluster)
 *             worker 2: SLIPWAY_RUN_JOBS=true, SLIPWAY_LOCAL_AGENT=false
 *   replicas  SLIPWAY_RUN_JOBS=false, SLIPWAY_LOCAL_AGENT=false, behind HAProxy (bench/scale.topology.ts)
 *
 * All of them share one SLIPWAY_SECRET_KEY and one scratch database on SLIPWAY_BENCH_DATABASE_URL's server, migrated
 * and bootstrapped by the real CLI (`slipway admin bootstrap`, once per organization) and dropped at the end.
 * Settings and recorded figures: docs/benchmarks.md and docs/operations.md ("Capacity: bench:scale").
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_DATABASE_SERVER = 'postgres://postgres@127.0.0.1:5432/test';
const SEEDED_PROJECTS = 5;
const SEEDED_VARIABLES = 5;
const BOOTSTRAP_CONCURRENCY = 4;
const SEED_CONCURRENCY = 8;
const SETTLE_POLL_MS = 250;
const IDLE_SECONDS = 10;

function positiveInteger(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be a whole number of at least ${minimum}, got "${raw}"`);
  return value;
}

const settings = {
  replicas: positiveInteger('SLIPWAY_BENCH_REPLICAS', 3),
  organizations: positiveInteger('SLIPWAY_BENCH_ORGANIZATIONS', 20),
  environmentsPerOrganization: positiveInteger('SLIPWAY_BENCH_ENVIRONMENTS', 3),
  connections: positiveInteger('SLIPWAY_BENCH_CONNECTIONS', 32),
  warmupSeconds: positiveInteger('SLIPWAY_BENCH_WARMUP_SECONDS', 3, 0),
  seconds: positiveInteger('SLIPWAY_BENCH_SECONDS', 30),
  /** How long the killed replica stays down before it is started again. */
  downSeconds: positiveInteger('SLIPWAY_BENCH_DOWN_SECONDS', 3, 0),
  /** After the load stops, how long every acknowledged deployment has to reach a final state. */
  settleSeconds: positiveInteger('SLIPWAY_BENCH_SETTLE_SECONDS', 60),
};

// The scratch directory, clean-up steps and Ctrl-C handling of this run (bench/processes.ts).
const bench = startBenchRun('slipway-bench-scale-');
const { scratchDir } = bench;

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}


/** Runs `work` over `items`, at most `limit` at a time. */
async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let index = next++; index < items.length; index = next++) {
      bench.signal.throwIfAborted();
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/**
 * One organization per `slipway admin bootstrap` run (each its own owner and ADMIN token; bootstrap also lets the
 * organization use LOCAL clusters). The first run migrates the database, so it runs alone.
 */
async function bootstrapOrganizations(environment: ScaleEnvironment): Promise<{ organizationId: string; authorization: string }[]> {
  const cliDir = path.join(scratchDir, 'cli');
  mkdirSync(cliDir);
  const env = slipwayEnv(environment, cliDir, 0, { runJobs: false, localAgent: false });
  const bootstrap = async (index: number): Promise<{ organizationId: string; authorization: string }> => {
    const output = await runNodeScript(
      'bin/slipway.js',
      ['admin', 'bootstrap', '--email', `owner-${index}@scale.example.com`, '--organization', `Scale ${index}`, '--name', `Owner ${index}`, '--json'],
      { cwd: ROOT, env },
    );
    const created = JSON.parse(output) as { organization_id: string; api_token: string };
    return { organizationId: created.organization_id, authorization: `Token ${created.api_token}` };
  };
  const first = await bootstrap(1);
  const rest = await inBatches(
    Array.from({ length: settings.organizations - 1 }, (_, index) => index + 2),
    BOOTSTRAP_CONCURRENCY,
    (index) => bootstrap(index),
  );
  return [first, ...rest];
}

async function call<T>(baseUrl: string, authorization: string, method: string, url: string, body?: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${url}`, {
    method,
    signal: bench.signal,
    headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** Per organization: a LOCAL cluster, a few projects, one project with the environments the load uses, a few variables in each. */
async function seedTenants(baseUrl: string, owners: { organizationId: string; authorization: string }[]): Promise<Tenant[]> {
  return inBatches(owners, SEED_CONCURRENCY, async ({ organizationId, authorization }) => {
    const cluster = await call<{ id: string }>(baseUrl, authorization, 'POST', `/organization/${organizationId}/cluster`, {
      name: 'local',
      region: 'local',
      cloud_provider: 'ON_PREMISE',
      kubernetes: 'LOCAL',
    });
    for (let index = 1; index <= SEEDED_PROJECTS; index++) {
      await call(baseUrl, authorization, 'POST', `/organization/${organizationId}/project`, { name: `seed-${index}`, description: `Seeded project ${index}` });
    }
    const project = await call<{ id: string }>(baseUrl, authorization, 'POST', `/organization/${organizationId}/project`, { name: 'scale' });
    const environments: Tenant['environments'] = [];
    for (let index = 1; index <= settings.environmentsPerOrganization; index++) {
      const created = await call<{ id: string }>(baseUrl, authorization, 'POST', `/project/${project.id}/environment`, { name: `env-${index}`, cluster: cluster.id });
      for (let variable = 1; variable <= SEEDED_VARIABLES; variable++) {
        await call(baseUrl, authorization, 'POST', `/environment/${created.id}/environmentVariable`, { key: `SEED_${variable}`, value: `seed value ${variable}` });
      }
      environments.push({ id: created.id, deploying: false });
    }
    return { organizationId, authorization, environments };
  });
}

interface Verification {
  /** Acknowledged creates missing from the database, acknowledged edits whose value is not stored. */
  lostProjects: number;
  lostVariables: number;
  lostEdits: number;
  lostDeployments: number;
  /** Writes answered with something other than 2xx (or nothing) that are stored nevertheless. */
  unconfirmedStored: number;
  unconfirmedTotal: number;
  /** Jobs claimed more than once (attempts > 1), agent tasks leased more than once or dispatched twice. */
  doubleJobs: string[];
  doubleTasks: string[];
  /** Acknowledged deployments without a final state when the settle deadline passed, and their jobs not finished then. */
  stuck: string[];
  /** Final states of the acknowledged deployments, by state. */
  finalStates: Record<string, number>;
  settleSeconds: number;
}

/**
 * Waits until every acknowledged deployment has a final state and its job has ended (the agent's report settles
 * the deployment; the job that waited for it completes a moment later), or the deadline passes.
 */
async function settleDeployments(
  client: pg.Client,
  ledger: Ledger,
): Promise<{ rows: { id: string; status: string; finished: boolean }[]; unfinishedJobs: { id: string; status: string }[]; seconds: number }> {
  const started = performance.now();
  const ids = ledger.deploys.map((deploy) => deploy.deploymentId);
  for (;;) {
    const { rows } = await client.query<{ id: string; status: string; finished: boolean }>(
      'select id, status, finished_at is not null as finished from environment_deployments where id = any($1::varchar[])',
      [ids],
    );
    const unfinishedJobs = await client.query<{ id: string; status: string }>(
      "select id, status from jobs where id = any($1::varchar[]) and status not in ('SUCCEEDED', 'FAILED', 'CANCELLED')",
      [ledger.deploys.map((deploy) => deploy.jobId)],
    );
    const seconds = (performance.now() - started) / 1_000;
    if ((rows.every((row) => row.finished) && unfinishedJobs.rows.length === 0) || seconds > settings.settleSeconds) {
      return { rows, unfinishedJobs: unfinishedJobs.rows, seconds };
    }
    bench.signal.throwIfAborted();
    await sleep(SETTLE_POLL_MS);
  }
}

async function verify(client: pg.Client, ledger: Ledger, phaseStartedAt: string): Promise<Verification> {
  const settled = await settleDeployments(client, ledger);
  const finalStates: Record<string, number> = {};
  for (const row of settled.rows) if (row.finished) finalStates[row.status] = (finalStates[row.status] ?? 0) + 1;

  const projects = await client.query<{ id: string }>('select id from projects where id = any($1::varchar[])', [ledger.projectIds]);
  const variables = await client.query<{ id: string; value: string | null }>('select id, value from variables where id = any($1::varchar[])', [
    ledger.variables.map((variable) => variable.id),
  ]);
  const stored = new Map(variables.rows.map((row) => [row.id, row.value]));
  let lostEdits = 0;
  for (const variable of ledger.variables) {
    const value = stored.get(variable.id);
    if (value !== undefined && value !== variable.acknowledged && !variable.unconfirmed.includes(value ?? '')) lostEdits++;
  }
  const unconfirmedProjects = await client.query<{ count: string }>('select count(*) from projects where name = any($1::text[])', [ledger.unconfirmedProjectNames]);

  // Every job of the phase, not only the deployments': the schedules' jobs run on the same workers.
  const jobs = await client.query<{ id: string; kind: string; attempts: number; status: string; last_error: string | null }>(
    'select id, kind, attempts, status, last_error from jobs where created_at >= $1 and attempts > 1',
    [phaseStartedAt],
  );
  const tasks = await client.query<{ deployment_id: string; rows: string; leases: number }>(
    'select deployment_id, count(*) as rows, max(leases) as leases from agent_tasks where deployment_id = any($1::varchar[]) group by deployment_id having count(*) > 1 or max(leases) > 1',
    [ledger.deploys.map((deploy) => deploy.deploymentId)],
  );
  return {
    lostProjects: ledger.projectIds.length - projects.rows.length,
    lostVariables: ledger.variables.length - stored.size,
    lostEdits,
    lostDeployments: ledger.deploys.length - settled.rows.length,
    unconfirmedStored: Number(unconfirmedProjects.rows[0]?.count ?? 0),
    unconfirmedTotal: ledger.unconfirmedProjectNames.length,
    doubleJobs: jobs.rows.map((row) => `${row.kind} ${row.id} claimed ${row.attempts} times, ${row.status}, last error ${row.last_error ?? 'none'}`),
    doubleTasks: tasks.rows.map((row) => `deployment ${row.deployment_id}: ${row.rows} task(s), leased ${row.leases} times`),
    stuck: [
      ...settled.rows.filter((row) => !row.finished).map((row) => `deployment ${row.id} (${row.status})`),
      ...settled.unfinishedJobs.map((row) => `job ${row.id} (${row.status})`),
    ],
    finalStates,
    settleSeconds: settled.seconds,
  };
}

interface PhaseResult {
  replicas: number;
  load: LoadResult;
  cpu: CpuFigures;
  verification: Verification;
  fault: string | undefined;
  /** Cores each role used with no load, by label. */
  idle: Map<string, number>;
  /** Answers of the measured window, any status: what the CPU figures are divided by. */
  answered: number;
}

/** PostgreSQL backends serving the scratch database (the bench's own monitoring connection excluded). */
function scratchBackends(client: pg.Client, database: string): CpuRole['pids'] {
  return async () => {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return rows.map((row) => row.pid);
  };
}

const OTHER_POSTGRES = 'other postgres processes (server, other databases)';

function cpuRoles(replicas: SlipwayNode[], workers: SlipwayNode[], balancer: Balancer, backends: CpuRole['pids']): CpuRole[] {
  return [
    ...replicas.map((replica) => ({ label: replica.label, pids: () => pidsOf(replica) })),
    ...workers.map((worker) => ({ label: worker.label, pids: () => pidsOf(worker) })),
    { label: 'haproxy', pids: () => (balancer.pid === undefined ? [] : [balancer.pid]) },
    { label: 'PostgreSQL backends of the scratch database', pids: backends },
    {
      label: OTHER_POSTGRES,
      pids: async () => {
        const ours = new Set(await backends());
        return postgresPids().filter((pid) => !ours.has(pid));
      },
    },
    { label: 'load generator (this process)', pids: () => [process.pid] },
  ];
}

/**
 * What each role costs with no load at all (timers, job polls, the agents' long polls, pool keep-alives): with the
 * few hundred requests a phase gets on a crowded machine, that fixed cost is a large share of the CPU per request,
 * so the phases also show the CPU per request above it.
 */
async function measureIdle(roles: CpuRole[]): Promise<Map<string, number>> {
  const meter = startCpuMeter(roles, cpus().length);
  await sleep(IDLE_SECONDS * 1_000, undefined, { signal: bench.signal });
  const figures = await meter.stop();
  return new Map(figures.byRole.map((role) => [role.label, role.seconds / figures.wallSeconds]));
}

async function runPhase(options: {
  replicas: SlipwayNode[];
  workers: SlipwayNode[];
  tenants: Tenant[];
  balancer: Balancer;
  client: pg.Client;
  databaseName: string;
  withFault: boolean;
  tag: string;
  idle: Map<string, number>;
}): Promise<PhaseResult> {
  const { replicas, workers, balancer, client } = options;
  const phaseStartedAt = new Date().toISOString();
  for (const tenant of options.tenants) for (const environment of tenant.environments) environment.deploying = false;
  const roles = cpuRoles(replicas, workers, balancer, scratchBackends(client, options.databaseName));
  // The meter covers the measured window only: not the warm-up, nor the wait for a restart that outlasts the window.
  let meter: CpuMeter | undefined;
  let measured: Promise<CpuFigures> | undefined;
  const meterTimers = [
    setTimeout(() => {
      meter = startCpuMeter(roles, cpus().length);
    }, settings.warmupSeconds * 1_000),
    setTimeout(() => {
      measured = meter?.stop();
    }, (settings.warmupSeconds + settings.seconds) * 1_000),
  ];

  let fault: string | undefined;
  const victim = replicas[0];
  let load: LoadResult;
  try {
    load = await runMixedLoad({
      baseUrl: balancer.baseUrl,
      tenants: options.tenants,
      connections: settings.connections,
      warmupSeconds: settings.warmupSeconds,
      seconds: settings.seconds,
      phaseTag: options.tag,
      signal: bench.signal,
      ...(options.withFault && victim !== undefined
        ? {
            fault: async () => {
              const killedAt = performance.now();
              log(`${options.tag}: kill -9 ${victim.label} (pid ${victim.current()?.pid})`);
              await victim.kill();
              await sleep(settings.downSeconds * 1_000, undefined, { signal: bench.signal });
              await victim.start();
              const back = (performance.now() - killedAt) / 1_000;
              fault = `${victim.label} kill -9'd at ${(settings.seconds / 2).toFixed(1)} s of the measured window, serving again ${back.toFixed(1)} s later`;
              log(`${options.tag}: ${victim.label} restarted, ${back.toFixed(1)} s after the kill`);
            },
          }
        : {}),
    });
  } finally {
    for (const timer of meterTimers) clearTimeout(timer);
  }
  // The users stop at the window's end, a timer tick after it at most; the meter may not have been stopped yet.
  const cpu = await (measured ?? meter?.stop());
  if (cpu === undefined) throw new Error('the measured window ended before it began');
  const answered = OPERATIONS.reduce((sum, operation) => {
    const stats = load.byOperation[operation];
    return sum + stats.latencies.length + stats.errors + Object.values(stats.statuses).reduce((a, b) => a + b, 0);
  }, 0);
  log(`${options.tag}: load done, verifying against PostgreSQL`);
  const verification = await verify(client, load.ledger, phaseStartedAt);
  return { replicas: replicas.length, load, cpu, verification, fault, idle: options.idle, answered };
}

function pidsOf(node: SlipwayNode): number[] {
  const pid = node.current()?.pid;
  return pid === undefined ? [] : [pid];
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN;
}

function formatNumber(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

function printTable(header: string[], lines: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => (line[column] ?? '').length)));
  const render = (cells: string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  console.log(render(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(render(line));
}

function okPerSecond(result: PhaseResult): { whole: number; beforeFault: number } {
  const stats = OPERATIONS.map((operation) => result.load.byOperation[operation]);
  const ok = stats.reduce((sum, entry) => sum + entry.latencies.length, 0);
  const before = stats.reduce((sum, entry) => sum + entry.okBeforeFault, 0);
  return { whole: ok / result.load.measuredSeconds, beforeFault: before / result.load.secondsBeforeFault };
}

function printPhase(result: PhaseResult): void {
  const title = `${result.replicas} API replica${result.replicas === 1 ? '' : 's'}`;
  console.log('');
  console.log(`== ${title}${result.fault === undefined ? ', no fault' : `: ${result.fault}`}`);
  const all: number[] = [];
  const lines = OPERATIONS.map((operation) => {
    const stats = result.load.byOperation[operation];
    const sorted = [...stats.latencies].sort((a, b) => a - b);
    all.push(...sorted);
    const others = Object.entries(stats.statuses).map(([status, count]) => `${count}x${status}`).join(' ') || '0';
    const unanswered = Object.entries(stats.errorCodes).map(([code, count]) => `${count}x${code}`).join(' ') || '0';
    return [
      operation,
      String(sorted.length),
      formatNumber(sorted.length / result.load.measuredSeconds),
      formatNumber(percentile(sorted, 0.5), 2),
      formatNumber(percentile(sorted, 0.99), 2),
      others,
      unanswered,
    ];
  });
  all.sort((a, b) => a - b);
  const rate = okPerSecond(result);
  lines.push(['all', String(all.length), formatNumber(rate.whole), formatNumber(percentile(all, 0.5), 2), formatNumber(percentile(all, 0.99), 2), '', '']);
  printTable(['operation', '2xx', 'req/s', 'p50 ms', 'p99 ms', 'other statuses', 'no answer'], lines);
  if (result.fault !== undefined) console.log(`2xx req/s before the kill: ${formatNumber(rate.beforeFault)}`);

  const ours = stackCoresOf(result) * result.cpu.wallSeconds;
  const other = result.cpu.byRole.find((role) => role.label === OTHER_POSTGRES)?.seconds ?? 0;
  const cpuLines = result.cpu.byRole.map((role) => {
    const idle = result.idle.get(role.label);
    const aboveIdle = idle === undefined ? Number.NaN : role.seconds - idle * result.cpu.wallSeconds;
    return [
      role.label,
      formatNumber(role.seconds, 1),
      formatNumber(role.seconds / result.cpu.wallSeconds, 2),
      formatNumber((role.seconds * 1e6) / result.answered),
      idle === undefined ? '-' : formatNumber(idle, 3),
      formatNumber((aboveIdle * 1e6) / result.answered),
    ];
  });
  const rest = result.cpu.machineSeconds - ours - other;
  cpuLines.push(
    ['everything else on the machine (other engineers)', formatNumber(rest, 1), formatNumber(rest / result.cpu.wallSeconds, 2), '', '', ''],
    ['machine, all cores busy', formatNumber(result.cpu.machineSeconds, 1), formatNumber(result.cpu.machineSeconds / result.cpu.wallSeconds, 2), '', '', ''],
  );
  console.log('');
  printTable(
    [`where the CPU went (${formatNumber(result.cpu.wallSeconds, 1)} s, ${cpus().length} cores)`, 'CPU s', 'cores', 'us/request', 'idle cores', 'us/req above idle'],
    cpuLines,
  );

  const v = result.verification;
  const ledger = result.load.ledger;
  console.log('');
  console.log(
    `acknowledged writes: ${ledger.projectIds.length} projects, ${ledger.variables.length} variables (edits included), ${ledger.deploys.length} deployments; ` +
      `lost: ${v.lostProjects} projects, ${v.lostVariables} variables, ${v.lostEdits} edits, ${v.lostDeployments} deployments`,
  );
  const refused = Object.entries(ledger.refusedWrites).map(([what, count]) => `${count}x ${what}`).join(', ') || 'none';
  console.log(`writes not acknowledged (warm-up included): ${refused}; of ${v.unconfirmedTotal} unanswered project creates, ${v.unconfirmedStored} are stored`);
  const states = Object.entries(v.finalStates).map(([state, count]) => `${count} ${state}`).join(', ') || 'none';
  console.log(`deployments: final states ${states}; stuck after ${formatNumber(v.settleSeconds, 1)} s: ${v.stuck.length}${v.stuck.length > 0 ? ` (${v.stuck.slice(0, 5).join(', ')})` : ''}`);
  console.log(
    `jobs run twice: ${v.doubleJobs.length}${v.doubleJobs.length > 0 ? ` (${v.doubleJobs.slice(0, 5).join('; ')})` : ''}; ` +
      `agent tasks run twice: ${v.doubleTasks.length}${v.doubleTasks.length > 0 ? ` (${v.doubleTasks.slice(0, 5).join('; ')})` : ''}`,
  );
}

/**
 * Cores the bench's own processes used (replicas, workers, HAProxy, the scratch database's backends, the load
 * generator): on a machine others share, throughput follows this share, so req/s per stack core is the comparable figure.
 */
function stackCoresOf(result: PhaseResult): number {
  return result.cpu.byRole.filter((role) => role.label !== OTHER_POSTGRES).reduce((sum, role) => sum + role.seconds, 0) / result.cpu.wallSeconds;
}

/** CPU µs per answered request above the idle cost, summed over the replicas, the workers and the database backends. */
function cpuSummary(result: PhaseResult): string {
  const groups: [string, (label: string) => boolean][] = [
    ['replicas', (label) => label.startsWith('replica')],
    ['workers', (label) => label.startsWith('worker')],
    ['PostgreSQL', (label) => label.startsWith('PostgreSQL backends')],
    ['haproxy', (label) => label === 'haproxy'],
  ];
  return groups
    .map(([name, member]) => {
      const seconds = result.cpu.byRole
        .filter((role) => member(role.label))
        .reduce((sum, role) => sum + role.seconds - (result.idle.get(role.label) ?? 0) * result.cpu.wallSeconds, 0);
      return `${name} ${formatNumber((seconds * 1e6) / result.answered)} us`;
    })
    .join(', ');
}

function failures(result: PhaseResult): string[] {
  const v = result.verification;
  const found: string[] = [];
  const lost = v.lostProjects + v.lostVariables + v.lostEdits + v.lostDeployments;
  if (lost > 0) found.push(`${lost} acknowledged writes lost`);
  if (v.doubleJobs.length + v.doubleTasks.length > 0) found.push(`${v.doubleJobs.length + v.doubleTasks.length} jobs or agent tasks run twice`);
  if (v.stuck.length > 0) found.push(`${v.stuck.length} deployments stuck`);
  return found.map((line) => `${result.replicas} replicas: ${line}`);
}

async function main(): Promise<void> {
  const serverUrl = process.env.SLIPWAY_BENCH_DATABASE_URL?.trim() || DEFAULT_DATABASE_SERVER;
  const counts = [settings.replicas, ...Array.from({ length: settings.replicas - 1 }, (_, index) => index + 1)];
  console.log(
    `Slipway scale benchmark: node ${process.version}, ${cpus().length} CPUs shared by every process below and anything else running; ` +
      `${settings.organizations} organizations x ${settings.environmentsPerOrganization} environments, ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured per phase, replicas ${counts.join(', ')}`,
  );
  console.log(`load average before: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);

  const database = await scratchPostgresDatabase(bench, serverUrl, 'slipway_bench_scale');
  const environment: ScaleEnvironment = { root: ROOT, scratchDir, databaseUrl: database.url, secretKey: randomBytes(32).toString('hex') };
  log(`scratch database ${database.name}; bootstrapping ${settings.organizations} organizations with the CLI`);
  const owners = await bootstrapOrganizations(environment);

  const dataDir = (name: string): string => {
    const directory = path.join(scratchDir, name);
    mkdirSync(directory);
    return directory;
  };
  const workerOneDir = dataDir('worker-1');
  // The local agent's workloads and apps proxy outlive a stopped server by design: whatever runs under its data
  // directory at the end is killed before the directory goes.
  bench.onCleanUp(() => killProcessesUnder(workerOneDir));
  const workers = [
    await slipwayNode(environment, 'worker 1 (jobs + LOCAL agent)', workerOneDir, { runJobs: true, localAgent: true }),
    await slipwayNode(environment, 'worker 2 (jobs)', dataDir('worker-2'), { runJobs: true, localAgent: false }),
  ];
  for (const worker of workers) await worker.start();
  const replicaPool: SlipwayNode[] = [];
  for (let index = 1; index <= settings.replicas; index++) {
    replicaPool.push(await slipwayNode(environment, `replica ${index}`, dataDir(`replica-${index}`), { runJobs: false, localAgent: false }));
  }

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  bench.onCleanUp(() => client.end());

  let tenants: Tenant[] | undefined;
  let idle = new Map<string, number>();
  const results: PhaseResult[] = [];
  for (const count of counts) {
    const replicas = replicaPool.slice(0, count);
    for (const extra of replicaPool.slice(count)) await extra.stop();
    for (const replica of replicas) if (replica.current() === undefined) await replica.start();
    const balancer = await startBalancer(scratchDir, `haproxy-${count}`, replicas.map((replica) => replica.port));
    try {
      if (tenants === undefined) {
        log(`seeding ${settings.organizations} organizations through ${balancer.baseUrl}`);
        tenants = await seedTenants(balancer.baseUrl, owners);
        log(`measuring ${IDLE_SECONDS} s with no load`);
        idle = await measureIdle(cpuRoles(replicaPool, workers, balancer, scratchBackends(client, database.name)));
      }
      log(`phase: ${count} replica(s) behind ${balancer.baseUrl}`);
      results.push(
        await runPhase({
          replicas,
          workers,
          tenants,
          balancer,
          client,
          databaseName: database.name,
          withFault: count >= 2,
          tag: `r${count}`,
          idle,
        }),
      );
    } finally {
      await balancer.stop();
    }
  }

  console.log(`load average after: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
  for (const result of results) printPhase(result);

  console.log('');
  const single = results.find((result) => result.replicas === 1);
  for (const result of [...results].sort((a, b) => a.replicas - b.replicas)) {
    const rate = okPerSecond(result);
    const all = OPERATIONS.flatMap((operation) => result.load.byOperation[operation].latencies).sort((a, b) => a - b);
    const base = single === undefined ? undefined : okPerSecond(single).beforeFault;
    console.log(
      `${result.replicas} replica(s): ${formatNumber(rate.whole)} req/s over the window, ${formatNumber(rate.beforeFault)} before any kill` +
        `${base === undefined ? '' : ` (${formatNumber(rate.beforeFault / base, 2)}x one replica)`}, p99 ${formatNumber(percentile(all, 0.99), 1)} ms, ` +
        `machine busy ${formatNumber(result.cpu.machineSeconds / result.cpu.wallSeconds, 2)} of ${cpus().length} cores, ` +
        `${formatNumber(stackCoresOf(result), 2)} of them the stack's (${formatNumber(rate.whole / stackCoresOf(result), 1)} req/s per core it got); ` +
        `CPU per request above idle: ${cpuSummary(result)}`,
    );
  }
  const found = results.flatMap(failures);
  if (found.length > 0) {
    process.exitCode = 1;
    console.log(`CORRECTNESS: ${found.join('; ')}`);
  } else {
    console.log('correctness: 0 lost acknowledged writes, 0 jobs or agent tasks run twice, 0 deployments stuck, in every phase');
  }
}

await bench.run(main);
