import type { CompiledQuery, Insertable, Kysely } from 'kysely';
import type { DB, OrganizationEventsTable } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest } from '../../lib/errors.ts';
import type { EventPublisher } from '../webhooks/webhooks.events.ts';
import { newId } from '../../lib/ids.ts';
import {
  compileEventInsert,
  completeEvent,
  deleteAllEventsBefore,
  deleteEventsBefore,
  insertEvent,
  listEvents,
  listEventTargets,
  type EventCursor,
  type OrganizationEventRow,
} from './organization-events.repo.ts';
import {
  DEFAULT_EVENT_PAGE_SIZE,
  type OrganizationEventPage,
  type OrganizationEventQueryInput,
  type OrganizationEventTargetQueryInput,
  type OrganizationEventView,
} from './organization-events.schemas.ts';
import type {
  AuthorType,
  OrganizationEventOrigin,
  OrganizationEventSubTargetType,
  OrganizationEventTargetType,
  OrganizationEventType,
  Outcome,
} from './organization-events.taxonomy.ts';

/**
 * The audit log's store: events are written by the HTTP audit hook (src/http/audit.ts) and listed, newest first, with
 * the reference's filters and page tokens. Retention follows the organization's plan (`audit_logs_retention_in_days`):
 * a listing purges what its organization has outlived, and an hourly sweep removes whatever is older than the longest
 * retention of any plan (organizations that stopped listing, organizations that were deleted).
 */
export interface OrganizationEventsDeps {
  db: Kysely<DB>;
  clock: Clock;
  retentionDaysOf(organizationId: string): Promise<number>;
  /** The current names of the projects and environments events name, of those still there (one read per page). */
  projectNames(projectIds: readonly string[]): Promise<Map<string, string>>;
  environmentNames(environmentIds: readonly string[]): Promise<Map<string, string>>;
  /** Where each event is announced (the webhooks' ORGANIZATION_EVENT), and the worker woken for its deliveries. */
  events: EventPublisher;
  wakeWorkers(): void;
  /** The longest retention any plan has: the sweep's horizon. */
  maxRetentionDays: number;
}

/** An event as the audit hook knows it before it is stamped with its id and time. */
export type EventRecord = Omit<Insertable<OrganizationEventsTable>, 'id' | 'created_at'>;

export interface RecordedEvent {
  id: string;
  organizationId: string;
  createdAt: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const NANOSECONDS_PER_MS = 1_000_000n;

function timeParameter(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d+$/.test(value) ? Number(BigInt(value) / NANOSECONDS_PER_MS) : Date.parse(value);
  if (!Number.isFinite(ms) || ms < 0 || ms > 8.64e15) {
    throw badRequest('invalid query parameters', [{ field: `/${name}`, message: 'must be an ISO-8601 date-time or nanoseconds since the epoch' }]);
  }
  return new Date(ms).toISOString();
}

function encodeCursor(row: OrganizationEventRow): string {
  return Buffer.from(`${row.created_at}|${row.id}`, 'utf8').toString('base64url');
}

function decodeCursor(name: string, token: string, direction: EventCursor['direction']): EventCursor {
  const [createdAt, id, extra] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  if (createdAt === undefined || id === undefined || extra !== undefined || Number.isNaN(Date.parse(createdAt)) || id.length !== 36) {
    throw badRequest('invalid query parameters', [{ field: `/${name}`, message: 'is not a page token of this list' }]);
  }
  return { createdAt, id, direction };
}

function view(row: OrganizationEventRow): OrganizationEventView {
  return {
    id: row.id,
    timestamp: row.created_at,
    event_type: row.event_type as OrganizationEventType,
    target_id: row.target_id,
    // The reference's names and change are not nullable: what an event does not have is left out.
    ...(row.target_name === null ? {} : { target_name: row.target_name }),
    target_type: row.target_type as OrganizationEventTargetType,
    sub_target_type: row.sub_target_type as OrganizationEventSubTargetType | null,
    ...(row.change === null ? {} : { change: row.change }),
    origin: row.origin as OrganizationEventOrigin,
    triggered_by: row.triggered_by,
    project_id: row.project_id,
    environment_id: row.environment_id,
    operation_id: row.operation_id,
    author: { type: row.author_type as AuthorType, id: row.author_id, name: row.triggered_by },
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    status_code: row.status_code,
    outcome: row.outcome as Outcome,
  };
}

/** The filters of a query as they are repeated in the page links (page tokens and size aside). */
function linkPath(organizationId: string, query: OrganizationEventQueryInput, token: { name: 'continueToken' | 'stepBackToken'; value: string }): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || name === 'continueToken' || name === 'stepBackToken') continue;
    parameters.set(name, String(value));
  }
  parameters.set(token.name, token.value);
  return `/organization/${organizationId}/events?${parameters.toString()}`;
}

