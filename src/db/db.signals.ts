import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import { newId } from '../lib/ids.ts';
import type { Database } from './db.client.ts';
import type { Queryable } from './db.schema.ts';

/**
 * Change signals: "something changed, look again" between the processes sharing one database (docs/operations.md,
 * "Running N replicas"). A signal carries a channel and a short payload (ids only); it never carries the change itself,
 * which the woken reader reads from the database. A lost signal only costs latency: every reader also polls.
 *
 * PostgreSQL: `pg_notify` on the publishing side and one dedicated connection per process (outside the pool, which
 * would hand it to anyone) doing `LISTEN`. A signal published inside a transaction (`publishIn`) is delivered, to
 * every process including this one, only when that transaction commits, and never when it rolls back. A signal
 * published after a commit (`publish`) reaches this process's subscribers at once and the other processes through
 * the notification; the listener skips its own process's copy. When the listening connection drops it is opened
 * again with backoff, and every subscriber is woken once then (`payload` undefined): what was signalled meanwhile
 * was missed.
 *
 * SQLite: one process owns the database file, so signals stay in the process. `publishIn` delivers at once: the
 * transaction holds SQLite's one connection until it ends, so a woken reader's query waits for the commit (a
 * rolled-back change costs a reader one look at nothing).
 *
 * Channels are per installation: on PostgreSQL a schema (tests run installations side by side in schemas of one
 * database) has channels of its own.
 */

/** `payload` undefined: signals may have been missed (the listener reconnected), look at everything. */
export type SignalListener = (payload: string | undefined) => void;

export interface ChangeSignals {
  /** Signals a change already committed (or outside any transaction). Never throws: a failure is logged. */
  publish(channel: string, payload: string): void;
  /** Signals a change of the caller's transaction: delivered when it commits. */
  publishIn(executor: Queryable, channel: string, payload: string): Promise<void>;
  /** Listens to a channel of this installation; the answer stops listening. */
  subscribe(channel: string, listener: SignalListener): () => void;
  /** Stops listening (the dedicated connection ends); later publishes reach this process's subscribers only. */
  close(): Promise<void>;
}

export interface ChangeSignalsOptions {
  log?: { warn(object: object, message: string): void; info?(object: object, message: string): void };
  /** First wait before opening a dropped listening connection again; doubles up to `maxReconnectMs`. */
  minReconnectMs?: number;
  maxReconnectMs?: number;
}

const CHANNEL_NAME = /^[a-z][a-z0-9_]{0,31}$/;
/** NOTIFY refuses payloads of 8000 bytes and more; ids are far below. */
const MAX_PAYLOAD_CHARS = 1000;
/** Separates the publishing process's tag from the payload on the wire (tags are uuids, without `|`). */
const ORIGIN_SEPARATOR = '|';

function checkedChannel(channel: string): string {
  if (!CHANNEL_NAME.test(channel)) throw new Error(`signal channel ${JSON.stringify(channel)} must match ${CHANNEL_NAME.source}`);
  return channel;
}

function checkedPayload(payload: string): string {
  if (payload.length > MAX_PAYLOAD_CHARS) throw new Error(`a signal carries ids only: ${payload.length} characters is too long`);
  return payload;
}

/** In-process fan-out, shared by both dialects. */
function createLocalFanOut(log: ChangeSignalsOptions['log']) {
  const listeners = new Map<string, Set<SignalListener>>();
  return {
    channels: () => [...listeners.keys()],
    add(channel: string, listener: SignalListener): () => boolean {
      const set = listeners.get(channel) ?? new Set<SignalListener>();
      listeners.set(channel, set);
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size > 0) return false;
        listeners.delete(channel);
        return true;
      };
    },
    deliver(channel: string, payload: string | undefined): void {
      for (const listener of [...(listeners.get(channel) ?? [])]) {
        try {
          listener(payload);
        } catch (error) {
          log?.warn({ err: error, channel }, 'a signal subscriber failed');
        }
      }
    },
    deliverEverywhere(): void {
      for (const channel of [...listeners.keys()]) this.deliver(channel, undefined);
    },
  };
}

function createLocalSignals(options: ChangeSignalsOptions): ChangeSignals {
  const fanOut = createLocalFanOut(options.log);
  return {
    publish: (channel, payload) => fanOut.deliver(checkedChannel(channel), checkedPayload(payload)),
    async publishIn(_executor, channel, payload) {
      fanOut.deliver(checkedChannel(channel), checkedPayload(payload));
    },
    subscribe(channel, listener) {
      const remove = fanOut.add(checkedChannel(channel), listener);
      return () => void remove();
    },
    close: async () => undefined,
  };
}

/**
 * The installation's signals over `database`: LISTEN/NOTIFY on PostgreSQL (the listening connection opens with the
 * first subscription), in-process on SQLite.
 */
export function createChangeSignals(database: Database, options: ChangeSignalsOptions = {}): ChangeSignals {
  if (database.listenerConnection === undefined) return createLocalSignals(options);
  return createPostgresListenerSignals(database, database.listenerConnection, options);
}

