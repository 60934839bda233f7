import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { freePort, runNodeScript, scratchPostgresDatabase, startBenchRun, startServerProcess, type ServerProcess } from './processes.ts';

/**
 * `npm run bench:data` (issue 26 part 4): one organization at scale — 10,000 projects, 100,000 variables, 1,000,000
 * audit events, an environment of 500 services and a service with 10,000 deployments — then the first and the last
 * page of every list and the variable resolution of one service, timed through a real `slipway server` child.
 *
 * Seeding: the server creates one of each row through the API (a project, environment, container, plain variables,
 * aliases, secrets, overrides, a deployment, audit events), so every row is shaped exactly as the app writes it; the
 * server is stopped and those rows are copied in bulk with new ids, names and times (SQLite: one transaction of
 * prepared inserts; PostgreSQL: multi-row INSERTs of json_populate_recordset batches); the server is started again on
 * the seeded database and measured. Secrets are sealed with their row's id, so they are only the ones the API wrote.
 *
 * "Last page" is what a client reaches by the list's own paging: the events' continueToken and the deployment
 * history's startId / cursor of the page before the last (computed from the database, exactly the token the API
 * hands out there); the lists the reference does not page (projects, environments, services, variables) are one page.
 *
 * Each figure: 5 warm-up requests, then 50 sequential requests; median and p99 of the client-side latency, against the
 * goals (lists < 20 ms, resolution < 10 ms). SQLite always; PostgreSQL too when SLIPWAY_BENCH_DATABASE_URL is set, on
 * a scratch database dropped WITH (FORCE) afterwards. Figures are recorded in docs/benchmarks.md.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const HOST = '127.0.0.1';
const PROJECTS = 10_000;
const VARIABLES = 100_000;
const EVENTS = 1_000_000;
const ENVIRONMENTS_OF_PROJECT = 100;
const SERVICES_OF_ENVIRONMENT = 500;
const DEPLOYMENTS_OF_SERVICE = 10_000;
/** What the measured service sees: its project's, its environment's and its own rows (overrides and aliases among them). */
const SEEN = { project: 1_000, environment: 1_000, service: 500 };
const SECRETS_PER_SCOPE = 10;
/** Events are spread over the last six days: the FREE plan keeps seven, and a list purges what is older. */
const EVENT_SPAN_MS = 6 * 24 * 60 * 60 * 1000;
const EVENT_PAGE_SIZE = 100;
const HISTORY_PAGE_SIZE = 20;
const WARMUP = 5;
const ROUNDS = 50;
const LIST_GOAL_MS = 20;
const RESOLUTION_GOAL_MS = 10;
/**
 * Not one of issue 26's goals, which are about reads: ours for a single write in the big project (it checks for alias
 * cycles over what the project holds), so that a write's cost cannot grow with the data unseen.
 */
const WRITE_GOAL_MS = 50;

const bench = startBenchRun('slipway-bench-data-');

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

type Row = Record<string, unknown>;

/** The scratch database's two ways in: read a row as the app stored it, insert many shaped like it. */
interface Store {
  one(sql: string, parameters: unknown[]): Promise<Row | undefined>;
  all(sql: string, parameters: unknown[]): Promise<Row[]>;
  run(sql: string, parameters: unknown[]): Promise<void>;
  insert(table: string, rows: Row[]): Promise<void>;
  /** Runs `fill` in one transaction (on SQLite the prepared inserts are only fast inside one). */
  transaction(fill: () => Promise<void>): Promise<void>;
  /** The CREATE INDEX statements of a table's secondary indexes (not those of its primary key and unique constraints). */
  indexes(table: string): Promise<{ name: string; definition: string }[]>;
  analyze(): Promise<void>;
  close(): Promise<void>;
}

