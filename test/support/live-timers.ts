import { createHook } from 'node:async_hooks';

/**
 * The timers set by one function and not yet cleared, told from the rest of the process's timers (the job worker's,
 * the PostgreSQL pool's) by the frame `setBy` matches in the stack that set them: a suite counts them to show that a
 * stream's waits end when its reader leaves. Only the function's own `setTimeout` counts, not a database call it
 * awaited (async frames would name it too, so the pattern names the function and its file).
 */
export function liveTimersSetBy(setBy: RegExp): { live(): number; stop(): void } {
  const live = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (type !== 'Timeout') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 50;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (setBy.test(stack)) live.add(asyncId);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return { live: () => live.size, stop: () => void hook.disable() };
}
