import { currentSession, expireSession } from '../auth/session.ts';
import { eventBatches } from './sse.ts';

/**
 * A service's live output: `GET /<kind>/<id>/log?follow=true` read as Server-Sent Events with `fetch` (EventSource
 * cannot send the bearer token), parsed here (the format is small: `id:`, `event:`, `data:` lines, a blank line ends
 * an event, `:` starts a comment such as the keep-alives). The server never ends a followed stream by itself; when
 * the connection drops (a server restart, a proxy's idle cut) it is opened again with `Last-Event-ID`, the cursor of
 * the last event seen, so no line is lost or sent twice (docs/service-deployments.md, "Following a service's output").
 */
export interface LogLine {
  id: string;
  created_at: string;
  message: string;
  deployment_id: string;
  stream: 'stdout' | 'stderr' | 'system' | string;
  seq: number;
  pod_name?: string | null;
}

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'ended';

export interface FollowHandlers {
  onLines(lines: LogLine[]): void;
  onDeployment(deployment: { deployment_id: string; action?: string; created_at?: string }): void;
  onState(state: StreamState, detail?: string): void;
}

/** Follows `path` (e.g. `/application/<id>/log`) until `signal` aborts; reconnects after a drop. */
export async function followLog(path: string, handlers: FollowHandlers, signal: AbortSignal, tail = 500): Promise<void> {
  let cursor: string | undefined;
  let attempt = 0;
  while (!signal.aborted) {
    handlers.onState(attempt === 0 ? 'connecting' : 'reconnecting');
    try {
      const session = currentSession();
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (session !== undefined) headers.authorization = `Bearer ${session.accessToken}`;
      if (cursor !== undefined) headers['last-event-id'] = cursor;
      const query = cursor === undefined ? `?follow=true&tail=${tail}` : '?follow=true';
      const response = await fetch(`${location.origin}${path}${query}`, { headers, signal, cache: 'no-store' });
      if (response.status === 401) {
        expireSession();
        return;
      }
      if (!response.ok || response.body === null) {
        const body = (await response.json().catch(() => undefined)) as { message?: string } | undefined;
        handlers.onState('ended', body?.message ?? `The log could not be read (${response.status}).`);
        // A refusal (403, 404, 400) will not change by asking again.
        if (response.status >= 400 && response.status < 500) return;
      } else {
        attempt = 0;
        handlers.onState('live');
        for await (const events of eventBatches(response.body)) {
          const lines: LogLine[] = [];
          for (const event of events) {
            if (event.id !== undefined) cursor = event.id;
            if (event.event === 'log') lines.push(JSON.parse(event.data) as LogLine);
            else if (event.event === 'deployment') handlers.onDeployment(JSON.parse(event.data) as { deployment_id: string });
            else if (event.event === 'end') {
              handlers.onLines(lines);
              handlers.onState('ended', 'The service was deleted.');
              return;
            }
          }
          if (lines.length > 0) handlers.onLines(lines);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      void error;
    }
    attempt += 1;
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * attempt, 10_000)));
  }
}
