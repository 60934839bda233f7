import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { WorkloadIsolation } from '../../config.ts';
import type { RunAs } from './run-command.ts';

/**
 * Workload confinement on this host: every process of a service — its build, its instances, its job runs and exec
 * probes — runs under a uid of its own inside a bubblewrap sandbox, so nothing one tenant deploys reads the control
 * plane's files, another service's files or another process's environment.
 *
 * The sandbox of one command (`bwrap`, then `setpriv` to drop to the service's uid):
 *   - the host's file system read-only (`--ro-bind / /`), a fresh /dev, a private writable /tmp and /var/tmp;
 *   - the protected paths (the data directory: database, key file, every service's files) replaced by empty
 *     directories, and the service's own directories bound back in: its checkouts and home writable, its file
 *     variables read-only; /root hidden the same way (the agent's own home when it runs as root), with the runtime
 *     the agent itself runs on (Node, when it lives under a hidden path) bound back read-only;
 *   - a PID namespace with its own /proc: the workload sees only its own processes, never another's environment;
 *   - the uid and gid of the service (a dynamic range, as systemd's DynamicUser: 61184–65519), no supplementary
 *     groups, no new privileges (setuid binaries do not raise it).
 * The network is the host's: applications listen on loopback ports the reverse proxy forwards to.
 *
 * The process group is the one the caller spawned the sandbox in (neither tool starts a session of its own), so
 * stopping the group stops everything in it; and when the command ends, the PID namespace ends with it, killing
 * whatever it left behind.
 *
 * Isolation `none` runs commands as they are, as the agent's own user: for a developer's laptop, where the agent
 * cannot be root. `strict` refuses to run anything when the host cannot confine (`unavailable` says why).
 */

/** The first and last uid of the dynamic range (systemd's DynamicUser range, unused by Debian's accounts). */
export const DYNAMIC_UID_FIRST = 61184;
export const DYNAMIC_UID_LAST = 65519;

export interface WorkloadAccess {
  /** The service's identity (its uid and gid). */
  identity: RunAs;
  /** Directories the workload may write (its checkouts, its home). */
  writable: readonly string[];
  /** Directories it may read (its file variables). */
  readable: readonly string[];
  /**
   * Code it runs that is not its own (the cron runner's scheduler package): read-only, and bound back where a hidden
   * or private path covers it — an installation under /tmp or /root. Never handed to the service's uid.
   */
  runtime?: readonly string[];
}

export interface WorkloadSandboxOptions {
  isolation: WorkloadIsolation;
  /** Hidden from every workload: the data directory (and the agent's state directory, when it lives elsewhere). */
  protectedPaths: readonly string[];
  /** Where the uid of each service is kept, so a service keeps its uid (and its files) across agent restarts. */
  identitiesFile: string;
  /** The bubblewrap executable; looked for in the system's directories unless given. */
  bwrapPath?: string;
}

export class WorkloadSandbox {
  readonly isolation: WorkloadIsolation;
  /** Why strict confinement cannot run on this host; undefined when it can (or when isolation is none). */
  readonly unavailable: string | undefined;
  private readonly protectedPaths: readonly string[];
  private readonly identitiesFile: string;
  private readonly tools: { bwrap: string; setpriv: string } | undefined;

  constructor(options: WorkloadSandboxOptions) {
    this.isolation = options.isolation;
    this.protectedPaths = options.protectedPaths;
    this.identitiesFile = options.identitiesFile;
    const probe = options.isolation === 'strict' ? probeConfinement(options.bwrapPath) : { tools: undefined, unavailable: undefined };
    this.tools = probe.tools;
    this.unavailable = probe.unavailable;
  }

  get confined(): boolean {
    return this.isolation === 'strict';
  }

  /** One line for a deployment's log: what confinement its workload runs under. */
  describe(identity: RunAs | undefined): string {
    if (!this.confined || identity === undefined) {
      return 'workload isolation: none — the workload runs as the agent\'s own user, unconfined (SLIPWAY_WORKLOAD_ISOLATION=none)';
    }
    return `workload isolation: strict — uid ${identity.uid}, its own PID namespace, read-only system, private /tmp, the data directory hidden`;
  }

