import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { CustomDomainsService } from './custom-domains.service.ts';

/** How often the installation asks DNS again about the domains that have not passed their check yet. */
export const DEFAULT_DOMAIN_RECHECK_INTERVAL_MS = 5 * 60 * 1000;

/**
 * The background DNS checks (src/jobs/job-schedules.ts): every `intervalMs` (the first one interval after the
 * installation starts), the domains added in the last 7 days that have not passed are checked again, so a domain goes
 * live once its DNS records are in place (the agents route it from their next heartbeat).
 */
export function customDomainRecheckSchedule(customDomains: Pick<CustomDomainsService, 'recheckPendingDomains'>, intervalMs: number): ScheduledWork {
  return { name: 'custom-domains', intervalMs, atStart: false, run: () => customDomains.recheckPendingDomains() };
}
