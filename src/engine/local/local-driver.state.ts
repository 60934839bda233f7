import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalDatabaseEngine } from './database-servers.ts';
import type { ReadinessCheck } from './probes.ts';
import type { ResourceLimits } from './workload-cgroups.ts';

/**
 * The local driver's record of each service it runs: `<stateDir>/services/<serviceId>.json`, written after every
 * action so that a new agent (recover) knows what to re-adopt and a delete task (which has no spec) knows what to tear
 * down. It never holds a secret: no password, no token, and of the variables only the non-secret ones (for a later
 * on_stop / on_delete run). The environment of a running process, secrets included, is read back from the process
 * itself (/proc/<pid>/environ) when it is re-adopted.
 */
export interface ApplicationRecord {
  /** The instance id of the running instance (the task id that started it). */
  instanceId: string;
  sourceDir: string;
  startCommand: string;
  hostnames: string[];
  /** Its own loopback address and internal ports (absent in records of earlier agents, or without one). */
  internal?: { address: string; ports: number[] } | undefined;
  readiness: ReadinessCheck | undefined;
  memoryLimitMb: number | undefined;
  /** Absent in records of earlier agents. */
  cpuMillicores?: number | undefined;
  /** How long a stop waits after SIGTERM (deployment.termination_grace_period_seconds); absent: the supervisor's. */
  stopTimeoutMs?: number | undefined;
  /** false: plain HTTP to its names is not redirected to HTTPS (network.ingress.force_ssl_redirect). */
  httpsRedirect?: boolean | undefined;
}

export interface DatabaseRecord {
  engine: LocalDatabaseEngine;
  /** LOCAL: a server of our own under `dataDir`; EXTERNAL: a role and a database on SLIPWAY_LOCAL_POSTGRES_URL. */
  mode: 'LOCAL' | 'EXTERNAL';
  processName: string;
  dataDir: string;
  username: string;
  databaseName: string;
  /** Where it listens on this host: its server's port, or the shared server's. */
  port: number | undefined;
  /** Its own address and declared port, forwarded to `port` (absent in records of earlier agents). */
  internal?: { address: string; ports: number[] } | undefined;
}

export interface JobRecord {
  sourceDir: string;
  /** What an event without a command of its own runs (the build plan's start command). */
  defaultCommand: string;
  /** The process that fires the cron schedule (CRON jobs). */
  cron: { processName: string; pattern: string; timezone: string; command: string } | undefined;
  onStop: string | undefined;
  onDelete: string | undefined;
  maxDurationSeconds: number;
  /** Its memory and CPU limits, for every run (absent in records of earlier agents). */
  limits?: ResourceLimits | undefined;
  /** The non-secret variables, for on_stop / on_delete runs without a spec. */
  environment: Record<string, string>;
}

export interface ServiceRecord {
  serviceId: string;
  kind: 'APPLICATION' | 'DATABASE' | 'JOB';
  name: string;
  /** Whether the service should be running (false after a stop: recover leaves it stopped). */
  running: boolean;
  application?: ApplicationRecord;
  database?: DatabaseRecord;
  job?: JobRecord;
  updatedAt: string;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export class ServiceRecords {
  private readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'services');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  private file(serviceId: string): string {
    if (!ID_PATTERN.test(serviceId)) throw new Error(`"${serviceId}" cannot name a service record`);
    return join(this.dir, `${serviceId}.json`);
  }

  read(serviceId: string): ServiceRecord | undefined {
    try {
      return JSON.parse(readFileSync(this.file(serviceId), 'utf8')) as ServiceRecord;
    } catch {
      return undefined;
    }
  }

  write(record: Omit<ServiceRecord, 'updatedAt'>): void {
    const path = this.file(record.serviceId);
    writeFileSync(`${path}.tmp`, JSON.stringify({ ...record, updatedAt: new Date().toISOString() }, null, 2), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  }

  remove(serviceId: string): void {
    rmSync(this.file(serviceId), { force: true });
  }

  list(): ServiceRecord[] {
    return readdirSync(this.dir)
      .filter((name) => name.endsWith('.json'))
      .map((name) => this.read(name.slice(0, -'.json'.length)))
      .filter((record): record is ServiceRecord => record !== undefined);
  }
}

/**
 * The environment a live process was started with, read from /proc (memory, not disk), less the names the engine
 * or the shell set themselves; undefined when the process is gone or unreadable.
 */
export function processEnvironment(pid: number, engineNames: ReadonlySet<string>): Record<string, string> | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const entry of raw.split('\0')) {
    const equals = entry.indexOf('=');
    if (equals <= 0) continue;
    const key = entry.slice(0, equals);
    if (!engineNames.has(key)) env[key] = entry.slice(equals + 1);
  }
  return env;
}
