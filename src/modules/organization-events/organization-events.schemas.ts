import { Type, type Static } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import {
  AUTHOR_TYPES,
  ORGANIZATION_EVENT_ORIGINS,
  ORGANIZATION_EVENT_SUB_TARGET_TYPES,
  ORGANIZATION_EVENT_TARGET_TYPES,
  ORGANIZATION_EVENT_TYPES,
  OUTCOMES,
} from './organization-events.taxonomy.ts';

export const MAX_EVENT_PAGE_SIZE = 100;
export const DEFAULT_EVENT_PAGE_SIZE = 10;

/** The reference's enums, inline (a named schema may appear only once in a response). */
const OrganizationEventType = Type.Enum(ORGANIZATION_EVENT_TYPES);
const OrganizationEventTargetType = Type.Enum(ORGANIZATION_EVENT_TARGET_TYPES);
const OrganizationEventSubTargetType = Type.Enum(ORGANIZATION_EVENT_SUB_TARGET_TYPES);
const OrganizationEventOrigin = Type.Enum(ORGANIZATION_EVENT_ORIGINS);

/** An ISO-8601 date-time, or (as the reference sends it) nanoseconds since the epoch. */
const EventTime = Type.String({ minLength: 1, maxLength: 40, pattern: '^[0-9][0-9TZ:.+-]*$' });
/** The opaque page tokens of `links`. */
const PageToken = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' });

/** The reference's getOrganizationEvents parameters, plus `outcome` and `operationId` (Slipway's). */
export const OrganizationEventQuery = Type.Object(
  {
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EVENT_PAGE_SIZE })),
    fromTimestamp: Type.Optional(EventTime),
    toTimestamp: Type.Optional(EventTime),
    continueToken: Type.Optional(PageToken),
    stepBackToken: Type.Optional(PageToken),
    eventType: Type.Optional(OrganizationEventType),
    targetType: Type.Optional(OrganizationEventTargetType),
    targetId: Type.Optional(Uuid),
    subTargetType: Type.Optional(OrganizationEventSubTargetType),
    /** The author: a person's name or e-mail, `token:<name>`, or the user's or token's id. */
    triggeredBy: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    origin: Type.Optional(OrganizationEventOrigin),
    serviceProjectId: Type.Optional(Uuid),
    serviceEnvironmentId: Type.Optional(Uuid),
    outcome: Type.Optional(Type.Enum(OUTCOMES)),
    operationId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9]+$' })),
  },
  { additionalProperties: false },
);
export type OrganizationEventQueryInput = Static<typeof OrganizationEventQuery>;

/** The reference's getOrganizationEventTargets parameters: the log's filters, and the level of the targets answered. */
export const OrganizationEventTargetQuery = Type.Object(
  {
    fromTimestamp: Type.Optional(EventTime),
    toTimestamp: Type.Optional(EventTime),
    eventType: Type.Optional(OrganizationEventType),
    targetType: Type.Optional(OrganizationEventTargetType),
    triggeredBy: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    origin: Type.Optional(OrganizationEventOrigin),
    projectId: Type.Optional(Uuid),
    environmentId: Type.Optional(Uuid),
    targetLevelToFetch: Type.Optional(Type.Enum(['PROJECT', 'ENVIRONMENT'])),
  },
  { additionalProperties: false },
);
export type OrganizationEventTargetQueryInput = Static<typeof OrganizationEventTargetQuery>;
export const OrganizationEventTargetResponseList = Type.Object(
  { targets: Type.Array(Type.Object({ id: Uuid, name: Type.String() })) },
  { $id: 'OrganizationEventTargetResponseList' },
);

/** The reference's OrganizationEventResponse, plus who exactly, from where, and how it ended (Slipway's). */
export const OrganizationEventResponse = Type.Object(
  {
    id: Uuid,
    timestamp: Timestamp,
    event_type: OrganizationEventType,
    target_id: Nullable(Type.String()),
    target_name: Type.Optional(Type.String()),
    target_type: OrganizationEventTargetType,
    sub_target_type: Nullable(OrganizationEventSubTargetType),
    /** The request body as JSON text, secrets masked; absent for a request without a body. */
    change: Type.Optional(Type.String()),
    origin: OrganizationEventOrigin,
    triggered_by: Type.String(),
    project_id: Nullable(Uuid),
    project_name: Type.Optional(Type.String()),
    environment_id: Nullable(Uuid),
    environment_name: Type.Optional(Type.String()),
    operation_id: Type.String(),
    author: Type.Object({ type: Type.Enum(AUTHOR_TYPES), id: Uuid, name: Type.String() }),
    ip: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
    request_id: Type.String(),
    /** The HTTP status the request was answered with; null only while it is being answered. */
    status_code: Nullable(Type.Integer()),
    outcome: Type.Enum(OUTCOMES),
  },
  { $id: 'OrganizationEventResponse' },
);
export type OrganizationEventView = Static<typeof OrganizationEventResponse>;

export const OrganizationEventResponseList = Type.Object(
  {
    events: Type.Array(OrganizationEventResponse),
    /** Paths of the previous (newer) and next (older) pages with the same filters; absent at either end. */
    links: Type.Object({ previous: Type.Optional(Type.String()), next: Type.Optional(Type.String()) }),
  },
  { $id: 'OrganizationEventResponseList' },
);
export type OrganizationEventPage = Static<typeof OrganizationEventResponseList>;
