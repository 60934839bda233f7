/**
 * Server-Sent Events, parsed from the text of a stream read with `fetch` (the format of the HTML standard, the part
 * Slipway's log streams use): `field: value` lines, a blank line ends an event, a line starting with `:` is a comment
 * (the keep-alives). No DOM and no imports, so it is tested in Node (test/console-sse.test.ts).
 */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** Splits a chunk stream into SSE events; `rest` keeps a partial event until its blank line arrives. */
export function parseEvents(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0 || id !== undefined) events.push({ id, event, data: data.join('\n') });
  }
  return { events, rest };
}


/** The events of a stream's body as they arrive, a batch per chunk read (each chunk's complete events). */
export async function* eventBatches(body: ReadableStream<Uint8Array<ArrayBuffer>>): AsyncGenerator<SseEvent[]> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    const { events, rest } = parseEvents(buffer);
    buffer = rest;
    yield events;
  }
}
