import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive, processGroupAlive, processStartTime, sendSignal } from './process-table.ts';

/**
 * The commands an agent runs to their end (builds, job runs, lifecycle commands), each a process group of its own,
 * written down while they run: one small file per group, named by its leader's pid, with the kernel's start time
 * of that pid. An agent killed outright (kill -9, a crash, a power cut of its host's service manager) cannot end
 * them; the next agent over the same state directory does, at its start (`endLeftovers`): a build of a deployment
 * that is being retried must not keep running beside the retry, nor a job run whose duration limit died with the
 * agent. Long-running workloads are not here: the supervisor's pid files hand those over instead.
 */
const GROUP_EXIT_WAIT_MS = 3_000;

export class CommandRegistry {
  private readonly directory: string;

  constructor(directory: string) {
    this.directory = directory;
  }

  /** Records a command's process group (its leader's pid) while it runs; the returned function forgets it. */
  track(pid: number, description: string): () => void {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    const file = join(this.directory, `${pid}.json`);
    writeFileSync(file, JSON.stringify({ pid, startTime: processStartTime(pid), description }), { mode: 0o600 });
    return () => rmSync(file, { force: true });
  }

  /**
   * Ends every recorded group whose leader still runs (SIGKILL to the group, then waits up to 3 s for it to be
   * gone), and forgets them all; answers what was ended.
   */
  async endLeftovers(): Promise<string[]> {
    let entries: string[];
    try {
      entries = readdirSync(this.directory);
    } catch {
      return [];
    }
    const ended: string[] = [];
    for (const entry of entries) {
      const file = join(this.directory, entry);
      try {
        const record = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; startTime?: string; description: string };
        // The same pid and start time: that process, not another that reused its pid since.
        if (Number.isInteger(record.pid) && record.pid > 1 && isProcessAlive(record.pid, record.startTime) && processGroupAlive(record.pid)) {
          sendSignal(-record.pid, 'SIGKILL');
          const deadline = Date.now() + GROUP_EXIT_WAIT_MS;
          while (processGroupAlive(record.pid) && Date.now() < deadline) await sleep(20);
          ended.push(record.description);
        }
      } catch {
        // An unreadable record names nothing that can be ended safely.
      }
      rmSync(file, { force: true });
    }
    return ended;
  }
}
