import { get } from 'node:http';

/**
 * A streamed answer read as it arrives, over node:http: `close()` destroys the request, so its connection closes for
 * certain (fetch's pool may keep an aborted streaming connection open, which would hide a server that never noticed).
 * `items()` parses what arrived so far with the stream's own format.
 */
export interface Arriving<Item> {
  status: number;
  contentType: string;
  text(): string;
  items(): Item[];
  /** Resolves when the server ended the answer. */
  ended: Promise<void>;
  close(): Promise<void>;
}

export function arriving<Item>(url: string, headers: Record<string, string>, parse: (text: string) => Item[]): Promise<Arriving<Item>> {
  return new Promise((resolve, reject) => {
    let text = '';
    const request = get(url, { headers }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('error', () => undefined);
      const closed = new Promise<void>((done) => request.on('close', done));
      const ended = new Promise<void>((done) => response.on('end', done));
      resolve({
        ended,
        status: response.statusCode ?? 0,
        contentType: String(response.headers['content-type']),
        text: () => text,
        items: () => parse(text),
        async close() {
          request.destroy();
          await closed;
        },
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
  });
}
