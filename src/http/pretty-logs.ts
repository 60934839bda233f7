import { styleText } from 'node:util';

/**
 * The server's log for a person at a terminal (SLIPWAY_LOG_FORMAT=pretty, the default on a terminal): one short line
 * per pino record instead of its JSON — the local time, the level in colour, the message, and the few fields that
 * say what happened. A request is one line when it ends (`GET /organization 200 3.1 ms`), an error adds its stack
 * below, a field holding several lines (a mail's text) follows indented. Formatting starts from the JSON pino
 * serialized, so redaction and serializers apply as they do to the JSON log. Colours follow the destination
 * (none when it is not a terminal, NO_COLOR, FORCE_COLOR). docs/decisions.md, "Server logs".
 */

type Colour = Parameters<typeof styleText>[0];

const LEVELS = new Map<number, { label: string; colour: Colour }>([
  [10, { label: 'TRACE', colour: 'gray' }],
  [20, { label: 'DEBUG', colour: 'blue' }],
  [30, { label: 'INFO', colour: 'green' }],
  [40, { label: 'WARN', colour: 'yellow' }],
  [50, { label: 'ERROR', colour: 'red' }],
  [60, { label: 'FATAL', colour: ['red', 'bold'] }],
]);

/** Fields every record carries or that the line itself already says. */
const SHOWN_OTHERWISE = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'req', 'res', 'responseTime', 'err']);

/** How many requests between their start and their end are remembered (long-polls stay open for a while). */
const REMEMBERED_REQUESTS = 10_000;

type LogRecord = Record<string, unknown>;

function twoDigits(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

function clockTime(epochMs: unknown): string {
  const at = typeof epochMs === 'number' ? new Date(epochMs) : new Date();
  return `${twoDigits(at.getHours())}:${twoDigits(at.getMinutes())}:${twoDigits(at.getSeconds())}.${twoDigits(at.getMilliseconds(), 3)}`;
}

function isRecord(value: unknown): value is LogRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function indented(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

/** `key=value`, quoted only when the value has spaces or quotes; objects as compact JSON. */
function field(key: string, value: unknown): string {
  if (typeof value === 'string') return `${key}=${/^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return `${key}=${String(value)}`;
  return `${key}=${JSON.stringify(value)}`;
}

/** Formats pino's JSON records as lines for people; keeps what it needs to join a request's start and end. */
export class PrettyLogFormatter {
  private readonly requests = new Map<string, string>();
  /** The stream the lines go to: colours only when it is a terminal that has them (or FORCE_COLOR says so). */
  private readonly destination: NodeJS.WritableStream;

  constructor(destination: NodeJS.WritableStream) {
    this.destination = destination;
  }

  private paint(colour: Colour, text: string): string {
    return styleText(colour, text, { stream: this.destination });
  }

  /** The text for one serialized record (with its final newline), or '' for a record shown with a later one. */
  format(serialized: string): string {
    let record: unknown;
    try {
      record = JSON.parse(serialized);
    } catch {
      return serialized.endsWith('\n') ? serialized : `${serialized}\n`;
    }
    if (!isRecord(record)) return `${serialized}\n`;
    const requestId = typeof record.request_id === 'string' ? record.request_id : undefined;
    const request = isRecord(record.req) ? record.req : undefined;
    if (record.msg === 'incoming request' && request !== undefined && requestId !== undefined) {
      this.remember(requestId, `${String(request.method)} ${String(request.url)}`);
      return '';
    }
    const level = LEVELS.get(typeof record.level === 'number' ? record.level : 30) ?? { label: String(record.level), colour: 'white' };
    const parts = [this.paint('gray', clockTime(record.time)), this.paint(level.colour, level.label.padEnd(5))];
    const following: string[] = [];
    const response = isRecord(record.res) ? record.res : undefined;
    if (response !== undefined && typeof response.statusCode === 'number') {
      parts.push(...this.requestParts(record, response.statusCode, requestId));
    } else {
      parts.push(typeof record.msg === 'string' ? record.msg : '');
      if (requestId !== undefined) parts.push(this.paint('gray', field('request_id', requestId)));
    }
    for (const [key, value] of Object.entries(record)) {
      if (SHOWN_OTHERWISE.has(key) || key === 'request_id' || value === undefined) continue;
      if (typeof value === 'string' && value.includes('\n')) following.push(`  ${key}:\n${indented(value)}`);
      else parts.push(this.paint('gray', field(key, value)));
    }
    const error = isRecord(record.err) ? record.err : undefined;
    if (error !== undefined) {
      const message = typeof error.message === 'string' ? error.message : '';
      if (message !== '') parts.push(this.paint(level.colour, `— ${message}`));
      if (typeof error.stack === 'string') following.push(indented(error.stack));
    }
    return `${[parts.filter((part) => part !== '').join(' '), ...following].join('\n')}\n`;
  }

  /** `GET /path 200 3.1 ms` (the status coloured by its class); `request completed 200 …` when the start is unknown. */
  private requestParts(record: LogRecord, status: number, requestId: string | undefined): string[] {
    const started = requestId === undefined ? undefined : this.requests.get(requestId);
    if (requestId !== undefined) this.requests.delete(requestId);
    const colour: Colour = status >= 500 ? 'red' : status >= 400 ? 'yellow' : 'green';
    const duration = typeof record.responseTime === 'number' ? `${record.responseTime.toFixed(1)} ms` : '';
    const what = started ?? (typeof record.msg === 'string' ? record.msg : '');
    return [what, this.paint(colour, String(status)), duration];
  }

  private remember(requestId: string, line: string): void {
    if (this.requests.size >= REMEMBERED_REQUESTS) {
      const oldest = this.requests.keys().next().value;
      if (oldest !== undefined) this.requests.delete(oldest);
    }
    this.requests.set(requestId, line);
  }
}

/** A pino destination writing `destination` the pretty lines of the records pino hands it. */
export function prettyLogStream(destination: NodeJS.WritableStream): { write(serialized: string): void } {
  const formatter = new PrettyLogFormatter(destination);
  return {
    write(serialized: string) {
      for (const line of serialized.split('\n')) {
        if (line === '') continue;
        const text = formatter.format(line);
        if (text !== '') destination.write(text);
      }
    },
  };
}
