import { useSyncExternalStore } from 'react';

/**
 * How often a page showing live states reads them again. The server pushes "look again" events of the signed-in
 * organization (api/live-changes.ts, `GET /organization/{id}/changes`), and each one refetches the queries showing
 * that id, so a state change reaches an open page well under a second. While that stream is connected the pages
 * poll only as a fallback (FALLBACK_INTERVAL_MS); while it is down they poll every 1.5 s, as before the push.
 */
export const LIVE_INTERVAL_MS = 1500;

/** The polling while the push channel is connected: it only covers a change whose event was lost. */
export const FALLBACK_INTERVAL_MS = 15_000;

/**
 * A longer fallback for one browser, from local storage (`slipway:live-fallback-ms`): with polling this far apart, a
 * change that shows at once can only have been pushed (docs/console.md, "Live states").
 */
function fallbackIntervalMs(): number {
  try {
    const stored = Number(globalThis.localStorage?.getItem('slipway:live-fallback-ms'));
    return Number.isFinite(stored) && stored > FALLBACK_INTERVAL_MS ? stored : FALLBACK_INTERVAL_MS;
  } catch {
    return FALLBACK_INTERVAL_MS;
  }
}

let pushConnected = false;
const watchers = new Set<() => void>();

/** The push channel's state, set by the stream's reader. */
export function setPushConnected(connected: boolean): void {
  if (connected === pushConnected) return;
  pushConnected = connected;
  for (const watcher of [...watchers]) watcher();
}

function watch(watcher: () => void): () => void {
  watchers.add(watcher);
  return () => void watchers.delete(watcher);
}

/** Whether the push channel is connected now. */
export function usePushConnected(): boolean {
  return useSyncExternalStore(watch, () => pushConnected);
}

/** The `refetchInterval` of a live query: the fallback while changes are pushed, 1.5 s while they are not; `factor` spaces out a slower query. */
export function useLiveInterval(factor = 1): number {
  return usePushConnected() ? fallbackIntervalMs() * factor : LIVE_INTERVAL_MS * factor;
}

export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
