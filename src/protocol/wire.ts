import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/** Shared TypeBox pieces of the wire format (DESIGN.md §4): uuids, timestamps, nullable fields, list envelopes. */

/** Ids are stored in canonical lower case; an upper-case spelling would name no row, so it is refused as invalid. */
export const Uuid = Type.String({ format: 'uuid', pattern: '^[0-9a-f-]{36}$' });
export const Timestamp = Type.String({ format: 'date-time' });

/**
 * Names of organizations, projects, tokens, …: one line of printable text, 1–255 characters, not blank.
 * PostgreSQL text cannot hold NUL (storing one is a server error there, while SQLite keeps it), so no text field
 * accepts it. The name pattern is "optional non-control spaces, one printable character, then printable text": its
 * parts cannot overlap, so it runs in linear time whatever the input length.
 */
export const Name = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\S\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$',
});
/** Free text: line breaks and tabs allowed, NUL not. */
export const Description = Type.String({ maxLength: 2000, pattern: '^[^\\x00]*$' });
export const Url = Type.String({ maxLength: 2048, pattern: '^[^\\x00-\\x1f\\x7f]*$' });

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

/** The reference's delete parameter: remove the records only, leaving what runs on the cluster as it is. */
export const SkipReconcileQuery = Type.Object(
  { skipReconcile: Type.Optional(Type.Boolean({ default: false, description: 'Remove the records only; what runs on the cluster stays.' })) },
  { additionalProperties: false },
);

const validators = new Map<TSchema, { Check(value: unknown): boolean; Errors(value: unknown): Array<{ instancePath: string; message: string }> }>();

/**
 * What is wrong with `value` as `schema` describes it — the first problem, as "/field message" — or undefined when
 * nothing is. For what arrives from outside the process's own types (an agent's answer, a stored job payload); the
 * validator is compiled once per schema.
 */
export function schemaProblem(schema: TSchema, value: unknown): string | undefined {
  let validator = validators.get(schema);
  if (validator === undefined) validators.set(schema, (validator = Compile(schema)));
  if (validator.Check(value)) return undefined;
  const [first] = validator.Errors(value);
  return first === undefined ? 'does not match' : `${first.instancePath === '' ? '/' : first.instancePath} ${first.message}`;
}