function sqliteStore(file: string): Store {
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  const statements = new Map<string, SqliteDatabase.Statement>();
  // The queries are written with PostgreSQL's $n (one may repeat); here they become the named parameters @pn.
  const prepare = (sql: string) => database.prepare(sql.replaceAll(/\$(\d+)/g, '@p$1'));
  const named = (parameters: unknown[]) => Object.fromEntries(parameters.map((value, index) => [`p${index + 1}`, value]));
  return {
    one: async (sql, parameters) => prepare(sql).get(named(parameters)) as Row | undefined,
    all: async (sql, parameters) => prepare(sql).all(named(parameters)) as Row[],
    run: async (sql, parameters) => void prepare(sql).run(named(parameters)),
    async insert(table, rows) {
      const first = rows[0];
      if (first === undefined) return;
      const columns = Object.keys(first);
      const key = `${table}:${columns.join(',')}`;
      let statement = statements.get(key);
      if (statement === undefined) {
        statement = database.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((column) => `@${column}`).join(', ')})`);
        statements.set(key, statement);
      }
      for (const row of rows) statement.run(row);
    },
    async transaction(fill) {
      database.exec('BEGIN');
      try {
        await fill();
        database.exec('COMMIT');
      } catch (error) {
        database.exec('ROLLBACK');
        throw error;
      }
    },
    indexes: async (table) =>
      (database.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(table) as { name: string; sql: string }[]).map(
        (row) => ({ name: row.name, definition: row.sql }),
      ),
    analyze: async () => void database.exec('ANALYZE'),
    close: async () => void database.close(),
  };
}

/** JSON text of a row for json_populate_recordset: timestamps as ISO strings, JSON columns as they are. */
function postgresValue(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

async function postgresStore(url: string): Promise<Store> {
  const client = new pg.Client({ connectionString: url });
  // The scratch database is dropped WITH (FORCE) at the end, which ends this connection: no crash for that.
  client.on('error', (error) => log(`seeding connection: ${error.message}`));
  await client.connect();
  // Rows are read as JSON so that copies carry the stored text of every column (timestamps, jsonb) unchanged.
  const asJson = (sql: string) => `SELECT row_to_json(selected) AS row FROM (${sql}) selected`;
  return {
    one: async (sql, parameters) => ((await client.query(asJson(sql), parameters)).rows[0] as { row: Row } | undefined)?.row,
    all: async (sql, parameters) => (await client.query(asJson(sql), parameters)).rows.map((r: { row: Row }) => r.row),
    run: async (sql, parameters) => void (await client.query(sql, parameters)),
    async insert(table, rows) {
      const first = rows[0];
      if (first === undefined) return;
      const columns = Object.keys(first).join(', ');
      const text = JSON.stringify(rows.map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, postgresValue(value)]))));
      await client.query(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${table}, $1::json)`, [text]);
    },
    async transaction(fill) {
      await client.query('BEGIN');
      try {
        await fill();
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    },
    indexes: async (table) =>
      (
        await client.query(
          `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE tablename = $1 AND schemaname = current_schema()
             AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass)`,
          [table],
        )
      ).rows as { name: string; definition: string }[],
    analyze: async () => void (await client.query('VACUUM ANALYZE')),
    close: () => client.end(),
  };
}

/** Inserts rows made by `make(index)` for index 0..count-1, a batch at a time. */
async function insertMany(store: Store, table: string, count: number, make: (index: number) => Row, batch = 2_000): Promise<void> {
  for (let start = 0; start < count; start += batch) {
    const rows: Row[] = [];
    for (let index = start; index < Math.min(count, start + batch); index += 1) rows.push(make(index));
    await store.insert(table, rows);
    if (bench.signal.aborted) throw bench.signal.reason;
  }
}

function pad(index: number): string {
  return String(index).padStart(6, '0');
}

