import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_STATUS } from './errors.ts';

/**
 * A live answer written on the raw response (a followed log, an organization's changes): the status and headers go
 * out when the read is valid, then text as it comes, until what is followed ends, the reader leaves, or the server
 * shuts down. Whatever is followed is woken at once then (its `signal` aborts), so nothing of it (its listeners, its
 * timer) outlives the connection.
 */

/** What a follower writes with. */
export interface LiveStreamWriter {
  /** Aborted when the reader left (or the server shuts down). */
  signal: AbortSignal;
  /** The read is valid and about to follow: the answer starts (its status is 200 from here on). */
  opened(): void;
  /** Writes text (starting the answer first); a reader slower than the stream holds it back until it drains or leaves. */
  write(text: string): Promise<void>;
}

/**
 * The live streams of a group of routes, ended when the server closes: a stream that never ends by itself would
 * otherwise keep the close waiting.
 */
export function liveStreamsEndedOnClose(app: FastifyInstance): Set<AbortController> {
  const live = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const stream of live) stream.abort();
  });
  return live;
}

/**
 * Serves one live stream with `contentType`. `follow` runs until what it follows ends (its outcome) or its writer's
 * signal aborts; `ending` is the text written after an outcome (not after a shutdown: the reader then resumes
 * elsewhere). The first read happens before anything is written, so a 404 or a 400 thrown before `opened` still
 * answers with the error body; a failure once the stream has started can only cut it.
 */
export async function serveLiveStream<Outcome>(
  request: FastifyRequest,
  reply: FastifyReply,
  contentType: string,
  live: Set<AbortController>,
  follow: (writer: LiveStreamWriter) => Promise<Outcome>,
  ending: (outcome: Outcome) => string,
): Promise<void> {
  const raw = reply.raw;
  const stopped = new AbortController();
  const onClose = () => stopped.abort();
  raw.on('close', onClose);
  live.add(stopped);
  try {
    await streamOn(request, reply, contentType, stopped, follow, ending);
  } finally {
    raw.off('close', onClose);
    live.delete(stopped);
  }
}

async function streamOn<Outcome>(
  request: FastifyRequest,
  reply: FastifyReply,
  contentType: string,
  stopped: AbortController,
  follow: (writer: LiveStreamWriter) => Promise<Outcome>,
  ending: (outcome: Outcome) => string,
): Promise<void> {
  const raw = reply.raw;
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done);
        stopped.signal.removeEventListener('abort', done);
        resolve();
      };
      raw.on('drain', done);
      stopped.signal.addEventListener('abort', done, { once: true });
    });
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    reply.hijack();
    raw.writeHead(HTTP_STATUS.ok, {
      'content-type': contentType,
      'cache-control': 'no-cache, no-store',
      'x-request-id': request.id,
      'x-content-type-options': 'nosniff',
      // Asks nginx-style proxies not to hold lines back in a buffer.
      'x-accel-buffering': 'no',
      vary: 'Accept',
    });
    // The status and headers go out now, not with the first line: a reader knows it is connected, and following.
    raw.flushHeaders();
  };
  const write = async (text: string): Promise<void> => {
    start();
    if (stopped.signal.aborted || text === '') return;
    if (!raw.write(text)) await drained();
  };
  let outcome: Outcome;
  try {
    outcome = await follow({ signal: stopped.signal, opened: start, write });
  } catch (error) {
    if (!started) throw error;
    request.log.error({ err: error }, 'live stream cut');
    raw.destroy();
    return;
  }
  start();
  if (!stopped.signal.aborted) await write(ending(outcome));
  raw.end();
}