function recordedOf(row: Insertable<OrganizationEventsTable>): RecordedEvent {
  return { id: row.id, organizationId: row.organization_id, createdAt: row.created_at };
}

export function createOrganizationEventsService(deps: OrganizationEventsDeps) {
  const { db, clock } = deps;

  function stamp(event: EventRecord): Insertable<OrganizationEventsTable> {
    return { id: newId(), created_at: clock.now().toISOString(), ...event };
  }

  /** Fills project_name and environment_name with today's names: one read of each for the whole page. */
  async function withPlaceNames(events: OrganizationEventView[]): Promise<OrganizationEventView[]> {
    const distinct = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];
    const projects = await deps.projectNames(distinct(events.map((event) => event.project_id)));
    const environments = await deps.environmentNames(distinct(events.map((event) => event.environment_id)));
    return events.map((event) => {
      const projectName = event.project_id === null ? null : (projects.get(event.project_id) ?? null);
      const environmentName = event.environment_id === null ? null : (environments.get(event.environment_id) ?? null);
      return {
        ...event,
        ...(projectName === null ? {} : { project_name: projectName }),
        ...(environmentName === null ? {} : { environment_name: environmentName }),
      };
    });
  }

  return {
    /** The insert of `event`, stamped now and compiled for the transaction it is to commit with. */
    compileInsert(event: EventRecord): { query: CompiledQuery; recorded: RecordedEvent } {
      const row = stamp(event);
      return { query: compileEventInsert(db, row), recorded: recordedOf(row) };
    },

    /** Writes `event` on its own (a write without a transaction, a failure, a denial). */
    async record(event: EventRecord): Promise<RecordedEvent> {
      const row = stamp(event);
      await insertEvent(db, row);
      return recordedOf(row);
    },

    /**
     * Publishes a settled event to the webhooks subscribed to ORGANIZATION_EVENT: their messages and delivery jobs in
     * one transaction, after the event itself (an announcement lost to a crash in between leaves the log complete).
     */
    async announce(recorded: RecordedEvent, event: EventRecord): Promise<void> {
      const data = view({ ...event, id: recorded.id, created_at: recorded.createdAt, organization_id: recorded.organizationId } as OrganizationEventRow);
      const queued = await db.transaction().execute((trx) =>
        deps.events.publish(trx, {
          organizationId: recorded.organizationId,
          type: 'ORGANIZATION_EVENT',
          resource: { type: data.target_type, id: data.target_id ?? recorded.organizationId, name: data.target_name ?? '' },
          data,
        }),
      );
      // Most organizations have no webhook: waking the worker for nothing cost every audited write a job claim.
      if (queued > 0) deps.wakeWorkers();
    },

    /** Settles how a request written in its transaction ended; false when that transaction did not commit after all. */
    async complete(id: string, fields: Pick<OrganizationEventsTable, 'status_code' | 'outcome' | 'target_id' | 'target_name'>): Promise<boolean> {
      return completeEvent(db, id, fields);
    },

    async listOrganizationEvents(organizationId: string, query: OrganizationEventQueryInput): Promise<OrganizationEventPage> {
      if (query.continueToken !== undefined && query.stepBackToken !== undefined) {
        throw badRequest('invalid query parameters', [{ field: '/stepBackToken', message: 'cannot be combined with continueToken' }]);
      }
      const horizon = new Date(clock.now().getTime() - (await deps.retentionDaysOf(organizationId)) * DAY_MS).toISOString();
      await deleteEventsBefore(db, organizationId, horizon);

      const from = timeParameter('fromTimestamp', query.fromTimestamp);
      const to = timeParameter('toTimestamp', query.toTimestamp);
      const cursor =
        query.continueToken !== undefined
          ? decodeCursor('continueToken', query.continueToken, 'older')
          : query.stepBackToken !== undefined
            ? decodeCursor('stepBackToken', query.stepBackToken, 'newer')
            : undefined;
      const pageSize = query.pageSize ?? DEFAULT_EVENT_PAGE_SIZE;
      const rows = await listEvents(
        db,
        {
          organizationId,
          from: from === undefined || from < horizon ? horizon : from,
          ...(to === undefined ? {} : { to }),
          ...(query.eventType === undefined ? {} : { eventType: query.eventType }),
          ...(query.targetType === undefined ? {} : { targetType: query.targetType }),
          ...(query.targetId === undefined ? {} : { targetId: query.targetId }),
          ...(query.subTargetType === undefined ? {} : { subTargetType: query.subTargetType }),
          ...(query.triggeredBy === undefined ? {} : { triggeredBy: query.triggeredBy }),
          ...(query.origin === undefined ? {} : { origin: query.origin }),
          ...(query.serviceProjectId === undefined ? {} : { projectId: query.serviceProjectId }),
          ...(query.serviceEnvironmentId === undefined ? {} : { environmentId: query.serviceEnvironmentId }),
          ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
          ...(query.operationId === undefined ? {} : { operationId: query.operationId }),
        },
        cursor,
        pageSize,
      );
      const more = rows.length > pageSize;
      const page = rows.slice(0, pageSize);
      // A step back reads newer events oldest first; the page is shown newest first like every other.
      if (cursor?.direction === 'newer') page.reverse();
      const first = page[0];
      const last = page[page.length - 1];
      const olderExist = cursor?.direction === 'newer' ? true : more;
      const newerExist = cursor === undefined ? false : cursor.direction === 'older' ? true : more;
      return {
        events: await withPlaceNames(page.map(view)),
        links: {
          ...(newerExist && first !== undefined ? { previous: linkPath(organizationId, query, { name: 'stepBackToken', value: encodeCursor(first) }) } : {}),
          ...(olderExist && last !== undefined ? { next: linkPath(organizationId, query, { name: 'continueToken', value: encodeCursor(last) }) } : {}),
        },
      };
    },

    /**
     * What the filtered log has events about (getOrganizationEventTargets), to fill a filter's choices: the events'
     * targets, or with `targetLevelToFetch` the projects or environments they happened in, under today's names (those
     * deleted since are left out). Within the plan's retention, like the log itself.
     */
    async listEventTargets(organizationId: string, query: OrganizationEventTargetQueryInput): Promise<Array<{ id: string; name: string }>> {
      const horizon = new Date(clock.now().getTime() - (await deps.retentionDaysOf(organizationId)) * DAY_MS).toISOString();
      const from = timeParameter('fromTimestamp', query.fromTimestamp);
      const to = timeParameter('toTimestamp', query.toTimestamp);
      const level = query.targetLevelToFetch ?? 'TARGET';
      const targets = await listEventTargets(
        db,
        {
          organizationId,
          from: from === undefined || from < horizon ? horizon : from,
          ...(to === undefined ? {} : { to }),
          ...(query.eventType === undefined ? {} : { eventType: query.eventType }),
          ...(query.targetType === undefined ? {} : { targetType: query.targetType }),
          ...(query.triggeredBy === undefined ? {} : { triggeredBy: query.triggeredBy }),
          ...(query.origin === undefined ? {} : { origin: query.origin }),
          ...(query.projectId === undefined ? {} : { projectId: query.projectId }),
          ...(query.environmentId === undefined ? {} : { environmentId: query.environmentId }),
        },
        level,
      );
      const namesOf = level === 'PROJECT' ? deps.projectNames : level === 'ENVIRONMENT' ? deps.environmentNames : undefined;
      const names = namesOf === undefined ? undefined : await namesOf(targets.map((target) => target.id));
      const named = targets.map((target) => ({ id: target.id, name: names === undefined ? target.name : (names.get(target.id) ?? null) }));
      return named.filter((target): target is { id: string; name: string } => target.name !== null);
    },

    /** Removes events older than the longest retention of any plan. */
    async removeExpired(): Promise<void> {
      await deleteAllEventsBefore(db, new Date(clock.now().getTime() - deps.maxRetentionDays * DAY_MS).toISOString());
    },
  };
}

export type OrganizationEventsService = ReturnType<typeof createOrganizationEventsService>;
