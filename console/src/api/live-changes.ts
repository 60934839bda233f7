import { useQueryClient, type Query, type QueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { currentSession, expireSession } from '../auth/session.ts';
import { setPushConnected } from '../pages/live.ts';
import { eventBatches } from '../services/sse.ts';

/**
 * The organization's "look again" stream (`GET /organization/{id}/changes`, docs/console.md "Live states"), read with
 * `fetch` (EventSource cannot send the bearer token) and the log stream's SSE parser. Each event names what changed
 * (a service, an environment, a cluster) and where it lives; the queries showing it are refetched at once. The stream
 * is not resumable: after a drop it is opened again with backoff, and everything live is read again, since events of
 * the gap are lost. While it is connected the pages poll only as a fallback (pages/live.ts).
 */
interface Change {
  type: 'service' | 'environment' | 'cluster';
  id: string;
  environment_id?: string;
  project_id?: string;
}

/** Live queries named by the console (useQuery keys of its own): a service's state and deployments, an environment's services. */
const LIVE_QUERY_NAMES: ReadonlySet<string> = new Set(['service-status', 'service-deployments', 'environment-services']);

/**
 * Whether a query shows a state (and is read again when it changes): one of LIVE_QUERY_NAMES, or a typed client read
 * of a status, statuses or an agent. Not settings, variables or restrictions: they do not change with states, and a
 * service's settings page must not read its service again when it was just deleted.
 */
function isLiveQuery(query: Query): boolean {
  const [head, path] = query.queryKey;
  if (typeof head === 'string' && LIVE_QUERY_NAMES.has(head)) return true;
  return head === 'get' && typeof path === 'string' && /\/(status|statuses|agent)$/.test(path);
}

function keyText(query: Query): string {
  return JSON.stringify(query.queryKey);
}

/** Refetches the live queries showing what changed: its own, its environment's and its project's statuses. */
function lookAgain(queryClient: QueryClient, change: Change): void {
  const ids = [change.id, change.environment_id, change.project_id].filter((id): id is string => id !== undefined);
  void queryClient.invalidateQueries({
    predicate: (query) => {
      if (!isLiveQuery(query)) return false;
      const text = keyText(query);
      if (change.type === 'cluster' && text.includes('/cluster/status')) return true;
      return ids.some((id) => text.includes(id));
    },
  });
}

/** After a gap in the stream: every live query reads again. */
function lookAtEverything(queryClient: QueryClient): void {
  void queryClient.invalidateQueries({ predicate: isLiveQuery });
}

async function followChanges(organizationId: string, queryClient: QueryClient, signal: AbortSignal): Promise<void> {
  let attempt = 0;
  let connectedBefore = false;
  while (!signal.aborted) {
    try {
      const session = currentSession();
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (session !== undefined) headers.authorization = `Bearer ${session.accessToken}`;
      const response = await fetch(`${location.origin}/organization/${organizationId}/changes`, { headers, signal, cache: 'no-store' });
      if (response.status === 401) {
        expireSession();
        return;
      }
      // A refusal (403, 404) will not change by asking again: the pages keep polling.
      if (response.status >= 400 && response.status < 500) return;
      if (response.ok && response.body !== null) {
        attempt = 0;
        setPushConnected(true);
        // What changed while the stream was down was not told: read it all again.
        if (connectedBefore) lookAtEverything(queryClient);
        connectedBefore = true;
        for await (const events of eventBatches(response.body)) {
          for (const event of events) if (event.event === 'message') lookAgain(queryClient, JSON.parse(event.data) as Change);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      void error;
    } finally {
      setPushConnected(false);
    }
    attempt += 1;
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** Math.min(attempt - 1, 4), 15_000)));
  }
}

/** Follows the organization's changes while the signed-in shell shows it; one stream at a time. */
export function useOrganizationChanges(organizationId: string | undefined): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (organizationId === undefined) return;
    const stop = new AbortController();
    void followChanges(organizationId, queryClient, stop.signal);
    return () => stop.abort();
  }, [organizationId, queryClient]);
}
