import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { DeploymentRulesService } from './deployment-rules.service.ts';

/** How often the installation looks for environments whose stop or start time has come: schedules are minute-precise. */
export const DEPLOYMENT_RULES_SWEEP_INTERVAL_MS = 60 * 1000;

/**
 * The environments' auto-stop schedules (src/jobs/job-schedules.ts; docs/deployment-rules.md): every minute, and at
 * the installation's start to catch up, each auto-stopped environment whose stop or start time came since its rule
 * was last applied is stopped or deployed again, once — one run per installation whatever the number of workers,
 * and each action claimed by compare-and-set before it is asked (deployment-rules.service.ts).
 */
export function deploymentRulesSchedule(rules: Pick<DeploymentRulesService, 'applyDueSchedules'>): ScheduledWork {
  return { name: 'deployment-rules', intervalMs: DEPLOYMENT_RULES_SWEEP_INTERVAL_MS, atStart: true, run: () => rules.applyDueSchedules() };
}
