/**
 * A statement takes at most so many parameters (SQLite 32,766, PostgreSQL 65,535), so a list of ids that grows with
 * the data (every project of an organization, for their counts) is read in chunks: an `IN` of a thousand at a time.
 */
export const IDS_PER_STATEMENT = 1_000;

/** The rows `read` answers for every chunk of `ids`, in the chunks' order. */
export async function readInIdChunks<T>(ids: readonly string[], read: (chunk: string[]) => Promise<readonly T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) rows.push(...(await read(ids.slice(start, start + IDS_PER_STATEMENT))));
  return rows;
}
