import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    // Fails a run after which a process some test started still runs, naming it (and ends it).
    globalSetup: ['test/support/leftover-processes.ts'],
    pool: 'forks',
    // Most suites wait (child processes, servers, databases, timers) rather than compute: four files at a time keep
    // a 2-core machine busy (full suite with PostgreSQL: 709 s with 4 workers against 1,013 s with the default 2).
    maxWorkers: 4,
    // A timeout guards against a hang, not against slowness (benchmarks measure speed): suites start real processes,
    // database servers and the executable, which on a loaded 2-core CI runner take several times what they take
    // idle (two runs of `slipway admin rotate-signing-key` outgrew a 20 s budget there).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for an outcome (a page showing an answer, a row arriving); its 1 s default is a duration, and
    // under the full suite's load the browser walks saw it pass by before a correct answer arrived.
    expect: { poll: { timeout: 15_000 } },
  },
});