/** The name a channel of this installation has on the wire: the schema's own when the installation lives in one. */
function wireChannelOf(channel: string, schema: string | undefined): string {
  if (schema === undefined) return `slipway_${channel}`;
  return `slipway_${createHash('sha256').update(schema).digest('hex').slice(0, 12)}_${channel}`;
}

function createPostgresListenerSignals(database: Database, listener: NonNullable<Database['listenerConnection']>, options: ChangeSignalsOptions): ChangeSignals {
  const { log } = options;
  const minReconnectMs = options.minReconnectMs ?? 200;
  const maxReconnectMs = options.maxReconnectMs ?? 10_000;
  const fanOut = createLocalFanOut(log);
  /** Tags this process's own publishes, so the listener skips the copy that comes back. */
  const origin = newId();
  const channelOfWire = new Map<string, string>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let closed = false;
  /** Set once a connection was lost: the next one wakes every subscriber. */
  let missed = false;

  const wire = (channel: string) => wireChannelOf(channel, listener.schema);
  const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

  function onNotification(message: pg.Notification): void {
    const channel = channelOfWire.get(message.channel);
    if (channel === undefined) return;
    const text = message.payload ?? '';
    const cut = text.indexOf(ORIGIN_SEPARATOR);
    if (cut >= 0 && text.slice(0, cut) === origin) return;
    fanOut.deliver(channel, cut >= 0 ? text.slice(cut + 1) : text);
  }

  function scheduleReconnect(): void {
    if (closed || reconnectTimer !== undefined || connecting !== undefined) return;
    const delay = Math.min(maxReconnectMs, minReconnectMs * 2 ** Math.min(failures, 16));
    failures += 1;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      ensureListening();
    }, delay);
    reconnectTimer.unref();
  }

  function lost(from: pg.Client, error: unknown): void {
    if (client !== from) return;
    client = undefined;
    missed = true;
    from.removeAllListeners('notification');
    // The client may still emit errors while it ends; they are this one's, already reported.
    from.on('error', () => undefined);
    from.end().catch(() => undefined);
    if (closed) return;
    log?.warn({ err: error }, 'the signal listener lost its database connection: reconnecting');
    scheduleReconnect();
  }

  async function open(): Promise<void> {
    const next = await listener.connect();
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next, new Error('connection ended')));
    next.on('notification', onNotification);
    try {
      await next.connect();
      // Channels subscribed while these LISTENs run are listened to as well, before the connection is handed over.
      const listened = new Set<string>();
      for (let missing = fanOut.channels(); missing.length > 0; missing = fanOut.channels().filter((channel) => !listened.has(channel))) {
        for (const channel of missing) {
          await next.query(`LISTEN ${quoted(wire(channel))}`);
          listened.add(channel);
        }
      }
    } catch (error) {
      next.removeAllListeners();
      next.on('error', () => undefined);
      await next.end().catch(() => undefined);
      throw error;
    }
    if (closed) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
    failures = 0;
    if (missed) {
      missed = false;
      log?.info?.({}, 'the signal listener is connected again');
      fanOut.deliverEverywhere();
    }
  }

  function ensureListening(): void {
    if (closed || client !== undefined || connecting !== undefined) return;
    connecting = open()
      .catch((error: unknown) => {
        missed = true;
        log?.warn({ err: error }, 'the signal listener cannot connect: retrying');
      })
      .finally(() => {
        connecting = undefined;
        if (client === undefined) scheduleReconnect();
      });
  }

  function notifyQuery(channel: string, payload: string, tag: string) {
    return sql`select pg_notify(${wire(channel)}, ${`${tag}${ORIGIN_SEPARATOR}${payload}`})`;
  }

  return {
    publish(channel, payload) {
      fanOut.deliver(checkedChannel(channel), checkedPayload(payload));
      if (closed) return;
      notifyQuery(channel, payload, origin)
        .execute(database.db)
        .catch((error: unknown) => log?.warn({ err: error, channel }, 'a change signal could not be sent to the other processes'));
    },
    async publishIn(executor, channel, payload) {
      await notifyQuery(checkedChannel(channel), checkedPayload(payload), '').execute(executor);
    },
    subscribe(channel, subscriber) {
      const name = checkedChannel(channel);
      const first = !fanOut.channels().includes(name);
      const remove = fanOut.add(name, subscriber);
      channelOfWire.set(wire(name), name);
      if (first && client !== undefined) {
        // Until LISTEN has run, a signal on this channel is missed: the subscriber's poll covers that moment.
        client.query(`LISTEN ${quoted(wire(name))}`).catch((error: unknown) => log?.warn({ err: error, channel: name }, 'LISTEN failed'));
      }
      ensureListening();
      return () => {
        if (!remove() || client === undefined) return;
        channelOfWire.delete(wire(name));
        client.query(`UNLISTEN ${quoted(wire(name))}`).catch(() => undefined);
      };
    },
    async close() {
      closed = true;
      if (reconnectTimer !== undefined) clearTimeout(reconnectTimer);
      await connecting;
      const last = client;
      client = undefined;
      if (last !== undefined) {
        last.removeAllListeners();
        last.on('error', () => undefined);
        await last.end().catch(() => undefined);
      }
    },
  };
}
