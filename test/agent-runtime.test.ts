import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startAgent } from '../src/agent/agent.runtime.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import type { AgentControlPlane, AgentLogBatch, AgentProgressReport, AgentTask } from '../src/protocol/agent-protocol.ts';

/**
 * The agent runtime's own order of sends, against a control plane that is a TEST DOUBLE (a recorder of the calls the
 * runtime makes, with a slow log endpoint): the real control plane is exercised by agent-protocol.test.ts; here the
 * point is what the runtime sends when.
 */

function teardownTask(): AgentTask {
  const serviceId = randomUUID();
  return {
    id: randomUUID(),
    subject_type: 'SERVICE_TEARDOWN',
    subject_id: serviceId,
    deployment_id: randomUUID(),
    action: 'delete',
    payload: { service_id: serviceId, service_type: 'APPLICATION', environment_id: randomUUID(), name: 'web' },
    lease_id: randomUUID(),
    lease_expires_at: new Date(Date.now() + 60_000).toISOString(),
    attempt: 1,
    last_report_seq: 0,
    last_log_seq: 0,
    accepts_logs: true,
  };
}

/** Records each call as it starts and ends; log batches take `logDelayMs` to be accepted. */
function recordingControlPlane(task: AgentTask, logDelayMs: number) {
  const calls: string[] = [];
  let leased = false;
  let settled: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (settled = resolve));
  const controlPlane: AgentControlPlane = {
    async leaseTasks(_wait, signal) {
      if (!leased) {
        leased = true;
        return { tasks: [task] };
      }
      await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
      return { tasks: [] };
    },
    getTask: () => Promise.reject(new Error('not asked in this test')),
    getTaskSpec: () => Promise.reject(new Error('not asked in this test')),
    async reportProgress(_taskId: string, report: AgentProgressReport) {
      calls.push(`report ${report.event}`);
      if (report.event === 'succeed' || report.event === 'fail') settled();
      return { applied: true, task_status: 'LEASED', subject_status: null };
    },
    async appendLogs(_taskId: string, batch: AgentLogBatch) {
      calls.push(`logs sent: ${batch.lines.map((line) => line.line).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, logDelayMs));
      calls.push(`logs accepted: ${batch.lines.map((line) => line.line).join(', ')}`);
      return { accepted: batch.lines.length };
    },
    appendWorkloadLogs: async (_serviceId, lines) => ({ accepted: lines.length }),
    reportWorkloadHealth: async () => ({ recorded: true }),
    resolveRoutes: async () => ({ routes: [] }),
    heartbeat: async () => ({ server_time: new Date().toISOString(), heartbeat_interval_seconds: 3600, lease_seconds: 60 }),
  };
  return { controlPlane, calls, done };
}

describe('agent runtime', () => {
  it("reports a task's outcome only once every line it logged before has been accepted, a timer's send still in flight included", async () => {
    const task = teardownTask();
    const { controlPlane, calls, done } = recordingControlPlane(task, 400);
    // Logs one line, then waits past the runtime's flush timer (250 ms), so that line's send is under way when the
    // driver returns and the runtime reports; then logs another, which the report's own flush sends.
    const driver: AgentDriver = {
      name: 'recording',
      serviceKinds: ['APPLICATION'],
      deploy: () => Promise.reject(new Error('not asked in this test')),
      stop: () => Promise.reject(new Error('not asked in this test')),
      async teardown(session) {
        session.log('system', 'first');
        await new Promise((resolve) => setTimeout(resolve, 300));
        session.log('system', 'second');
      },
    };
    const agent = startAgent({ client: controlPlane, driver, version: 'test', pollWaitSeconds: 1 });
    try {
      await done;
    } finally {
      await agent.stop();
    }
    expect(calls).toEqual(['report take', 'logs sent: first', 'logs accepted: first', 'logs sent: second', 'logs accepted: second', 'report succeed']);
  });
});