  /** Throws the reason when strict isolation was asked for and this host cannot provide it. */
  requireAvailable(): void {
    if (this.unavailable !== undefined) {
      throw new Error(`workload isolation is strict, but this host cannot confine workloads: ${this.unavailable}. Fix that, or set SLIPWAY_WORKLOAD_ISOLATION=none to run them unconfined as the agent's user.`);
    }
  }

  /**
   * The uid and gid of a service, allocated on first use (the lowest free one of the range) and kept in the
   * identities file; undefined when workloads are not confined.
   */
  identityOf(serviceId: string): RunAs | undefined {
    if (!this.confined) return undefined;
    const identities = this.readIdentities();
    let uid = identities[serviceId];
    if (uid === undefined) {
      const taken = new Set(Object.values(identities));
      for (let candidate = DYNAMIC_UID_FIRST; candidate <= DYNAMIC_UID_LAST; candidate++) {
        if (!taken.has(candidate)) {
          uid = candidate;
          break;
        }
      }
      if (uid === undefined) throw new Error(`no uid is left in ${DYNAMIC_UID_FIRST}–${DYNAMIC_UID_LAST} for another service`);
      this.writeIdentities({ ...identities, [serviceId]: uid });
    }
    return { uid, gid: uid };
  }

  /** Frees a deleted service's uid for another service (its files are gone with it). */
  releaseIdentity(serviceId: string): void {
    if (!this.confined) return;
    const identities = this.readIdentities();
    if (!(serviceId in identities)) return;
    delete identities[serviceId];
    this.writeIdentities(identities);
  }

  /**
   * Gives the service's identity its directories: created when missing and owned by the service's uid; `handOver`
   * are paths the agent just wrote for it (a checkout, file variables), given to the uid with everything in them.
   * Only those are walked: a checkout already handed over keeps its owner, and its node_modules is not walked again.
   */
  prepareDirectories(access: WorkloadAccess, handOver: readonly string[] = []): void {
    if (!this.confined) return;
    for (const directory of [...access.writable, ...access.readable]) {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      chownSync(directory, access.identity.uid, access.identity.gid);
      // Its own, and nobody else's on this host: checkouts and build output are the tenant's.
      chmodSync(directory, 0o700);
    }
    for (const path of handOver) if (existsSync(path)) chownTree(path, access.identity);
  }

  /** The argv that runs `command` confined for a service (or the command itself when isolation is none). */
  wrap(command: readonly string[], access: WorkloadAccess | undefined): string[] {
    if (!this.confined || access === undefined) return [...command];
    this.requireAvailable();
    const tools = this.tools as { bwrap: string; setpriv: string };
    const args = [tools.bwrap, '--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--unshare-ipc', '--proc', '/proc'];
    for (const path of PRIVATE_TEMPORARY_DIRECTORIES) args.push('--perms', '1777', '--tmpfs', path);
    const hidden = [...this.protectedPaths, '/root'].filter((path) => existsSync(path));
    // Empty, and not even listable: what is bound back inside is reached by its path alone.
    for (const path of hidden) args.push('--perms', '0711', '--tmpfs', path);
    // Every path the sandbox mounts an empty file system on: what lives under one is gone unless bound back. Deepest
    // first, so a path under the data directory under /tmp is led to from the data directory's own mount.
    const covered = [...PRIVATE_TEMPORARY_DIRECTORIES, ...hidden].sort((a, b) => b.length - a.length);
    // Inside a covered path, the directories leading to what is bound back are made searchable, not listable
    // (bubblewrap would create them 0700, owned by root: the workload could not reach its own directory).
    const created = new Set<string>();
    const bindBack = (option: '--bind' | '--ro-bind', path: string): void => {
      const root = covered.find((candidate) => isInside(path, candidate) && path !== candidate);
      if (root !== undefined) {
        const ancestors: string[] = [];
        for (let parent = dirname(path); parent !== root && isInside(parent, root); parent = dirname(parent)) ancestors.unshift(parent);
        for (const ancestor of ancestors) {
          if (created.has(ancestor)) continue;
          created.add(ancestor);
          args.push('--perms', '0711', '--dir', ancestor);
        }
      }
      args.push(option, path, path);
    };
    // The runtime the workload may need again, when a covered path holds it (Node under /root/.cache, an
    // installation under /tmp).
    for (const path of [...runtimeDirectories(), ...(access.runtime ?? [])]) if (covered.some((root) => isInside(path, root))) bindBack('--ro-bind', path);
    for (const path of access.readable) bindBack('--ro-bind', path);
    for (const path of access.writable) bindBack('--bind', path);
    args.push('--', tools.setpriv, `--reuid=${access.identity.uid}`, `--regid=${access.identity.gid}`, '--clear-groups', '--no-new-privs', '--', ...command);
    return args;
  }

