import { badRequest } from '../../lib/errors.ts';

/**
 * The reference's cluster log and metric reads are a Loki and a Prometheus query passed through (`endpoint`, `query`,
 * …). Slipway runs neither: it answers log queries from the cluster's own log lines with the part of LogQL a log
 * view uses — a stream selector over the lines' labels and line filters — in Loki's answer shape, and metric
 * queries with Prometheus's empty answer (docs/cluster-insight.md, "Logs and metrics queries").
 */

export interface LabelMatcher {
  label: string;
  negated: boolean;
  value: string;
}

export interface LineFilter {
  contains: boolean;
  text: string;
}

export interface LogQuery {
  matchers: LabelMatcher[];
  filters: LineFilter[];
}

const STRING = '"((?:[^"\\\\]|\\\\.)*)"';
const MATCHER = new RegExp(`^\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*(=|!=)\\s*${STRING}\\s*$`);
const FILTER = new RegExp(`^\\s*(\\|=|!=)\\s*${STRING}`);

function unquote(text: string): string {
  return text.replace(/\\(.)/g, '$1');
}

function refuse(message: string): never {
  throw badRequest(message, [{ field: '/query', message }]);
}

/** `{label="value", other!="x"} |= "text" != "noise"`; anything else (regex matchers, parsers, metrics) is a 400. */
export function parseLogQuery(query: string): LogQuery {
  const trimmed = query.trim();
  const close = trimmed.indexOf('}');
  if (!trimmed.startsWith('{') || close === -1) refuse('the query must start with a LogQL stream selector such as {type="error"}');
  const selector = trimmed.slice(1, close).trim();
  const matchers: LabelMatcher[] = [];
  if (selector !== '') {
    for (const part of selector.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)) {
      const match = MATCHER.exec(part);
      if (match === null) refuse(`"${part.trim().slice(0, 100)}" is not a label matcher Slipway serves (label="value" or label!="value")`);
      matchers.push({ label: match[1] ?? '', negated: match[2] === '!=', value: unquote(match[3] ?? '') });
    }
  }
  const filters: LineFilter[] = [];
  let rest = trimmed.slice(close + 1);
  while (rest.trim() !== '') {
    const match = FILTER.exec(rest);
    if (match === null) refuse(`"${rest.trim().slice(0, 100)}" is not a line filter Slipway serves (|= "text" or != "text")`);
    filters.push({ contains: match[1] === '|=', text: unquote(match[2] ?? '') });
    rest = rest.slice(match[0].length);
  }
  return { matchers, filters };
}

export function matchesLogQuery(query: LogQuery, labels: Readonly<Record<string, string>>, line: string): boolean {
  for (const matcher of query.matchers) {
    // As in Loki, a label a stream does not have equals the empty string.
    const equal = (labels[matcher.label] ?? '') === matcher.value;
    if (equal === matcher.negated) return false;
  }
  return query.filters.every((filter) => line.includes(filter.text) === filter.contains);
}

/** What the endpoint names, whether it is given bare (`query_range`) or as Loki's or Prometheus's path. */
export function endpointKind(endpoint: string): 'query' | 'query_range' | undefined {
  const last = endpoint.trim().replace(/\/+$/, '').split('/').pop();
  return last === 'query' || last === 'query_range' ? last : undefined;
}

const DURATION = /^(\d+)(ms|s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A Loki time: nanoseconds (or seconds) since the epoch, or RFC 3339; undefined when absent. */
export function parseLokiTime(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) {
    const number = Number(value);
    // Loki takes nanoseconds; a value small enough to be seconds is read as seconds, as Loki does.
    return value.includes('.') || number < 1e12 ? number * 1000 : Math.floor(number / 1e6);
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw badRequest(`${field} must be a Unix time in nanoseconds or an RFC 3339 date`, [{ field: `/${field}`, message: 'not a time' }]);
  return at;
}

export function parseDuration(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const match = DURATION.exec(value);
  if (match === null) throw badRequest(`${field} must be a duration such as 1h or 30m`, [{ field: `/${field}`, message: 'not a duration' }]);
  return Number(match[1]) * (UNIT_MS[match[2] ?? 's'] ?? 1000);
}
