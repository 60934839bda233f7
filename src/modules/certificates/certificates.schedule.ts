import type { ScheduledWork } from '../../jobs/job-schedules.ts';
import type { CertificatesService } from './certificates.service.ts';

/**
 * The renewal schedule (src/jobs/job-schedules.ts): every `intervalMs`, and once when the installation starts, the
 * certificates that are due — missing, within 30 days of expiry, or past their backoff after a failure — are ordered,
 * each as a `certificate.issue` job of its own; a certificate that expired unrenewed stops being served first.
 */
export function certificateRenewalSchedule(certificates: Pick<CertificatesService, 'orderDue' | 'dropExpired'>, intervalMs: number): ScheduledWork {
  return {
    name: 'certificates',
    intervalMs,
    atStart: true,
    run: async () => {
      await certificates.dropExpired();
      return certificates.orderDue();
    },
  };
}
