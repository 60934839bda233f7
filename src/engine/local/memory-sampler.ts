import { residentBytesByProcessGroup } from './process-table.ts';

/**
 * Samples the resident memory of the process groups of workloads with a memory limit: one pass over /proc per
 * period for all of them (a pass per workload would grow with workloads × processes), and no timer while nothing is
 * watched. Each watcher is called with its group's resident bytes; a group with no live process is not reported.
 */
export class MemorySampler {
  private readonly watchers = new Map<number, Set<(residentBytes: number) => void>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly periodMs: number;

  constructor(periodMs: number) {
    this.periodMs = periodMs;
  }

  /** Watches the process group led by `groupId`; returns the function that stops watching (idempotent). */
  watch(groupId: number, onSample: (residentBytes: number) => void): () => void {
    let callbacks = this.watchers.get(groupId);
    if (callbacks === undefined) this.watchers.set(groupId, (callbacks = new Set()));
    callbacks.add(onSample);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sample(), this.periodMs);
      this.timer.unref();
    }
    return () => {
      callbacks.delete(onSample);
      if (callbacks.size === 0 && this.watchers.get(groupId) === callbacks) this.watchers.delete(groupId);
      if (this.watchers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private sample(): void {
    const resident = residentBytesByProcessGroup();
    if (resident === undefined) return;
    for (const [groupId, callbacks] of this.watchers) {
      const bytes = resident.get(groupId);
      if (bytes === undefined) continue;
      for (const callback of callbacks) callback(bytes);
    }
  }
}
