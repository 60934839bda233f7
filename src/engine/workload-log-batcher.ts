import type { AgentWorkloadLogLine } from '../protocol/agent-protocol.ts';

/**
 * Runtime output of deployed workloads on its way to the control plane (POST /operator/v1/workloads/{id}/logs), for
 * every driver: lines are gathered per service and sent in batches, one request in flight per service, so a chatty
 * workload costs a request per batch rather than one per line. Lines the control plane cannot take are dropped with
 * a trouble message: a workload's log never holds up the agent.
 */
export type WorkloadLogLine = AgentWorkloadLogLine;
export type WorkloadLogSink = (serviceId: string, lines: WorkloadLogLine[]) => Promise<void>;

/** Past this many unsent lines of one service (the control plane is unreachable), the oldest are dropped. */
const MAX_PENDING_LINES = 10_000;

/**
 * Runtime lines on their way to the sink: gathered per service, sent at most `flushMs` after the first one waits or
 * as soon as `batchLines` wait, one send in flight per service so lines arrive in order. A send that fails is told
 * and its lines dropped: a workload's log never holds the agent up.
 */
export class WorkloadLogBatcher {
  private readonly pending = new Map<string, WorkloadLogLine[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly sending = new Map<string, Promise<void>>();
  private readonly sink: WorkloadLogSink | undefined;
  private readonly trouble: (message: string) => void;
  private readonly flushMs: number;
  private readonly batchLines: number;

  constructor(sink: WorkloadLogSink | undefined, trouble: (message: string) => void, timing: { flushMs?: number; batchLines?: number } = {}) {
    this.sink = sink;
    this.trouble = trouble;
    this.flushMs = timing.flushMs ?? 500;
    this.batchLines = timing.batchLines ?? 200;
  }

  add(serviceId: string, line: WorkloadLogLine): void {
    if (this.sink === undefined) return;
    let lines = this.pending.get(serviceId);
    if (lines === undefined) this.pending.set(serviceId, (lines = []));
    lines.push(line);
    if (lines.length > MAX_PENDING_LINES) lines.splice(0, lines.length - MAX_PENDING_LINES);
    if (lines.length >= this.batchLines) void this.send(serviceId);
    else if (!this.timers.has(serviceId)) {
      const timer = setTimeout(() => void this.send(serviceId), this.flushMs);
      timer.unref();
      this.timers.set(serviceId, timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pending.keys()].map((serviceId) => this.send(serviceId)));
    await Promise.all(this.sending.values());
  }

  private send(serviceId: string): Promise<void> {
    const timer = this.timers.get(serviceId);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(serviceId);
    const sink = this.sink;
    if (sink === undefined) return Promise.resolve();
    const previous = this.sending.get(serviceId) ?? Promise.resolve();
    const next = previous.then(async () => {
      for (;;) {
        const lines = this.pending.get(serviceId);
        if (lines === undefined || lines.length === 0) {
          this.pending.delete(serviceId);
          return;
        }
        const batch = lines.splice(0, this.batchLines);
        try {
          await sink(serviceId, batch);
        } catch (error) {
          this.trouble(`${batch.length} log line(s) of service ${serviceId} not sent: ${(error as Error).message}`);
        }
      }
    });
    this.sending.set(serviceId, next);
    void next.finally(() => {
      if (this.sending.get(serviceId) === next) this.sending.delete(serviceId);
    });
    return next;
  }
}
