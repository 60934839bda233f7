import { Cron } from 'croner';
import { badRequest } from '../../lib/errors.ts';
import { nameKey } from '../../lib/names.ts';

/**
 * The weekly calendar of a deployment rule (docs/deployment-rules.md): on each listed weekday, at `start_time` the
 * environment is deployed again and at `stop_time` it is stopped, both wall-clock times of the rule's IANA time zone.
 *
 * The reference types the times as date-times; only their time of day means anything. A time is accepted as `HH:MM`
 * (or `HH:MM:SS`) or as a date-time whose time of day, as written, is taken: "1970-01-01T19:00:00Z" and
 * "2024-05-02T19:00:00+02:00" both mean 19:00 in the rule's time zone (the offset is not applied: the zone is the
 * rule's `timezone`). Times are minute-precise; answers carry them as `1970-01-01THH:MM:00Z`.
 */

export const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The schedule part every rule has, as stored. */
export interface WeeklySchedule {
  timezone: string;
  /** `HH:MM` */
  startTime: string;
  /** `HH:MM` */
  stopTime: string;
  weekdays: readonly Weekday[];
}

export type ScheduledAction = 'start' | 'stop';

const TIME_OF_DAY = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(?:[Zz]|[+-]\d{2}:?\d{2})?$/;

/** `HH:MM` from an accepted time (see above), or a 400 naming `field`. */
export function timeOfDayFrom(value: string, field: string): string {
  const trimmed = value.trim();
  const clock = DATE_TIME.exec(trimmed)?.[1] ?? trimmed;
  const parts = TIME_OF_DAY.exec(clock);
  const hours = Number(parts?.[1]);
  const minutes = Number(parts?.[2]);
  const seconds = Number(parts?.[3] ?? '0');
  const fraction = Number(parts?.[4] ?? '0');
  if (parts === null || hours > 23 || minutes > 59) {
    throw badRequest(`"${value}" is not a time of day`, [{ field, message: 'must be a time of day, HH:MM (00:00 to 23:59) or a date-time whose time of day is taken' }]);
  }
  if (seconds !== 0 || fraction !== 0) {
    throw badRequest(`"${value}" is not a whole minute`, [{ field, message: 'must be a whole minute: schedules are minute-precise' }]);
  }
  return `${parts[1]}:${parts[2]}`;
}

/** The wire form of a stored `HH:MM`: a date-time, as the reference types it. */
export function timeOfDayView(stored: string): string {
  return `1970-01-01T${stored}:00Z`;
}

/** The days in week order, each once. */
export function orderedWeekdays(days: readonly Weekday[]): Weekday[] {
  return WEEKDAYS.filter((day) => days.includes(day));
}

export function storedWeekdays(days: readonly Weekday[]): string {
  return orderedWeekdays(days).join(',');
}

export function weekdaysOf(stored: string): Weekday[] {
  return stored === '' ? [] : orderedWeekdays(stored.split(',') as Weekday[]);
}

/** croner's day-of-week numbers (Sunday 0). */
function cronDay(day: Weekday): number {
  return (WEEKDAYS.indexOf(day) + 1) % 7;
}

function cronAt(time: string, schedule: WeeklySchedule): Cron {
  const [hours, minutes] = time.split(':');
  return new Cron(`${Number(minutes)} ${Number(hours)} * * ${schedule.weekdays.map(cronDay).join(',')}`, { timezone: schedule.timezone, paused: true });
}

/**
 * The schedule's latest start or stop after `after` and before `now`, or undefined when there is none. Only the
 * latest one matters: an installation that slept through a stop and the next start only needs to start.
 */
export function latestScheduledAction(schedule: WeeklySchedule, after: Date, now: Date): { action: ScheduledAction; at: Date } | undefined {
  if (schedule.weekdays.length === 0 || now.getTime() <= after.getTime()) return undefined;
  const latest = (action: ScheduledAction, time: string) => {
    const at = cronAt(time, schedule).previousRuns(1, now)[0];
    return at === undefined || at.getTime() <= after.getTime() ? undefined : { action, at };
  };
  const candidates = [latest('stop', schedule.stopTime), latest('start', schedule.startTime)].filter((event) => event !== undefined);
  return candidates.sort((a, b) => b.at.getTime() - a.at.getTime())[0];
}

/**
 * Whether `name` matches a rule's wildcard: `*` is any run of characters, the rest literal, case-insensitive (as names
 * are unique: lib/names.ts); the empty wildcard matches every name. A two-pointer match (at worst length × length steps) rather than a
 * regular expression, whose backtracking on many stars a user-given pattern could make slow.
 */
export function wildcardMatches(wildcard: string, name: string): boolean {
  const pattern = nameKey(wildcard);
  const text = nameKey(name);
  if (pattern === '') return true;
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p += 1;
      t += 1;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p;
      resume = t;
      p += 1;
    } else if (star !== -1) {
      p = star + 1;
      resume += 1;
      t = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}
