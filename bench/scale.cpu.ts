import { readdirSync, readFileSync } from 'node:fs';
import { processCpuMicros } from './processes.ts';

/**
 * Where the CPU of a bench:scale phase goes, by role: each role names the processes it has right now (a replica
 * killed and started again is a new pid under the same role), sampled every SAMPLE_MS. A process already running
 * when the phase starts counts from its reading then; one that appears later (a restarted replica, a new
 * PostgreSQL backend) counts from zero, since all of its CPU was spent in the phase. A process that exits counts
 * up to its last sample, so at most one interval of a killed replica's work goes unseen.
 */

const SAMPLE_MS = 500;

export interface CpuRole {
  label: string;
  pids(): number[] | Promise<number[]>;
}

export interface CpuFigures {
  /** CPU seconds by role, in the order the roles were given. */
  byRole: { label: string; seconds: number }[];
  /** Busy CPU seconds of the whole machine (every core, every process, this bench's or not). */
  machineSeconds: number;
  wallSeconds: number;
}

/** Busy and total ticks of all cores from /proc/stat (user nice system idle iowait irq softirq steal …). */
function machineTicks(): { busy: number; total: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const fields = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** Every process whose command is `postgres` (the server's postmaster, background processes and backends). */
export function postgresPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return pids;
}

export interface CpuMeter {
  stop(): Promise<CpuFigures>;
}

export function startCpuMeter(roles: readonly CpuRole[], cores: number): CpuMeter {
  const startedAt = performance.now();
  const machineBefore = machineTicks();
  /** Per role and pid: the reading the phase counts from, and the latest. */
  const readings = roles.map(() => new Map<number, { from: number; last: number }>());
  let first = true;
  let sampling: Promise<void> = Promise.resolve();

  /** Never rejects: a role whose processes cannot be listed now (its database connection closed on Ctrl-C) is skipped. */
  async function sample(): Promise<void> {
    for (const [index, role] of roles.entries()) {
      const known = readings[index];
      if (known === undefined) continue;
      let pids: number[];
      try {
        pids = await role.pids();
      } catch {
        continue;
      }
      for (const pid of pids) {
        const micros = processCpuMicros(pid);
        if (micros === undefined) continue;
        const reading = known.get(pid);
        if (reading === undefined) known.set(pid, { from: first ? micros : 0, last: micros });
        else reading.last = micros;
      }
    }
    first = false;
  }

  sampling = sample();
  const timer = setInterval(() => {
    sampling = sampling.then(sample);
  }, SAMPLE_MS);
  // A run interrupted before the meter is stopped must still be able to exit.
  timer.unref();

  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      await sample();
      const machineAfter = machineTicks();
      const wallSeconds = (performance.now() - startedAt) / 1_000;
      const machineSeconds =
        machineBefore === undefined || machineAfter === undefined || machineAfter.total === machineBefore.total
          ? Number.NaN
          : ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * cores * wallSeconds;
      return {
        byRole: roles.map((role, index) => ({
          label: role.label,
          seconds: [...(readings[index]?.values() ?? [])].reduce((sum, reading) => sum + (reading.last - reading.from), 0) / 1e6,
        })),
        machineSeconds,
        wallSeconds,
      };
    },
  };
}
