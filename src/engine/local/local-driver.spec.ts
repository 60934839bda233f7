import type { GitCredentials, GitProvider } from '../../git/git-access.ts';
import type { ResourceLimits } from './workload-cgroups.ts';
import type { ReadinessCheck } from './probes.ts';

/**
 * The deployment spec of a service task as the local driver reads it (GET /operator/v1/tasks/{id}/spec; the shape is
 * in docs/agent-protocol.md). The spec arrives as JSON: it is checked here field by field, so a malformed spec fails
 * the task with a message naming the field instead of a TypeError deep in a deployment.
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
  port: number | undefined;
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
  /** Where the other services of the environment reach it: its loopback address and internal ports (local clusters). */
  internal: { address: string; ports: number[] } | undefined;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(value: unknown, field: string): Json {
  if (!isObject(value)) throw new Error(`the deployment spec has no object at ${field}`);
  return value;
}

function stringAt(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new Error(`the deployment spec has no string at ${field}`);
  return value;
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return stringAt(value, field);
}

const GIT_PROVIDER_NAMES: readonly string[] = ['BITBUCKET', 'GITHUB', 'GITLAB'];

function gitSourceOf(value: unknown, deployedCommit: string | undefined): SpecGitSource | undefined {
  if (value === undefined || value === null) return undefined;
  const git = objectAt(value, 'git');
  const credentials = git.credentials === undefined || git.credentials === null ? undefined : objectAt(git.credentials, 'git.credentials');
  const provider = credentials === undefined ? undefined : stringAt(credentials.provider, 'git.credentials.provider');
  if (provider !== undefined && !GIT_PROVIDER_NAMES.includes(provider)) throw new Error(`the deployment spec names an unknown git provider ${provider}`);
  return {
    url: stringAt(git.url, 'git.url'),
    branch: optionalString(git.branch, 'git.branch'),
    commitId: optionalString(git.commit_id, 'git.commit_id') ?? deployedCommit,
    rootPath: optionalString(git.root_path, 'git.root_path') ?? '/',
    credentials: credentials === undefined ? undefined : { provider: provider as GitProvider, token: stringAt(credentials.token, 'git.credentials.token') },
  };
}

function databaseOf(value: unknown): SpecDatabase | undefined {
  if (value === undefined || value === null) return undefined;
  const database = objectAt(value, 'database');
  const port = database.port;
  if (port !== undefined && port !== null && !(typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65_536)) {
    throw new Error('the deployment spec has no valid port at database.port');
  }
  return {
    type: stringAt(database.type, 'database.type'),
    username: stringAt(database.username, 'database.username'),
    password: stringAt(database.password, 'database.password'),
    databaseName: stringAt(database.database_name, 'database.database_name'),
    port: typeof port === 'number' ? port : undefined,
  };
}

export function parseServiceSpec(raw: Record<string, unknown>): ServiceSpec {
  const service = objectAt(raw.service, 'service');
  const variables = Array.isArray(raw.variables) ? raw.variables : [];
  const routing = isObject(raw.routing) ? raw.routing : {};
  const hostnames = Array.isArray(routing.hostnames) ? routing.hostnames : [];
  return {
    serviceId: stringAt(service.id, 'service.id'),
    kind: stringAt(service.kind, 'service.kind'),
    name: stringAt(service.name, 'service.name'),
    settings: isObject(service.settings) ? service.settings : {},
    variables: variables.map((entry, index) => {
      const variable = objectAt(entry, `variables[${index}]`);
      return {
        key: stringAt(variable.key, `variables[${index}].key`),
        value: typeof variable.value === 'string' ? variable.value : '',
        mountPath: typeof variable.mount_path === 'string' && variable.mount_path !== '' ? variable.mount_path : null,
        secret: variable.secret === true,
      };
    }),
    git: gitSourceOf(raw.git, optionalString(raw.git_commit_id, 'git_commit_id')),
    database: databaseOf(raw.database),
    hostnames: hostnames.map((hostname, index) => stringAt(hostname, `routing.hostnames[${index}]`)),
    internal: internalEndpointOf(routing.internal),
  };
}

function internalEndpointOf(raw: unknown): ServiceSpec['internal'] {
  if (raw === undefined || raw === null) return undefined;
  const internal = objectAt(raw, 'routing.internal');
  const address = stringAt(internal.address, 'routing.internal.address');
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address)) throw new Error(`the deployment spec's routing.internal.address ${address} is not a loopback address`);
  const ports = Array.isArray(internal.ports) ? internal.ports : [];
  return {
    address,
    ports: ports.map((port, index) => {
      if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65_535) throw new Error(`the deployment spec has no port at routing.internal.ports[${index}]`);
      return port as number;
    }),
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
