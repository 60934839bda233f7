import { badRequest } from '../../lib/errors.ts';
import { isUuid } from '../../lib/ids.ts';

/**
 * The parts of a log read that arrive as text and mean more than their schema says: `since` (a time or a duration
 * back from now) and the cursor of a followed stream (the `id` of its last event, which Last-Event-ID carries back).
 */

const DURATION = /^(?:\d{1,9}[smhd])+$/;
const DURATION_PART = /(\d{1,9})([smhd])/g;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** A calendar date, optionally with a time of day and a zone (what Date.parse reads the same everywhere). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** The largest sequence number a log line can have (the column is a 32-bit integer on PostgreSQL). */
export const MAX_LOG_SEQ = 2_147_483_647;

/**
 * `since` as an ISO-8601 UTC time: an ISO-8601 date or time as given, or a duration back from `now` — `30s`, `10m`,
 * `2h`, `1d`, or a sum like `1h30m`. Anything else is a 400 naming the field.
 */
export function sinceTime(value: string, now: Date): string {
  if (DURATION.test(value)) {
    let ms = 0;
    for (const [, amount, unit] of value.matchAll(DURATION_PART)) ms += Number(amount) * (UNIT_MS[unit ?? 's'] ?? 0);
    const at = new Date(now.getTime() - ms);
    if (!Number.isNaN(at.getTime())) return at.toISOString();
  } else if (ISO_TIME.test(value)) {
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return new Date(at).toISOString();
  }
  throw badRequest('invalid since', [{ field: '/since', message: 'must be an ISO-8601 time (2026-11-26T14:00:00Z) or a duration such as 30s, 10m, 2h, 1d or 1h30m' }]);
}

/** At most this many deployments in a cursor: a followed stream keeps only those that can still get lines. */
const MAX_CURSOR_DEPLOYMENTS = 8;
const CURSOR_ENTRY = /^([0-9a-f-]{36}):(\d{1,10})$/;

function invalidCursor(): Error {
  return badRequest('invalid cursor', [
    { field: '/cursor', message: "must be the id of an event of a followed log (<deployment id>:<seq>, comma-separated), as Last-Event-ID sends it back" },
  ]);
}

/** Where a followed stream stands: per deployment, the sequence number of the last line sent. */
export type LogPositions = Map<string, number>;

export function parseLogCursor(text: string): LogPositions {
  const entries = text.split(',');
  if (entries.length > MAX_CURSOR_DEPLOYMENTS) throw invalidCursor();
  const positions: LogPositions = new Map();
  for (const entry of entries) {
    const match = CURSOR_ENTRY.exec(entry);
    const deploymentId = match?.[1];
    const seq = Number(match?.[2]);
    if (deploymentId === undefined || !isUuid(deploymentId) || positions.has(deploymentId) || seq > MAX_LOG_SEQ) throw invalidCursor();
    positions.set(deploymentId, seq);
  }
  return positions;
}

/** The cursor of a position: its deployments in creation order (their ids are UUIDv7). */
export function logCursorOf(positions: LogPositions): string {
  return [...positions.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([deploymentId, seq]) => `${deploymentId}:${seq}`)
    .join(',');
}
