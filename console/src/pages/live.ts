/**
 * How often a page showing live states reads them again. The API has no push channel for states yet (only logs
 * stream), so the pages poll the status endpoints; 1.5 s keeps "a state change reaches an open page < 1 s" on
 * average and costs one small request per page.
 */
export const LIVE_INTERVAL_MS = 1500;

export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
