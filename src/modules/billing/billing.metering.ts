import { HOURS_PER_MONTH } from './billing.plans.ts';

/**
 * Pricing of metered running time, pure: intervals in, charges out. A resource is charged for the time it ran inside
 * the window at its units × unit price, and never more in one billing month than its dearest hourly rate ×
 * HOURS_PER_MONTH, which is the maximum getClusterCurrentCost promises (a 31-day month has 744 hours).
 */
export interface MeteredInterval {
  resource_type: string;
  resource_id: string;
  price_key: string;
  units: number;
  unit_price_millicents: number;
  started_at: string;
  stopped_at: string | null;
}

export interface ResourceCharge {
  resourceType: string;
  resourceId: string;
  priceKeys: string[];
  hours: number;
  cents: number;
}

const MS_PER_HOUR = 3_600_000;

/** The part of an interval inside [from, to), in milliseconds. */
export function overlapMs(interval: Pick<MeteredInterval, 'started_at' | 'stopped_at'>, from: Date, to: Date): number {
  const start = Math.max(Date.parse(interval.started_at), from.getTime());
  const end = Math.min(interval.stopped_at === null ? to.getTime() : Date.parse(interval.stopped_at), to.getTime());
  return Math.max(0, end - start);
}

/** Millicents an interval costs inside the window, at list price. */
export function intervalMillicents(interval: MeteredInterval, from: Date, to: Date): number {
  return (interval.units * interval.unit_price_millicents * overlapMs(interval, from, to)) / MS_PER_HOUR;
}

/**
 * Charges per resource for one billing month's window (or a part of it, for the cost so far), at the plan's percent
 * of list price, in whole cents (rounded half up per resource).
 */
export function chargesFor(intervals: MeteredInterval[], from: Date, to: Date, pricePercent: number): ResourceCharge[] {
  const byResource = new Map<string, { charge: ResourceCharge; millicents: number; capMillicents: number }>();
  for (const interval of intervals) {
    const ms = overlapMs(interval, from, to);
    if (ms === 0) continue;
    const key = `${interval.resource_type}:${interval.resource_id}`;
    const entry = byResource.get(key) ?? {
      charge: { resourceType: interval.resource_type, resourceId: interval.resource_id, priceKeys: [], hours: 0, cents: 0 },
      millicents: 0,
      capMillicents: 0,
    };
    entry.millicents += intervalMillicents(interval, from, to);
    entry.capMillicents = Math.max(entry.capMillicents, interval.units * interval.unit_price_millicents * HOURS_PER_MONTH);
    entry.charge.hours += ms / MS_PER_HOUR;
    if (!entry.charge.priceKeys.includes(interval.price_key)) entry.charge.priceKeys.push(interval.price_key);
    byResource.set(key, entry);
  }
  return [...byResource.values()].map(({ charge, millicents, capMillicents }) => ({
    ...charge,
    hours: Math.round(charge.hours * 100) / 100,
    cents: Math.round((Math.min(millicents, capMillicents) * pricePercent) / 100 / 1000),
  }));
}

export function sumCents(charges: ResourceCharge[]): number {
  return charges.reduce((total, charge) => total + charge.cents, 0);
}

/** The UTC calendar month `YYYY-MM` holding `at`, and its bounds. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

export function periodBounds(period: string): { from: Date; to: Date } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(year, month - 1, 1)), to: new Date(Date.UTC(year, month, 1)) };
}

export function previousPeriod(period: string): string {
  const { from } = periodBounds(period);
  return periodOf(new Date(from.getTime() - 1));
}

export const PERIOD_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;
