import { Type, type TSchema } from 'typebox';

/** Shared TypeBox pieces of the wire format (DESIGN.md §4): uuids, timestamps, nullable fields, list envelopes. */

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });

/** Names of organizations, projects, tokens, …: non-blank, at most 255 characters. */
export const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' });
export const Description = Type.String({ maxLength: 2000 });
export const Url = Type.String({ maxLength: 2048 });

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** The reference's `Base`: id and creation time, plus the last update. */
export const BaseFields = {
  id: Uuid,
  created_at: Timestamp,
  updated_at: Type.Optional(Timestamp),
};

/** Lists answer `{ "results": [...] }` as the reference does. */
export function ListOf<T extends TSchema>(item: T, id: string) {
  return Type.Object({ results: Type.Array(item) }, { $id: id });
}

export const OrganizationParams = Type.Object({ organizationId: Uuid }, { additionalProperties: false });
export const NoContent = Type.Null({ description: 'No content' });
