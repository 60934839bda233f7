/** The source of "now", injectable so tests can move time (token expiry, invitation expiry, billing periods). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO-8601 UTC with milliseconds, the one timestamp format of the API and of stored rows. */
export function isoTimestamp(clock: Clock): string {
  return clock.now().toISOString();
}
