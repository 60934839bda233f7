import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { sha256Hex } from '../src/lib/crypto.ts';
import { newId } from '../src/lib/ids.ts';
import { runSlipway } from './support/slipway-process.ts';


/** The operator's billing commands, run as the real `slipway` executable on an installation's SQLite database. */
describe('slipway admin credit-code / invoices', () => {
  let dataDir: string;
  let database: Database;
  let organizationId: string;

  const slipway = (...args: string[]) => runSlipway(args, { SLIPWAY_DATA_DIR: dataDir, SLIPWAY_LOG_LEVEL: 'silent' });

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'slipway-billing-cli-'));
    const bootstrap = await slipway('admin', 'bootstrap', '--email', 'operator@example.com', '--organization', 'Acme', '--json');
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    organizationId = (JSON.parse(bootstrap.stdout) as { organization_id: string }).organization_id;
    database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'slipway.db') });
  }, 60_000);

  afterAll(async () => {
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates a credit code shown once and stored only as a hash, refusing bad amounts and past expiries', async () => {
    const created = await slipway('admin', 'credit-code', 'create', '--amount', '25.50', '--expires', '2099-12-31', '--json');
    expect(created.code, created.stderr).toBe(0);
    const code = JSON.parse(created.stdout) as { id: string; code: string; amount_in_cents: number; expires_at: string };
    expect(code).toMatchObject({ amount_in_cents: 2550, currency_code: 'USD', expires_at: '2099-12-31T23:59:59.999Z' });
    expect(code.code).toMatch(/^SLW(-[0-9A-F]{5}){6}$/);
    const row = await database.db.selectFrom('billing_credit_codes').selectAll().where('id', '=', code.id).executeTakeFirstOrThrow();
    expect(row.code_hash).toBe(sha256Hex(code.code.replaceAll('-', '')));
    expect(JSON.stringify(row)).not.toContain(code.code.slice(4));

    // Each refusal is a process start; the parsing itself is covered case by case in billing.test.ts.
    for (const args of [
      ['--amount', '100000.01', '--expires', '2099-01-01'],
      ['--amount', '10', '--expires', '2001-01-01'],
    ]) {
      const refused = await slipway('admin', 'credit-code', 'create', ...args);
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr).toMatch(/^slipway: /);
    }
  }, 120_000);

  it('invoices a finished month once, and records its payment once', async () => {
    // The organization existed, and ran a cluster for 10 hours, in January 2020.
    await database.db.updateTable('organizations').set({ created_at: '2020-01-01T00:00:00.000Z', plan: 'STARTUP' }).where('id', '=', organizationId).execute();
    await database.db
      .insertInto('billing_usage_intervals')
      .values({
        id: newId(),
        organization_id: organizationId,
        resource_type: 'CLUSTER',
        resource_id: 'cluster-1',
        price_key: 'm5.large',
        units: 1,
        unit_price_millicents: 9600,
        started_at: '2020-01-10T00:00:00.000Z',
        stopped_at: '2020-01-10T10:00:00.000Z',
      })
      .execute();
    const generated = await slipway('admin', 'invoices', 'generate', '--period', '2020-01');
    expect(generated.code, generated.stderr).toBe(0);
    expect(generated.stdout).toBe('period 2020-01: 1 invoice(s) created, 0 already there\n');
    const again = await slipway('admin', 'invoices', 'generate', '--period', '2020-01');
    expect(again.stdout).toBe('period 2020-01: 0 invoice(s) created, 1 already there\n');
    const invoice = await database.db.selectFrom('billing_invoices').selectAll().where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
    // 49.00 for the plan (the 14-day trial ended inside January) + 10 h × 9.60 ¢.
    expect(invoice).toMatchObject({ period: '2020-01', status: 'NOT_PAID', total_cents: 4900 + 96 });

    const unfinished = await slipway('admin', 'invoices', 'generate', '--period', '2999-01');
    expect(unfinished.code).toBe(1);
    expect(unfinished.stderr).toBe(`slipway: using the database ${path.join(dataDir, 'slipway.db')}\nslipway: the period 2999-01 is not over yet\n`);

    const paid = await slipway('admin', 'invoices', 'mark-paid', invoice.id, '--reference', 'transfer 42');
    expect(paid.code, paid.stderr).toBe(0);
    expect(paid.stdout).toBe(`invoice ${invoice.id} (2020-01) is PAID\n`);
    const stored = await database.db.selectFrom('billing_invoices').selectAll().where('id', '=', invoice.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'PAID', payment_reference: 'transfer 42' });
    const twice = await slipway('admin', 'invoices', 'mark-paid', invoice.id);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already paid');
  }, 120_000);
});
