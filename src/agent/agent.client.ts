import {
  AgentCertificateReportAnswer,
  AgentClusterEventReportAnswer,
  AgentEnrollment,
  AgentHeartbeatAnswer,
  AgentLogAnswer,
  AgentProgressAnswer,
  AgentRoutes,
  AgentTaskLease,
  AgentTaskSpec,
  AgentTaskState,
  AgentWorkloadHealthAnswer,
  ControlPlaneRefusal,
  parseProtocol,
  ProtocolViolation,
  type AgentCertificateReport,
  type AgentClusterEventReport,
  type AgentControlPlane,
  type AgentHeartbeat,
  type AgentLogBatch,
  type AgentProgressReport,
  type AgentWorkloadHealth,
  type AgentWorkloadLogLine,
} from '../protocol/agent-protocol.ts';
import type { TSchema, Static } from 'typebox';
import { activeTraceparent } from '../lib/tracing.ts';

/**
 * The agent's HTTP side of the agent protocol (src/protocol/agent-protocol.ts, docs/agent-protocol.md). Every call
 * that changes something is safe to repeat (reports and log lines carry sequence numbers), so network failures and
 * 5xx answers are retried with capped exponential backoff; a 4xx is the control plane's answer and is not. Every
 * answer is checked against the protocol's shape before the agent acts on it.
 */

export interface AgentClientOptions {
  controlPlaneUrl: string;
  credential: string;
  /** Attempts per call before giving up on a failing network or server (default 6). */
  attempts?: number;
  retryBaseMs?: number;
}

export async function enrollAgent(controlPlaneUrl: string, enrollmentToken: string): Promise<AgentEnrollment> {
  const response = await fetch(new URL('/operator/v1/enroll', controlPlaneUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ enrollment_token: enrollmentToken }),
  });
  const body = (await response.json()) as { message?: string };
  if (!response.ok) throw new ControlPlaneRefusal(response.status, body.message ?? `enrollment refused (${response.status})`);
  return parseProtocol(AgentEnrollment, body, 'enrollment answer');
}

/** The HTTP client makes every call, those only some agents make (certificate reports) included. */
export function createAgentClient(options: AgentClientOptions): AgentControlPlane & Required<Pick<AgentControlPlane, 'reportCertificates' | 'reportClusterEvents'>> {
  const attempts = options.attempts ?? 6;
  const retryBaseMs = options.retryBaseMs ?? 250;

  async function call<T extends TSchema>(answer: T, method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<Static<T>> {
    // A call made while a task's span is active (its reports, logs, spec) is a child of it in the control plane's trace.
    const traceparent = activeTraceparent();
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetch(new URL(path, options.controlPlaneUrl), {
          method,
          headers: {
            authorization: `Bearer ${options.credential}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(traceparent === undefined ? {} : { traceparent }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          ...(signal === undefined ? {} : { signal }),
        });
        const text = await response.text();
        if (response.status < 500) {
          const parsed: unknown = text === '' ? {} : JSON.parse(text);
          if (!response.ok) throw new ControlPlaneRefusal(response.status, messageOf(parsed) ?? `HTTP ${response.status}`);
          return parseProtocol(answer, parsed, `answer to ${method} ${path.split('?')[0] ?? path}`);
        }
        if (attempt >= attempts) throw new Error(`${method} ${path}: HTTP ${response.status} after ${attempt} attempts`);
      } catch (error) {
        if (error instanceof ControlPlaneRefusal || error instanceof ProtocolViolation || signal?.aborted === true || attempt >= attempts) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryBaseMs * 2 ** (attempt - 1), 10_000)));
    }
  }

  return {
    /** Long-poll for up to `max` tasks (default: the control plane's, 5). */
    leaseTasks: (waitSeconds: number, signal?: AbortSignal, max?: number) =>
      call(AgentTaskLease, 'GET', `/operator/v1/tasks?wait_seconds=${waitSeconds}${max === undefined ? '' : `&max=${max}`}`, undefined, signal),
    getTask: (taskId: string) => call(AgentTaskState, 'GET', `/operator/v1/tasks/${taskId}`),
    getTaskSpec: (taskId: string, leaseId: string) => call(AgentTaskSpec, 'GET', `/operator/v1/tasks/${taskId}/spec?lease_id=${leaseId}`),
    reportProgress: (taskId: string, report: AgentProgressReport) => call(AgentProgressAnswer, 'POST', `/operator/v1/tasks/${taskId}/progress`, report),
    appendLogs: (taskId: string, batch: AgentLogBatch) => call(AgentLogAnswer, 'POST', `/operator/v1/tasks/${taskId}/logs`, batch),
    appendWorkloadLogs: (serviceId: string, lines: AgentWorkloadLogLine[]) => call(AgentLogAnswer, 'POST', `/operator/v1/workloads/${serviceId}/logs`, { lines }),
    reportWorkloadHealth: (serviceId: string, report: AgentWorkloadHealth) =>
      call(AgentWorkloadHealthAnswer, 'POST', `/operator/v1/workloads/${serviceId}/health`, report),
    resolveRoutes: (serviceIds: readonly string[]) => call(AgentRoutes, 'POST', '/operator/v1/routes', { service_ids: serviceIds }),
    reportCertificates: (report: AgentCertificateReport) => call(AgentCertificateReportAnswer, 'POST', '/operator/v1/certificates', report),
    reportClusterEvents: (report: AgentClusterEventReport) => call(AgentClusterEventReportAnswer, 'POST', '/operator/v1/cluster-events', report),
    heartbeat: (beat: AgentHeartbeat) => call(AgentHeartbeatAnswer, 'POST', '/operator/v1/heartbeat', beat),
  };
}

/** The error body's message (DESIGN.md §4), when the answer has one. */
function messageOf(body: unknown): string | undefined {
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : undefined;
}

/** What the agent runtime calls: the protocol's calls, over HTTP here. */
export type AgentClient = AgentControlPlane;
