import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { installPeriodicRun } from '../../http/periodic-run.ts';
import type { CustomDomainsService } from './custom-domains.service.ts';

/** How often a replica asks DNS again about the domains that have not passed their check yet. */
export const DEFAULT_DOMAIN_RECHECK_INTERVAL_MS = 5 * 60 * 1000;

/**
 * The background DNS checks of a replica: every `intervalMs` (the first one interval after start), the domains added
 * in the last 7 days that have not passed are checked again, so a domain goes live once its DNS records are in place
 * (the agents route it from their next heartbeat). Replicas checking the same domain store the same kind of verdict.
 */
export function installCustomDomainRechecks(app: FastifyTypeBox, customDomains: Pick<CustomDomainsService, 'recheckPendingDomains'>, intervalMs: number): void {
  installPeriodicRun(app, { what: 'checking pending custom domains again', intervalMs, atStart: false, run: () => customDomains.recheckPendingDomains() });
}
