import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/**
 * What the kernel says about processes, read from /proc (Linux). The supervisor needs more than `kill(pid, 0)`:
 * a pid can be reused by an unrelated process after a restart of the agent, and a zombie still answers `kill 0`.
 * Where /proc is missing, the functions fall back to signal 0 and cannot tell reuse apart.
 */
interface ProcStat {
  state: string;
  processGroup: number;
  /** Clock ticks since boot at which the process started: with the pid, it identifies one process for good. */
  startTime: string;
  /** Resident set size, in pages. */
  residentPages: number;
}

function readStat(pid: number): ProcStat | undefined | 'unsupported' {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return readdirExists('/proc/self') ? undefined : 'unsupported';
    return undefined;
  }
  // The command name is in parentheses and may itself contain spaces and parentheses: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const processGroup = Number(fields[2]);
  const startTime = fields[19];
  const residentPages = Number(fields[21]);
  if (state === undefined || startTime === undefined || !Number.isInteger(processGroup)) return undefined;
  return { state, processGroup, startTime, residentPages: Number.isInteger(residentPages) ? residentPages : 0 };
}

function readdirExists(path: string): boolean {
  try {
    readdirSync(path);
    return true;
  } catch {
    return false;
  }
}

function signalZeroAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The start time to record beside a pid (undefined without /proc). */
export function processStartTime(pid: number): string | undefined {
  const stat = readStat(pid);
  return typeof stat === 'object' ? stat.startTime : undefined;
}

/** True while `pid` runs and is not a zombie; with `startTime`, only if it is still the same process. */
export function isProcessAlive(pid: number, startTime?: string): boolean {
  const stat = readStat(pid);
  if (stat === 'unsupported') return signalZeroAlive(pid);
  if (stat === undefined || stat.state === 'Z' || stat.state === 'X') return false;
  return startTime === undefined || stat.startTime === startTime;
}

/** Live (non-zombie) processes of a process group: what is left of a workload after its leader exited. */
export function processGroupAlive(groupId: number): boolean {
  if (!readdirExists('/proc/self')) return signalZeroAlive(-groupId);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (typeof stat === 'object' && stat.processGroup === groupId && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

/** The live (non-zombie) processes of a process group, as host pids; undefined without /proc. */
export function processGroupMembers(groupId: number): number[] | undefined {
  if (!readdirExists('/proc/self')) return undefined;
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (typeof stat === 'object' && stat.processGroup === groupId && stat.state !== 'Z' && stat.state !== 'X') members.push(Number(entry));
  }
  return members;
}

let pageBytes: number | undefined;

/** The page size of this machine, the unit of resident sizes in /proc/<pid>/stat (asked once; 4 KiB if unknown). */
function pageSize(): number {
  if (pageBytes === undefined) {
    try {
      const size = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim());
      pageBytes = Number.isInteger(size) && size > 0 ? size : 4096;
    } catch {
      pageBytes = 4096;
    }
  }
  return pageBytes;
}

/**
 * Resident memory of every process group, summed over its live processes, in bytes; undefined without /proc. One
 * pass over /proc serves every workload whose memory limit is checked at that moment.
 */
export function residentBytesByProcessGroup(): Map<number, number> | undefined {
  if (!readdirExists('/proc/self')) return undefined;
  const pages = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (typeof stat !== 'object' || stat.state === 'Z' || stat.state === 'X') continue;
    pages.set(stat.processGroup, (pages.get(stat.processGroup) ?? 0) + stat.residentPages);
  }
  const bytes = pageSize();
  return new Map([...pages].map(([group, count]) => [group, count * bytes]));
}

/** Sends a signal, ignoring "no such process" (it already ended). */
export function sendSignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
