import { connect, dataOf, type AnswerOf, type ApiClient } from './api-client.ts';
import type { operations } from './api-types.generated.ts';
import { printJson } from './output.ts';
import { requireUuid, serviceNamed, type ServiceKind, type ServiceOptions } from './services.ts';
import { CliError, type CliIo } from './sign-in.ts';

/**
 * `slipway logs`: a service's log (docs/cli.md). Without --follow, the stored lines of its newest deployment (or
 * --deployment's); with --follow, its output as it is printed, without end — the running deployment's lines, then
 * each new deployment's, announced by a `-- deployment …` line — until Ctrl-C, which ends the command quietly (status
 * 0). A stream that drops is opened again after the last event seen (the server resumes after its Last-Event-ID),
 * for as long as the server can be reached. With --follow --deployment, that one deployment until it settles.
 */

type Api = ApiClient['api'];
type LogQuery = NonNullable<operations['listApplicationLog']['parameters']['query']>;
type LogStream = NonNullable<LogQuery['stream']>[number];
type LogLine = AnswerOf<'listApplicationLog'>['results'][number];
/**
 * An item of a streamed log (application/x-ndjson, which the API description leaves a string): a line, a deployment
 * that begins (followed service), a heartbeat, or the end (one deployment's stream); `cursor` resumes after it.
 */
type StreamedLogItem = Partial<LogLine> & { type: string; cursor?: string; deployment_id?: string; action?: string; state?: string | null };
type StreamInit = { headers: Record<string, string>; signal: AbortSignal };

interface LogCalls {
  list(api: Api, id: string, query: LogQuery): Promise<{ results: LogLine[] }>;
  stream(api: Api, id: string, query: LogQuery, init: StreamInit): Promise<ReadableStream<Uint8Array> | null>;
}

/** Each kind's log path, written out so that each call is checked against the API description. */
const LOG_CALLS: Record<ServiceKind['kind'], LogCalls> = {
  APPLICATION: {
    list: (api, id, query) => dataOf(api.GET('/application/{applicationId}/log', { params: { path: { applicationId: id }, query } })),
    stream: (api, id, query, init) => dataOf(api.GET('/application/{applicationId}/log', { params: { path: { applicationId: id }, query }, parseAs: 'stream', ...init })),
  },
  CONTAINER: {
    list: (api, id, query) => dataOf(api.GET('/container/{containerId}/log', { params: { path: { containerId: id }, query } })),
    stream: (api, id, query, init) => dataOf(api.GET('/container/{containerId}/log', { params: { path: { containerId: id }, query }, parseAs: 'stream', ...init })),
  },
  DATABASE: {
    list: (api, id, query) => dataOf(api.GET('/database/{databaseId}/log', { params: { path: { databaseId: id }, query } })),
    stream: (api, id, query, init) => dataOf(api.GET('/database/{databaseId}/log', { params: { path: { databaseId: id }, query }, parseAs: 'stream', ...init })),
  },
  JOB: {
    list: (api, id, query) => dataOf(api.GET('/job/{jobId}/log', { params: { path: { jobId: id }, query } })),
    stream: (api, id, query, init) => dataOf(api.GET('/job/{jobId}/log', { params: { path: { jobId: id }, query }, parseAs: 'stream', ...init })),
  },
  HELM: {
    list: (api, id, query) => dataOf(api.GET('/helm/{helmId}/log', { params: { path: { helmId: id }, query } })),
    stream: (api, id, query, init) => dataOf(api.GET('/helm/{helmId}/log', { params: { path: { helmId: id }, query }, parseAs: 'stream', ...init })),
  },
  TERRAFORM: {
    list: (api, id, query) => dataOf(api.GET('/terraform/{terraformId}/log', { params: { path: { terraformId: id }, query } })),
    stream: (api, id, query, init) => dataOf(api.GET('/terraform/{terraformId}/log', { params: { path: { terraformId: id }, query }, parseAs: 'stream', ...init })),
  },
};

/**
 * After a stream dropped, it is opened again 1 s later, then at doubling intervals up to 10 s apart, for as long as
 * RECONNECT_WINDOW_MS: a server that restarts (an upgrade, a crash on a loaded host) is waited for, one that stays
 * away makes the command fail with the reason.
 */
const RECONNECT_FIRST_DELAY_MS = 1000;
const RECONNECT_MAX_DELAY_MS = 10_000;
const RECONNECT_WINDOW_MS = 120_000;

export interface ServiceLogsOptions extends ServiceOptions {
  deployment?: string | undefined;
  follow?: boolean | undefined;
  since?: string | undefined;
  tail?: string | undefined;
  instance?: string | undefined;
  /** Each --stream given; a value may list several, comma-separated. */
  stream?: string[] | undefined;
}

/** The filters as the API takes them; their values are the server's to judge (a 400 names the one that is wrong). */
function filtersOf(options: ServiceLogsOptions): LogQuery {
  const query: LogQuery = {};
  if (options.since !== undefined) query.since = options.since;
  if (options.tail !== undefined) {
    if (!/^\d{1,9}$/.test(options.tail)) throw new CliError(`--tail takes a number of lines, got "${options.tail}"`);
    query.tail = Number(options.tail);
  }
  if (options.instance !== undefined) query.instance = options.instance;
  if (options.stream !== undefined) query.stream = options.stream.flatMap((value) => value.split(',')).map((value) => value.trim().toLowerCase() as LogStream);
  return query;
}

