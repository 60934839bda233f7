import type { FastifyTypeBox } from './fastify.types.ts';

export interface PeriodicRun {
  /** What the run does, for the log line of a failure ("removing expired organization events"). */
  what: string;
  intervalMs: number;
  /** Also once when the app is ready (sweeps and invoicing catch up at start; DNS re-checks wait a period). */
  atStart: boolean;
  run(): Promise<unknown>;
}

/**
 * Work a replica does on a period, beside requests: retention sweeps, invoicing, DNS re-checks. Runs never overlap on
 * one replica and never hold up a request; a failed run is logged and the next one tries again; closing the app
 * stops the timer and waits for a run under way. Replicas each run their own: every such run is safe to repeat.
 */
export function installPeriodicRun(app: FastifyTypeBox, periodic: PeriodicRun): void {
  let running: Promise<void> | undefined;
  const run = () => {
    if (running !== undefined) return;
    running = (async () => {
      try {
        await periodic.run();
      } catch (error) {
        app.log.warn({ err: error }, `${periodic.what} failed; the next run tries again`);
      } finally {
        running = undefined;
      }
    })();
  };
  if (periodic.atStart) app.addHook('onReady', async () => run());
  const timer = setInterval(run, periodic.intervalMs);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
