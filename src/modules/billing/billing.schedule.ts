import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { BillingService } from './billing.service.ts';

/** How often the invoice run and the sweep of expired usage reports happen. */
const BILLING_RUN_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The installation's scheduled billing work (src/jobs/job-schedules.ts): at its start and hourly, invoice the period
 * that ended last (a no-op once its invoices exist: one per organization and period, whichever run or CLI command
 * made it) and delete usage reports past their expiry.
 */
export function billingSchedule(billing: Pick<BillingService, 'generateDueInvoices' | 'removeExpiredUsageReports'>): ScheduledWork {
  return {
    name: 'billing',
    intervalMs: BILLING_RUN_INTERVAL_MS,
    atStart: true,
    run: async () => {
      await billing.generateDueInvoices();
      await billing.removeExpiredUsageReports();
    },
  };
}
