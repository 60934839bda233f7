import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { processGroupMembers } from './process-table.ts';

/**
 * Which TCP ports a process group listens on, read from /proc (Linux): the sockets in LISTEN state of
 * /proc/<pid>/net/tcp and tcp6, matched by inode to the sockets the group's processes hold open (/proc/<pid>/fd).
 * The supervisor uses it while it waits for an instance's readiness, to tell an application listening on a port of its
 * own choosing (its declared internal port, a framework's default) from one that is merely slow. Workloads in the
 * bubblewrap sandbox have a PID namespace of their own but the host's network: the host sees their real pids in the
 * process group, and their sockets in its tables. Whatever cannot be read (no /proc, another uid's fds without root)
 * is left out silently: the answer is then smaller or undefined, never an error.
 */

const TCP_LISTEN = '0A';

/** Socket inode → local port of the listening TCP sockets of a network namespace (undefined when unreadable). */
function listeningSockets(pid: number): Map<string, number> | undefined {
  const sockets = new Map<string, number>();
  let readAny = false;
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      try {
        text = readFileSync(`/proc/net/${table}`, 'utf8');
      } catch {
        continue;
      }
    }
    readAny = true;
    // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …"; addresses are hex ADDR:PORT.
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const inode = fields[9];
      if (fields[3] !== TCP_LISTEN || local === undefined || inode === undefined || inode === '0') continue;
      const port = Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
      if (Number.isInteger(port) && port > 0) sockets.set(inode, port);
    }
  }
  return readAny ? sockets : undefined;
}

/** Inodes of the sockets a process holds open; empty when its fds cannot be read (gone, or another uid's). */
function socketInodes(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: string[] = [];
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1] !== undefined) inodes.push(match[1]);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/** The TCP ports the processes of a process group listen on, ascending; undefined where /proc cannot tell. */
export function listeningPortsOfProcessGroup(groupId: number): number[] | undefined {
  const members = processGroupMembers(groupId);
  if (members === undefined || members.length === 0) return undefined;
  const sockets = listeningSockets(members[0] as number);
  if (sockets === undefined) return undefined;
  const ports = new Set<number>();
  for (const pid of members) {
    for (const inode of socketInodes(pid)) {
      const port = sockets.get(inode);
      if (port !== undefined) ports.add(port);
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/**
 * Watches a starting instance for listening on other ports than the expected ones: `check()` answers the ports it
 * listens on instead once it has listened on some port(s), and on none of `expected`, for `graceMs` (a server may
 * open an admin or debugger port a moment before its main one). Scans /proc at most every `scanEveryMs`.
 */
export function wrongPortWatch(groupId: number, expected: readonly number[], options: { graceMs: number; scanEveryMs: number }): { check(): number[] | undefined } {
  let lastScan = 0;
  let elsewhereSince: number | undefined;
  let elsewhere: number[] = [];
  return {
    check(): number[] | undefined {
      const now = Date.now();
      if (now - lastScan >= options.scanEveryMs) {
        lastScan = now;
        const ports = listeningPortsOfProcessGroup(groupId);
        if (ports === undefined || ports.length === 0 || ports.some((port) => expected.includes(port))) {
          elsewhereSince = undefined;
        } else {
          elsewhereSince ??= now;
          elsewhere = ports;
        }
      }
      return elsewhereSince !== undefined && now - elsewhereSince >= options.graceMs ? elsewhere : undefined;
    },
  };
}
