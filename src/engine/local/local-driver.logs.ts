/**
 * Runtime output of deployed workloads (and of cron runs) on its way to the control plane
 * (POST /operator/v1/workloads/{serviceId}/logs): lines are gathered per service and sent in batches, one request in
 * flight per service, so a chatty workload costs a request every half second rather than one per line. Lines the
 * control plane cannot take are dropped with a trouble message: a workload's log never holds up the agent.
 */
export interface WorkloadLogLine {
  at: string;
  stream: 'stdout' | 'stderr' | 'system';
  line: string;
  /** The supervised process that printed it (`<service>.<instance>`, `cron-<service>`). */
  instance?: string;
}

export type WorkloadLogSink = (serviceId: string, lines: WorkloadLogLine[]) => Promise<void>;

const BATCH_LINES = 200;
const FLUSH_INTERVAL_MS = 500;
/** Past this many unsent lines of one service (the control plane is unreachable), the oldest are dropped. */
const MAX_PENDING_LINES = 10_000;

export class WorkloadLogBatcher {
  private readonly pending = new Map<string, WorkloadLogLine[]>();
  private readonly sending = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  private readonly sink: WorkloadLogSink;
  private readonly trouble: (message: string) => void;
  constructor(
    sink: WorkloadLogSink,
    trouble: (message: string) => void,
  ) {
    this.sink = sink;
    this.trouble = trouble;
  }

  add(serviceId: string, line: WorkloadLogLine): void {
    let lines = this.pending.get(serviceId);
    if (lines === undefined) {
      lines = [];
      this.pending.set(serviceId, lines);
    }
    lines.push(line);
    if (lines.length > MAX_PENDING_LINES) lines.splice(0, lines.length - MAX_PENDING_LINES);
    if (lines.length >= BATCH_LINES) void this.send(serviceId);
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_INTERVAL_MS);
      this.timer.unref();
    }
  }

  /** Sends everything gathered so far; resolves once sent (or dropped). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending.keys()].map((serviceId) => this.send(serviceId)));
  }

  /** Flushes and stops the timer (agent shutdown). */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private send(serviceId: string): Promise<void> {
    const previous = this.sending.get(serviceId) ?? Promise.resolve();
    const next = previous.then(async () => {
      for (;;) {
        const lines = this.pending.get(serviceId);
        if (lines === undefined || lines.length === 0) {
          this.pending.delete(serviceId);
          return;
        }
        const batch = lines.splice(0, BATCH_LINES);
        try {
          await this.sink(serviceId, batch);
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
