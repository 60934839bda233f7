import { Type, type Static } from 'typebox';
import { Uuid } from '../../protocol/wire.ts';

/** What an organization's change stream answers: Server-Sent Events only (a live stream, nothing stored to list). */
export const CHANGE_STREAM_MEDIA_TYPES = ['text/event-stream'];

/** One `data:` of the stream: what to read again, and where it lives (ids only, never the change itself). */
export const OrganizationChangeEvent = Type.Object(
  {
    type: Type.Enum(['service', 'environment', 'cluster'], { description: "What changed: a service's state, deployment or workload health; an environment's state; a cluster's status or its agent's connection." }),
    id: Uuid,
    environment_id: Type.Optional(Uuid),
    project_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export type OrganizationChangeEventBody = Static<typeof OrganizationChangeEvent>;
