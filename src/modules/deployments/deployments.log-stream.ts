import type { FastifyReply, FastifyRequest } from 'fastify';
import { serveLiveStream } from '../../http/live-stream.ts';
import type { LogEvent, LogReader, LogStreamEnd, LogView } from './deployments.logs.ts';

/**
 * A log read over HTTP (deployments.service-routes.ts, `list<Noun>Log`): which media types it answers, and a live
 * stream written on the raw response as Server-Sent Events, NDJSON or plain text.
 */

/** What a log read may answer: stored lines as JSON or plain text, or a live stream of one deployment until it settles. */
export const LOG_MEDIA_TYPES = ['application/json', 'text/event-stream', 'application/x-ndjson', 'text/plain'];
/** What a followed log may answer: a stream only; a client that takes anything gets plain text (`curl -N`). */
export const FOLLOW_MEDIA_TYPES = ['text/plain', 'text/event-stream', 'application/x-ndjson'];
export const STREAM_FORMATS: Record<string, LogStreamFormat> = { 'text/event-stream': 'sse', 'application/x-ndjson': 'ndjson', 'text/plain': 'text' };
const CONTENT_TYPES: Record<LogStreamFormat, string> = {
  sse: 'text/event-stream; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  text: 'text/plain; charset=utf-8',
};

export type LogStreamFormat = 'sse' | 'ndjson' | 'text';

/** The id of the last event a reconnecting reader saw: a followed stream's cursor, or a deployment stream's seq. */
export function lastEventIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  return Array.isArray(header) ? header[0] : header;
}

/** The sequence number a deployment's stream resumes after: `after`, else an EventSource's Last-Event-ID (the last seq it saw). */
export function resumeAfter(request: FastifyRequest, after: number | undefined): number | undefined {
  if (after !== undefined) return after;
  const value = lastEventIdOf(request);
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** A line as plain text: `<time> [<stream>] <message>`, as the CLI prints it. */
export function textLine(line: Pick<LogView, 'created_at' | 'stream' | 'message'>): string {
  return `${line.created_at} [${line.stream}] ${line.message}\n`;
}

function formatEvent(format: LogStreamFormat, event: LogEvent): string {
  const cursor = event.cursor === undefined ? {} : { cursor: event.cursor };
  if (event.type === 'log') {
    if (format === 'text') return textLine(event.line);
    if (format === 'ndjson') return `${JSON.stringify({ type: 'log', ...event.line, ...cursor })}\n`;
    return `id: ${event.cursor ?? event.line.seq}\nevent: log\ndata: ${JSON.stringify(event.line)}\n\n`;
  }
  const { deployment } = event;
  if (format === 'text') return `-- deployment ${deployment.deployment_id} (${deployment.action}) began at ${deployment.created_at}\n`;
  if (format === 'ndjson') return `${JSON.stringify({ type: 'deployment', ...deployment, ...cursor })}\n`;
  return `id: ${event.cursor}\nevent: deployment\ndata: ${JSON.stringify(deployment)}\n\n`;
}

function formatEnd(format: LogStreamFormat, end: LogStreamEnd): string {
  const body = { deployment_id: end.deploymentId, state: end.state };
  if (format === 'text') return `-- ${end.state ?? 'no deployment'}\n`;
  if (format === 'ndjson') return `${JSON.stringify({ type: 'end', ...body })}\n`;
  return `event: end\ndata: ${JSON.stringify(body)}\n\n`;
}

/** Keeps proxies from cutting an idle stream; plain text has no line that says nothing, so it sends none. */
const HEARTBEATS: Record<LogStreamFormat, string> = { sse: ': keep-alive\n\n', ndjson: `${JSON.stringify({ type: 'heartbeat' })}\n`, text: '' };

/**
 * Streams a log on the raw response (http/live-stream.ts): SSE (`id:` the event's cursor or the line's seq,
 * `event: log` per line, `event: deployment` when a followed service's next deployment begins, a final `event: end`
 * with the state reached), NDJSON (`{type:"log"|"deployment"|"heartbeat"|"end",…}` a line) or plain text
 * (`<time> [<stream>] <message>` a line). The stream ends when what it follows ends, when the reader leaves, or when
 * the server shuts down (`live` holds the streams it stops); stopped by a shutdown it ends without an end event, so
 * its reader resumes elsewhere (with Last-Event-ID).
 */
export async function streamLog(
  request: FastifyRequest,
  reply: FastifyReply,
  format: LogStreamFormat,
  live: Set<AbortController>,
  follow: (reader: LogReader) => Promise<LogStreamEnd>,
): Promise<void> {
  await serveLiveStream(
    request,
    reply,
    CONTENT_TYPES[format],
    live,
    (writer) =>
      follow({
        signal: writer.signal,
        opened: writer.opened,
        emit: (events) => writer.write(events.map((event) => formatEvent(format, event)).join('')),
        heartbeat: () => writer.write(HEARTBEATS[format]),
      }),
    (outcome) => formatEnd(format, outcome),
  );
}
