/**
 * Runs `work` over `items` with at most `width` in flight, answering the results in the items' order. For a test's
 * independent requests (a sweep of routes × callers) whose database round trips can overlap on PostgreSQL.
 */
export async function mapInPool<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T);
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}
