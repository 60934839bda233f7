import { randomUUID } from 'node:crypto';
import type { TaskSession } from '../../src/protocol/agent-driver.ts';
import { parseProtocol, ServiceDeploymentSpec, type AgentTask } from '../../src/protocol/agent-protocol.ts';

/**
 * A driver's side of a task without a control plane, for the driver suites: a TEST DOUBLE of the runtime's session
 * that records what the driver reports and logs, and hands out the spec checked against the protocol's schema as
 * the agent's client would.
 */

/** What one task reports and logs, carried out as the agent runtime does (carryOutTask), recorded. */
export class TaskSessionHarness implements TaskSession {
  readonly reports: Array<{ event: string; message: string | undefined }> = [];
  readonly lines: Array<{ stream: string; line: string }> = [];
  cancel = false;

  readonly task: AgentTask;
  private readonly specification: Record<string, unknown> | undefined;
  constructor(
    task: AgentTask,
    specification: Record<string, unknown> | undefined,
  ) {
    this.task = task;
    this.specification = specification;
  }

  async report(event: 'take' | 'built' | 'succeed' | 'fail' | 'cancel_done', message?: string): Promise<{ subjectStatus: string | null }> {
    this.reports.push({ event, message });
    return { subjectStatus: this.cancel ? 'CANCELING' : null };
  }

  log(stream: 'stdout' | 'stderr' | 'system', line: string): void {
    this.lines.push({ stream, line });
  }

  async cancelRequested(): Promise<boolean> {
    return this.cancel;
  }

  async built(): Promise<boolean> {
    if (this.task.action === 'restart') return true;
    return (await this.report('built')).subjectStatus !== 'CANCELING';
  }

  /** As the agent's client answers it: checked against the protocol's schema. */
  async spec(): Promise<ServiceDeploymentSpec> {
    if (this.specification === undefined) throw new Error('404: a deleted service has no spec');
    return parseProtocol(ServiceDeploymentSpec, this.specification, 'task spec');
  }

  events(): string[] {
    return this.reports.map((report) => report.event);
  }

  text(): string {
    return this.lines.map((entry) => entry.line).join('\n');
  }
}

/** A leased task of a service (or its teardown, or an environment's), as the control plane hands it out. */
export function agentTask(environmentId: string, serviceId: string, action: string, serviceType: string, subjectType: AgentTask['subject_type'] = 'SERVICE'): AgentTask {
  const deploymentId = randomUUID();
  const payloads: Record<AgentTask['subject_type'], Record<string, unknown>> = {
    SERVICE: { service_id: serviceId, service_type: serviceType, environment_id: environmentId, deployment_id: deploymentId, action },
    SERVICE_TEARDOWN: { service_id: serviceId, service_type: serviceType, environment_id: environmentId, name: serviceType.toLowerCase() },
    ENVIRONMENT: { environment_id: serviceId, action },
  };
  return {
    id: randomUUID(),
    subject_type: subjectType,
    subject_id: serviceId,
    deployment_id: deploymentId,
    action,
    payload: payloads[subjectType],
    lease_id: randomUUID(),
    lease_expires_at: new Date(Date.now() + 60_000).toISOString(),
    attempt: 1,
    last_report_seq: 0,
    last_log_seq: 0,
    accepts_logs: true,
  };
}