/**
 * A workload's escape sequences, of which a terminal is shown only colours and text styles (SGR: `ESC [ … m`). The
 * rest — cursor moves, screen clears, window titles, OSC 52 clipboard writes, hyperlinks — would let a service's output
 * act on the reader's terminal, so they are dropped: CSI and OSC sequences whole, any other ESC with its next character.
 */
// eslint-disable-next-line no-control-regex -- matching escape sequences is the point
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[\s\S]?)/g;
// eslint-disable-next-line no-control-regex -- matching escape sequences is the point
const SGR = /^\u001b\[[0-9;:]*m$/;

export function terminalSafe(message: string): string {
  return message.replace(ESCAPE_SEQUENCE, (sequence) => (SGR.test(sequence) ? sequence : ''));
}

function logLine(line: Pick<LogLine, 'created_at' | 'stream' | 'message'>): string {
  // A line ending inside a colour would colour what the terminal prints next: close it.
  const message = terminalSafe(line.message);
  return `${line.created_at} [${line.stream}] ${message}${message.includes('\u001b[') ? '\u001b[0m' : ''}\n`;
}

/** Prints a service's log: stored lines, or with --follow its output as it comes (module comment). */
export async function serviceLogs(wanted: string, options: ServiceLogsOptions, io: CliIo): Promise<void> {
  const client = await connect(options, io);
  const service = await serviceNamed(client, wanted, options, io);
  const calls = LOG_CALLS[service.kind.kind];
  const filters = filtersOf(options);
  const deployment = options.deployment === undefined ? {} : { deploymentId: requireUuid(options.deployment, 'a deployment') };
  if (options.follow !== true) {
    const body = await calls.list(client.api, service.id, { ...deployment, ...filters });
    if (options.json === true) return printJson(io, body);
    if (body.results.length === 0) {
      io.out(Object.keys(filters).length > 0 ? 'No log lines match.\n' : `No log lines: ${service.kind.path} ${service.name} has not been deployed.\n`);
    }
    for (const line of body.results) io.out(logLine(line));
    return;
  }
  const query: LogQuery = options.deployment === undefined ? { ...filters, follow: true } : { ...deployment, ...filters };
  await followLog((init) => calls.stream(client.api, service.id, query, init), options.json === true, io);
}

/**
 * Reads a streamed log until it ends (one deployment's stream), or until SIGINT. A stream that drops, or that the
 * server closes without an end, is opened again after the last event seen; when the server cannot be reached (or
 * refuses) for RECONNECT_WINDOW_MS, the command fails with the reason.
 */
async function followLog(open: (init: StreamInit) => Promise<ReadableStream<Uint8Array> | null>, json: boolean, io: CliIo): Promise<void> {
  const interrupted = new AbortController();
  const onInterrupt = () => interrupted.abort();
  process.once('SIGINT', onInterrupt);
  /** The id of the last event seen (a followed stream's cursor, or a line's seq), which the server resumes after. */
  let lastEventId: string | undefined;
  const openStream = () =>
    open({ headers: { accept: 'application/x-ndjson', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) }, signal: interrupted.signal });
  try {
    let stream = await openStream();
    for (;;) {
      if (stream === null) return;
      const ended = await printStream(stream, json, io, (id) => (lastEventId = id)).catch(() => false);
      if (ended || interrupted.signal.aborted) return;
      stream = await reconnect(openStream, io, interrupted.signal);
    }
  } catch (error) {
    if (interrupted.signal.aborted) return;
    throw error;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

async function reconnect(
  openStream: () => Promise<ReadableStream<Uint8Array> | null>,
  io: CliIo,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array> | null> {
  const started = Date.now();
  for (let delay = RECONNECT_FIRST_DELAY_MS; ; delay = Math.min(RECONNECT_MAX_DELAY_MS, delay * 2)) {
    try {
      return await openStream();
    } catch (error) {
      if (signal.aborted || Date.now() - started + delay > RECONNECT_WINDOW_MS) throw error;
      await io.sleep(delay);
    }
  }
}

/** Prints a stream's items as they arrive; true once it ended with its `end` item (what it followed is over). */
async function printStream(stream: ReadableStream<Uint8Array>, json: boolean, io: CliIo, seen: (eventId: string) => void): Promise<boolean> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
      if (text.trim() === '') continue;
      const item = JSON.parse(text) as StreamedLogItem;
      if (item.cursor !== undefined) seen(item.cursor);
      else if (item.type === 'log' && item.seq !== undefined) seen(String(item.seq));
      if (json) {
        if (item.type !== 'heartbeat') io.out(`${text}\n`);
      } else if (item.type === 'log') io.out(logLine(item as LogLine));
      else if (item.type === 'deployment') io.out(`-- deployment ${item.deployment_id} (${item.action}) began at ${item.created_at}\n`);
      else if (item.type === 'end') io.out(`-- ${item.state ?? 'no deployment'}\n`);
      if (item.type === 'end') return true;
    }
  }
  return false;
}
