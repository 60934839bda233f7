import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { baseEnvironment, ProcessSupervisor, type ProcessState } from '../src/engine/local/process-supervisor.ts';

/**
 * A stop always ends the workload, whatever the supervisor was doing when it came: here, restarting a crashed
 * process, at the moment the new process is being spawned (the supervisor reports STARTING and has no pid yet).
 */

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-supervisor-stop-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Pids of live processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // Ended while being read.
    }
  }
  return found;
}

describe('process supervisor: stop during a restart', () => {
  it('ends the process a restart is spawning when the stop comes before it has a pid', async () => {
    const marker = `slipway-restart-${randomUUID()}`;
    const crashedOnce = path.join(root, `${marker}.crashed`);
    // The first run crashes once it is running; every later run keeps running.
    const program = `const fs = require('node:fs'); if (!fs.existsSync(${JSON.stringify(crashedOnce)})) { fs.writeFileSync(${JSON.stringify(crashedOnce)}, ''); setTimeout(() => process.exit(3), 300); } setInterval(() => {}, 1000); // ${marker}`;
    let stopped: Promise<void> | undefined;
    const statuses: string[] = [];
    const supervisor: ProcessSupervisor = new ProcessSupervisor({
      stateDir: path.join(root, 'state'),
      onStatus: (state: ProcessState) => {
        statuses.push(state.status);
        // The restart has begun: the stop arrives while the new process is being spawned.
        if (state.status === 'STARTING' && state.restarts > 0 && stopped === undefined) stopped = supervisor.stop('web');
      },
    });
    await supervisor.start({
      name: 'web',
      command: [process.execPath, '-e', program],
      cwd: root,
      env: baseEnvironment(),
      settleMs: 100,
      restart: { initialDelayMs: 50, maxDelayMs: 50, resetAfterMs: 60_000 },
    });
    await vi.waitFor(() => expect(stopped).toBeDefined(), { timeout: 10_000, interval: 20 });
    await stopped;
    // Longer than the restart's spawn, its settle time and a liveness look.
    await sleep(1_000);
    expect(statuses).toEqual(['STARTING', 'RUNNING', 'BACKOFF', 'STARTING', 'STOPPED']);
    expect(processesWith(marker)).toEqual([]);
    expect(supervisor.recorded('web')).toBeUndefined();
    expect(supervisor.state('web')).toBeUndefined();
  });
});