  private readIdentities(): Record<string, number> {
    try {
      return JSON.parse(readFileSync(this.identitiesFile, 'utf8')) as Record<string, number>;
    } catch {
      return {};
    }
  }

  private writeIdentities(identities: Record<string, number>): void {
    mkdirSync(dirname(this.identitiesFile), { recursive: true, mode: 0o700 });
    const temporary = `${this.identitiesFile}.tmp`;
    writeFileSync(temporary, JSON.stringify(identities), { mode: 0o600 });
    renameSync(temporary, this.identitiesFile);
  }
}

/** Writable by everyone, as on the host, and private to the sandbox. */
const PRIVATE_TEMPORARY_DIRECTORIES = ['/tmp', '/var/tmp'];

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root.endsWith('/') ? root : `${root}/`}`);
}

/** The installation prefix of the Node running the agent (bin/node's grandparent): workloads run the same runtime. */
function runtimeDirectories(): string[] {
  return [dirname(dirname(process.execPath))];
}

function chownTree(path: string, identity: RunAs): void {
  const stat = lstatSync(path);
  if (stat.uid !== identity.uid || stat.gid !== identity.gid) chownSync(path, identity.uid, identity.gid);
  if (!stat.isDirectory()) return;
  for (const entry of readdirSync(path)) chownTree(join(path, entry), identity);
}

function findTool(name: string): string | undefined {
  for (const directory of ['/usr/bin', '/bin', '/usr/sbin', '/usr/local/bin']) {
    const candidate = join(directory, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** What strict confinement needs, checked once: root (to give uids away), bubblewrap and setpriv that work here. */
function probeConfinement(bwrapPath: string | undefined): { tools: { bwrap: string; setpriv: string } | undefined; unavailable: string | undefined } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { tools: undefined, unavailable: 'the agent does not run as root, so it cannot run workloads under uids of their own' };
  }
  const bwrap = bwrapPath ?? findTool('bwrap');
  if (bwrap === undefined || !existsSync(bwrap)) return { tools: undefined, unavailable: 'bubblewrap is not installed (Debian: apt-get install bubblewrap)' };
  const setpriv = findTool('setpriv');
  if (setpriv === undefined) return { tools: undefined, unavailable: 'setpriv is not installed (Debian: util-linux)' };
  const trial = spawnSync(
    bwrap,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--proc', '/proc', '--', setpriv, `--reuid=${DYNAMIC_UID_LAST}`, `--regid=${DYNAMIC_UID_LAST}`, '--clear-groups', '--no-new-privs', '--', 'true'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (trial.status !== 0) {
    const said = `${trial.stderr ?? ''}`.trim().split('\n')[0] ?? '';
    return { tools: undefined, unavailable: `bubblewrap cannot create a sandbox here (${said === '' ? `exit ${trial.status}` : said}): mount and PID namespaces are needed` };
  }
  return { tools: { bwrap, setpriv }, unavailable: undefined };
}
