import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChangeSignals, type ChangeSignals } from '../src/db/db.signals.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';

/**
 * Change signals (src/db/db.signals.ts) on both databases: a signal published after a commit reaches the subscribers
 * of this process and of another sharing the database; one published in a transaction arrives on its commit and never
 * after a rollback; on PostgreSQL a listener whose connection is cut reconnects and wakes every subscriber once.
 */

const SOON = { timeout: 20_000, interval: 20 };

describe.each(TEST_DIALECTS)('change signals on %s', (dialect) => {
  const opened: Array<{ signals: ChangeSignals[]; database: TestDatabase }> = [];

  afterEach(async () => {
    for (const { signals, database } of opened.splice(0)) {
      for (const one of signals) await one.close();
      await database.dispose();
    }
  });

  /** Two "processes" on one database: each its own signals (on PostgreSQL, its own listening connection). */
  async function twoProcesses() {
    const database = await openTestDatabase(dialect);
    const first = createChangeSignals(database.database, { minReconnectMs: 20, maxReconnectMs: 200 });
    const second = createChangeSignals(database.database, { minReconnectMs: 20, maxReconnectMs: 200 });
    opened.push({ signals: [first, second], database });
    return { database, first, second };
  }

  function recorder(signals: ChangeSignals, channel: string) {
    const heard: Array<string | undefined> = [];
    signals.subscribe(channel, (payload) => heard.push(payload));
    return heard;
  }

  it('delivers a published signal to this process at once, and to the other process sharing the database', async () => {
    const { first, second } = await twoProcesses();
    const here = recorder(first, 'jobs');
    const there = recorder(second, 'jobs');
    const otherChannel = recorder(second, 'agent_work');
    await sleep(300);
    first.publish('jobs', 'job-1');
    expect(here).toEqual(['job-1']);
    if (dialect === 'postgres') await vi.waitFor(() => expect(there).toEqual(['job-1']), SOON);
    else expect(there).toEqual([]);
    // This process's own copy, coming back through the database, is not delivered twice.
    await sleep(300);
    expect(here).toEqual(['job-1']);
    expect(otherChannel).toEqual([]);
  });

  it('delivers a signal published in a transaction on its commit, and never after a rollback', async () => {
    const { database, first, second } = await twoProcesses();
    const heard = dialect === 'postgres' ? recorder(second, 'deployment_changes') : recorder(first, 'deployment_changes');
    await sleep(300);
    await expect(
      database.database.db.transaction().execute(async (trx) => {
        await first.publishIn(trx, 'deployment_changes', 'rolled-back');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await database.database.db.transaction().execute(async (trx) => {
      await first.publishIn(trx, 'deployment_changes', 'committed');
    });
    await vi.waitFor(() => expect(heard).toContain('committed'), SOON);
    if (dialect === 'postgres') expect(heard).toEqual(['committed']);
  });

  it.skipIf(dialect !== 'postgres')('reconnects a listener whose connection was cut, waking every subscriber once, then hears signals again', async () => {
    const { database, first, second } = await twoProcesses();
    const heard = recorder(second, 'jobs');
    await sleep(300);
    const admin = new pg.Client({ connectionString: process.env.SLIPWAY_TEST_DATABASE_URL });
    await admin.connect();
    try {
      // This installation's listening connection, told by its channel (named after the test's own schema): no other.
      const schema = database.database.listenerConnection?.schema ?? '';
      const channel = `slipway_${createHash('sha256').update(schema).digest('hex').slice(0, 12)}_jobs`;
      const cut = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where query = $1', [`LISTEN "${channel}"`]);
      expect(cut.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    await vi.waitFor(() => expect(heard).toContain(undefined), SOON);
    await vi.waitFor(async () => {
      first.publish('jobs', 'after-reconnect');
      await sleep(100);
      expect(heard).toContain('after-reconnect');
    }, SOON);
  });
});
