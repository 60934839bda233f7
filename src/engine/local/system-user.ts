import { readFileSync } from 'node:fs';
import type { RunAs } from './run-command.ts';

/** The uid/gid of a system account, from /etc/passwd; undefined when there is no such account. */
export function lookupSystemUser(name: string): RunAs | undefined {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * Who a database server runs as. An agent running as a normal user runs it as itself (undefined). An agent running
 * as root must not: PostgreSQL and MariaDB refuse root, and a server process has no business holding root anyway. The
 * first existing account of `candidates` (the engine's own Debian account, then `nobody`) is used.
 */
export function unprivilegedUser(candidates: readonly string[]): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  for (const name of [...candidates, 'nobody']) {
    const user = lookupSystemUser(name);
    if (user !== undefined) return user;
  }
  throw new Error(`the agent runs as root and none of the accounts ${[...candidates, 'nobody'].join(', ')} exists to run a database server as`);
}
