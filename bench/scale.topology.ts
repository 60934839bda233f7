import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startServerProcess, trackChild, type ServerProcess } from './processes.ts';

/**
 * The processes of `npm run bench:scale` (bench/scale.bench.ts): API replicas, the two job workers and a real HAProxy
 * in front of the replicas. Every one is a tracked child of the bench (bench/processes.ts), so an error or a Ctrl-C
 * stops it like a success does.
 */

const HOST = '127.0.0.1';
const HAPROXY = '/usr/sbin/haproxy';
const READY_TIMEOUT_MS = 15_000;
/** A replica started again while the others are under load shares the cores with them: it may take a minute. */
const START_TIMEOUT_MS = 120_000;

export interface ScaleEnvironment {
  root: string;
  scratchDir: string;
  databaseUrl: string;
  /** One key for every process: a secret sealed by one replica is opened by any other and by the workers. */
  secretKey: string;
}

/** SLIPWAY_* settings inherited from the caller's shell must not leak into the processes under test. */
export function slipwayEnv(environment: ScaleEnvironment, dataDir: string, port: number, role: { runJobs: boolean; localAgent: boolean }): Record<string, string> {
  return {
    SLIPWAY_HOST: HOST,
    SLIPWAY_PORT: String(port),
    SLIPWAY_DATA_DIR: dataDir,
    SLIPWAY_DATABASE_URL: environment.databaseUrl,
    SLIPWAY_SECRET_KEY: environment.secretKey,
    SLIPWAY_LOG_LEVEL: 'warn',
    SLIPWAY_OIDC_ISSUER: '',
    SLIPWAY_OIDC_AUDIENCE: '',
    // Limiting stays on (its shared store is part of a request's cost behind several replicas) but far above what
    // the load sends: a throttled answer would measure the limit, not the replicas.
    SLIPWAY_RATE_LIMIT_PER_MINUTE: '100000000',
    SLIPWAY_EGRESS_IPS: '',
    SLIPWAY_RUN_JOBS: String(role.runJobs),
    SLIPWAY_LOCAL_AGENT: String(role.localAgent),
    SLIPWAY_LOCAL_POSTGRES_URL: '',
    // Any free port: the agent's apps proxy must not contend with a developer's server on 8000.
    SLIPWAY_APPS_PORT: '0',
  };
}

/** A Slipway process (src/main.ts, as `npm start` runs it) that can be killed with SIGKILL and started again on its port. */
export interface SlipwayNode {
  readonly label: string;
  readonly port: number;
  readonly dataDir: string;
  current(): ServerProcess | undefined;
  start(): Promise<ServerProcess>;
  /** `kill -9`: no drain, no clean-up of its own; answers once the process is gone. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function slipwayNode(
  environment: ScaleEnvironment,
  label: string,
  dataDir: string,
  role: { runJobs: boolean; localAgent: boolean },
): Promise<SlipwayNode> {
  const port = await freePort();
  const env = slipwayEnv(environment, dataDir, port, role);
  let server: ServerProcess | undefined;
  return {
    label,
    port,
    dataDir,
    current: () => server,
    async start() {
      server = await startServerProcess({ name: label, entry: 'src/main.ts', cwd: environment.root, env, host: HOST, port, readyPath: '/ips', readyTimeoutMs: START_TIMEOUT_MS });
      return server;
    },
    async kill() {
      const pid = server?.pid;
      if (pid === undefined) return;
      process.kill(pid, 'SIGKILL');
      // The kernel reaps it at once; the child's exit event follows. /proc tells when the pid is gone or a zombie.
      for (let waited = 0; waited < 5_000 && processRuns(pid); waited += 20) await sleep(20);
      server = undefined;
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
  };
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return true;
}

export interface Balancer {
  baseUrl: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * HAProxy in front of the replicas: round robin, a health check on the public `/ips` route every second (a killed
 * replica refuses the check's connection and is out after two, back after two good answers; a replica merely slow
 * under load has 5 s to answer, or the balancer would take every busy replica out and answer 503 itself), and
 * `retries` with `option redispatch`, so a
 * connection refused by a dead replica is tried on another one. Only connection failures are retried (HAProxy's
 * default `retry-on conn-failure`): a request that reached a replica that then died is answered 502, never sent
 * twice, because a create is not idempotent.
 */
export async function startBalancer(scratchDir: string, name: string, replicaPorts: readonly number[]): Promise<Balancer> {
  const port = await freePort();
  const configFile = path.join(scratchDir, `${name}.cfg`);
  const servers = replicaPorts.map((replicaPort, index) => `  server replica${index + 1} ${HOST}:${replicaPort} check`).join('\n');
  writeFileSync(
    configFile,
    `global
  maxconn 4096
  nbthread 1

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 60s
  retries 3
  option redispatch
  option http-keep-alive

frontend api
  bind ${HOST}:${port}
  default_backend replicas

backend replicas
  balance roundrobin
  option httpchk GET /ips
  http-check expect status 200
  timeout check 5s
  default-server inter 1s fall 2 rise 2
${servers}
`,
  );
  if (!existsSync(HAPROXY)) throw new Error(`the balancer ${HAPROXY} is not installed: apt-get install -y haproxy`);
  const child = trackChild(spawn(HAPROXY, ['-f', configFile, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const baseUrl = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`haproxy exited before it was ready:\n${output}`);
    try {
      const response = await fetch(`${baseUrl}/ips`);
      await response.arrayBuffer();
      if (response.ok) return { baseUrl, pid: child.pid, stop };
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not answer /ips within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await sleep(100);
  }
}
