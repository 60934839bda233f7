// A small application for Slipway's walkthrough: it finds its PostgreSQL database through the built-in variable
// PLATFORM_DATABASE_<NAME>_CONNECTION_URI, records a visit per request and answers the visits so far.
import http from 'node:http';
import pg from 'pg';

const uriVariable = Object.keys(process.env).find((key) => /^PLATFORM_DATABASE_.+_CONNECTION_URI$/.test(key));
if (uriVariable === undefined) {
  console.error('no PLATFORM_DATABASE_<NAME>_CONNECTION_URI: deploy a PostgreSQL database in this environment');
  process.exit(1);
}
const pool = new pg.Pool({ connectionString: process.env[uriVariable] });
const greeting = process.env.GREETING ?? 'hello';

async function main() {
  await pool.query('create table if not exists visits (id serial primary key, at timestamptz not null default now())');
  const server = http.createServer(async (request, response) => {
    if (request.url === '/health') {
      response.writeHead(200).end('ok\n');
      return;
    }
    try {
      await pool.query('insert into visits default values');
      const { rows } = await pool.query('select count(*)::int as visits from visits');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`${JSON.stringify({ greeting, visits: rows[0].visits, database: uriVariable })}\n`);
    } catch (error) {
      response.writeHead(500).end(`${error.message}\n`);
    }
  });
  server.listen(Number(process.env.PORT), () => console.log(`visits listens on ${process.env.PORT}, database from ${uriVariable}`));
  process.on('SIGTERM', () => server.close(() => pool.end()));
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
