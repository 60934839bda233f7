import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { AlertsService } from './alerts.service.ts';

/** How often rules are evaluated: a for_duration is honoured to within this. */
export const ALERT_EVALUATION_INTERVAL_MS = 60 * 1000;

/**
 * The alert rules' evaluation (src/jobs/job-schedules.ts; docs/alerts.md): every minute, and at the installation's
 * start, every rule is evaluated once — one run per installation whatever the number of workers, and each rule's
 * outcome claimed by compare-and-set before anyone is notified (alerts.service.ts), so a run repeated after a crash
 * or racing a direct evaluation announces nothing twice.
 */
export function alertsSchedule(alerts: Pick<AlertsService, 'evaluateRules'>): ScheduledWork {
  return { name: 'alerts', intervalMs: ALERT_EVALUATION_INTERVAL_MS, atStart: true, run: () => alerts.evaluateRules() };
}
