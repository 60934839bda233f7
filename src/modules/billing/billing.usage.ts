import { isoTimestamp } from '../../lib/clock.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { DAY_MS, planOf, type BillingContext } from './billing.context.ts';
import { intervalMillicents, overlapMs } from './billing.metering.ts';
import { csvOf, formatCents } from './billing.pdf.ts';
import { CURRENCY_CODE, unitPriceFor } from './billing.plans.ts';
import * as repo from './billing.repo.ts';
import type { MeteringPort } from './billing.service.ts';

/** Bounds of a usage report's life and range. */
const MAX_REPORT_LIFETIME_SECONDS = 7 * 24 * 3600;
const MAX_REPORT_RANGE_MS = 366 * DAY_MS;

export interface UsageReportInput {
  from: string;
  to: string;
  report_expiration_in_seconds: number;
}

/** Metered running time: the metering port that records it, and the usage reports (CSV) that read it back. */
export function createBillingUsage(context: BillingContext) {
  const { db, clock } = context.deps;
  const { requireOrganization, downloadUrl, checkLink } = context;

  const metering: MeteringPort = {
    async resourceRunning(input) {
      if (!Number.isSafeInteger(input.units) || input.units < 0) throw badRequest(`units must be a non-negative integer, got ${input.units}`);
      const at = new Date(input.at).toISOString();
      const unit = unitPriceFor(input.resourceType, input.priceKey);
      await db.transaction().execute(async (trx) => {
        const open = await repo.findOpenInterval(trx, input.resourceType, input.resourceId);
        if (open !== undefined && open.units === input.units && open.price_key === input.priceKey && open.unit_price_millicents === unit.millicentsPerHour) return;
        if (open !== undefined) await repo.closeInterval(trx, open.id, at < open.started_at ? open.started_at : at);
        if (input.units === 0) return;
        await repo.insertUsageInterval(trx, {
          id: newId(),
          organization_id: input.organizationId,
          resource_type: input.resourceType,
          resource_id: input.resourceId,
          price_key: input.priceKey,
          units: input.units,
          unit_price_millicents: unit.millicentsPerHour,
          started_at: at,
          stopped_at: null,
        });
      });
    },
    async resourceStopped(input) {
      const at = new Date(input.at).toISOString();
      const open = await repo.findOpenInterval(db, input.resourceType, input.resourceId);
      if (open !== undefined) await repo.closeInterval(db, open.id, at < open.started_at ? open.started_at : at);
    },
  };

  async function generateBillingUsageReport(organizationId: string, input: UsageReportInput) {
    const organization = await requireOrganization(organizationId);
    const from = new Date(input.from);
    const to = new Date(input.to);
    const problems = [];
    if (from.getTime() >= to.getTime()) problems.push({ field: '/from', message: 'must be before to' });
    else if (to.getTime() - from.getTime() > MAX_REPORT_RANGE_MS) problems.push({ field: '/to', message: 'the range may span at most 366 days' });
    if (input.report_expiration_in_seconds <= 0 || input.report_expiration_in_seconds > MAX_REPORT_LIFETIME_SECONDS) {
      problems.push({ field: '/report_expiration_in_seconds', message: `must be 1 to ${MAX_REPORT_LIFETIME_SECONDS}` });
    }
    if (problems.length > 0) throw badRequest('invalid usage report request', problems);
    const plan = planOf(organization);
    const nowDate = clock.now();
    const end = new Date(Math.min(to.getTime(), nowDate.getTime()));
    const intervals = await repo.listIntervalsOverlapping(db, organizationId, from.toISOString(), end.toISOString());
    const rows = intervals
      .filter((interval) => overlapMs(interval, from, end) > 0)
      .map((interval) => {
        const start = new Date(Math.max(Date.parse(interval.started_at), from.getTime())).toISOString();
        const stop = new Date(Math.min(interval.stopped_at === null ? end.getTime() : Date.parse(interval.stopped_at), end.getTime())).toISOString();
        const cents = Math.round((intervalMillicents(interval, from, end) * plan.usagePricePercent) / 100 / 1000);
        return [interval.resource_type, interval.resource_id, interval.price_key, interval.units, start, stop, (overlapMs(interval, from, end) / 3_600_000).toFixed(2), formatCents(cents)];
      });
    const csv = csvOf(['resource_type', 'resource_id', 'price_key', 'units', 'from', 'to', 'hours', `cost_${CURRENCY_CODE.toLowerCase()}`], rows);
    const expiresAt = new Date(nowDate.getTime() + input.report_expiration_in_seconds * 1000);
    const id = newId();
    await repo.insertUsageReport(db, {
      id,
      organization_id: organizationId,
      from_at: from.toISOString(),
      to_at: to.toISOString(),
      csv,
      expires_at: expiresAt.toISOString(),
      created_at: nowDate.toISOString(),
    });
    return {
      report_url: downloadUrl(`/billing/usageReport/${id}`, 'usage-report', id, expiresAt),
      delete_report_url: downloadUrl(`/billing/usageReport/${id}`, 'usage-report-delete', id, expiresAt),
    };
  }

  async function downloadUsageReport(reportId: string, expires: string | undefined, signature: string | undefined) {
    checkLink('usage-report', reportId, expires, signature);
    const row = await repo.findUsageReport(db, reportId);
    if (row === undefined) throw notFound('no such download');
    return { filename: `usage-${row.from_at.slice(0, 10)}-${row.to_at.slice(0, 10)}.csv`, content: row.csv };
  }

  async function deleteUsageReportByLink(reportId: string, expires: string | undefined, signature: string | undefined): Promise<void> {
    checkLink('usage-report-delete', reportId, expires, signature);
    if (!(await repo.deleteUsageReport(db, reportId))) throw notFound('no such download');
  }

  async function removeExpiredUsageReports(): Promise<number> {
    return repo.deleteExpiredUsageReports(db, isoTimestamp(clock));
  }

  return { metering, generateBillingUsageReport, downloadUsageReport, deleteUsageReportByLink, removeExpiredUsageReports };
}
