import type { GitCredentials } from '../../git/git-access.ts';
import type { ServiceDeploymentSpec } from '../../protocol/agent-protocol.ts';
import type { ResourceLimits } from './workload-cgroups.ts';
import type { ReadinessCheck } from './probes.ts';

/**
 * The deployment spec of a service task as the local driver works with it: the protocol's ServiceDeploymentSpec
 * (src/protocol/agent-protocol.ts, checked against its schema when it arrived), in the driver's own terms.
 */
export interface SpecVariable {
  key: string;
  value: string;
  mountPath: string | null;
  secret: boolean;
}

export interface SpecGitSource {
  url: string;
  branch: string | undefined;
  commitId: string | undefined;
  rootPath: string;
  credentials: GitCredentials | undefined;
}

export interface SpecDatabase {
  type: string;
  username: string;
  password: string;
  databaseName: string;
}

export interface ServiceSpec {
  serviceId: string;
  kind: string;
  name: string;
  settings: Record<string, unknown>;
  variables: SpecVariable[];
  git: SpecGitSource | undefined;
  database: SpecDatabase | undefined;
  hostnames: string[];
  /** Where the other services of the environment reach it: its internal hostname and declared ports. */
  internal: { hostname: string; ports: number[] } | undefined;
  /** The environment's internal hostnames, by service: what the driver resolves in variables (local-placement.ts). */
  peers: Array<{ serviceId: string; hostname: string }>;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringAt(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new Error(`the deployment spec has no string at ${field}`);
  return value;
}

function emptyAsUndefined(value: string | null): string | undefined {
  return value === null || value === '' ? undefined : value;
}

export function serviceSpecOf(spec: ServiceDeploymentSpec): ServiceSpec {
  const { service, git, database } = spec;
  return {
    serviceId: service.id,
    kind: service.kind,
    name: service.name,
    settings: service.settings as Json,
    variables: spec.variables.map((variable) => ({
      key: variable.key,
      value: variable.value,
      mountPath: emptyAsUndefined(variable.mount_path) ?? null,
      secret: variable.secret,
    })),
    git:
      git === null
        ? undefined
        : {
            url: git.url,
            branch: emptyAsUndefined(git.branch),
            commitId: emptyAsUndefined(git.commit_id) ?? emptyAsUndefined(spec.git_commit_id),
            rootPath: emptyAsUndefined(git.root_path) ?? '/',
            credentials: git.credentials ?? undefined,
          },
    database:
      database === null
        ? undefined
        : { type: database.type, username: database.username, password: database.password, databaseName: database.database_name },
    hostnames: spec.routing.hostnames,
    internal: spec.routing.internal ?? undefined,
    peers: spec.routing.peers.map((peer) => ({ serviceId: peer.service_id, hostname: peer.hostname })),
  };
}

/**
 * Names the engine sets itself: PORT is the instance's port (chosen per instance for zero-downtime replacement), PWD
 * the shell's working directory. A variable of either name would be overridden, so it is left out of the
 * environment (keeping the environment equal to what the process really received, which re-adoption relies on).
 */
export const ENGINE_VARIABLES: ReadonlySet<string> = new Set(['PORT', 'PWD']);

/**
 * The variables a process gets as environment variables. A file variable (with a mount path) is there as the path
 * its content was written to (`mounted`, by key; see writeFileVariables); one not written is left out.
 */
export function variablesEnvironment(variables: readonly SpecVariable[], mounted: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of variables) {
    if (ENGINE_VARIABLES.has(variable.key)) continue;
    const value = variable.mountPath === null ? variable.value : mounted[variable.key];
    if (value !== undefined) env[variable.key] = value;
  }
  return env;
}

/** The part of the variables that may be written to disk (for a later on_stop / on_delete run): no secret value. */
export function nonSecretEnvironment(variables: readonly SpecVariable[], mounted: Readonly<Record<string, string>> = {}): Record<string, string> {
  return variablesEnvironment(
    variables.filter((variable) => !variable.secret),
    mounted,
  );
}

