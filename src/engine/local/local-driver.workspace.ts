import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import type { GitAccess } from '../../git/git-access.ts';
import { normaliseRepositoryPath } from '../../git/system-git.ts';
import { planBuild, runBuild } from './app-builder.ts';
import type { CommandRegistry } from './command-registry.ts';
import { writeFileVariables } from './file-variables.ts';
import { variablesEnvironment, type ServiceSpec } from './local-driver.spec.ts';
import { baseEnvironment } from './process-supervisor.ts';
import { describeLimits, type CgroupPlacement, type ResourceLimits, type WorkloadCgroups } from './workload-cgroups.ts';
import type { WorkloadAccess, WorkloadSandbox } from './workload-sandbox.ts';
import { advancedInteger } from '../advanced-settings.ts';

/**
 * Each service's workspace on this host, for the local driver: its directories under the state directory
 * (`sources/<id>/<task>/` checkouts, `files/<id>/<task>/` file variables, `homes/<id>/` its HOME, and the output files
 * of its processes under `processes/`), how its commands run confined (the sandbox, its uid, its control groups), and
 * the steps every deployment of code shares — checking the commit out and building it, cancellably, and writing the
 * workload's environment.
 */

/** The process supervisor's directory of pid and output files (`<name>.pid.json`, `<name>.stdout.log`, …). */
export function processesDirOf(stateDir: string): string {
  return join(stateDir, 'processes');
}

/**
 * Whether a supervised process belongs to the service, by the names the local driver gives: its application instances
 * `<serviceId>.<instance>` (LocalApplications.processName), its database server `database-<serviceId>`, its cron
 * runner `cron-<serviceId>`.
 */
function isProcessOf(serviceId: string, name: string): boolean {
  return name.startsWith(`${serviceId}.`) || name === `database-${serviceId}` || name === `cron-${serviceId}`;
}

const OUTPUT_FILE = /^(.+)\.(stdout|stderr)\.log$/;

export interface Checkout {
  /** The task's checkout directory (removed when the deployment fails). */
  workDir: string;
  /** The directory to build and run in: the repository's root path inside the checkout. */
  buildDir: string;
}

export interface WorkloadEnvironment {
  env: Record<string, string>;
  /** The paths the task's file variables were written to, by key. */
  mounted: Record<string, string>;
  /** Removes the task's file variables (the deployment failed). */
  discard(): void;
}

export interface ServiceWorkspacesOptions {
  stateDir: string;
  sandbox: WorkloadSandbox;
  cgroups: WorkloadCgroups | undefined;
  git: GitAccess;
  /** Builds and job runs under way, for the next agent to end if this one dies. */
  commands: CommandRegistry;
  /** How often a running build asks whether its deployment was canceled. */
  cancelPollMs: number;
  trouble: (message: string) => void;
}

/**
 * Names a task's checkout and instance. A task leased again after an agent died mid-way (attempt 2…) gets names of
 * its own: the first attempt may have left an instance running from its checkout, which must not be deleted under it.
 */
