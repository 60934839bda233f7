import type { ClaimedJob } from '../../jobs/job-queue.ts';
import type { JobHandler, JobOutcome } from '../../jobs/job-worker.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AgentsService, DispatchRequest } from './agents.service.ts';

export interface AgentDispatchDeps {
  agents: Pick<AgentsService, 'dispatchTask' | 'dispatchedTaskOutcome'>;
  clock: Clock;
  /**
   * Where the job's action goes: the subject, its cluster and the deployment record, read from the job's payload and
   * the subject's module. Undefined when the subject is gone (deleted meanwhile): there is nothing left to do.
   */
  locate(job: ClaimedJob): Promise<Omit<DispatchRequest, 'jobId'> | undefined>;
  /** How long the job sleeps between looks at its task when no settling report wakes it (default 30 s). */
  recheckMs?: number | undefined;
  /**
   * Whether the task may be dispatched now (always, unless given): an environment's task waits until the
   * deployments its action fanned out into are in the mailbox, so that the agent meets them first. Asked again
   * after `notReadyRecheckMs` (default 250 ms).
   */
  ready?: (request: Omit<DispatchRequest, 'jobId'>) => Promise<boolean>;
  notReadyRecheckMs?: number | undefined;
}

/**
 * The handler of an action job whose work is the cluster agent's (environment.action, service.action): it puts the
 * task into the cluster's mailbox and waits, deferred, until the agent settles it. Waiting keeps the job's serial
 * key busy, so the next action on the same subject is dispatched only after this one ended; an action canceled or a
 * subject deleted while the task waited withdraws the task and ends the job. No agent, no progress:
 * the subject stays QUEUED and says it waits for its cluster's agent.
 */
export function createAgentDispatchHandler(deps: AgentDispatchDeps): JobHandler {
  const recheckMs = deps.recheckMs ?? 30_000;
  return {
    async run(job): Promise<JobOutcome> {
      const request = await deps.locate(job);
      if (request === undefined) return undefined;
      if (deps.ready !== undefined && !(await deps.ready(request))) {
        return { deferUntil: new Date(deps.clock.now().getTime() + (deps.notReadyRecheckMs ?? 250)) };
      }
      await deps.agents.dispatchTask({ ...request, jobId: job.id });
      if ((await deps.agents.dispatchedTaskOutcome(request.deploymentId)) !== 'waiting') return undefined;
      return { deferUntil: new Date(deps.clock.now().getTime() + recheckMs) };
    },
  };
}
