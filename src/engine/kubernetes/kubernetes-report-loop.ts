/**
 * The loop of a periodic report of the Kubernetes agent (certificates, events): a round at once, then one every
 * `periodMs` after the previous one ended. A round that fails is told to `onFailure` and the loop goes on — the next
 * round is the retry. `stop()` ends the pause at once and resolves once the round under way, if any, has ended.
 */
export function runReportLoop(options: { periodMs: number; round(): Promise<void>; onFailure(error: unknown): void }): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | undefined;
  const ended = (async () => {
    while (!stopped) {
      try {
        await options.round();
      } catch (error) {
        if (stopped) break;
        options.onFailure(error);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, options.periodMs);
        function done(): void {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await ended;
    },
  };
}
