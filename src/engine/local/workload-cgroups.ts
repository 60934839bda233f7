import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Resource limits of workloads through the kernel's control groups, where this host lets the agent write them.
 *
 * Each service with limits gets a group of its own, `slipway/<service id>`, under the agent's own group in each
 * hierarchy (so an agent that is itself limited, in a container or a systemd unit, keeps its workloads inside its own
 * budget). A command joins the group before it starts anything (`joinArgv`: a shell writes its own pid, then execs),
 * so every process it forks — the sandbox, the runtime, whatever the workload starts — is counted and bounded:
 *   - memory: the group's resident and swap use together at most the service's `memory` MB; past it the kernel
 *     reclaims, then kills inside the group (cgroup v2: the whole group, memory.oom.group). The count of such kills
 *     (`oomKills`) lets the supervisor say why an instance died.
 *   - CPU: at most `cpu` millicores (`cpu: 500` is half of one CPU) per 100 ms period, whatever the host's load.
 *
 * Two layouts, found from /proc/self/cgroup and the mounts:
 *   - v2 (unified): the agent's group must be able to hand the memory and cpu controllers down, which the kernel
 *     allows only to a group without processes of its own, or to the root of a cgroup namespace (a container). A
 *     systemd unit with `Delegate=yes` whose agent runs in a leaf of its own qualifies.
 *   - v1 (a hierarchy per controller, as on this project's CI hosts): the memory and cpu hierarchies need only be
 *     writable.
 * Where neither works, `unavailable` says why and the agent falls back to sampling memory (memory-sampler.ts); CPU is
 * then not limited (a CPU-seconds rlimit would kill a long-running service, not slow it down).
 */

export interface ResourceLimits {
  memoryMb?: number | undefined;
  cpuMillicores?: number | undefined;
}

/** A service's group: the files a process writes its pid to in order to join, and its OOM-kill count. */
export interface CgroupPlacement {
  readonly version: 'v1' | 'v2';
  readonly limits: ResourceLimits;
  readonly procsFiles: readonly string[];
  /** How many processes the kernel killed in this group for its memory limit, ever. */
  oomKills(): number;
}

interface Layout {
  version: 'v1' | 'v2';
  /** The directory under which service groups live, per controller (v2: one directory for both). */
  memory: string;
  cpu: string;
}

const PARENT_NAME = 'slipway';
const CPU_PERIOD_US = 100_000;
/** The kernel's smallest CFS quota (1 ms per period). */
const MIN_CPU_QUOTA_US = 1_000;

/** Joins every group named before `--`, then runs the command after it (exit 125 when a group refuses the pid). */
const JOIN_SCRIPT = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

export interface WorkloadCgroupsOptions {
  /** What /proc/self/cgroup says (read unless given). */
  selfCgroup?: string;
  /** What /proc/self/mounts says (read unless given). */
  mounts?: string;
}

export class WorkloadCgroups {
  /** Why limits cannot go through cgroups on this host; undefined when they can. */
  readonly unavailable: string | undefined;
  private readonly layout: Layout | undefined;

  /**
   * The services this agent placed. Agents of other data directories on the host share the `slipway` group: tidying
   * only these never removes another agent's group between its creation and its process joining it.
   */
  private readonly placed = new Set<string>();

  constructor(options: WorkloadCgroupsOptions = {}) {
    const found = findLayout(options.selfCgroup ?? readOr('/proc/self/cgroup'), options.mounts ?? readOr('/proc/self/mounts'));
    this.layout = 'unavailable' in found ? undefined : found;
    this.unavailable = 'unavailable' in found ? found.unavailable : undefined;
  }

  get version(): 'v1' | 'v2' | undefined {
    return this.layout?.version;
  }

  /**
   * Creates (or updates) the service's group with these limits; undefined when the service has none or this host
   * cannot. Throws when the host's groups refuse a write they accepted at start (the deployment fails and says so).
   */
  place(serviceId: string, limits: ResourceLimits): CgroupPlacement | undefined {
    if (this.layout === undefined || (limits.memoryMb === undefined && limits.cpuMillicores === undefined)) return undefined;
    this.placed.add(serviceId);
    return placeIn(this.layout, serviceId, limits);
  }

  /** The argv that runs `command` inside the placement's groups. */
  joinArgv(placement: CgroupPlacement, command: readonly string[]): string[] {
    return ['/bin/sh', '-c', JOIN_SCRIPT, 'sh', ...placement.procsFiles, '--', ...command];
  }

  /** Removes a deleted service's groups (the kernel refuses while a process is still in one: they stay then). */
  release(serviceId: string): void {
    if (this.layout !== undefined) releaseIn(this.layout, serviceId);
    this.placed.delete(serviceId);
  }

  /**
   * At agent shutdown: removes the groups it placed that no process is in any more, and the `slipway` group when
   * that empties it. Groups of workloads that keep running for the next agent stay, and so do other agents' groups.
   */
  tidy(): void {
    const layout = this.layout;
    if (layout === undefined) return;
    for (const serviceId of this.placed) releaseIn(layout, serviceId);
    this.placed.clear();
    for (const parent of new Set([layout.memory, layout.cpu])) {
      try {
        rmdirSync(parent);
      } catch {
        // Still holding groups (running workloads, another agent's): it stays.
      }
    }
  }
}

function groupsOf(layout: Layout, serviceId: string): { memory: string; cpu: string; all: string[] } {
  const memory = join(layout.memory, serviceId);
  const cpu = join(layout.cpu, serviceId);
  return { memory, cpu, all: [...new Set([memory, cpu])] };
}

function placeIn(layout: Layout, serviceId: string, limits: ResourceLimits): CgroupPlacement {
  const groups = groupsOf(layout, serviceId);
  for (const group of groups.all) mkdirSync(group, { recursive: true });
  if (layout.version === 'v2') {
    writeControl(groups.memory, 'memory.max', limits.memoryMb === undefined ? 'max' : String(bytesOf(limits.memoryMb)));
    writeControl(groups.memory, 'memory.swap.max', limits.memoryMb === undefined ? 'max' : '0', { optional: true });
    writeControl(groups.memory, 'memory.oom.group', '1', { optional: true });
    writeControl(groups.cpu, 'cpu.max', `${limits.cpuMillicores === undefined ? 'max' : quotaOf(limits.cpuMillicores)} ${CPU_PERIOD_US}`);
  } else {
    writeMemoryLimitV1(groups.memory, limits.memoryMb === undefined ? -1 : bytesOf(limits.memoryMb));
    writeControl(groups.cpu, 'cpu.cfs_period_us', String(CPU_PERIOD_US));
    writeControl(groups.cpu, 'cpu.cfs_quota_us', limits.cpuMillicores === undefined ? '-1' : String(quotaOf(limits.cpuMillicores)));
  }
  const eventsFile = join(groups.memory, layout.version === 'v2' ? 'memory.events' : 'memory.oom_control');
  return {
    version: layout.version,
    limits: { ...limits },
    procsFiles: groups.all.map((group) => join(group, 'cgroup.procs')),
    oomKills: () => counterIn(readOr(eventsFile), 'oom_kill'),
  };
}

function releaseIn(layout: Layout, serviceId: string): void {
  for (const group of groupsOf(layout, serviceId).all) {
    try {
      rmdirSync(group);
    } catch {
      // Gone already, or busy with a process that outlived its stop: harmless, and emptied by the next release.
    }
  }
}

/** One line for a deployment's log: how the service's limits are held. */
export function describeLimits(limits: ResourceLimits, placement: CgroupPlacement | undefined, unavailable: string | undefined): string | undefined {
  const held = [
    limits.memoryMb === undefined ? undefined : `memory ${limits.memoryMb} MB`,
    limits.cpuMillicores === undefined ? undefined : `CPU ${limits.cpuMillicores}m`,
  ].filter((part): part is string => part !== undefined);
  if (held.length === 0) return undefined;
  if (placement !== undefined) return `resource limits: ${held.join(', ')}, held by the kernel (cgroup ${placement.version})`;
  const memory = limits.memoryMb === undefined ? '' : `memory ${limits.memoryMb} MB held by sampling the process group every 500 ms`;
  const cpu = limits.cpuMillicores === undefined ? '' : 'CPU not limited';
  return `resource limits: ${[memory, cpu].filter((part) => part !== '').join('; ')} (no writable cgroup on this host: ${unavailable ?? 'unknown'})`;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function bytesOf(megabytes: number): number {
  return Math.floor(megabytes * 1024 * 1024);
}

function quotaOf(millicores: number): number {
  return Math.max(MIN_CPU_QUOTA_US, Math.round((millicores / 1000) * CPU_PERIOD_US));
}

function writeControl(group: string, file: string, value: string, options: { optional?: boolean } = {}): void {
  const path = join(group, file);
  if (options.optional === true && !existsSync(path)) return;
  try {
    writeFileSync(path, value);
  } catch (error) {
    throw new Error(`cannot set ${file} of the control group ${group} to ${value}: ${(error as Error).message}`);
  }
}

/**
 * v1 refuses a memory limit above the memory+swap limit, and a memory+swap limit below the memory limit: so memory+swap
 * is lifted first, the memory limit set, then memory+swap set to the same (no swapping past the limit).
 */
function writeMemoryLimitV1(group: string, bytes: number): void {
  const swap = join(group, 'memory.memsw.limit_in_bytes');
  const hasSwapAccounting = existsSync(swap);
  if (hasSwapAccounting) writeControl(group, 'memory.memsw.limit_in_bytes', '-1');
  writeControl(group, 'memory.limit_in_bytes', String(bytes));
  if (hasSwapAccounting) writeControl(group, 'memory.memsw.limit_in_bytes', String(bytes));
}

function counterIn(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  const value = Number(line?.slice(name.length + 1));
  return Number.isFinite(value) ? value : 0;
}

interface MountedHierarchy {
  mountPoint: string;
  type: string;
  options: string[];
}

function cgroupMounts(mounts: string): MountedHierarchy[] {
  return mounts
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'cgroup' || fields[2] === 'cgroup2')
    .map((fields) => ({ mountPoint: unescapeMountPath(fields[1] ?? ''), type: fields[2] ?? '', options: (fields[3] ?? '').split(',') }));
}

/** /proc/self/mounts escapes spaces and tabs in paths as octal. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The agent's own group in each hierarchy: `hierarchy-id:controllers:path` lines (v2: `0::path`). */
function ownGroups(selfCgroup: string): { unified: string | undefined; byController: Map<string, string> } {
  const byController = new Map<string, string>();
  let unified: string | undefined;
  for (const line of selfCgroup.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    const [, id, controllers, path] = match as unknown as [string, string, string, string];
    if (id === '0' && controllers === '') unified = path;
    for (const controller of controllers.split(',')) if (controller !== '') byController.set(controller, path);
  }
  return { unified, byController };
}

function findLayout(selfCgroup: string, mounts: string): Layout | { unavailable: string } {
  const hierarchies = cgroupMounts(mounts);
  const own = ownGroups(selfCgroup);
  const v2 = hierarchies.find((mount) => mount.type === 'cgroup2');
  if (v2 !== undefined && own.unified !== undefined) {
    const controllers = readOr(join(v2.mountPoint, 'cgroup.controllers')).trim().split(/\s+/);
    if (controllers.includes('memory') && controllers.includes('cpu')) return unifiedLayout(join(v2.mountPoint, own.unified));
  }
  const memoryMount = hierarchies.find((mount) => mount.type === 'cgroup' && mount.options.includes('memory'));
  const cpuMount = hierarchies.find((mount) => mount.type === 'cgroup' && mount.options.includes('cpu'));
  const memoryPath = own.byController.get('memory');
  const cpuPath = own.byController.get('cpu');
  if (memoryMount === undefined || cpuMount === undefined || memoryPath === undefined || cpuPath === undefined) {
    return { unavailable: 'no cgroup hierarchy with the memory and cpu controllers is mounted' };
  }
  const layout: Layout = { version: 'v1', memory: join(memoryMount.mountPoint, memoryPath, PARENT_NAME), cpu: join(cpuMount.mountPoint, cpuPath, PARENT_NAME) };
  try {
    for (const directory of new Set([layout.memory, layout.cpu])) mkdirSync(directory, { recursive: true });
    return probe(layout);
  } catch (error) {
    return { unavailable: `the agent cannot create control groups (${(error as Error).message}); run it as root with the cgroup file system writable` };
  }
}

/** v2: the controllers are handed down from the agent's group to `slipway`, then to each service's group. */
function unifiedLayout(ownGroup: string): Layout | { unavailable: string } {
  const parent = join(ownGroup, PARENT_NAME);
  try {
    writeFileSync(join(ownGroup, 'cgroup.subtree_control'), '+memory +cpu');
    mkdirSync(parent, { recursive: true });
    writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory +cpu');
    return probe({ version: 'v2', memory: parent, cpu: parent });
  } catch (error) {
    return {
      unavailable: `the agent's control group ${ownGroup} cannot hand the memory and cpu controllers down (${(error as Error).message}): run the agent in a delegated group of its own (systemd: Delegate=yes), or as the root of a container's cgroup namespace`,
    };
  }
}

/** A group created, limited and removed again: what every deployment will do, tried once at start. */
function probe(layout: Layout): Layout {
  const name = `.probe-${process.pid}`;
  try {
    placeIn(layout, name, { memoryMb: 64, cpuMillicores: 100 });
  } finally {
    releaseIn(layout, name);
  }
  return layout;
}
