import { useEffect, useMemo, useRef, useState } from 'react';
import { plainText } from '../services/ansi.ts';
import { followLog, type LogLine, type StreamState } from '../services/log-stream.ts';
import { Button, TextField } from '../ui/controls.tsx';
import { LogView } from '../ui/LogView.tsx';
import type { ServiceContext } from './ServicePage.tsx';

/** Lines kept in the page: the oldest go first beyond this. */
const KEEP = 5000;

const STATE_LABELS: Record<StreamState, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', ended: 'Ended' };

/**
 * The service's output as it is printed (its deployments' lines, then its runtime output), followed over SSE. The view
 * follows the newest line until the person scrolls up; then new lines are counted ("12 new lines") until they go back
 * down or press the button. A search keeps the matching lines (their text without colours). Only the rows in view are
 * in the page (ui/LogView.tsx), so the 5,000 lines kept scroll as lightly as fifty.
 */
export function ServiceLogs({ context }: { context: ServiceContext }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<{ state: StreamState; detail?: string | undefined }>({ state: 'connecting' });
  const [search, setSearch] = useState('');
  const [unseen, setUnseen] = useState(0);
  /** Paused: the number of lines shown when the person paused; later lines wait (and are counted) until they resume. */
  const [pausedAt, setPausedAt] = useState<number | undefined>();
  const view = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  /** Where the view was scrolled last (by the person or by following): moving up from it is the person's doing. */
  const lastTop = useRef(0);

  useEffect(() => {
    const controller = new AbortController();
    setLines([]);
    void followLog(
      `${context.base}/log`,
      {
        onLines: (batch) => {
          setLines((previous) => {
            const next = previous.concat(batch);
            return next.length > KEEP ? next.slice(next.length - KEEP) : next;
          });
          if (!stick.current) setUnseen((count) => count + batch.length);
        },
        onDeployment: (deployment) =>
          setLines((previous) =>
            previous.concat({ id: `deployment-${deployment.deployment_id}`, created_at: deployment.created_at ?? new Date().toISOString(), message: `— a new deployment began (${deployment.action ?? 'deploy'}) —`, deployment_id: deployment.deployment_id, stream: 'marker', seq: 0 }),
          ),
        onState: (next, detail) => setState({ state: next, detail }),
      },
      controller.signal,
    );
    return () => controller.abort();
  }, [context.base]);

  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const visible = pausedAt === undefined ? lines : lines.slice(0, pausedAt);
    return needle === '' ? visible : visible.filter((line) => plainText(line.message).toLowerCase().includes(needle));
  }, [lines, search, pausedAt]);
  const waiting = pausedAt === undefined ? unseen : lines.length - pausedAt;

  // Follow the newest line while the view is at the bottom.
  useEffect(() => {
    const element = view.current;
    if (element !== null && stick.current) scrollToBottom(element);
  }, [shown]);

  function scrollToBottom(element: HTMLDivElement) {
    element.scrollTop = element.scrollHeight;
    lastTop.current = element.scrollTop;
  }

  /**
   * Following stops when the person scrolls up, not whenever the view is short of the bottom: a scroll event arrives a
   * frame after the scroll, and lines that came meanwhile have grown the log under it, which is no reason to stop.
   */
  function onScroll() {
    const element = view.current;
    if (element === null) return;
    const atBottom = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
    if (atBottom) {
      stick.current = true;
      setUnseen(0);
    } else if (element.scrollTop < lastTop.current - 1) {
      stick.current = false;
    }
    lastTop.current = element.scrollTop;
  }

  function jumpToLatest() {
    stick.current = true;
    setUnseen(0);
    setPausedAt(undefined);
    const element = view.current;
    if (element !== null) scrollToBottom(element);
  }

  return (
    <section aria-labelledby="logs-heading" className="logs">
      <div className="logs-toolbar">
        <h2 id="logs-heading" className="card-title">
          Live output
        </h2>
        <span className={`stream-state stream-${state.state}`} role="status">
          <span aria-hidden="true" className="stream-dot" />
          {STATE_LABELS[state.state]}
          {state.detail === undefined ? '' : `: ${state.detail}`}
        </span>
        <TextField label="Search the log" value={search} onChange={setSearch} className="log-search" />
        <Button variant="secondary" className="log-pause" onPress={() => (pausedAt === undefined ? setPausedAt(lines.length) : jumpToLatest())}>
          {pausedAt === undefined ? 'Pause' : 'Resume'}
        </Button>
      </div>
      <LogView
        lines={shown}
        viewRef={view}
        className="log-live"
        role="log"
        label="Live output"
        onScroll={onScroll}
        empty={<p className="log-empty">{lines.length === 0 ? (state.state === 'live' ? 'Waiting for output… Deploy the service to see its build and its output here.' : 'Connecting to the log…') : 'No line matches the search.'}</p>}
      />
      <div className="logs-footer">
        <span className="muted">
          {pausedAt === undefined ? '' : 'Paused. '}
          {lines.length} lines{search.trim() === '' ? '' : `, ${shown.length} matching`}
        </span>
        {waiting > 0 ? (
          <Button variant="secondary" onPress={jumpToLatest}>
            {waiting} new {waiting === 1 ? 'line' : 'lines'}: {pausedAt === undefined ? 'jump to the latest' : 'resume'}
          </Button>
        ) : null}
      </div>
    </section>
  );
}
