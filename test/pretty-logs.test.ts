import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogFormat } from '../src/config.ts';
import { PrettyLogFormatter } from '../src/http/pretty-logs.ts';
import { createHttpServer } from '../src/http/server.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';

/**
 * The server's log for people (SLIPWAY_LOG_FORMAT=pretty, the default on a terminal) and for machines (JSON): what
 * each line says, which format a destination gets, and the real server printing it.
 */

/** A destination standing for stdout: a terminal or not. */
function destination(terminal: boolean): PassThrough & { isTTY?: boolean; lines(): string[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return Object.assign(stream, terminal ? { isTTY: true } : {}, { lines: () => text.split('\n').filter((line) => line !== '') });
}

/** A server logging to `logStream` with one route that answers and one that fails. */
async function serverLoggingTo(logStream: NodeJS.WritableStream, logFormat: LogFormat | undefined) {
  const app = createHttpServer({ logLevel: 'info', logFormat, logStream });
  app.get('/hello', async () => ({ hello: 'world' }));
  app.get('/boom', async () => {
    throw new Error('the disk is full');
  });
  await app.ready();
  return app;
}

const TIME = String.raw`\d{2}:\d{2}:\d{2}\.\d{3}`;

describe('pretty server logs', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('prints one line per request when it ends, and an error with its message, request id and stack', async () => {
    const logs = destination(false);
    const app = await serverLoggingTo(logs, 'pretty');
    await app.inject({ method: 'GET', url: '/hello?token=slw_secret', headers: { 'x-request-id': 'req-1' } });
    await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'req-2' } });
    await app.close();

    const lines = logs.lines();
    expect(lines[0]).toMatch(new RegExp(`^${TIME} INFO  GET /hello\\?token=\\[redacted\\] 200 \\d+\\.\\d ms$`));
    expect(lines[1]).toMatch(new RegExp(`^${TIME} ERROR request failed request_id=req-2 — the disk is full$`));
    expect(lines[2]).toBe('    Error: the disk is full');
    expect(lines[3]).toMatch(/^ {8}at /);
    const completed = lines.findIndex((line) => line.includes('GET /boom'));
    expect(lines[completed]).toMatch(new RegExp(`^${TIME} INFO  GET /boom 500 \\d+\\.\\d ms$`));
    expect(lines.join('\n')).not.toContain('slw_secret');
    expect(lines.join('\n')).not.toContain('{');
  });

  it('is the default on a terminal; elsewhere, and when SLIPWAY_LOG_FORMAT says json, the log is JSON', async () => {
    for (const [terminal, format, pretty] of [
      [true, undefined, true],
      [false, undefined, false],
      [true, 'json', false],
      [false, 'pretty', true],
    ] as const) {
      const logs = destination(terminal);
      const app = await serverLoggingTo(logs, format);
      await app.inject({ method: 'GET', url: '/hello' });
      await app.close();
      const line = stripVTControlCharacters(logs.lines()[0] ?? '');
      if (pretty) expect(line, `terminal ${terminal}, ${format}`).toMatch(new RegExp(`^${TIME} INFO  GET /hello 200 `));
      else expect(JSON.parse(line), `terminal ${terminal}, ${format}`).toMatchObject({ level: 30, msg: 'incoming request', req: { method: 'GET', url: '/hello' } });
    }
  });

  it('colours the level and the status on a terminal only, and shows a field of several lines below the line', () => {
    vi.stubEnv('FORCE_COLOR', undefined);
    vi.stubEnv('NO_COLOR', undefined);
    const record = JSON.stringify({ level: 40, time: Date.now(), pid: 1, hostname: 'h', to: 'ops@example.com', attempt: 2, text: 'Hello,\n\nclick the link', msg: 'mail kept' });
    const plain = new PrettyLogFormatter(destination(false)).format(record);
    expect(plain).toMatch(new RegExp(`^${TIME} WARN  mail kept to=ops@example.com attempt=2\\n {2}text:\\n {4}Hello,\\n {4}\\n {4}click the link\\n$`));
    const coloured = new PrettyLogFormatter(destination(true)).format(record);
    expect(coloured).not.toBe(plain);
    expect(coloured).toContain('\u001b[33mWARN \u001b[39m');
    expect(stripVTControlCharacters(coloured)).toBe(plain);
  });

  it('is what the real server prints with SLIPWAY_LOG_FORMAT=pretty', async () => {
    let server: SlipwayServer | undefined;
    try {
      server = await startSlipwayServer('sqlite', { SLIPWAY_LOG_FORMAT: 'pretty' });
      expect((await fetch(`${server.baseUrl}/ips`)).status).toBe(200);
      const running = server;
      await vi.waitFor(() => expect(running.output()).toMatch(new RegExp(`^${TIME} INFO  GET /ips 200 `, 'm')), { timeout: 5_000 });
      const output = stripVTControlCharacters(server.output());
      expect(output).toMatch(new RegExp(`^${TIME} INFO  slipway is serving database=sqlite$`, 'm'));
      expect(output).not.toMatch(/^\{/m);
    } finally {
      await server?.close();
    }
  });
});
