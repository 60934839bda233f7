import { describe, expect, it } from 'vitest';
import { parseEvents } from '../console/src/services/sse.ts';

/** The console's reader of Server-Sent Events (console/src/services/sse.ts), fed as a network delivers: in pieces. */
describe('console SSE parser', () => {
  it('reads events with ids, names and data, skips comments, and keeps a partial event for the next chunk', () => {
    const stream = ': keep-alive\n\nid: d1:1\nevent: log\ndata: {"seq":1}\n\nid: d1:2\nevent: log\ndata: {"seq":2}\n\nid: d1:3\nevent: lo';
    const first = parseEvents(stream);
    expect(first.events).toEqual([
      { id: 'd1:1', event: 'log', data: '{"seq":1}' },
      { id: 'd1:2', event: 'log', data: '{"seq":2}' },
    ]);
    expect(first.rest).toBe('id: d1:3\nevent: lo');
    const second = parseEvents(`${first.rest}g\ndata: {"seq":3}\n\n`);
    expect(second.events).toEqual([{ id: 'd1:3', event: 'log', data: '{"seq":3}' }]);
    expect(second.rest).toBe('');
  });

  it('joins multi-line data, accepts CRLF, defaults the event name, and keeps a value without the optional space', () => {
    const { events, rest } = parseEvents('data: one\r\ndata:two\r\n\r\nevent: end\ndata: {}\n\n');
    expect(events).toEqual([
      { id: undefined, event: 'message', data: 'one\ntwo' },
      { id: undefined, event: 'end', data: '{}' },
    ]);
    expect(rest).toBe('');
  });

  it('answers nothing for a stream of comments only', () => {
    expect(parseEvents(': keep-alive\n\n: keep-alive\n\n')).toEqual({ events: [], rest: '' });
  });
});