export function runKeyOf(session: TaskSession): string {
  return session.task.attempt > 1 ? `${session.task.id}-${session.task.attempt}` : session.task.id;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createServiceWorkspaces(options: ServiceWorkspacesOptions) {
  const { stateDir, sandbox, cgroups, git, commands, cancelPollMs, trouble } = options;
  const sourcesOf = (serviceId: string): string => join(stateDir, 'sources', serviceId);
  const filesOf = (serviceId: string): string => join(stateDir, 'files', serviceId);
  const homeOf = (serviceId: string): string => join(stateDir, 'homes', serviceId);
  const processesDir = processesDirOf(stateDir);

  /** What a confined service may touch; undefined when workloads are not confined. */
  function accessOf(serviceId: string): WorkloadAccess | undefined {
    const identity = sandbox.identityOf(serviceId);
    if (identity === undefined) return undefined;
    return { identity, writable: [sourcesOf(serviceId), homeOf(serviceId)], readable: [filesOf(serviceId)] };
  }

  function confinementSpec(serviceId: string, runtime: readonly string[] = [], limits?: CgroupPlacement): { confine?: (command: readonly string[]) => string[] } {
    const confine = confinementOf(serviceId, runtime, limits);
    return confine === undefined ? {} : { confine };
  }

  /**
   * The argv transformation that runs a service's commands in its confinement, and inside its control groups when
   * `limits` placed it in some (joined first, so the sandbox and everything in it is counted).
   */
  function confinementOf(serviceId: string, runtime: readonly string[] = [], limits?: CgroupPlacement): ((command: readonly string[]) => string[]) | undefined {
    const access = accessOf(serviceId);
    const confined = access === undefined ? undefined : (command: readonly string[]) => sandbox.wrap(command, { ...access, runtime });
    if (limits === undefined || cgroups === undefined) return confined;
    return (command) => cgroups.joinArgv(limits, confined === undefined ? command : confined(command));
  }

  /** The service's control groups with its limits, when it has limits and this host lets the agent hold them so. */
  function placeLimits(serviceId: string, limits: ResourceLimits): CgroupPlacement | undefined {
    return cgroups?.place(serviceId, limits);
  }

  /** The environment every process of a service starts from: confined, its own home and the private /tmp. */
  function serviceBaseEnvironment(serviceId: string): Record<string, string> {
    return sandbox.confined ? { ...baseEnvironment(), HOME: homeOf(serviceId), TMPDIR: '/tmp' } : baseEnvironment();
  }

  /**
   * Before a service's processes run: strict isolation must be possible here; the service's directories exist and
   * belong to its uid (`handOver`: what the agent just wrote for it — a checkout, file variables — with all inside).
   */
  function prepareConfinement(session: TaskSession, serviceId: string, handOver: readonly string[] = [], limits: ResourceLimits = {}): void {
    sandbox.requireAvailable();
    const access = accessOf(serviceId);
    session.log('system', sandbox.describe(access?.identity));
    const held = describeLimits(limits, placeLimits(serviceId, limits), cgroups?.unavailable ?? 'the agent holds no control groups');
    if (held !== undefined) session.log('system', held);
    if (access !== undefined) sandbox.prepareDirectories(access, handOver);
  }

  /** Removes what earlier deployments of a service left under `root` (checkouts, file variables) except `keep`. */
  function removeSuperseded(root: string, keep: string | undefined): void {
    if (!existsSync(root)) return;
    for (const entry of readdirSync(root)) {
      if (join(root, entry) !== keep) rmSync(join(root, entry), { recursive: true, force: true });
    }
  }

  /**
   * The output files of the service's processes that ended: the supervisor appends to them while a process runs and
   * keeps them after it stopped (its lines were read and sent on by then). A process whose pid file is still there may
   * run (a stop that failed, an instance of a previous agent) and keeps its files; so does `keep`.
   */
  function removeProcessOutput(serviceId: string, keep?: string): void {
    if (!existsSync(processesDir)) return;
    for (const entry of readdirSync(processesDir)) {
      const name = OUTPUT_FILE.exec(entry)?.[1];
      if (name === undefined || name === keep || !isProcessOf(serviceId, name)) continue;
      if (existsSync(join(processesDir, `${name}.pid.json`))) continue;
      rmSync(join(processesDir, entry), { force: true });
    }
  }

  /**
   * Once a deployment serves: only its checkout (or the one it reuses), its file variables and the output of the
   * instance it started stay — a redeploy does not add the output files of every instance it replaced.
   */
  function removeOldSources(serviceId: string, keep: string | undefined, session: TaskSession): void {
    removeSuperseded(sourcesOf(serviceId), keep);
    removeSuperseded(filesOf(serviceId), join(filesOf(serviceId), runKeyOf(session)));
    removeProcessOutput(serviceId, `${serviceId}.${runKeyOf(session)}`);
  }

  /** Polls the control plane for a cancel while `work` runs; a cancel aborts the signal `work` was given. */
  async function cancellable<T>(session: TaskSession, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let polling = false;
    const timer = setInterval(() => {
      if (polling || controller.signal.aborted) return;
      polling = true;
      session
        .cancelRequested()
        .then((canceled) => {
          if (canceled) controller.abort();
        })
        .catch((error: unknown) => trouble(`task ${session.task.id}: could not ask whether it was canceled: ${messageOf(error)}`))
        .finally(() => {
          polling = false;
        });
    }, cancelPollMs);
    try {
      const result = await work(controller.signal);
      if (controller.signal.aborted) throw new TaskCanceled();
      return result;
    } catch (error) {
      if (controller.signal.aborted) throw new TaskCanceled();
      throw error;
    } finally {
      clearInterval(timer);
    }
  }


  /** Checks the spec's commit out into a fresh directory and runs the build plan; logs go to the deployment. */
  async function checkoutAndBuild(session: TaskSession, spec: ServiceSpec, startCommand: string | undefined, env: Record<string, string>): Promise<Checkout & { startCommand: string }> {
    const source = spec.git;
    if (source === undefined) throw new Error(`the deployment spec of ${spec.kind} ${spec.name} names no git repository`);
    const workDir = join(sourcesOf(spec.serviceId), runKeyOf(session));
    rmSync(workDir, { recursive: true, force: true });
    try {
      return await cancellable(session, async (signal) => {
        session.log('system', `checking out ${source.url} at ${source.commitId ?? (source.branch === undefined ? 'the default branch' : `the head of ${source.branch}`)}`);
        const commit = await git.checkout({ url: source.url, branch: source.branch, commitId: source.commitId, credentials: source.credentials, destination: workDir, signal });
        session.log('system', `checked out commit ${commit}`);
        const access = accessOf(spec.serviceId);
        if (access !== undefined) sandbox.prepareDirectories(access, [workDir]);
        const rootPath = normaliseRepositoryPath(source.rootPath);
        const buildDir = rootPath === '' ? workDir : join(workDir, rootPath);
        const plan = planBuild(buildDir, { startCommand });
        const confine = confinementOf(spec.serviceId);
        // build.timeout_max_sec bounds the whole build (its default, 30 minutes, comes with the spec).
        const timeoutSeconds = advancedInteger(spec.settings, 'build.timeout_max_sec');
        await runBuild(plan, {
          sourceDir: buildDir,
          env,
          signal,
          registry: commands,
          onLine: (stream, line) => session.log(stream, line),
          ...(confine === undefined ? {} : { confine }),
          ...(timeoutSeconds === undefined ? {} : { timeoutMs: timeoutSeconds * 1000 }),
        });
        return { workDir, buildDir, startCommand: plan.startCommand };
      });
    } catch (error) {
      rmSync(workDir, { recursive: true, force: true });
      throw error;
    }
  }


  /** The environment of the task's workload: its variables, file variables written under files/<serviceId>/<task>/. */
  function workloadEnvironment(session: TaskSession, spec: ServiceSpec): WorkloadEnvironment {
    const dir = join(filesOf(spec.serviceId), runKeyOf(session));
    const discard = () => rmSync(dir, { recursive: true, force: true });
    try {
      const mounted = writeFileVariables(dir, spec.variables);
      return { env: { ...serviceBaseEnvironment(spec.serviceId), ...variablesEnvironment(spec.variables, mounted) }, mounted, discard };
    } catch (error) {
      discard();
      throw error;
    }
  }

  /** Everything of a deleted service on this host: its directories, its processes' output, its uid, its control groups. */
  function removeWorkspace(serviceId: string): void {
    rmSync(sourcesOf(serviceId), { recursive: true, force: true });
    rmSync(filesOf(serviceId), { recursive: true, force: true });
    rmSync(homeOf(serviceId), { recursive: true, force: true });
    removeProcessOutput(serviceId);
    sandbox.releaseIdentity(serviceId);
    cgroups?.release(serviceId);
  }

  return {
    sourcesOf,
    filesOf,
    confinementOf,
    confinementSpec,
    placeLimits,
    serviceBaseEnvironment,
    prepareConfinement,
    removeOldSources,
    cancellable,
    checkoutAndBuild,
    workloadEnvironment,
    removeWorkspace,
  };
}
