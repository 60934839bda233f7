import { Type, type TSchema } from 'typebox';

/**
 * Settings as the reference models its "advanced settings" (a service's, a cluster's): one flat map of dotted keys,
 * each with a type, bounds and a default. A table of keys (KeyedSetting) is the one source of their request and
 * answer schemas, their defaults, what is kept of a request (only what differs from the defaults) and the full map
 * an answer shows (the defaults with what was kept over them). services.advanced-settings.ts and
 * clusters.advanced-settings.ts each hold a table; this is the one way both are read and written.
 */

export type KeyType =
  | { type: 'boolean' }
  | { type: 'integer'; minimum: number; maximum: number; nullable?: true }
  | { type: 'string'; maxLength?: number; nullable?: true }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'strings' }
  /** Kubernetes label selectors: label keys and values. */
  | { type: 'labels' }
  /** Free-form name/value tags (a cloud provider's resource tags). */
  | { type: 'tags' }
  /** IPv4 or IPv6 CIDR blocks. */
  | { type: 'cidrs' };

export interface KeyedSetting {
  key: string;
  value: KeyType;
  default: unknown;
}

const NO_NUL = '^[^\\x00]*$';
/** Digits, dots and hex groups, then a prefix length: a CIDR's shape (the address itself is the provider's to judge). */
const CIDR = '^(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}/[0-9]{1,2}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*/[0-9]{1,3})$';

/** The schema of one key's value (bounds are Slipway's: what a driver can carry out). */
export function keyedSettingSchema(value: KeyType): TSchema {
  switch (value.type) {
    case 'boolean':
      return Type.Boolean();
    case 'integer': {
      const integer = Type.Integer({ minimum: value.minimum, maximum: value.maximum });
      return value.nullable === true ? Type.Union([integer, Type.Null()]) : integer;
    }
    case 'string': {
      const string = Type.String({ maxLength: value.maxLength ?? 4096, pattern: NO_NUL });
      return value.nullable === true ? Type.Union([string, Type.Null()]) : string;
    }
    case 'enum':
      return Type.Enum([...value.values]);
    case 'strings':
      return Type.Array(Type.String({ maxLength: 4096, pattern: NO_NUL }), { maxItems: 64 });
    case 'labels':
      return Type.Record(Type.String({ minLength: 1, maxLength: 316, pattern: '^[A-Za-z0-9./_-]+$' }), Type.String({ maxLength: 63, pattern: '^[A-Za-z0-9._-]*$' }), { maxProperties: 32, additionalProperties: false });
    case 'tags':
      return Type.Record(Type.String({ minLength: 1, maxLength: 128, pattern: NO_NUL }), Type.String({ maxLength: 256, pattern: NO_NUL }), { maxProperties: 50, additionalProperties: false });
    case 'cidrs':
      return Type.Array(Type.String({ maxLength: 64, pattern: CIDR }), { maxItems: 256 });
  }
}

/**
 * The map's shape: every key optional in a request (left out: its default; an unknown key is refused), every key
 * present in an answer. `$id` names the request's schema in the published document.
 */
export function keyedSettingsSchema(entries: readonly KeyedSetting[], use: 'request' | 'response', $id: string): TSchema {
  const properties = Object.fromEntries(entries.map((entry) => [entry.key, use === 'request' ? Type.Optional(keyedSettingSchema(entry.value)) : keyedSettingSchema(entry.value)]));
  return Type.Object(properties, use === 'request' ? { $id, additionalProperties: false } : { additionalProperties: false });
}

/** Every key's default, a fresh object. */
export function keyedDefaults(entries: readonly KeyedSetting[]): Record<string, unknown> {
  return Object.fromEntries(entries.map((entry) => [entry.key, structuredClone(entry.default)]));
}

/** What is kept of a request: the keys that differ from their defaults. */
export function keyedOverrides(entries: readonly KeyedSetting[], request: Record<string, unknown>): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  for (const entry of entries) {
    if (!(entry.key in request)) continue;
    if (JSON.stringify(request[entry.key]) !== JSON.stringify(entry.default)) overrides[entry.key] = request[entry.key];
  }
  return overrides;
}

/** The full map: the defaults, with what was kept over them (`kept` as stored: anything but an object is nothing). */
export function keyedSettingsWith(entries: readonly KeyedSetting[], kept: unknown): Record<string, unknown> {
  const overrides = typeof kept === 'object' && kept !== null && !Array.isArray(kept) ? (kept as Record<string, unknown>) : {};
  const merged = keyedDefaults(entries);
  for (const key of Object.keys(merged)) if (key in overrides) merged[key] = overrides[key];
  return merged;
}
