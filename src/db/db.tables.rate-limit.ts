/** The rate limit's shared counts (migrations/0054_rate_limit_counters.ts, src/http/rate-limit.stores.ts). */

/** One caller's current window: `key` is `api_token:<id>`, `user:<id>`, `address:<ip>` (a route's own prefix first). */
export interface RateLimitCountersTable {
  key: string;
  window_start: string;
  count: number;
}
