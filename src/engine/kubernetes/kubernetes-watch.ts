import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { kubernetesErrorMessage } from './kubernetes-cluster.ts';

/**
 * The list+watch every long-lived observer of the cluster runs (the runtime's pods, the cron runs' Jobs): one loop
 * per kind across namespaces, by label, that never throws into the agent.
 */
export interface ListAndWatchOptions<T> {
  config: KubeConfig;
  /** What is watched, for trouble messages ("pods", "jobs"). */
  what: string;
  /** The watch path across namespaces (`/api/v1/pods`, `/apis/batch/v1/jobs`). */
  path: string;
  labelSelector: string;
  list(): Promise<{ items: T[]; metadata?: { resourceVersion?: string } | undefined }>;
  /** Every list: the objects that exist now (what was known and is not in it is gone). */
  onList(items: T[]): void;
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): void;
  timeoutSeconds?: number | undefined;
  backoffMinMs: number;
  backoffMaxMs: number;
  onTrouble(message: string): void;
}

/**
 * List, then watch from the list's resourceVersion, until stopped; never throws. A watch that ends quietly
 * (client-node gives up after 30 s without data) is watched again from the last resourceVersion seen, without a
 * list; one that fails, or says its version is gone (410), costs a new list after a backoff (doubling from
 * backoffMinMs to backoffMaxMs). The list reconciles: the caller lets go of what it no longer holds.
 */
export function listAndWatch<T extends { metadata?: { resourceVersion?: string } | undefined }>(options: ListAndWatchOptions<T>): { stop(): void; ended: Promise<void> } {
  const watch = new Watch(options.config);
  const backoff = (failures: number): number => Math.min(options.backoffMaxMs, options.backoffMinMs * 2 ** Math.max(0, failures - 1));
  let stopped = false;
  let watching: AbortController | undefined;
  let wakeWatcher: (() => void) | undefined;

  /** Waits `ms`, or less if the watch stops meanwhile. */
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakeWatcher = undefined;
        resolve();
      }
      wakeWatcher = done;
    });

  const ended = (async () => {
    let failures = 0;
    let resourceVersion: string | undefined;
    while (!stopped) {
      try {
        if (resourceVersion === undefined) {
          const list = await options.list();
          if (stopped) break;
          resourceVersion = list.metadata?.resourceVersion;
          options.onList(list.items);
        }
        const watchedAt = Date.now();
        const ending = await new Promise<{ error: unknown; expired: boolean }>((resolve) => {
          let expired = false;
          watch
            .watch(
              options.path,
              { labelSelector: options.labelSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: options.timeoutSeconds },
              (type: string, object: unknown) => {
                if (type === 'ERROR') {
                  // A Status in the stream: 410 Gone means the version is too old to watch from.
                  expired = true;
                  return;
                }
                const item = object as T;
                const version = item.metadata?.resourceVersion;
                if (version !== undefined) resourceVersion = version;
                if (type === 'BOOKMARK') return;
                failures = 0;
                options.onEvent(type as 'ADDED' | 'MODIFIED' | 'DELETED', item);
              },
              (error: unknown) => resolve({ error, expired }),
            )
            .then(
              (controller) => {
                watching = controller;
                if (stopped) controller.abort();
              },
              (error: unknown) => resolve({ error, expired }),
            );
        });
        watching = undefined;
        if (stopped) break;
        const quietEnd = ending.error === null || ending.error === undefined || (ending.error as { name?: string }).name === 'TimeoutError';
        // A quiet end is routine (at most every 30 s); one right after the start would spin, so it waits a little.
        if (quietEnd && !ending.expired && Date.now() - watchedAt >= 1_000) continue;
        if (quietEnd && !ending.expired) {
          await pause(options.backoffMinMs);
          continue;
        }
        resourceVersion = undefined;
        if (ending.expired) continue;
        failures += 1;
        options.onTrouble(`watching the Kubernetes ${options.what} failed (again in ${backoff(failures)} ms): ${kubernetesErrorMessage(ending.error)}`);
      } catch (error) {
        if (stopped) break;
        resourceVersion = undefined;
        failures += 1;
        options.onTrouble(`listing the Kubernetes ${options.what} failed (again in ${backoff(failures)} ms): ${kubernetesErrorMessage(error)}`);
      }
      await pause(backoff(failures));
    }
  })();

  return {
    ended,
    stop() {
      stopped = true;
      watching?.abort();
      wakeWatcher?.();
    },
  };
}
