import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandRegistry } from './command-registry.ts';
import { runCommand, type OutputStream } from './run-command.ts';

/**
 * The application builder: from a checked-out source directory to the commands that build it and the command that
 * starts it, then running the build steps with their output captured as the deployment's log.
 *
 * Detection, in order (the first that applies wins, and the plan says which one did):
 *   build  — the service's build command; else, with a package.json: `npm ci` when a lockfile exists (`npm install`
 *            without one, since `npm ci` refuses to run), skipped when the package declares no dependencies at all,
 *            then `npm run build` when a build script exists; else nothing to build.
 *   start  — the service's start command; else the Procfile's `web:` line; else `npm start` when package.json has a
 *            start script; else `node <main>` when package.json names an existing main file. Nothing found is a
 *            BuildError saying what to add.
 * Commands are shell lines (users write `npm run build && cp -r public dist`), run with /bin/sh in the source
 * directory, in a process group of their own so a timeout or a canceled deployment ends all of it.
 */
export interface BuildSettings {
  buildCommand?: string | undefined;
  startCommand?: string | undefined;
}

export type StartCommandSource = 'START_COMMAND' | 'PROCFILE' | 'PACKAGE_JSON_START' | 'PACKAGE_JSON_MAIN';

export interface BuildStep {
  command: string;
  /** Why this step is there, printed before it runs: "package-lock.json found". */
  reason: string;
}

export interface BuildPlan {
  steps: BuildStep[];
  startCommand: string;
  startSource: StartCommandSource;
}

/** A plan that cannot be made or a step that failed; the message is fit for a deployment's error message. */
export class BuildError extends Error {
  readonly output;
  constructor(message: string, output = '') {
    super(message);
    this.output = output;
    this.name = 'BuildError';
  }
}

interface PackageJson {
  scripts?: Record<string, unknown>;
  main?: unknown;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
  optionalDependencies?: Record<string, unknown>;
}

function readPackageJson(sourceDir: string): PackageJson | undefined {
  const path = join(sourceDir, 'package.json');
  if (!existsSync(path)) return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as PackageJson;
  } catch (error) {
    throw new BuildError(`package.json is not valid JSON: ${(error as Error).message}`);
  }
}

/** The command of a Procfile's `web:` process type, if any. */
export function procfileWebCommand(sourceDir: string): string | undefined {
  const path = join(sourceDir, 'Procfile');
  if (!existsSync(path)) return undefined;
  for (const line of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const match = /^web\s*:\s*(.+)$/.exec(line.trim());
    if (match?.[1] !== undefined && match[1].trim() !== '') return match[1].trim();
  }
  return undefined;
}

function hasScript(pkg: PackageJson, name: string): boolean {
  return typeof pkg.scripts?.[name] === 'string' && (pkg.scripts[name] as string).trim() !== '';
}

function dependencyCount(pkg: PackageJson): number {
  return [pkg.dependencies, pkg.devDependencies, pkg.optionalDependencies].reduce((count, group) => count + Object.keys(group ?? {}).length, 0);
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

export function planBuild(sourceDir: string, settings: BuildSettings = {}): BuildPlan {
  if (!existsSync(sourceDir) || !statSync(sourceDir).isDirectory()) throw new BuildError(`the source directory ${sourceDir} does not exist`);
  const pkg = readPackageJson(sourceDir);
  const steps: BuildStep[] = [];
  const buildCommand = nonEmpty(settings.buildCommand);
  if (buildCommand !== undefined) {
    steps.push({ command: buildCommand, reason: 'the service\'s build command' });
  } else if (pkg !== undefined) {
    if (dependencyCount(pkg) > 0) {
      const lockfile = ['package-lock.json', 'npm-shrinkwrap.json'].find((name) => existsSync(join(sourceDir, name)));
      steps.push(lockfile === undefined
        ? { command: 'npm install --no-audit --no-fund', reason: 'package.json without a lockfile' }
        : { command: 'npm ci --no-audit --no-fund', reason: `${lockfile} found` });
    }
    if (hasScript(pkg, 'build')) steps.push({ command: 'npm run build', reason: 'package.json has a build script' });
  }

  const startCommand = nonEmpty(settings.startCommand);
  if (startCommand !== undefined) return { steps, startCommand, startSource: 'START_COMMAND' };
  const procfile = procfileWebCommand(sourceDir);
  if (procfile !== undefined) return { steps, startCommand: procfile, startSource: 'PROCFILE' };
  if (pkg !== undefined && hasScript(pkg, 'start')) return { steps, startCommand: 'npm start', startSource: 'PACKAGE_JSON_START' };
  if (pkg !== undefined && typeof pkg.main === 'string' && existsSync(join(sourceDir, pkg.main))) {
    return { steps, startCommand: `node ${JSON.stringify(pkg.main)}`, startSource: 'PACKAGE_JSON_MAIN' };
  }
  throw new BuildError('no start command: set the service\'s start command, add a Procfile with a "web:" line, or a "start" script to package.json');
}

export interface RunBuildOptions {
  sourceDir: string;
  /** The whole environment of the build (base environment + the deployment's variables). */
  env: Readonly<Record<string, string>>;
  onLine?: (stream: OutputStream, line: string) => void;
  /** For the whole build; default 15 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Wraps each step's argv in the service's confinement (workload-sandbox.ts). */
  confine?: (command: readonly string[]) => string[];
  registry?: CommandRegistry;
}

/** Runs the plan's steps in order; the first failing step throws a BuildError naming it, with its last output lines. */
export async function runBuild(plan: BuildPlan, options: RunBuildOptions): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  for (const step of plan.steps) {
    options.onLine?.('stdout', `$ ${step.command}   # ${step.reason}`);
    const result = await runCommand({
      command: options.confine === undefined ? ['/bin/sh', '-c', step.command] : options.confine(['/bin/sh', '-c', step.command]),
      cwd: options.sourceDir,
      env: options.env,
      timeoutMs: Math.max(1, deadline - Date.now()),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.registry === undefined ? {} : { registry: options.registry }),
      ...(options.onLine === undefined ? {} : { onLine: options.onLine }),
    });
    if (result.aborted) throw new BuildError(`the build was canceled during "${step.command}"`, result.tail);
    if (result.timedOut) throw new BuildError(`the build timed out during "${step.command}"`, result.tail);
    if (result.code !== 0) {
      const ending = result.code === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited with code ${result.code}`;
      throw new BuildError(`build step "${step.command}" ${ending}`, result.tail);
    }
  }
}

/** The argv that runs a start command (a shell line) under the supervisor. */
export function startCommandArgv(startCommand: string): string[] {
  return ['/bin/sh', '-c', startCommand];
}