async function api<T>(server: ServerProcess, authorization: string, method: string, url: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.baseUrl}${url}`, {
    method,
    headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

interface Fixture {
  organizationId: string;
  userId: string;
  projectId: string;
  environmentId: string;
  serviceId: string;
  /** A project whose id events name as target: the targetId filter's subject. */
  rareTargetId: string;
}

/** What the API writes once: the rows every bulk copy is shaped from. */
async function createTemplates(server: ServerProcess, authorization: string, organizationId: string) {
  const call = <T>(method: string, url: string, body?: unknown) => api<T>(server, authorization, method, url, body);
  await call('POST', `/organization/${organizationId}/cluster`, { name: 'bench', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
  const registry = await call<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: 'hub', kind: 'DOCKER_HUB', url: 'https://docker.io' });
  const project = await call<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'project-000000' });
  const environment = await call<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'env-000000', mode: 'PRODUCTION' });
  const service = await call<{ id: string }>('POST', `/environment/${environment.id}/container`, {
    name: 'svc-000000',
    registry_id: registry.id,
    image_name: 'library/nginx',
    tag: '1.27',
    healthchecks: {},
    ports: [{ internal_port: 80, publicly_accessible: false }],
  });
  const scopes = [
    { base: `/project/${project.id}/environmentVariable`, prefix: 'P' },
    { base: `/environment/${environment.id}/environmentVariable`, prefix: 'E' },
    { base: `/container/${service.id}/environmentVariable`, prefix: 'S' },
  ];
  for (const { base, prefix } of scopes) {
    await call('POST', base, { key: `${prefix}_TEMPLATE_PLAIN`, value: 'template' });
    await call('POST', base, { key: `${prefix}_TEMPLATE_ALIAS`, value: '$PLATFORM_IS_PRODUCTION' });
    for (let index = 0; index < SECRETS_PER_SCOPE; index += 1) {
      await call('POST', base.replace('environmentVariable', 'secret'), { key: `${prefix}_SECRET_${index}`, value: `secret-${prefix}-${index}` });
    }
  }
  await call('POST', `/container/${service.id}/deploy`, {});
  return { projectId: project.id, environmentId: environment.id, serviceId: service.id };
}

/**
 * Copies the templates into the organization: projects, the first project's environments, the first environment's
 * services, the first service's deployments, variables over every scope and the audit log.
 */
async function seed(store: Store, ids: { organizationId: string; userId: string; projectId: string; environmentId: string; serviceId: string }): Promise<Fixture> {
  const byId = async (table: string, id: string): Promise<Row> => {
    const row = await store.one(`SELECT * FROM ${table} WHERE id = $1`, [id]);
    if (row === undefined) throw new Error(`${table} ${id} was not written`);
    return row;
  };
  const project = await byId('projects', ids.projectId);
  const environment = await byId('environments', ids.environmentId);
  const service = await byId('services', ids.serviceId);
  const variableTemplate = async (key: string): Promise<Row> => {
    const row = await store.one('SELECT * FROM variables WHERE key = $1', [key]);
    if (row === undefined) throw new Error(`variable ${key} was not written`);
    return row;
  };
  const plain = { P: await variableTemplate('P_TEMPLATE_PLAIN'), E: await variableTemplate('E_TEMPLATE_PLAIN'), S: await variableTemplate('S_TEMPLATE_PLAIN') };
  const alias = { P: await variableTemplate('P_TEMPLATE_ALIAS'), E: await variableTemplate('E_TEMPLATE_ALIAS'), S: await variableTemplate('S_TEMPLATE_ALIAS') };
  const deployment = await store.one('SELECT * FROM service_deployments WHERE service_id = $1', [ids.serviceId]);
  const event = await store.one('SELECT * FROM organization_events WHERE organization_id = $1 AND event_type = $2 ORDER BY created_at LIMIT 1', [ids.organizationId, 'CREATE']);
  const stored = await store.one('SELECT COUNT(*) AS count FROM variables', []);
  if (deployment === undefined || event === undefined || stored === undefined) throw new Error('the templates were not all written');

  const now = Date.now();
  const projectIds = [ids.projectId];
  for (let index = 1; index < PROJECTS; index += 1) projectIds.push(uuidv7());
  const environmentIds = [ids.environmentId];
  for (let index = 1; index < ENVIRONMENTS_OF_PROJECT; index += 1) environmentIds.push(uuidv7());
  const serviceIds = [ids.serviceId];
  for (let index = 1; index < SERVICES_OF_ENVIRONMENT; index += 1) serviceIds.push(uuidv7());

  await store.transaction(async () => {
    await insertMany(store, 'projects', PROJECTS - 1, (index) => ({ ...project, id: projectIds[index + 1], name: `project-${pad(index + 1)}`, name_key: `project-${pad(index + 1)}` }));
    await insertMany(store, 'environments', ENVIRONMENTS_OF_PROJECT - 1, (index) => ({ ...environment, id: environmentIds[index + 1], name: `env-${pad(index + 1)}`, name_key: `env-${pad(index + 1)}`, last_deployment_id: null }));
    // Copies keep no hostname label or local address (both unique); the services module gives them when it needs them.
    await insertMany(store, 'services', SERVICES_OF_ENVIRONMENT - 1, (index) => ({
      ...service,
      id: serviceIds[index + 1],
      name: `svc-${pad(index + 1)}`,
      name_key: `svc-${pad(index + 1)}`,
      ...('hostname_label' in service ? { hostname_label: null } : {}),
      ...('local_port' in service ? { local_port: null } : {}),
      ...('local_address' in service ? { local_address: null } : {}),
    }));

    // The measured service's history: DEPLOYMENTS_OF_SERVICE finished deployments over the event span, oldest first.
    await insertMany(store, 'service_deployments', DEPLOYMENTS_OF_SERVICE, (index) => {
      const at = now - EVENT_SPAN_MS + Math.floor((index * EVENT_SPAN_MS) / DEPLOYMENTS_OF_SERVICE) - 60_000;
      const time = new Date(at).toISOString();
      return { ...deployment, id: uuidv7({ msecs: at }), status: 'DEPLOYED', message: null, created_at: time, updated_at: time, finished_at: new Date(at + 30_000).toISOString() };
    });

    // Variables. The measured service sees SEEN.project + SEEN.environment + SEEN.service rows: a third of the
    // environment's and the service's names override a broader one, every tenth row is an alias of a visible name.
    let written = Number(stored.count);
    const variable = (scope: 'P' | 'E' | 'S', owner: Row, key: string, aliasOf: string | undefined): Row => {
      const template = aliasOf === undefined ? plain[scope] : alias[scope];
      return {
        ...template,
        id: uuidv7(),
        key,
        ...owner,
        ...(aliasOf === undefined ? { value: `value-of-${key}-${'x'.repeat(24)}` } : { value: `$${aliasOf}`, alias_of: aliasOf }),
      };
    };
    const seenKey = (scope: 'P' | 'E' | 'S', index: number) => (index % 3 === 0 ? `SHARED_${index}` : `${scope}_VAR_${index}`);
    const aliasTarget = (index: number) => (index % 10 === 5 ? `SHARED_${index - 5 - ((index - 5) % 3)}` : undefined);
    const seenOwners = {
      P: { owner_id: ids.projectId, project_id: ids.projectId, environment_id: null, service_id: null },
      E: { owner_id: ids.environmentId, project_id: ids.projectId, environment_id: ids.environmentId, service_id: null },
      S: { owner_id: ids.serviceId, project_id: ids.projectId, environment_id: ids.environmentId, service_id: ids.serviceId },
    };
    for (const [scope, count] of [['P', SEEN.project], ['E', SEEN.environment], ['S', SEEN.service]] as const) {
      await insertMany(store, 'variables', count, (index) => variable(scope, seenOwners[scope], seenKey(scope, index), scope === 'P' ? undefined : aliasTarget(index)));
      written += count;
    }
    // The rest over the organization: 60 per other service of the environment, 150 per other environment of the
    // project, and what remains 5 or so per other project.
    const perService = 60;
    await insertMany(store, 'variables', (SERVICES_OF_ENVIRONMENT - 1) * perService, (index) => {
      const serviceId = serviceIds[1 + Math.floor(index / perService)] as string;
      return variable('S', { owner_id: serviceId, project_id: ids.projectId, environment_id: ids.environmentId, service_id: serviceId }, `SVC_VAR_${index % perService}`, undefined);
    });
    written += (SERVICES_OF_ENVIRONMENT - 1) * perService;
    const perEnvironment = 150;
    await insertMany(store, 'variables', (ENVIRONMENTS_OF_PROJECT - 1) * perEnvironment, (index) => {
      const environmentId = environmentIds[1 + Math.floor(index / perEnvironment)] as string;
      return variable('E', { owner_id: environmentId, project_id: ids.projectId, environment_id: environmentId, service_id: null }, `ENV_VAR_${index % perEnvironment}`, undefined);
    });
    written += (ENVIRONMENTS_OF_PROJECT - 1) * perEnvironment;
    const rest = VARIABLES - written;
    await insertMany(store, 'variables', rest, (index) => {
      const projectId = projectIds[1 + (index % (PROJECTS - 1))] as string;
      return variable('P', { owner_id: projectId, project_id: projectId, environment_id: null, service_id: null }, `PROJECT_VAR_${Math.floor(index / (PROJECTS - 1))}`, undefined);
    });
  });
  log(`seeded projects, environments, services, deployments and ${VARIABLES} variables`);

  // The audit log: EVENTS rows over the span, oldest first. Most are updates of the projects by the bootstrap user;
  // one in fifty is a DELETE, one in ten comes from another member, one in a hundred is in the first project, and
  // one project (rareTargetId) is the target of one event in ten thousand — the shapes of the filters measured.
  const otherMembers = Array.from({ length: 9 }, () => uuidv7());
  const rareTargetId = projectIds[PROJECTS - 1] as string;
  const eventTypes = ['UPDATE', 'UPDATE', 'CREATE', 'DEPLOY_QUEUED'];
  // A million rows go in faster with the log's secondary indexes built once afterwards, from their own definitions.
  const eventIndexes = await store.indexes('organization_events');
  for (const index of eventIndexes) await store.run(`DROP INDEX ${index.name}`, []);
  await store.transaction(() =>
    insertMany(store, 'organization_events', EVENTS, (index) => {
      const at = now - EVENT_SPAN_MS + Math.floor((index * EVENT_SPAN_MS) / EVENTS);
      const targetIndex = index % 10_000 === 7 ? PROJECTS - 1 : index % 100 === 3 ? 0 : index % PROJECTS;
      const target = projectIds[targetIndex] as string;
      const author = index % 10 === 1 ? (otherMembers[index % otherMembers.length] as string) : ids.userId;
      return {
        ...event,
        id: uuidv7({ msecs: at }),
        created_at: new Date(at).toISOString(),
        event_type: index % 50 === 0 ? 'DELETE' : (eventTypes[index % eventTypes.length] as string),
        target_type: 'PROJECT',
        target_id: target,
        target_name: `project-${pad(targetIndex)}`,
        project_id: target,
        author_id: author,
        triggered_by: author === ids.userId ? event.triggered_by : `member-${author.slice(-4)}@example.com`,
        request_id: `bench-${index}`,
      };
    }, 5_000),
  );
  for (const index of eventIndexes) await store.run(index.definition, []);
  log(`seeded ${EVENTS} audit events (${eventIndexes.length} indexes rebuilt)`);
  await store.analyze();
  return { ...ids, rareTargetId };
}

interface Figure {
  name: string;
  goalMs: number;
  median: number;
  p99: number;
  rows: number;
  /** CPU time the server spent per request (user + system), in microseconds: steadier than latency on a busy machine. */
  cpuMicros: number;
}

async function timed(
  server: ServerProcess,
  authorization: string,
  name: string,
  url: string,
  goalMs: number,
  check: (body: unknown) => number,
  before?: () => Promise<void>,
): Promise<Figure> {
  let rows = 0;
  /**
   * One request, timed from sending it to the last byte of the answer. The bench's own parse and check of the body
   * come after the clock stops: JSON.parse of the 2.4 MB project list alone takes the client about as long as the
   * server takes to answer it, and that is the client's time, not the page's.
   */
  const once = async (): Promise<number> => {
    const start = performance.now();
    const response = await fetch(`${server.baseUrl}${url}`, { headers: { authorization } });
    const text = await response.text();
    const elapsed = performance.now() - start;
    if (response.status !== 200) throw new Error(`${name}: GET ${url} answered ${response.status}: ${text.slice(0, 500)}`);
    rows = check(JSON.parse(text));
    return elapsed;
  };
  for (let index = 0; index < WARMUP; index += 1) await once();
  const samples: number[] = [];
  // The server's CPU is summed over the requests alone, so that what `before` makes it do (a write) is not counted.
  let cpuTotal = 0;
  for (let index = 0; index < ROUNDS; index += 1) {
    await before?.();
    const cpuBefore = server.cpuMicros();
    samples.push(await once());
    const cpuAfter = server.cpuMicros();
    cpuTotal = cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuTotal + (cpuAfter - cpuBefore);
    if (bench.signal.aborted) throw bench.signal.reason;
  }
  return figureOf(name, goalMs, rows, samples, cpuTotal);
}

function figureOf(name: string, goalMs: number, rows: number, samples: number[], cpuTotal: number): Figure {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1] ?? Number.NaN;
  return { name, goalMs, rows, cpuMicros: cpuTotal / sorted.length, median, p99 };
}

/** The writes a figure makes before each of its reads, timed as well: a write's own latency is a figure too. */
function timedWrites(server: ServerProcess) {
  const samples: number[] = [];
  let cpuTotal = 0;
  return {
    async time(write: () => Promise<Response>): Promise<Response> {
      const cpuBefore = server.cpuMicros();
      const start = performance.now();
      const response = await write();
      await response.arrayBuffer().catch(() => undefined);
      samples.push(performance.now() - start);
      const cpuAfter = server.cpuMicros();
      cpuTotal = cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuTotal + (cpuAfter - cpuBefore);
      return response;
    },
    figure: (name: string, goalMs: number, rows: number): Figure => figureOf(name, goalMs, rows, samples, cpuTotal),
  };
}

type TimedWrites = ReturnType<typeof timedWrites>;

function results(body: unknown): number {
  return (body as { results: unknown[] }).results.length;
}

/** The continueToken the API hands out on the page before the last: the newest row older than the last page. */
function eventToken(row: Row | undefined): string {
  if (row === undefined) throw new Error('the filter matched too few events for a last page');
  return Buffer.from(`${String(row.created_at)}|${String(row.id)}`, 'utf8').toString('base64url');
}

function isoOf(value: unknown): string {
  return new Date(String(value)).toISOString();
}

/** Before each request: a project of the organization renamed through the API, to one name and back in turn. */
function renamingAProject(server: ServerProcess, authorization: string, store: Store, organizationId: string, writes: TimedWrites): () => Promise<void> {
  let renames = 0;
  return async () => {
    const project = await store.one('select id, name from projects where organization_id = $1 order by name_key desc limit 1', [organizationId]);
    if (project === undefined) throw new Error('the organization has no project to rename');
    renames += 1;
    const name = String(project.name).replace(/-renamed-\d+$/, '') + `-renamed-${renames}`;
    const response = await writes.time(() =>
      fetch(`${server.baseUrl}/project/${String(project.id)}`, {
        method: 'PUT',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      }),
    );
    if (response.status !== 200) throw new Error(`renaming a project answered ${response.status}`);
  };
}

/** Before each request: one plain variable of the project given a new value through the API. */
function editingAVariable(server: ServerProcess, authorization: string, store: Store, projectId: string, writes: TimedWrites): () => Promise<void> {
  let edits = 0;
  return async () => {
    const variable = await store.one(
      'select id, key from variables where owner_id = $1 and is_secret = 0 and alias_of is null order by key limit 1',
      [projectId],
    );
    if (variable === undefined) throw new Error('the project has no plain variable to edit');
    edits += 1;
    const response = await writes.time(() =>
      fetch(`${server.baseUrl}/project/${projectId}/environmentVariable/${String(variable.id)}`, {
        method: 'PUT',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ key: variable.key, value: `edited-${edits}` }),
      }),
    );
    if (response.status !== 200) throw new Error(`editing a variable answered ${response.status}`);
  };
}

async function measureAll(server: ServerProcess, authorization: string, store: Store, fixture: Fixture): Promise<Figure[]> {
  const { organizationId, projectId, environmentId, serviceId, userId } = fixture;
  const figures: Figure[] = [];
  const measure = async (name: string, url: string, goalMs: number, check: (body: unknown) => number, before?: () => Promise<void>) => {
    figures.push(await timed(server, authorization, name, url, goalMs, check, before));
    log(`measured ${name}`);
  };
  await measure('projects (one page)', `/organization/${organizationId}/project`, LIST_GOAL_MS, results);
  // The project list is answered from its last serialization until a project or environment is written
  // (src/http/list-answers.ts): the figure above is that steady state; this one renames a project before each request,
  // so every answer is built again from the database.
  const renames = timedWrites(server);
  await measure('projects (one page), each after a rename', `/organization/${organizationId}/project`, LIST_GOAL_MS, results, renamingAProject(server, authorization, store, organizationId, renames));
  figures.push(renames.figure('a project renamed (PUT, the write itself)', WRITE_GOAL_MS, 1));
  await measure('environments of a project (one page)', `/project/${projectId}/environment`, LIST_GOAL_MS, results);
  await measure('containers of an environment (one page)', `/environment/${environmentId}/container`, LIST_GOAL_MS, results);
  await measure('services of an environment, by organization', `/organization/${organizationId}/services?environment_id=${environmentId}`, LIST_GOAL_MS, results);
  await measure("variables a service sees (one page)", `/container/${serviceId}/environmentVariable`, LIST_GOAL_MS, results);
  await measure("a project's variables (one page)", `/project/${projectId}/environmentVariable`, LIST_GOAL_MS, results);
  await measure('variable resolution of a service', `/container/${serviceId}/resolvedVariables`, RESOLUTION_GOAL_MS, results);
  // The variable answers too are kept until a variable, a service or the environment is written: this figure edits
  // one of the project's variables before each request, so every resolution is built again.
  const edits = timedWrites(server);
  await measure(
    'variable resolution, each after a variable edit',
    `/container/${serviceId}/resolvedVariables`,
    RESOLUTION_GOAL_MS,
    results,
    editingAVariable(server, authorization, store, projectId, edits),
  );
  figures.push(edits.figure("a project variable edited (PUT, the write itself)", WRITE_GOAL_MS, 1));

  // Deployment history: the first page, and the last one as its startId / cursor reaches it.
  const history = await store.all('SELECT id FROM service_deployments WHERE service_id = $1 ORDER BY id LIMIT $2', [serviceId, HISTORY_PAGE_SIZE + 1]);
  const beforeLastHistoryPage = String(history[HISTORY_PAGE_SIZE]?.id);
  const historyCheck = (last: boolean) => (body: unknown) => {
    const page = body as { results: unknown[]; next_cursor?: string | null };
    if (last && page.next_cursor !== null && page.next_cursor !== undefined) throw new Error('the last history page has a next cursor');
    return page.results.length;
  };
  await measure('deployment history V2, first page', `/container/${serviceId}/deploymentHistoryV2?pageSize=${HISTORY_PAGE_SIZE}`, LIST_GOAL_MS, historyCheck(false));
  await measure('deployment history V2, last page', `/container/${serviceId}/deploymentHistoryV2?pageSize=${HISTORY_PAGE_SIZE}&cursor=${beforeLastHistoryPage}`, LIST_GOAL_MS, historyCheck(true));
  await measure('deployment history, last page (startId)', `/container/${serviceId}/deploymentHistory?pageSize=${HISTORY_PAGE_SIZE}&startId=${beforeLastHistoryPage}`, LIST_GOAL_MS, (body) => (body as { results: unknown[] }).results.length);

  // The audit log, with and without filters: the first page, and the last through its continueToken.
  const span = Date.now();
  const dayFrom = new Date(span - 4 * 24 * 3600_000).toISOString();
  const dayTo = new Date(span - 3 * 24 * 3600_000).toISOString();
  const filters: { name: string; query: string; where: string; parameters: unknown[] }[] = [
    { name: 'no filter', query: '', where: '', parameters: [] },
    { name: 'eventType=DELETE', query: '&eventType=DELETE', where: 'AND event_type = $2', parameters: ['DELETE'] },
    { name: 'targetId (1 in 10,000)', query: `&targetId=${fixture.rareTargetId}`, where: 'AND target_id = $2', parameters: [fixture.rareTargetId] },
    { name: 'serviceProjectId (1 in 100)', query: `&serviceProjectId=${projectId}`, where: 'AND project_id = $2', parameters: [projectId] },
    { name: 'triggeredBy (9 in 10)', query: `&triggeredBy=${userId}`, where: 'AND (triggered_by = $2 OR author_id = $2)', parameters: [userId] },
    { name: 'one day', query: `&fromTimestamp=${dayFrom}&toTimestamp=${dayTo}`, where: 'AND created_at >= $2 AND created_at <= $3', parameters: [dayFrom, dayTo] },
  ];
  const eventsCheck = (last: boolean) => (body: unknown) => {
    const page = body as { events: unknown[]; links: { next?: string } };
    if (last && page.links.next !== undefined) throw new Error('the last events page has a next link');
    return page.events.length;
  };
  for (const filter of filters) {
    const base = `/organization/${organizationId}/events?pageSize=${EVENT_PAGE_SIZE}${filter.query}`;
    await measure(`events, ${filter.name}, first page`, base, LIST_GOAL_MS, eventsCheck(false));
    const oldest = await store.all(
      `SELECT id, created_at FROM organization_events WHERE organization_id = $1 ${filter.where} ORDER BY created_at, id LIMIT ${EVENT_PAGE_SIZE + 1}`,
      [organizationId, ...filter.parameters],
    );
    const before = oldest[EVENT_PAGE_SIZE];
    const token = eventToken(before === undefined ? undefined : { ...before, created_at: isoOf(before.created_at) });
    await measure(`events, ${filter.name}, last page`, `${base}&continueToken=${token}`, LIST_GOAL_MS, eventsCheck(true));
  }
  return figures;
}

interface BootstrapOutput {
  user_id: string;
  organization_id: string;
  api_token: string;
}

function slipwayEnv(dataDir: string, port: number, databaseUrl: string | undefined): Record<string, string> {
  return {
    SLIPWAY_HOST: HOST,
    SLIPWAY_PORT: String(port),
    SLIPWAY_DATA_DIR: dataDir,
    SLIPWAY_LOG_LEVEL: 'warn',
    SLIPWAY_DATABASE_URL: databaseUrl ?? '',
    SLIPWAY_OIDC_ISSUER: '',
    SLIPWAY_OIDC_AUDIENCE: '',
    SLIPWAY_RATE_LIMIT_PER_MINUTE: '0',
    SLIPWAY_EGRESS_IPS: '',
  };
}

/**
 * A directory for a CPU profile of the measured server (`--cpu-prof`, written when it stops): where its time goes
 * across every figure, for Chrome's DevTools or a script.
 */
const SERVER_PROFILE_DIR = process.env.SLIPWAY_BENCH_SERVER_CPU_PROFILE?.trim() || undefined;

/** Starts the server; on a machine shared with other work a start can outlast the ready timeout, so it is tried thrice. */
async function startSlipway(label: string, env: Record<string, string>, port: number, nodeArgs: string[] = []): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const server = await startServerProcess({ name: `Slipway server (${label})`, entry: 'src/main.ts', cwd: ROOT, env, host: HOST, port, readyPath: '/ips', nodeArgs });
      bench.onCleanUp(server.stop);
      return server;
    } catch (error) {
      if (attempt === 3 || bench.signal.aborted) throw error;
      log(`${label}: the server was not ready (${error instanceof Error ? error.message.split('\n')[0] : String(error)}), starting it again`);
    }
  }
}

/**
 * SLIPWAY_BENCH_SEEDED_DIR (SQLite only): a directory kept between runs. The first run seeds into it and writes
 * `seed.json` (the bootstrap's token and the fixture's ids); later runs start the server on it and measure at once,
 * so a change to the server can be measured again without the minutes of seeding.
 */
const SEEDED_DIR = process.env.SLIPWAY_BENCH_SEEDED_DIR?.trim() || undefined;

interface Seeded {
  authorization: string;
  fixture: Fixture;
}

async function seedOn(label: string, dataDir: string, env: Record<string, string>, port: number, databaseUrl: string | undefined): Promise<Seeded> {
  const bootstrap = JSON.parse(
    await runNodeScript('bin/slipway.js', ['admin', 'bootstrap', '--email', 'bench@example.com', '--organization', 'Benchmark', '--name', 'Bench', '--json'], { cwd: ROOT, env }),
  ) as BootstrapOutput;
  const authorization = `Token ${bootstrap.api_token}`;
  const first = await startSlipway(label, env, port);
  const templates = await createTemplates(first, authorization, bootstrap.organization_id);
  await first.stop();
  const seedStart = performance.now();
  const store = databaseUrl === undefined ? sqliteStore(path.join(dataDir, 'slipway.db')) : await postgresStore(databaseUrl);
  try {
    const fixture = await seed(store, { ...templates, organizationId: bootstrap.organization_id, userId: bootstrap.user_id });
    log(`${label}: seeded in ${((performance.now() - seedStart) / 1000).toFixed(0)} s`);
    return { authorization, fixture };
  } finally {
    await store.close();
  }
}

async function runOn(label: string, databaseUrl: string | undefined): Promise<Figure[]> {
  const kept = databaseUrl === undefined ? SEEDED_DIR : undefined;
  const dataDir = kept === undefined ? path.join(bench.scratchDir, `data-${label}`) : path.resolve(kept);
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const env = slipwayEnv(dataDir, port, databaseUrl);
  const seedFile = path.join(dataDir, 'seed.json');
  let seeded: Seeded;
  if (kept !== undefined && existsSync(seedFile)) {
    seeded = JSON.parse(readFileSync(seedFile, 'utf8')) as Seeded;
    log(`${label}: measuring the database seeded in ${dataDir}`);
  } else {
    seeded = await seedOn(label, dataDir, env, port, databaseUrl);
    if (kept !== undefined) writeFileSync(seedFile, JSON.stringify(seeded));
  }
  const store = databaseUrl === undefined ? sqliteStore(path.join(dataDir, 'slipway.db')) : await postgresStore(databaseUrl);
  try {
    const profiled = SERVER_PROFILE_DIR === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(SERVER_PROFILE_DIR), '--cpu-prof-name', `server-${label}.cpuprofile`];
    const server = await startSlipway(label, env, port, profiled);
    try {
      return await measureAll(server, seeded.authorization, store, seeded.fixture);
    } finally {
      await server.stop();
    }
  } finally {
    await store.close();
  }
}


function printFigures(label: string, figures: Figure[]): void {
  console.log(`\n${label}`);
  const width = Math.max(...figures.map((figure) => figure.name.length));
  console.log(`${'request'.padEnd(width)}  rows   median ms  p99 ms  server CPU ms/req  goal`);
  for (const figure of figures) {
    const verdict = figure.median < figure.goalMs && figure.p99 < figure.goalMs ? 'PASS' : figure.median < figure.goalMs ? 'PASS (median; p99 over)' : 'NOT MET';
    console.log(
      `${figure.name.padEnd(width)}  ${String(figure.rows).padStart(5)}  ${figure.median.toFixed(2).padStart(9)}  ${figure.p99.toFixed(2).padStart(6)}  ${(figure.cpuMicros / 1000).toFixed(2).padStart(17)}  < ${figure.goalMs} ms ${verdict}`,
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `Slipway data-at-scale benchmark: node ${process.version}, ${cpus().length} CPUs, ${PROJECTS} projects, ${VARIABLES} variables, ` +
      `${EVENTS} events, ${SERVICES_OF_ENVIRONMENT} services in one environment, ${DEPLOYMENTS_OF_SERVICE} deployments of one service; ` +
      `${ROUNDS} sequential requests per figure after ${WARMUP} warm-up`,
  );
  const postgresServerUrl = process.env.SLIPWAY_BENCH_DATABASE_URL?.trim() || undefined;
  // SLIPWAY_BENCH_SKIP_SQLITE=1 measures PostgreSQL alone (its seeding and SQLite's take minutes each).
  const skipSqlite = process.env.SLIPWAY_BENCH_SKIP_SQLITE === '1' && postgresServerUrl !== undefined;
  const databases: { label: string; url: string | undefined }[] = skipSqlite ? [] : [{ label: 'sqlite', url: undefined }];
  if (postgresServerUrl !== undefined) databases.push({ label: 'postgres', url: (await scratchPostgresDatabase(bench, postgresServerUrl, 'slipway_bench_data')).url });
  for (const database of databases) {
    const figures = await runOn(database.label, database.url);
    console.log(`load average: ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
    printFigures(database.label, figures);
  }
}

await bench.run(main);
