/**
 * The agent's HTTP side of the agent protocol, version 1 (docs/agent-protocol.md). Every call that changes
 * something is safe to repeat (reports and log lines carry sequence numbers), so network failures and 5xx answers
 * are retried with capped exponential backoff; a 4xx is the control plane's answer and is not.
 */

export interface AgentTask {
  id: string;
  subject_type: 'ENVIRONMENT' | 'SERVICE' | 'SERVICE_TEARDOWN';
  subject_id: string;
  deployment_id: string;
  action: string;
  payload: Record<string, unknown>;
  lease_id: string;
  lease_expires_at: string;
  attempt: number;
  last_report_seq: number;
  last_log_seq: number;
  accepts_logs: boolean;
}

export type AgentProgressEvent = 'take' | 'built' | 'succeed' | 'fail' | 'cancel_done';

export interface AgentLogLine {
  seq: number;
  at: string;
  stream: 'stdout' | 'stderr' | 'system';
  line: string;
}

/** How a deployed workload runs, as the agent reports it outside any task. */
export interface WorkloadHealthReport {
  health: 'RUNNING' | 'RESTARTING' | 'FAILED';
  restarts: number;
  message?: string;
}

/** A refusal of the control plane (4xx), with its error body's message. */
export class ControlPlaneRefusal extends Error {
  readonly status: number;
  constructor(
    status: number,
    message: string,
  ) {
    super(message);
    this.status = status;
  }
}

export interface AgentClientOptions {
  controlPlaneUrl: string;
  credential: string;
  /** Attempts per call before giving up on a failing network or server (default 6). */
  attempts?: number;
  retryBaseMs?: number;
}

export async function enrollAgent(controlPlaneUrl: string, enrollmentToken: string): Promise<{ cluster_id: string; credential: string }> {
  const response = await fetch(new URL('/operator/v1/enroll', controlPlaneUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ enrollment_token: enrollmentToken }),
  });
  const body = (await response.json()) as { cluster_id: string; credential: string; message?: string };
  if (!response.ok) throw new ControlPlaneRefusal(response.status, body.message ?? `enrollment refused (${response.status})`);
  return body;
}

/** Where a routed service is reached now: its own hostname and its verified custom domains. */
export interface ServiceRoute {
  service_id: string;
  hostnames: string[];
}

export function createAgentClient(options: AgentClientOptions) {
  const attempts = options.attempts ?? 6;
  const retryBaseMs = options.retryBaseMs ?? 250;

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetch(new URL(path, options.controlPlaneUrl), {
          method,
          headers: { authorization: `Bearer ${options.credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          ...(signal === undefined ? {} : { signal }),
        });
        const text = await response.text();
        if (response.status < 500) {
          const parsed = (text === '' ? {} : JSON.parse(text)) as T & { message?: string };
          if (!response.ok) throw new ControlPlaneRefusal(response.status, parsed.message ?? `HTTP ${response.status}`);
          return parsed;
        }
        if (attempt >= attempts) throw new Error(`${method} ${path}: HTTP ${response.status} after ${attempt} attempts`);
      } catch (error) {
        if (error instanceof ControlPlaneRefusal || signal?.aborted === true || attempt >= attempts) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryBaseMs * 2 ** (attempt - 1), 10_000)));
    }
  }

  return {
    /** Long-poll for up to `max` tasks (default: the control plane's, 5). */
    leaseTasks: (waitSeconds: number, signal?: AbortSignal, max?: number) =>
      call<{ tasks: AgentTask[] }>('GET', `/operator/v1/tasks?wait_seconds=${waitSeconds}${max === undefined ? '' : `&max=${max}`}`, undefined, signal),
    getTask: (taskId: string) => call<AgentTask & { status: string; outcome: string | null; subject_status: string | null }>('GET', `/operator/v1/tasks/${taskId}`),
    getTaskSpec: (taskId: string, leaseId: string) =>
      call<{ task_id: string; deployment_id: string; spec: Record<string, unknown> }>('GET', `/operator/v1/tasks/${taskId}/spec?lease_id=${leaseId}`),
    reportProgress: (taskId: string, report: { lease_id: string; seq: number; event: AgentProgressEvent; message?: string }) =>
      call<{ applied: boolean; task_status: string; subject_status: string | null }>('POST', `/operator/v1/tasks/${taskId}/progress`, report),
    appendLogs: (taskId: string, batch: { lease_id: string; lines: AgentLogLine[] }) =>
      call<{ accepted: number }>('POST', `/operator/v1/tasks/${taskId}/logs`, batch),
    appendWorkloadLogs: (serviceId: string, lines: Array<Omit<AgentLogLine, 'seq'>>) =>
      call<{ accepted: number }>('POST', `/operator/v1/workloads/${serviceId}/logs`, { lines }),
    reportWorkloadHealth: (serviceId: string, report: WorkloadHealthReport) =>
      call<{ recorded: boolean }>('POST', `/operator/v1/workloads/${serviceId}/health`, report),
    resolveRoutes: (serviceIds: readonly string[]) =>
      call<{ routes: ServiceRoute[] }>('POST', '/operator/v1/routes', { service_ids: serviceIds }),
    heartbeat: (beat: { agent_version: string; driver: string; hostname?: string; started_at: string }) =>
      call<{ server_time: string; heartbeat_interval_seconds: number; lease_seconds: number }>('POST', '/operator/v1/heartbeat', beat),
  };
}

export type AgentClient = ReturnType<typeof createAgentClient>;
