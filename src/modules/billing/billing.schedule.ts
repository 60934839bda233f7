import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { installPeriodicRun } from '../../http/periodic-run.ts';
import type { BillingService } from './billing.service.ts';

/** How often the invoice run and the sweep of expired usage reports happen. */
const BILLING_RUN_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The scheduled billing work of a replica: at start and hourly, invoice the period that ended last (a no-op once its
 * invoices exist: one per organization and period, whichever replica or CLI run made it) and delete usage reports
 * past their expiry.
 */
export function installBillingSchedule(app: FastifyTypeBox, billing: Pick<BillingService, 'generateDueInvoices' | 'removeExpiredUsageReports'>): void {
  installPeriodicRun(app, {
    what: 'the scheduled billing run',
    intervalMs: BILLING_RUN_INTERVAL_MS,
    atStart: true,
    run: async () => {
      await billing.generateDueInvoices();
      await billing.removeExpiredUsageReports();
    },
  });
}
