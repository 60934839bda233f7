import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import type { BillingService } from './billing.service.ts';

/** How often the invoice run and the sweep of expired usage reports happen. */
const BILLING_RUN_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The scheduled billing work of a replica: at start and hourly, invoice the period that ended last (a no-op once its
 * invoices exist: one per organization and period, whichever replica or CLI run made it) and delete usage reports
 * past their expiry. Runs never overlap on one replica, and never hold up a request.
 */
export function installBillingSchedule(app: FastifyTypeBox, billing: Pick<BillingService, 'generateDueInvoices' | 'removeExpiredUsageReports'>): void {
  let running: Promise<void> | undefined;
  const run = () => {
    if (running !== undefined) return;
    running = (async () => {
      try {
        await billing.generateDueInvoices();
        await billing.removeExpiredUsageReports();
      } catch (error) {
        app.log.warn({ err: error }, 'scheduled billing run failed; it is retried at the next run');
      } finally {
        running = undefined;
      }
    })();
  };
  app.addHook('onReady', async () => run());
  const timer = setInterval(run, BILLING_RUN_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
