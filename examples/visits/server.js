// A small application for Slipway's walkthrough: it records a visit per request in PostgreSQL at DATABASE_URL, counts
// it in Redis at REDIS_URL — variables the walkthrough sets as aliases of the databases' built-ins,
// $PLATFORM_DATABASE_<NAME>_CONNECTION_URI — prints a line for each request and answers the counts.
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';

for (const name of ['DATABASE_URL', 'REDIS_URL']) {
  if (process.env[name] === undefined) {
    console.error(`${name} is not set: slipway var set ${name} '$PLATFORM_DATABASE_<NAME>_CONNECTION_URI' --service visits --env …`);
    process.exit(1);
  }
}
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const greeting = process.env.GREETING ?? 'hello';

/** One Redis command (after AUTH with the URL's credentials) on a connection of its own: a few lines of RESP. */
function redis(...words) {
  const url = new URL(process.env.REDIS_URL);
  const commands = url.password === '' ? [words] : [['AUTH', decodeURIComponent(url.username || 'default'), decodeURIComponent(url.password)], words];
  const encode = (parts) => `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join('')}`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 6379) }, () => socket.write(commands.map(encode).join('')));
    socket.setTimeout(5000, () => socket.destroy(new Error('Redis did not answer within 5 s')));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
      const replies = received.split('\r\n').slice(0, -1);
      if (replies.length < commands.length) return;
      socket.end();
      const failed = replies.find((reply) => reply.startsWith('-'));
      if (failed !== undefined) reject(new Error(`Redis: ${failed.slice(1)}`));
      else resolve(Number(replies[commands.length - 1].slice(1)) || replies[commands.length - 1].slice(1));
    });
    socket.on('error', reject);
  });
}

async function main() {
  await pool.query('create table if not exists visits (id serial primary key, at timestamptz not null default now())');
  await redis('PING');
  const server = http.createServer(async (request, response) => {
    if (request.url === '/health') {
      response.writeHead(200).end('ok\n');
      return;
    }
    try {
      await pool.query('insert into visits default values');
      const { rows } = await pool.query('select count(*)::int as visits from visits');
      const cached = await redis('INCR', 'visits');
      console.log(`visits: ${request.method} ${request.url} (visit ${rows[0].visits}, greeting ${greeting})`);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`${JSON.stringify({ greeting, visits: rows[0].visits, cached_visits: cached })}\n`);
    } catch (error) {
      console.error(`visits: ${error.message}`);
      response.writeHead(500).end(`${error.message}\n`);
    }
  });
  server.listen(Number(process.env.PORT), () => console.log(`visits listens on ${process.env.PORT}, PostgreSQL and Redis reached`));
  process.on('SIGTERM', () => server.close(() => pool.end()));
}

main().catch((error) => {
  console.error(`visits could not start: ${error.message}`);
  process.exit(1);
});
