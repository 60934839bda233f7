/**
 * JSON columns are text on SQLite and jsonb on PostgreSQL. Writes always pass JSON text (PostgreSQL casts it);
 * reads go through readJson, which accepts either form.
 */
export function writeJson(value: unknown): string {
  return JSON.stringify(value);
}

export function readJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
