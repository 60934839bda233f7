import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Cron } from 'croner';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createJobSchedules, scheduleSerialKey, type ScheduledWork } from '../src/jobs/job-schedules.ts';
import { createJobWorker } from '../src/jobs/job-worker.ts';
import { newId } from '../src/lib/ids.ts';
import { installationBackupSchedule } from '../src/modules/installation-backups/installation-backups.schedule.ts';
import { openTestDatabase, TEST_DIALECTS } from './support/databases.ts';
import { runSlipway, startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { TestClock } from './support/test-app.ts';

/**
 * `slipway admin backup` / `restore` and the scheduled backup (docs/operations.md, "Backing up and restoring"), with
 * the real executable against a real `slipway server` on each database: a backup taken while a load of writes goes on
 * holds every write acknowledged before it began, restores into an empty data directory (SQLite) or a scratch database
 * (PostgreSQL) a server then serves, and its sealed secrets open there under the same key. What restore refuses leaves
 * its target as empty as it was.
 */
const SUITE_TIMEOUT_MS = 240_000;
const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL ?? '';

interface Acknowledged {
  kind: 'project' | 'variable';
  id: string;
  name: string;
  /** When its 2xx answer arrived (performance.now()). */
  at: number;
}

interface BackupHeaderJson {
  dialect: string;
  key_fingerprint: string;
  schema: string | null;
  migrations: string[];
}

async function onPostgres(url: string, statement: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The header a backup file carries on its second line. */
async function headerOf(file: string): Promise<BackupHeaderJson> {
  const head = (await readFile(file)).subarray(0, 64 * 1024).toString('utf8').split('\n');
  expect(head[0]).toBe('SLIPWAY-BACKUP 1');
  return JSON.parse(head[1] ?? '') as BackupHeaderJson;
}

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const at = (ms: number) => new Date(ms).toISOString();

describe('the backup settings', () => {
  const base = { SLIPWAY_DATA_DIR: '/srv/slipway' };

  it('default to no schedule, <data dir>/backups and 7 kept', () => {
    expect(loadConfig(base).backup).toEqual({ schedule: undefined, dir: '/srv/slipway/backups', retention: 7 });
    expect(loadConfig({ ...base, SLIPWAY_BACKUP_SCHEDULE: '0 3 * * *', SLIPWAY_BACKUP_DIR: '/backups', SLIPWAY_BACKUP_RETENTION: '30' }).backup).toEqual({
      schedule: '0 3 * * *',
      dir: '/backups',
      retention: 30,
    });
  });

  it('refuse a schedule that is not cron or never comes due, a retention that is not a count, and a retention without a schedule', () => {
    expect(() => loadConfig({ ...base, SLIPWAY_BACKUP_SCHEDULE: 'nightly' })).toThrow('SLIPWAY_BACKUP_SCHEDULE: must be a cron expression such as "0 3 * * *" (five fields, or six with seconds first), got "nightly"');
    expect(() => loadConfig({ ...base, SLIPWAY_BACKUP_SCHEDULE: '0 0 30 2 *' })).toThrow('SLIPWAY_BACKUP_SCHEDULE: never comes due, got "0 0 30 2 *"');
    expect(() => loadConfig({ ...base, SLIPWAY_BACKUP_SCHEDULE: '0 3 * * *', SLIPWAY_BACKUP_RETENTION: '0' })).toThrow('SLIPWAY_BACKUP_RETENTION: must be how many scheduled backups to keep, 1 to 9999, got "0"');
    expect(() => loadConfig({ ...base, SLIPWAY_BACKUP_SCHEDULE: '0 3 * * *', SLIPWAY_BACKUP_RETENTION: 'all' })).toThrow('got "all"');
    expect(() => loadConfig({ ...base, SLIPWAY_BACKUP_RETENTION: '3' })).toThrow('SLIPWAY_BACKUP_RETENTION: is set but SLIPWAY_BACKUP_SCHEDULE is not');
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`work on a calendar (SLIPWAY_BACKUP_SCHEDULE) [${dialect}]`, () => {
    it('is first due at the calendar\'s next instant, then at its first instant after a run began: missed instants are skipped', async () => {
      const { database, dispose } = await openTestDatabase(dialect);
      const clock = new TestClock();
      const worker = { stop: async () => undefined } as { stop(): Promise<void> };
      try {
        const daily = new Cron('0 3 * * *', { timezone: 'UTC', paused: true });
        const nextDaily = (instant: number) => daily.nextRun(new Date(instant))?.getTime() ?? Number.NaN;
        // The backup schedule reads its cron expression in UTC, each instant strictly after the one given.
        const backups = installationBackupSchedule({
          target: { dialect: 'sqlite', file: ':memory:' },
          secretKey: randomBytes(32),
          schedule: '0 3 * * *',
          dir: tmpdir(),
          retention: 2,
          clock,
          log: { info: () => undefined },
        });
        const threeOClock = Date.UTC(2026, 10, 27, 3);
        expect('nextDueAfter' in backups && backups.nextDueAfter(threeOClock - 1)).toBe(threeOClock);
        expect('nextDueAfter' in backups && backups.nextDueAfter(threeOClock)).toBe(threeOClock + DAY);

        let runs = 0;
        const name = `calendar-${newId()}`;
        const work: ScheduledWork = { name, atStart: false, nextDueAfter: nextDaily, run: async () => void (runs += 1) };
        const schedules = createJobSchedules({ db: database.db, clock, schedules: [work] });
        const pending = async () =>
          (await database.db.selectFrom('jobs').select('run_at').where('serial_key', '=', scheduleSerialKey(name)).where('status', 'in', ['QUEUED', 'RUNNING']).execute()).map((row) => row.run_at);
        const now = clock.now().getTime();
        await schedules.ensure();
        const first = nextDaily(now);
        expect(await pending()).toEqual([at(first)]);

        // Three days and an hour past it, the run is overdue: it runs once, and the next is the first 03:00 after it began.
        clock.advance(first - now + 3 * DAY + HOUR);
        const running = createJobWorker({ database, clock, handlers: new Map(schedules.handlers), pollIntervalMs: 20 });
        worker.stop = () => running.stop();
        running.start();
        await vi.waitFor(async () => expect(await pending()).toEqual([at(first + 4 * DAY)]), { timeout: 10_000, interval: 20 });
        expect(runs).toBe(1);
      } finally {
        await worker.stop();
        await dispose();
      }
    });
  });

  describe(`slipway admin backup and restore [${dialect}]`, () => {
    let server: SlipwayServer & { organizationId: string; apiToken: string };
    const scratchDirs: string[] = [];
    const scratchDatabases: string[] = [];
    const servers: SlipwayServer[] = [];

    async function scratchDir(prefix: string): Promise<string> {
      const dir = await mkdtemp(path.join(tmpdir(), prefix));
      scratchDirs.push(dir);
      return dir;
    }

    /** A fresh, empty PostgreSQL database on the test server, dropped after the suite; its URL uses `schema` when given. */
    async function scratchDatabase(schema: string | null): Promise<string> {
      const name = `slipway_restore_${randomBytes(6).toString('hex')}`;
      await onPostgres(POSTGRES_URL, `CREATE DATABASE ${name}`);
      scratchDatabases.push(name);
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      if (schema !== null) url.searchParams.set('options', `-c timezone=UTC -c search_path=${schema}`);
      return url.href;
    }

    /** An empty data directory holding the source installation's key file (0600), as an operator copies it over. */
    async function dataDirWithSourceKey(): Promise<string> {
      const dir = await scratchDir('slipway-restored-');
      await copyFile(path.join(server.dataDir, 'secret.key'), path.join(dir, 'secret.key'));
      await chmod(path.join(dir, 'secret.key'), 0o600);
      return dir;
    }

    /** The settings of a restore target: the data directory, and on PostgreSQL the scratch database's URL. */
    function targetEnv(dataDir: string, databaseUrl: string | undefined): Record<string, string> {
      return { SLIPWAY_DATA_DIR: dataDir, SLIPWAY_LOG_LEVEL: 'silent', ...(databaseUrl === undefined ? {} : { SLIPWAY_DATABASE_URL: databaseUrl }) };
    }

    async function tablesIn(databaseUrl: string): Promise<number> {
      const result = await onPostgres(databaseUrl, "select count(*)::int as count from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')");
      return (result.rows[0] as { count: number }).count;
    }

    async function api(base: string, method: string, url: string, body?: unknown): Promise<{ status: number; json: unknown }> {
      const response = await fetch(`${base}${url}`, {
        method,
        headers: { authorization: `Token ${server.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
    }

    async function created(url: string, body: unknown): Promise<string> {
      const answer = await api(server.baseUrl, 'POST', url, body);
      expect(answer.status, JSON.stringify(answer.json)).toBeGreaterThanOrEqual(200);
      expect(answer.status, JSON.stringify(answer.json)).toBeLessThan(300);
      return (answer.json as { id: string }).id;
    }

    let projectId: string;
    let environmentId: string;
    let passwordKey: string;
    let password: string;

    async function revealedPassword(base: string): Promise<string | undefined> {
      const answer = await api(base, 'GET', `/environment/${environmentId}/environmentVariable?reveal=true`);
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      return (answer.json as { results: Array<{ key: string; value?: string }> }).results.find((variable) => variable.key === passwordKey)?.value;
    }

    beforeAll(async () => {
      // No rate limit: the load below is one caller writing as fast as the server answers.
      server = await startSlipwayServer(dialect, { SLIPWAY_RATE_LIMIT_PER_MINUTE: '0' }, { bootstrap: true });
      // A sealed secret: the generated password of a database, a hidden built-in variable an ADMIN token may reveal.
      const clusterId = await created(`/organization/${server.organizationId}/cluster`, { name: 'backup-cluster', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      projectId = await created(`/organization/${server.organizationId}/project`, { name: 'backed-up' });
      environmentId = await created(`/project/${projectId}/environment`, { name: 'production', mode: 'PRODUCTION', cluster: clusterId });
      await created(`/environment/${environmentId}/database`, { name: 'orders-db', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE' });
      passwordKey = 'PLATFORM_DATABASE_ORDERS_DB_PASSWORD';
      const revealed = await revealedPassword(server.baseUrl);
      expect(revealed).toEqual(expect.any(String));
      password = revealed ?? '';
    }, SUITE_TIMEOUT_MS);

    afterAll(async () => {
      for (const running of servers) await running.close();
      await server?.close();
      for (const dir of scratchDirs) await rm(dir, { recursive: true, force: true });
      for (const name of scratchDatabases) await onPostgres(POSTGRES_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }, SUITE_TIMEOUT_MS);

    let backupFile: string;
    let header: BackupHeaderJson;

    it(
      'a backup taken under write load holds every write acknowledged before it began; restored, a server serves them and the secrets open',
      async () => {
        const acknowledged: Acknowledged[] = [];
        let loading = true;
        let sequence = 0;
        // Two writers, each creating a project, then a variable of the fixture's project, and so on, while `loading`.
        const writer = async (lane: number) => {
          while (loading) {
            sequence += 1;
            const name = `load-${lane}-${sequence}`;
            const project = await api(server.baseUrl, 'POST', `/organization/${server.organizationId}/project`, { name });
            if (project.status < 300) acknowledged.push({ kind: 'project', id: (project.json as { id: string }).id, name, at: performance.now() });
            const key = `LOAD_${lane}_${sequence}`;
            const variable = await api(server.baseUrl, 'POST', `/project/${projectId}/environmentVariable`, { key, value: name });
            if (variable.status < 300) acknowledged.push({ kind: 'variable', id: (variable.json as { id: string }).id, name: key, at: performance.now() });
          }
        };
        const writers = [writer(1), writer(2)];
        try {
          const loadDeadline = Date.now() + 60_000;
          while (acknowledged.length < 40) {
            if (Date.now() > loadDeadline) throw new Error(`only ${acknowledged.length} writes acknowledged after 60 s`);
            await Promise.race([...writers, new Promise((resolve) => setTimeout(resolve, 20))]);
          }
          const outputDir = await scratchDir('slipway-backups-');
          backupFile = path.join(outputDir, 'under-load.backup');
          const began = performance.now();
          const backup = await server.operator(['admin', 'backup', '--output', backupFile]);
          const ended = performance.now();
          expect(backup.stderr).not.toMatch(/^slipway: (?!using the database)/m);
          expect(backup.code, backup.stderr).toBe(0);
          expect(backup.stdout).toContain(`backup: ${backupFile}`);
          const before = acknowledged.filter((write) => write.at < began);
          // The load went on while the backup ran: writes racing it may or may not be in it.
          expect(acknowledged.some((write) => write.at > began && write.at < ended)).toBe(true);
          loading = false;
          await Promise.all(writers);

          header = await headerOf(backupFile);
          expect(header.dialect).toBe(dialect);
          expect(header.migrations.length).toBeGreaterThan(0);
          // Only a fingerprint of the key, never the key itself.
          const keyFile = (await readFile(path.join(server.dataDir, 'secret.key'), 'utf8')).trim();
          expect(await readFile(backupFile, 'latin1')).not.toContain(keyFile);
          expect((await readdir(outputDir)).sort()).toEqual(['under-load.backup']);

          const restoredDir = await dataDirWithSourceKey();
          const restoredUrl = dialect === 'postgres' ? await scratchDatabase(header.schema) : undefined;
          const restore = await runSlipway(['admin', 'restore', backupFile], targetEnv(restoredDir, restoredUrl));
          expect(restore.code, restore.stderr).toBe(0);
          expect(restore.stdout).toContain('restored:');

          const restored = await startSlipwayServer(dialect, { ...targetEnv(restoredDir, restoredUrl), SLIPWAY_LOG_LEVEL: 'info', SLIPWAY_RATE_LIMIT_PER_MINUTE: '0' });
          servers.push(restored);
          for (const write of before.filter((candidate) => candidate.kind === 'project')) {
            const answer = await api(restored.baseUrl, 'GET', `/project/${write.id}`);
            expect(answer.status, `project ${write.name}`).toBe(200);
            expect((answer.json as { name: string }).name).toBe(write.name);
          }
          const variables = await api(restored.baseUrl, 'GET', `/project/${projectId}/environmentVariable`);
          expect(variables.status).toBe(200);
          const keys = new Set((variables.json as { results: Array<{ key: string }> }).results.map((variable) => variable.key));
          expect(before.filter((write) => write.kind === 'variable' && !keys.has(write.name)).map((write) => write.name)).toEqual([]);
          // The sealed database password opens under the same key on the restored installation.
          expect(await revealedPassword(restored.baseUrl)).toBe(password);
        } finally {
          loading = false;
          await Promise.allSettled(writers);
        }
      },
      SUITE_TIMEOUT_MS,
    );

    it(
      'refuses a target that is not empty, another key, a file that is no backup and a truncated one, leaving its target empty',
      async () => {
        expect(backupFile).toBeDefined();
        // Into the source installation itself: it is not empty.
        const intoItself = await server.operator(['admin', 'restore', backupFile]);
        expect(intoItself.code).toBe(1);
        expect(intoItself.stderr).toMatch(dialect === 'sqlite' ? /^slipway: the data directory .* already holds a database \(.*slipway\.db\)/m : /^slipway: the database .* is not empty \(\d+ table\(s\) in schema /m);

        const emptyDir = await scratchDir('slipway-empty-');
        const emptyUrl = dialect === 'postgres' ? await scratchDatabase(header.schema) : undefined;
        const otherKey = randomBytes(32).toString('hex');
        const wrongKey = await runSlipway(['admin', 'restore', backupFile], { ...targetEnv(emptyDir, emptyUrl), SLIPWAY_SECRET_KEY: otherKey });
        expect(wrongKey.code).toBe(1);
        expect(wrongKey.stderr).toContain(`was taken under another secret key (fingerprint ${header.key_fingerprint.slice(0, 12)}…)`);
        expect(wrongKey.stderr).toContain('set SLIPWAY_SECRET_KEY to the key of the installation the backup came from');
        expect(wrongKey.stderr).not.toContain(otherKey);

        // No key at all in the empty data directory: refused, and none is made up.
        const noKey = await runSlipway(['admin', 'restore', backupFile], targetEnv(emptyDir, emptyUrl));
        expect(noKey.code).toBe(1);
        expect(noKey.stderr).toContain(`there is no secret key at ${path.join(emptyDir, 'secret.key')}`);

        const garbage = path.join(emptyDir, 'garbage.backup');
        await writeFile(garbage, randomBytes(4096));
        const notABackup = await runSlipway(['admin', 'restore', garbage], { ...targetEnv(emptyDir, emptyUrl), SLIPWAY_SECRET_KEY: otherKey });
        expect(notABackup.code).toBe(1);
        expect(notABackup.stderr).toMatch(/^slipway: .*garbage\.backup is not a Slipway backup \(it does not begin as one\)$/m);

        const whole = await readFile(backupFile);
        const truncated = path.join(emptyDir, 'truncated.backup');
        await writeFile(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
        const cut = await runSlipway(['admin', 'restore', truncated], { ...targetEnv(emptyDir, emptyUrl), SLIPWAY_SECRET_KEY: otherKey });
        expect(cut.code).toBe(1);
        expect(cut.stderr).toMatch(/^slipway: .*truncated\.backup is incomplete \(\d+ bytes, its end marker missing\)/m);

        const damaged = path.join(emptyDir, 'damaged.backup');
        const flipped = Buffer.from(whole);
        const at = Math.floor(flipped.length / 2);
        flipped[at] = (flipped[at] ?? 0) ^ 0xff;
        await writeFile(damaged, flipped);
        const corrupt = await runSlipway(['admin', 'restore', damaged], { ...targetEnv(emptyDir, emptyUrl), SLIPWAY_SECRET_KEY: otherKey });
        expect(corrupt.code).toBe(1);
        expect(corrupt.stderr).toContain('is damaged: its content does not match its checksum');

        // Every refusal came before anything was written.
        expect((await readdir(emptyDir)).sort()).toEqual(['damaged.backup', 'garbage.backup', 'truncated.backup']);
        if (emptyUrl !== undefined) expect(await tablesIn(emptyUrl)).toBe(0);

        if (dialect === 'postgres') {
          // A host without pg_dump: refused saying so, and no file (not even a partial one) is left.
          const sourceUrl = new URL(POSTGRES_URL);
          sourceUrl.searchParams.set('options', `-c timezone=UTC -c search_path=${header.schema ?? 'public'}`);
          const outputDir = await scratchDir('slipway-no-pg-dump-');
          const withoutPgDump = await runSlipway(['admin', 'backup', '--output', path.join(outputDir, 'x.backup')], {
            SLIPWAY_DATA_DIR: server.dataDir,
            SLIPWAY_DATABASE_URL: sourceUrl.href,
            SLIPWAY_LOG_LEVEL: 'silent',
            PATH: path.dirname(process.execPath),
          });
          expect(withoutPgDump.code).toBe(1);
          expect(withoutPgDump.stderr).toMatch(/^slipway: pg_dump could not be run \(ENOENT\): install PostgreSQL's client tools/m);
          expect(await readdir(outputDir)).toEqual([]);
        }
      },
      SUITE_TIMEOUT_MS,
    );

    it(
      'a scheduled backup runs on its cron schedule and keeps the newest SLIPWAY_BACKUP_RETENTION of them',
      async () => {
        const backupDir = await scratchDir('slipway-scheduled-');
        // A manual backup in the same directory: the retention counts only scheduled ones.
        const manual = path.join(backupDir, 'slipway-manual.backup');
        await copyFile(backupFile, manual);
        const scheduled = await startSlipwayServer(dialect, { SLIPWAY_BACKUP_SCHEDULE: '* * * * * *', SLIPWAY_BACKUP_RETENTION: '2', SLIPWAY_BACKUP_DIR: backupDir });
        servers.push(scheduled);
        const written = () => [...scheduled.output().matchAll(/"file":"([^"]+)"[^\n]*"msg":"installation backup written"/g)].map((match) => match[1] ?? '');
        const deadline = Date.now() + 120_000;
        while (written().length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
        expect(written().length, scheduled.output().slice(-2000)).toBeGreaterThanOrEqual(4);
        // Stopped, the worker finishes the run in flight: then nothing more changes the directory.
        await scheduled.stop();
        const files = written();
        const kept = (await readdir(backupDir)).sort();
        expect(kept).toEqual([...files.slice(-2).map((file) => path.basename(file)), 'slipway-manual.backup'].sort());
        for (const name of kept.filter((file) => file.startsWith('slipway-scheduled-'))) {
          expect(name).toMatch(/^slipway-scheduled-\d{8}T\d{9}Z\.backup$/);
          expect((await headerOf(path.join(backupDir, name))).dialect).toBe(dialect);
        }
      },
      SUITE_TIMEOUT_MS,
    );

    it(
      'a scheduled backup that fails is a job failure, logged with its cause, and leaves no file behind',
      async () => {
        const notADirectory = path.join(await scratchDir('slipway-unwritable-'), 'a-file');
        await writeFile(notADirectory, 'not a directory');
        const failing = await startSlipwayServer(dialect, { SLIPWAY_BACKUP_SCHEDULE: '* * * * * *', SLIPWAY_BACKUP_DIR: path.join(notADirectory, 'backups') });
        servers.push(failing);
        const failure = /"kind":"schedule\.installation-backup"[^\n]*"msg":"job failed: ENOTDIR[^"]*"/;
        await vi.waitFor(() => expect(failing.output()).toMatch(failure), { timeout: 60_000, interval: 250 });
        await failing.stop();
        expect(failing.output()).not.toContain('installation backup written');
        expect(await readdir(path.dirname(notADirectory))).toEqual(['a-file']);
      },
      SUITE_TIMEOUT_MS,
    );
  });
}
