import { hostname } from 'node:os';
import { ControlPlaneRefusal, type AgentClient, type AgentLogLine, type AgentProgressEvent, type AgentTask, type ServiceRoute } from './agent.client.ts';

/**
 * The agent's main loop (docs/agent-protocol.md): heartbeat on the interval the control plane asks for, lease work
 * by long-poll, hand each task to the driver, and carry the driver's phase reports and log lines back under the
 * task's lease. Up to `concurrency` tasks run side by side (the control plane offers a task only once what it must
 * follow is done: docs/agent-protocol.md, "Order"), and the agent leases no more than it has room for, so a leased
 * task is a task in hand. A task whose driver throws, or ends without settling it, is reported failed with the
 * reason; a lost lease (409) drops the task: another holder drives it now.
 */

/** One leased task as a driver sees it. */
export interface TaskSession {
  readonly task: AgentTask;
  /** Reports a phase; answers where the subject now stands (CANCELING: stop and report cancel_done). */
  report(event: AgentProgressEvent, message?: string): Promise<{ subjectStatus: string | null }>;
  /** Queues a log line of the work (sent in batches, and before every report; dropped where the subject keeps none). */
  log(stream: AgentLogLine['stream'], line: string): void;
  /** Whether the control plane asks the work to stop (its subject is CANCELING). */
  cancelRequested(): Promise<boolean>;
  /** The deployment's spec (settings as deployed, variables with secrets opened); read once per task and kept. */
  spec(): Promise<Record<string, unknown>>;
}

/** What runs the work on the cluster: the local driver on this host, a Kubernetes driver in a cluster. */
export interface AgentDriver {
  readonly name: string;
  perform(session: TaskSession): Promise<void>;
  /**
   * After each heartbeat: brings the routes of the services it routes up to date (a custom domain verified or removed
   * since their deployment), asking the control plane through `resolve`.
   */
  reconcileRoutes?(resolve: (serviceIds: readonly string[]) => Promise<ServiceRoute[]>): Promise<void>;
}

export interface AgentOptions {
  client: AgentClient;
  driver: AgentDriver;
  version: string;
  /** Long-poll wait per lease request (default 25 s). */
  pollWaitSeconds?: number;
  /** How many tasks run at once (default 4): builds of different services, databases starting, teardowns. */
  concurrency?: number;
  /** Where the agent says what went wrong in its own loop (network trouble, refusals); silent by default. */
  onTrouble?: (message: string) => void;
}

export interface RunningAgent {
  /** Stops leasing; resolves once the tasks in hand (if any) have been handed back or finished. */
  stop(): Promise<void>;
}

const SETTLING: ReadonlySet<AgentProgressEvent> = new Set(['succeed', 'fail', 'cancel_done']);
const LOG_BATCH = 200;
const LOG_FLUSH_MS = 250;
const DEFAULT_AGENT_CONCURRENCY = 4;

export function startAgent(options: AgentOptions): RunningAgent {
  const { client, driver } = options;
  const trouble = options.onTrouble ?? (() => undefined);
  const startedAt = new Date().toISOString();
  const stopping = new AbortController();
  let heartbeatTimer: NodeJS.Timeout | undefined;

  async function beat(): Promise<void> {
    try {
      const answer = await client.heartbeat({ agent_version: options.version, driver: driver.name, hostname: hostname(), started_at: startedAt });
      if (stopping.signal.aborted) return;
      await driver
        .reconcileRoutes?.(async (serviceIds) => (await client.resolveRoutes(serviceIds)).routes)
        .catch((error: unknown) => trouble(`updating routes failed: ${(error as Error).message}`));
      if (stopping.signal.aborted) return;
      heartbeatTimer = setTimeout(() => void beat(), Math.max(1, answer.heartbeat_interval_seconds) * 1000);
    } catch (error) {
      trouble(`heartbeat failed: ${(error as Error).message}`);
      if (!stopping.signal.aborted) heartbeatTimer = setTimeout(() => void beat(), 5_000);
    }
    heartbeatTimer?.unref();
  }

  async function runTask(task: AgentTask): Promise<void> {
    let seq = task.last_report_seq;
    let logSeq = task.last_log_seq;
    let settled = false;
    let pending: AgentLogLine[] = [];
    let flushTimer: NodeJS.Timeout | undefined;
    let spec: Promise<Record<string, unknown>> | undefined;

    async function flush(): Promise<void> {
      if (flushTimer !== undefined) clearTimeout(flushTimer);
      flushTimer = undefined;
      while (pending.length > 0) {
        const batch = pending.slice(0, LOG_BATCH);
        pending = pending.slice(batch.length);
        try {
          await client.appendLogs(task.id, { lease_id: task.lease_id, lines: batch });
        } catch (error) {
          // Lines the control plane refuses (or cannot take after the retries) are lost, not a reason to stop the work.
          trouble(`${batch.length} log line(s) of task ${task.id} not sent: ${(error as Error).message}`);
        }
      }
    }

    const session: TaskSession = {
      task,
      async report(event, message) {
        await flush();
        seq += 1;
        const answer = await client.reportProgress(task.id, { lease_id: task.lease_id, seq, event, ...(message === undefined ? {} : { message }) });
        if (SETTLING.has(event)) settled = true;
        return { subjectStatus: answer.subject_status };
      },
      log(stream, line) {
        if (!task.accepts_logs) return;
        logSeq += 1;
        pending.push({ seq: logSeq, at: new Date().toISOString(), stream, line });
        if (pending.length >= LOG_BATCH) void flush();
        else flushTimer ??= setTimeout(() => void flush(), LOG_FLUSH_MS);
      },
      async cancelRequested() {
        return (await client.getTask(task.id)).subject_status === 'CANCELING';
      },
      spec() {
        spec ??= client.getTaskSpec(task.id, task.lease_id).then((answer) => answer.spec);
        return spec;
      },
    };

    try {
      await driver.perform(session);
      if (!settled) await session.report('fail', `the ${driver.name} driver ended the ${task.action} without an outcome`);
    } catch (error) {
      if (error instanceof ControlPlaneRefusal && error.status === 409) {
        trouble(`task ${task.id} dropped: ${error.message}`);
        return;
      }
      if (!settled) {
        await session
          .report('fail', `${task.action} failed: ${(error as Error).message}`)
          .catch((failure: Error) => trouble(`task ${task.id}: could not report its failure: ${failure.message}`));
      }
    } finally {
      if (flushTimer !== undefined) clearTimeout(flushTimer);
    }
  }

  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_AGENT_CONCURRENCY);
  const running = new Set<Promise<void>>();

  function carryOut(task: AgentTask): void {
    const run: Promise<void> = runTask(task)
      .catch((error: unknown) => trouble(`task ${task.id}: ${(error as Error).message}`))
      .finally(() => running.delete(run));
    running.add(run);
  }

  const loop = (async () => {
    await beat();
    while (!stopping.signal.aborted) {
      if (running.size >= concurrency) {
        await Promise.race(running);
        continue;
      }
      try {
        const { tasks } = await client.leaseTasks(options.pollWaitSeconds ?? 25, stopping.signal, concurrency - running.size);
        for (const task of tasks) carryOut(task);
      } catch (error) {
        if (stopping.signal.aborted) break;
        trouble(`leasing work failed: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
    await Promise.all(running);
  })();

  return {
    async stop() {
      stopping.abort();
      if (heartbeatTimer !== undefined) clearTimeout(heartbeatTimer);
      await loop;
    },
  };
}
