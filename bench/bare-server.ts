import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

/**
 * The baseline of every ratio the benchmark prints: the least a Fastify route can cost on this machine. It runs as
 * its own child process started exactly like the Slipway server (`node <entry>`, SLIPWAY_HOST and
 * SLIPWAY_PORT), so the two differ only in what happens inside a request.
 *
 *   GET /          (a) a small JSON object
 *   GET /projects  a reference, not a goal: a body shaped and sized like listProject's answer for 100 projects,
 *                  held in memory and serialized on every request, so what (b) pays for its payload alone (JSON
 *                  encoding, 28 kB on the socket) can be told apart from what it pays for Slipway's work
 */
const app = Fastify({ logger: false });

const organizationId = randomUUID();
const createdAt = new Date().toISOString();
const projects = Array.from({ length: 100 }, (_, index) => ({
  id: randomUUID(),
  created_at: createdAt,
  updated_at: createdAt,
  name: `seed-${String(index + 1).padStart(3, '0')}`,
  description: `Seeded project number ${index + 1}`,
  associated_environments_count: 0,
  organization: { id: organizationId },
}));

app.get('/', async () => ({ hello: 'world' }));
app.get('/projects', async () => ({ results: projects }));

const stop = async (): Promise<void> => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());

await app.listen({ host: process.env.SLIPWAY_HOST ?? '127.0.0.1', port: Number(process.env.SLIPWAY_PORT ?? 0) });
