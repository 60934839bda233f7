import { useLayoutEffect, useRef, useState, type CSSProperties, type ReactNode, type Ref, type UIEvent } from 'react';
import { parseAnsi, type AnsiColour, type AnsiRun } from '../services/ansi.ts';
import type { LogLine } from '../services/log-stream.ts';

/**
 * A long log shown a window at a time: every row is one line of ROW_HEIGHT pixels (lines do not wrap; the view
 * scrolls sideways), so the rows in view follow from the scroll position alone and only they (plus OVERSCAN above and
 * below) are in the DOM. 5,000 lines cost the DOM of a few dozen. The stylesheet's `--log-row` is the same height.
 */
export const ROW_HEIGHT = 20;
const OVERSCAN = 10;

interface LogViewProps {
  lines: readonly LogLine[];
  className: string;
  label: string;
  role: 'log' | 'region';
  viewRef?: Ref<HTMLDivElement> | undefined;
  onScroll?: ((event: UIEvent<HTMLDivElement>) => void) | undefined;
  /** Shown instead of the rows when there is none. */
  empty?: ReactNode;
}

export function LogView({ lines, className, label, role, viewRef, onScroll, empty }: LogViewProps) {
  const element = useRef<HTMLDivElement | null>(null);
  const [viewport, setViewport] = useState({ top: 0, height: 600 });

  // The view's height, measured (it changes with the window); its scroll position, read on every scroll.
  useLayoutEffect(() => {
    const node = element.current;
    if (node === null) return;
    const measure = () => setViewport({ top: node.scrollTop, height: node.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(node);
    return () => observer.disconnect();
  }, []);
  // Rows added or removed move the scroll position without a scroll event when the browser clamps it.
  useLayoutEffect(() => {
    const node = element.current;
    if (node !== null && node.scrollTop !== viewport.top) setViewport({ top: node.scrollTop, height: node.clientHeight });
  }, [lines, viewport.top]);

  const first = Math.max(0, Math.floor(viewport.top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(lines.length, Math.ceil((viewport.top + viewport.height) / ROW_HEIGHT) + OVERSCAN);

  function attach(node: HTMLDivElement | null) {
    element.current = node;
    if (typeof viewRef === 'function') viewRef(node);
    else if (viewRef !== undefined && viewRef !== null) (viewRef as { current: HTMLDivElement | null }).current = node;
  }

  return (
    <div
      ref={attach}
      className={`log ${className}`}
      role={role}
      aria-label={label}
      tabIndex={0}
      onScroll={(event) => {
        setViewport({ top: event.currentTarget.scrollTop, height: event.currentTarget.clientHeight });
        onScroll?.(event);
      }}
    >
      {lines.length === 0 ? (
        empty
      ) : (
        <div className="log-rows" style={{ height: lines.length * ROW_HEIGHT }}>
          <div className="log-window" style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}>
            {lines.slice(first, last).map((line) => (
              <LogRow key={`${line.deployment_id}:${line.seq}:${line.id}`} line={line} />
            ))}
          </div>
        </div>
      )}
    </div>
  );
}

function LogRow({ line }: { line: LogLine }) {
  return (
    <div className={`log-line log-${line.stream}`}>
      <time className="log-time" dateTime={line.created_at} data-volatile="">
        {line.created_at.slice(11, 19)}
      </time>
      <span className="log-message">
        {parseAnsi(line.message).map((run, index) => (
          <AnsiText key={index} run={run} />
        ))}
      </span>
    </div>
  );
}

/** A run of one style: palette colours as classes (the stylesheet's shades), exact colours inline. */
function AnsiText({ run }: { run: AnsiRun }) {
  const { fg, bg, bold, italic, underline } = run.style;
  if (fg === undefined && bg === undefined && bold !== true && italic !== true && underline !== true) return run.text;
  const classes = ['ansi', paletteClass('fg', fg), paletteClass('bg', bg), bold === true ? 'ansi-bold' : '', italic === true ? 'ansi-italic' : '', underline === true ? 'ansi-underline' : ''];
  const style: CSSProperties = {};
  if (typeof fg === 'string') style.color = fg;
  if (typeof bg === 'string') {
    style.backgroundColor = bg;
    // Text of the default colour stays readable on a background the program chose.
    if (fg === undefined) style.color = isLight(bg) ? '#14171c' : '#e3e6ea';
  }
  return (
    <span className={classes.filter((name) => name !== '').join(' ')} style={style}>
      {run.text}
    </span>
  );
}

function paletteClass(layer: 'fg' | 'bg', colour: AnsiColour | undefined): string {
  return typeof colour === 'number' ? `ansi-${layer}-${colour}` : '';
}

function isLight(rgb: string): boolean {
  const [r = 0, g = 0, b = 0] = (rgb.match(/\d+/g) ?? []).map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 140;
}