/** One shell word: safe in `/bin/sh -c` whatever it contains. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A command from an entrypoint and arguments (as a container would run them), as a shell line; undefined if empty. */
export function commandLine(entrypoint: unknown, args: unknown): string | undefined {
  const words = [
    ...(typeof entrypoint === 'string' && entrypoint.trim() !== '' ? [entrypoint] : []),
    ...(Array.isArray(args) ? args.filter((arg): arg is string => typeof arg === 'string') : []),
  ];
  return words.length === 0 ? undefined : words.map(shellQuote).join(' ');
}

/**
 * The readiness check of an application from its readiness probe. The probe's port is the service's declared
 * internal port; locally every instance listens on the PORT the engine gives it, so the probe checks that port.
 * exec and grpc probes have no local equivalent: the engine's default (a TCP connection to PORT) is used then.
 */
export function readinessOf(settings: Record<string, unknown>): ReadinessCheck | undefined {
  const healthchecks = isObject(settings.healthchecks) ? settings.healthchecks : {};
  const probe = isObject(healthchecks.readiness_probe) ? healthchecks.readiness_probe : undefined;
  const type = probe !== undefined && isObject(probe.type) ? probe.type : undefined;
  if (type === undefined) return undefined;
  if (type.kind === 'http') return { kind: 'http', path: typeof type.path === 'string' && type.path !== '' ? type.path : '/' };
  if (type.kind === 'tcp') return { kind: 'tcp' };
  if (type.kind === 'exec' && Array.isArray(type.command) && type.command.length > 0 && type.command.every((word) => typeof word === 'string')) {
    return { kind: 'exec', command: type.command as string[] };
  }
  // grpc: the engine's default, a TCP connection to the instance's port.
  return undefined;
}

/** A workload's limits: settings.memory in MB and settings.cpu in millicores, where they are usable. */
export function resourceLimitsOf(settings: Record<string, unknown>): ResourceLimits {
  const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined);
  return { memoryMb: positive(settings.memory), cpuMillicores: positive(settings.cpu) };
}

/** A lifecycle event of a job: its command, or undefined for the job's default command (as an image's CMD). */
export interface JobEvent {
  command: string | undefined;
}

export interface JobCommands {
  source: 'git' | 'image';
  cron: { pattern: string; timezone: string; command: string | undefined } | undefined;
  onStart: JobEvent | undefined;
  onStop: JobEvent | undefined;
  onDelete: JobEvent | undefined;
  /** settings.max_duration_seconds: the longest one run may take. */
  maxDurationSeconds: number;
}

/** What a JOB runs, from its stored settings (services.kind-job.ts). */
export function jobCommandsOf(settings: Record<string, unknown>): JobCommands {
  const source = isObject(settings.source) && settings.source.kind === 'image' ? 'image' : 'git';
  const schedule = isObject(settings.schedule) ? settings.schedule : {};
  const event = (value: unknown): JobEvent | undefined => (isObject(value) ? { command: commandLine(value.entrypoint, value.arguments) } : undefined);
  const cronjob = schedule.kind === 'CRON' && isObject(schedule.cronjob) ? schedule.cronjob : undefined;
  const maxDuration = settings.max_duration_seconds;
  return {
    source,
    cron:
      cronjob === undefined
        ? undefined
        : {
            pattern: stringAt(cronjob.scheduled_at, 'service.settings.schedule.cronjob.scheduled_at'),
            timezone: typeof cronjob.timezone === 'string' ? cronjob.timezone : 'Etc/UTC',
            command: commandLine(cronjob.entrypoint, cronjob.arguments),
          },
    onStart: event(schedule.on_start),
    onStop: event(schedule.on_stop),
    onDelete: event(schedule.on_delete),
    maxDurationSeconds: typeof maxDuration === 'number' && maxDuration > 0 ? maxDuration : 300,
  };
}
