import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.ts';
import { operatorBilling, parseAmountToCents, parseExpiry } from '../src/cli/admin-billing.ts';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { migrateToLatest } from '../src/db/db.migrate.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { AppError } from '../src/lib/errors.ts';
import { chargesFor } from '../src/modules/billing/billing.metering.ts';
import type { BillingService } from '../src/modules/billing/billing.service.ts';
import { expectErrorBody } from './support/error-body.ts';
import { pdfText } from './support/pdf-text.ts';
import { startTestSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp-server.ts';
import { describeEachDatabase, TestClock, uniqueName, type TestUser } from './support/test-app.ts';
import { startTestIssuer } from './support/oidc-issuer.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PUBLIC_URL = 'https://slipway.example.test';

/** Moves the test clock to `hoursIn` hours into the next UTC calendar month, and answers that month (YYYY-MM). */
function moveToNextMonth(clock: TestClock, hoursIn = 1): string {
  const now = clock.now();
  const target = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) + hoursIn * HOUR;
  clock.advance(target - now.getTime());
  return clock.now().toISOString().slice(0, 7);
}

/** The path and query of a link the app answered, to call it in-process. */
function pathOf(url: string): string {
  expect(url.startsWith(`${PUBLIC_URL}/`)).toBe(true);
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** The attachments of a raw MIME message a real SMTP server received: the base64 parts with their file names. */
function attachmentsOf(mail: ReceivedMail): { filename: string; contentType: string; content: Buffer }[] {
  const boundaries = [...mail.raw.matchAll(/boundary="?([^";\r\n]+)"?/g)].map((match) => match[1] as string);
  const parts = boundaries.flatMap((boundary) => mail.raw.split(`--${boundary}`));
  const out = [];
  for (const part of parts) {
    const [headers, ...body] = part.split(/\r?\n\r?\n/);
    if (headers === undefined || !/content-disposition:\s*attachment/i.test(headers)) continue;
    const filename = /filename="?([^";\r\n]+)"?/i.exec(headers)?.[1] ?? '';
    const contentType = /content-type:\s*([^;\r\n]+)/i.exec(headers)?.[1] ?? '';
    out.push({ filename, contentType, content: Buffer.from(body.join('').replace(/\s+/g, ''), 'base64') });
  }
  return out;
}

/** Every stored value of every table (migration bookkeeping aside), as JSON text per row. */
async function everyRow(database: Database): Promise<string[]> {
  const names =
    database.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(database.db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(database.db);
  const rows: string[] = [];
  for (const { name } of names.rows) {
    const result = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(database.db);
    rows.push(...result.rows.map((row) => JSON.stringify(row)));
  }
  return rows;
}

function expectBadRequest(run: () => unknown): Promise<void> {
  return expect(Promise.resolve().then(run)).rejects.toSatisfy((error) => error instanceof AppError && error.kind === 'bad_request');
}

describeEachDatabase('billing', (ctx) => {
  let smtp: TestSmtpServer;
  /** The application with SMTP delivery, on the suite's database and clock. */
  let app: FastifyTypeBox;
  /** The operator's side (CLI commands) and the metering port clusters call, over the same database and clock. */
  let operator: BillingService;

  const call = (auth: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse> =>
    app.inject({ ...options, headers: { ...(options.headers ?? {}), ...(auth === undefined ? {} : { authorization: auth }) } });

  async function organizationOf(): Promise<{ owner: TestUser; organizationId: string }> {
    return ctx().signUpWithOrganization(uniqueName('billing'));
  }

  async function ledgerSum(organizationId: string): Promise<number> {
    return (await operator.creditLedger(organizationId)).reduce((sum, entry) => sum + entry.amount_cents, 0);
  }

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    app = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent', smtpUrl: smtp.url, publicUrl: PUBLIC_URL },
      database: ctx().database,
      clock: ctx().clock,
    });
    operator = operatorBilling(ctx().database, ctx().clock, randomBytes(32), PUBLIC_URL);
  });

  afterAll(async () => {
    // Either may be missing when starting failed; that failure is the one to report.
    await (app as FastifyTypeBox | undefined)?.close();
    await (smtp as TestSmtpServer | undefined)?.close();
  });

  it('walks a Community and a Startup organization through a month: credits, a PDF invoice read back, mail, unpaid, paid', async () => {
    const { clock } = ctx();
    const month = moveToNextMonth(clock);
    const community = await organizationOf();
    const startup = await organizationOf();

    // Community: a fresh organization runs on its included usage.
    const fresh = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/billingStatus` });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json()).toEqual({ is_valid: true, message: '5.00 USD of credit left' });

    // The operator creates a code; the organization redeems it once.
    const code = await operator.createCreditCode({ amountCents: parseAmountToCents('20.00'), expiresAt: parseExpiry(new Date(clock.now().getTime() + 30 * DAY).toISOString()) });
    const redeemed = await call(community.owner.auth, { method: 'POST', url: `/organization/${community.organizationId}/creditCode`, payload: { code: code.code.toLowerCase() } });
    expect(redeemed.statusCode).toBe(200);
    expect(redeemed.body).toBe('');
    const replayed = await call(community.owner.auth, { method: 'POST', url: `/organization/${community.organizationId}/creditCode`, payload: { code: code.code } });
    expectErrorBody(replayed, 400);
    expect(replayed.json<{ message: string }>().message).toContain('already been used');
    expect(await ledgerSum(community.organizationId)).toBe(2000);

    // Startup: changePlan answers the organization; billing info, a card.
    const changed = await call(startup.owner.auth, { method: 'POST', url: `/organization/${startup.organizationId}/changePlan`, payload: { plan: 'STARTUP' } });
    expect(changed.statusCode).toBe(200);
    // Slipway's plans answer as the reference plan billed like them (organizations.schemas.ts, answeredPlan).
    expect(changed.json()).toMatchObject({ id: startup.organizationId, plan: 'PROFESSIONAL', organization_plan: { plan: 'PROFESSIONAL', audit_logs_retention_in_days: 30 } });
    const communityView = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}` });
    expect(communityView.json()).toMatchObject({ plan: 'FREE', organization_plan: { plan: 'FREE', audit_logs_retention_in_days: 7 } });
    const billingEmail = `${uniqueName('accounts')}@example.com`;
    const info = await call(startup.owner.auth, {
      method: 'PUT',
      url: `/organization/${startup.organizationId}/billingInfo`,
      payload: { first_name: 'Ada', last_name: 'Lovelace', email: billingEmail, address: '1 Engine Street', city: 'London', zip: 'N1 9GU', country_code: 'gb', company: 'Analytical Ltd' },
    });
    expect(info.statusCode).toBe(200);
    expect(info.json()).toEqual({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: billingEmail,
      address: '1 Engine Street',
      city: 'London',
      zip: 'N1 9GU',
      state: null,
      country_code: 'GB',
      company: 'Analytical Ltd',
      vat_number: null,
    });
    const reread = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/billingInfo` });
    expect(reread.json()).toEqual(info.json());

    // Metered usage: clusters report running time through the metering port.
    const start = clock.now().toISOString();
    await operator.metering.resourceRunning({ organizationId: community.organizationId, resourceType: 'CLUSTER', resourceId: 'cluster-c', priceKey: 't3.medium', units: 3, at: start });
    await operator.metering.resourceRunning({ organizationId: startup.organizationId, resourceType: 'CLUSTER', resourceId: 'cluster-s', priceKey: 'm5.large', units: 2, at: start });
    // A repeated report of the same state changes nothing.
    await operator.metering.resourceRunning({ organizationId: startup.organizationId, resourceType: 'CLUSTER', resourceId: 'cluster-s', priceKey: 'm5.large', units: 2, at: start });
    clock.advance(100 * HOUR);
    const stop = clock.now().toISOString();
    await operator.metering.resourceStopped({ resourceType: 'CLUSTER', resourceId: 'cluster-c', at: stop });
    await operator.metering.resourceStopped({ resourceType: 'CLUSTER', resourceId: 'cluster-s', at: stop });

    // Community: 3 nodes × 4.16 ¢ × 100 h = 12.48; 5.00 included, so 7.48 comes out of the 20.00 of credit.
    const communityCost = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/currentCost` });
    expect(communityCost.statusCode).toBe(200);
    expect(communityCost.json()).toEqual({
      plan: 'FREE',
      remaining_trial_day: 0,
      renewal_at: new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5)), 1)).toISOString(),
      cost: { total_in_cents: 748, total: 7.48, currency_code: 'USD' },
    });
    const communityStatus = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/billingStatus` });
    expect(communityStatus.json()).toEqual({ is_valid: true, message: '12.52 USD of credit left' });

    // Startup: on trial (14 days, 100 h gone), 49.00 plan + 2 × 9.60 ¢ × 100 h = 19.20 of usage.
    const startupCost = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/currentCost` });
    expect(startupCost.json()).toMatchObject({ plan: 'PROFESSIONAL', remaining_trial_day: 10, cost: { total_in_cents: 6820, total: 68.2, currency_code: 'USD' } });

    // The month ends. The installation's hourly billing run (a scheduled job) is long due by the moved clock: a worker
    // takes it at once, the app's or that of a replica starting now (which schedules no run of its own), and invoices
    // the month that ended; later runs (the next scheduled one, the CLI) find the invoices there.
    const next = moveToNextMonth(clock);
    expect(next).not.toBe(month);
    const replica = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent' },
      database: ctx().database,
      clock,
    });
    const invoicedOrganizations = async () =>
      (await ctx().database.db.selectFrom('billing_invoices').select('organization_id').where('period', '=', month).execute()).map((row) => row.organization_id);
    // What became of the billing runs, should the invoices not come: a run that failed is retried when due by this
    // test's clock, which no longer moves, so its error is what to look at.
    const billingRuns = async () =>
      JSON.stringify(await ctx().database.db.selectFrom('jobs').select(['status', 'attempts', 'run_at', 'claimed_by', 'last_error']).where('kind', '=', 'schedule.billing').execute());
    await vi.waitFor(async () => expect(await invoicedOrganizations(), `billing runs: ${await billingRuns()}`).toEqual(expect.arrayContaining([community.organizationId, startup.organizationId])), {
      timeout: 15_000,
      interval: 50,
    });
    await replica.close();
    const due = await operator.generateDueInvoices();
    expect(due).toMatchObject({ period: month, created: 0 });
    expect(due.existing).toBe((await invoicedOrganizations()).length);

    // Community's invoice is covered by included usage and credits: nothing due; the ledger still sums.
    const communityInvoices = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/invoice` });
    expect(communityInvoices.json()).toMatchObject({ results: [{ status: 'PAID', total_in_cents: 0, total: 0, currency_code: 'USD', period: month }] });
    const ledger = await operator.creditLedger(community.organizationId);
    expect(ledger.map((entry) => [entry.kind, entry.amount_cents])).toEqual([
      ['CREDIT_CODE', 2000],
      ['INVOICE', -748],
    ]);
    expect(await ledgerSum(community.organizationId)).toBe(1252);
    // The database itself refuses to change a ledger entry.
    await expect(
      ctx().database.db.updateTable('billing_credit_entries').set({ amount_cents: 999_999 }).where('organization_id', '=', community.organizationId).execute(),
    ).rejects.toThrow(/append-only/);
    expect(await ledgerSum(community.organizationId)).toBe(1252);

    // Startup's invoice: 68.20 due.
    const listed = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/invoice` });
    expect(listed.statusCode).toBe(200);
    const [invoice] = listed.json<{ results: { id: string; status: string; total_in_cents: number; total: number; created_at: string }[] }>().results;
    expect(invoice).toMatchObject({ status: 'NOT_PAID', total_in_cents: 6820, total: 68.2, currency_code: 'USD', period: month });
    const invoiceId = invoice?.id as string;
    const one = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/invoice/${invoiceId}` });
    expect(one.json()).toEqual(invoice);
    // Another organization's invoice is not found through this one.
    expectErrorBody(await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/invoice/${invoiceId}` }), 404);

    // The PDF, at a signed link, read back with PDF.js.
    const link = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/invoice/${invoiceId}/download` });
    expect(link.statusCode).toBe(200);
    const { url } = link.json<{ url: string }>();
    const pdf = await app.inject({ method: 'GET', url: pathOf(url) });
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(pdf.rawPayload);
    expect(text).toContain('Total due: 68.20 USD');
    expect(text).toContain('Startup plan');
    expect(text).toContain(`Billing period: ${month}`);
    expect(text).toContain('Analytical Ltd');
    // A link altered or pointed at another invoice names nothing; after an hour it has expired.
    const forged = pathOf(url).replace(/signature=([A-Za-z0-9_-])/, (_whole, first: string) => `signature=${first === 'A' ? 'B' : 'A'}`);
    expectErrorBody(await app.inject({ method: 'GET', url: forged }), 404);
    expectErrorBody(await app.inject({ method: 'GET', url: `/billing/invoice/${invoiceId}/pdf` }), 404);
    const stretched = pathOf(url).replace(/expires=(\d+)/, (_whole, expires: string) => `expires=${Number(expires) + 86_400}`);
    expectErrorBody(await app.inject({ method: 'GET', url: stretched }), 404);

    // All invoices by mail, as PDF attachments, to the billing e-mail over SMTP.
    const mailed = await call(startup.owner.auth, { method: 'POST', url: `/organization/${startup.organizationId}/downloadInvoices` });
    expect(mailed.statusCode).toBe(202);
    const mail = await smtp.waitFor((candidate) => candidate.to.includes(billingEmail));
    const attachments = attachmentsOf(mail);
    expect(attachments).toHaveLength(1);
    expect(attachments[0]?.contentType).toBe('application/pdf');
    expect(attachments[0]?.filename).toBe(`invoice-${month}-${invoiceId}.pdf`);
    expect(await pdfText(attachments[0]?.content ?? Buffer.alloc(0))).toContain('Total due: 68.20 USD');

    clock.advance(2 * HOUR);
    expectErrorBody(await app.inject({ method: 'GET', url: pathOf(url) }), 403);

    // Unpaid for a week and a day: billing turns invalid, and deployments are restricted.
    const awaiting = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/billingStatus` });
    expect(awaiting.json()).toEqual({ is_valid: true, message: `invoice ${invoiceId} is awaiting payment` });
    clock.advance(8 * DAY);
    const overdue = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/billingStatus` });
    expect(overdue.statusCode).toBe(200);
    expect(overdue.json()).toMatchObject({ is_valid: false });
    expect(overdue.json<{ message: string }>().message).toContain(`invoice ${invoiceId} for ${month} (68.20 USD) has been unpaid since`);
    expect(await operator.deploymentsAllowed(startup.organizationId)).toMatchObject({ allowed: false });
    expect(await operator.planFeatures(startup.organizationId)).toEqual({ plan: 'STARTUP', selfManagedClusters: true });
    expect(await operator.planFeatures(community.organizationId)).toEqual({ plan: 'COMMUNITY', selfManagedClusters: false });

    // The operator records the payment: valid again. Paying twice is refused.
    expect(await operator.recordInvoicePayment(invoiceId, 'bank transfer 2026-0042')).toMatchObject({ id: invoiceId, status: 'PAID' });
    await expectBadRequest(() => operator.recordInvoicePayment(invoiceId, null));
    const paid = await call(startup.owner.auth, { method: 'GET', url: `/organization/${startup.organizationId}/billingStatus` });
    expect(paid.json()).toEqual({ is_valid: true, message: 'no unpaid invoice' });
    expect(await operator.deploymentsAllowed(startup.organizationId)).toEqual({ allowed: true, reason: 'no unpaid invoice' });

    // Community uses more than its credit: invalid, with the reason; a new code makes it valid again.
    const later = clock.now().toISOString();
    await operator.metering.resourceRunning({ organizationId: community.organizationId, resourceType: 'CLUSTER', resourceId: 'cluster-c', priceKey: 't3.xlarge', units: 4, at: later });
    clock.advance(30 * HOUR);
    const exhausted = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/billingStatus` });
    expect(exhausted.json()).toMatchObject({ is_valid: false });
    expect(exhausted.json<{ message: string }>().message).toContain('no credit left');
    const topUp = await operator.createCreditCode({ amountCents: 100_000, expiresAt: new Date(clock.now().getTime() + DAY).toISOString() });
    expect((await call(community.owner.auth, { method: 'POST', url: `/organization/${community.organizationId}/creditCode`, payload: { code: topUp.code } })).statusCode).toBe(200);
    const refilled = await call(community.owner.auth, { method: 'GET', url: `/organization/${community.organizationId}/billingStatus` });
    expect(refilled.json()).toMatchObject({ is_valid: true });
    await operator.metering.resourceStopped({ resourceType: 'CLUSTER', resourceId: 'cluster-c', at: clock.now().toISOString() });
  });

  it('keeps a Community organization that overran its credit invalid in the next month until its invoice is paid', async () => {
    const { clock } = ctx();
    const month = moveToNextMonth(clock);
    const { owner, organizationId } = await organizationOf();
    await operator.metering.resourceRunning({ organizationId, resourceType: 'CLUSTER', resourceId: `overrun-${organizationId}`, priceKey: 't3.xlarge', units: 4, at: clock.now().toISOString() });
    clock.advance(100 * HOUR);
    await operator.metering.resourceStopped({ resourceType: 'CLUSTER', resourceId: `overrun-${organizationId}`, at: clock.now().toISOString() });
    moveToNextMonth(clock);
    await operator.generateInvoices(month);
    // 4 × 16.64 ¢ × 100 h = 66.56, less 5.00 included, no credit: 61.56 due.
    const [invoice] = (await call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/invoice` })).json<{ results: { id: string; status: string; total_in_cents: number }[] }>().results;
    expect(invoice).toMatchObject({ status: 'NOT_PAID', total_in_cents: 6156 });
    const status = await call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/billingStatus` });
    expect(status.json()).toMatchObject({ is_valid: false });
    expect(status.json<{ message: string }>().message).toContain('no credit left');
    await operator.recordInvoicePayment(invoice?.id as string, 'card payment');
    expect((await call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/billingStatus` })).json()).toEqual({ is_valid: true, message: '5.00 USD of credit left' });
  });

  it('redeems a code exactly once under concurrent redemption, and refuses unknown, expired and malformed codes', async () => {
    const { clock } = ctx();
    const first = await organizationOf();
    const second = await organizationOf();
    const code = await operator.createCreditCode({ amountCents: 5000, expiresAt: new Date(clock.now().getTime() + DAY).toISOString() });
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_unused, index) => {
        const target = index % 2 === 0 ? first : second;
        return call(target.owner.auth, { method: 'POST', url: `/organization/${target.organizationId}/creditCode`, payload: { code: code.code } });
      }),
    );
    const statuses = attempts.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    for (const refused of attempts.filter((response) => response.statusCode === 400)) expectErrorBody(refused, 400);
    // No money created or lost: one entry of 50.00 in all.
    expect((await ledgerSum(first.organizationId)) + (await ledgerSum(second.organizationId))).toBe(5000);

    const url = `/organization/${first.organizationId}/creditCode`;
    for (const payload of [{}, { code: '' }, { code: '   ' }, { code: 'SLW-NOT-A-REAL-CODE' }, { code: 'x'.repeat(129) }, { code: 42 }, { code: 'a', extra: true }]) {
      expectErrorBody(await call(first.owner.auth, { method: 'POST', url, payload }), 400);
    }
    const expiring = await operator.createCreditCode({ amountCents: 100, expiresAt: new Date(clock.now().getTime() + HOUR).toISOString() });
    clock.advance(2 * HOUR);
    const expired = await call(first.owner.auth, { method: 'POST', url, payload: { code: expiring.code } });
    expectErrorBody(expired, 400);
    expect(expired.json<{ message: string }>().message).toContain('expired');
    expect(await ledgerSum(first.organizationId) + (await ledgerSum(second.organizationId))).toBe(5000);

    // The operator cannot create codes of no, negative or absurd value, or already expired.
    const inADay = new Date(clock.now().getTime() + DAY).toISOString();
    for (const amountCents of [0, -100, 10_000_001, Number.NaN, 1.5, Number.MAX_SAFE_INTEGER + 2]) {
      await expectBadRequest(() => operator.createCreditCode({ amountCents, expiresAt: inADay }));
    }
    await expectBadRequest(() => operator.createCreditCode({ amountCents: 100, expiresAt: new Date(clock.now().getTime() - 1000).toISOString() }));
    await expectBadRequest(() => operator.createCreditCode({ amountCents: 100, expiresAt: 'tomorrow' }));
    for (const amount of ['-5', '1e3', '12.345', 'ten', '', '0x10', '1,000']) expect(() => parseAmountToCents(amount)).toThrow(AppError);
    expect(parseAmountToCents('25')).toBe(2500);
    expect(parseAmountToCents('25.5')).toBe(2550);
    expect(parseAmountToCents('0.07')).toBe(7);
    expect(() => parseExpiry('next week')).toThrow(AppError);
    expect(parseExpiry('2027-01-31')).toBe('2027-01-31T23:59:59.999Z');

    // Deleting an organization takes its ledger with it, and a code it used stays used.
    for (const organization of [first, second]) {
      expect((await call(organization.owner.auth, { method: 'DELETE', url: `/organization/${organization.organizationId}` })).statusCode).toBe(204);
      await ctx().organizationPurged(organization.organizationId);
    }
    const third = await organizationOf();
    expectErrorBody(await call(third.owner.auth, { method: 'POST', url: `/organization/${third.organizationId}/creditCode`, payload: { code: code.code } }), 400);
    const left = await ctx().database.db.selectFrom('billing_credit_entries').select('id').where('organization_id', 'in', [first.organizationId, second.organizationId]).execute();
    expect(left).toEqual([]);
  });

  it('checks cards and keeps only brand, last digits and expiry: the number and cvv are nowhere in the database', async () => {
    const { owner, organizationId } = await organizationOf();
    const url = `/organization/${organizationId}/creditCard`;
    const year = ctx().clock.now().getUTCFullYear();
    const number = '4111 1111 1111 1111';
    const cvv = '737';
    const added = await call(owner.auth, { method: 'POST', url, payload: { number, cvv, expiry_month: 12, expiry_year: year + 3 } });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({ brand: 'VISA', last_digit: '1111', expiry_month: 12, expiry_year: year + 3, is_expired: false });
    expect(added.body).not.toContain('4111111111111111');
    const amex = await call(owner.auth, { method: 'POST', url, payload: { number: '378282246310005', cvv: '1234', expiry_month: 1, expiry_year: year + 1 } });
    expect(amex.json()).toMatchObject({ brand: 'AMERICAN_EXPRESS', last_digit: '0005' });

    const rows = await everyRow(ctx().database);
    for (const row of rows) {
      expect(row).not.toContain('4111111111111111');
      expect(row).not.toContain('4111 1111 1111 1111');
      expect(row).not.toContain('378282246310005');
      expect(row).not.toContain('"cvv"');
    }
    const storedValues = rows.flatMap((row) => Object.values(JSON.parse(row) as Record<string, unknown>));
    expect(storedValues).not.toContain(cvv);
    expect(storedValues).not.toContain('1234');

    const now = ctx().clock.now();
    const bad = [
      { number: '4111 1111 1111 1112', cvv: '123', expiry_month: 12, expiry_year: year + 1 },
      { number: '4111-1111-abcd-1111', cvv: '123', expiry_month: 12, expiry_year: year + 1 },
      { number: '1234567890123452', cvv: '123', expiry_month: 12, expiry_year: year + 1 },
      { number: '42', cvv: '123', expiry_month: 12, expiry_year: year + 1 },
      { number: '378282246310005', cvv: '123', expiry_month: 12, expiry_year: year + 1 },
      { number: number, cvv: '12a', expiry_month: 12, expiry_year: year + 1 },
      { number: number, cvv: '123', expiry_month: 13, expiry_year: year + 1 },
      { number: number, cvv: '123', expiry_month: 0, expiry_year: year + 1 },
      { number: number, cvv: '123', expiry_month: 12, expiry_year: year - 1 },
      { number: number, cvv: '123', expiry_month: now.getUTCMonth() === 0 ? 12 : now.getUTCMonth(), expiry_year: now.getUTCMonth() === 0 ? year - 1 : year },
      { number: number, cvv: '123', expiry_month: 12, expiry_year: year + 50 },
      { number: number, cvv: '123', expiry_month: 12 },
      { number: number, cvv: '123', expiry_month: 12, expiry_year: year + 1, brand: 'VISA' },
    ];
    for (const payload of bad) {
      const refused = await call(owner.auth, { method: 'POST', url, payload });
      expectErrorBody(refused, 400);
      expect(refused.body).not.toContain('4111');
    }
    const listed = await call(owner.auth, { method: 'GET', url });
    expect(listed.json<{ results: unknown[] }>().results).toHaveLength(2);

    // A card valid through this month shows as expired once the month is over.
    const thisMonth = await call(owner.auth, {
      method: 'POST',
      url,
      payload: { number: '5555 5555 5555 4444', cvv: '123', expiry_month: now.getUTCMonth() + 1, expiry_year: year },
    });
    expect(thisMonth.json()).toMatchObject({ brand: 'MASTERCARD', is_expired: false });
    moveToNextMonth(ctx().clock);
    const afterwards = await call(owner.auth, { method: 'GET', url });
    expect(afterwards.json<{ results: { id: string; is_expired: boolean }[] }>().results.find((card) => card.id === thisMonth.json<{ id: string }>().id)).toMatchObject({
      is_expired: true,
    });

    const cardId = added.json<{ id: string }>().id;
    expect((await call(owner.auth, { method: 'DELETE', url: `${url}/${cardId}` })).statusCode).toBe(204);
    expectErrorBody(await call(owner.auth, { method: 'DELETE', url: `${url}/${cardId}` }), 404);
  });

  it('serves a usage report as CSV at a signed link until it expires, deletes it through its delete link, and refuses bad ranges', async () => {
    const { clock } = ctx();
    const { owner, organizationId } = await organizationOf();
    const from = clock.now();
    await operator.metering.resourceRunning({ organizationId, resourceType: 'SERVICE', resourceId: 'svc-1', priceKey: 'service.medium', units: 1, at: from.toISOString() });
    clock.advance(10 * HOUR);
    await operator.metering.resourceRunning({ organizationId, resourceType: 'SERVICE', resourceId: 'svc-1', priceKey: 'service.medium', units: 2, at: clock.now().toISOString() });
    clock.advance(5 * HOUR);
    await operator.metering.resourceStopped({ resourceType: 'SERVICE', resourceId: 'svc-1', at: clock.now().toISOString() });
    const url = `/organization/${organizationId}/billingUsageReport`;
    const created = await call(owner.auth, {
      method: 'POST',
      url,
      payload: { from: from.toISOString(), to: clock.now().toISOString(), report_expiration_in_seconds: 600 },
    });
    expect(created.statusCode).toBe(200);
    const { report_url: reportUrl, delete_report_url: deleteUrl } = created.json<{ report_url: string; delete_report_url: string }>();
    const csv = await app.inject({ method: 'GET', url: pathOf(reportUrl) });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('resource_type,resource_id,price_key,units,from,to,hours,cost_usd');
    expect(lines.slice(1).map((line) => line.split(',').filter((_field, index) => [0, 1, 2, 3, 6, 7].includes(index)))).toEqual([
      ['SERVICE', 'svc-1', 'service.medium', '1', '10.00', '0.20'],
      ['SERVICE', 'svc-1', 'service.medium', '2', '5.00', '0.20'],
    ]);
    // The download link does not delete, and the delete link does not download.
    expectErrorBody(await app.inject({ method: 'DELETE', url: pathOf(reportUrl) }), 404);
    expectErrorBody(await app.inject({ method: 'GET', url: pathOf(deleteUrl) }), 404);
    expect((await app.inject({ method: 'DELETE', url: pathOf(deleteUrl) })).statusCode).toBe(204);
    expectErrorBody(await app.inject({ method: 'GET', url: pathOf(reportUrl) }), 404);

    const short = await call(owner.auth, { method: 'POST', url, payload: { from: from.toISOString(), to: clock.now().toISOString(), report_expiration_in_seconds: 60 } });
    clock.advance(2 * 60_000);
    expectErrorBody(await app.inject({ method: 'GET', url: pathOf(short.json<{ report_url: string }>().report_url) }), 403);
    expect(await operator.removeExpiredUsageReports()).toBeGreaterThanOrEqual(1);

    const at = (ms: number) => new Date(from.getTime() + ms).toISOString();
    for (const payload of [
      { from: at(HOUR), to: at(0), report_expiration_in_seconds: 60 },
      { from: at(0), to: at(0), report_expiration_in_seconds: 60 },
      { from: at(0), to: at(HOUR), report_expiration_in_seconds: 0 },
      { from: at(0), to: at(HOUR), report_expiration_in_seconds: -5 },
      { from: at(0), to: at(HOUR), report_expiration_in_seconds: 10 ** 12 },
      { from: at(0), to: at(400 * DAY), report_expiration_in_seconds: 60 },
      { from: 'yesterday', to: at(HOUR), report_expiration_in_seconds: 60 },
      { from: at(0), to: at(HOUR) },
    ]) {
      expectErrorBody(await call(owner.auth, { method: 'POST', url, payload }), 400);
    }
  });

  it('answers plans, billing info, external ids and cluster costs as the reference shapes them, and refuses bad input', async () => {
    const { owner, organizationId } = await organizationOf();
    const other = await organizationOf();
    const base = `/organization/${organizationId}`;
    expect((await call(owner.auth, { method: 'GET', url: `${base}/billingInfo` })).json()).toEqual({
      first_name: null,
      last_name: null,
      email: null,
      address: null,
      city: null,
      zip: null,
      state: null,
      country_code: null,
      company: null,
      vat_number: null,
    });
    const external = (await call(owner.auth, { method: 'GET', url: `${base}/billingExternalId` })).json<{ id: string }>();
    expect(external.id).toMatch(/^cus_[0-9a-f]{24}$/);
    expect((await call(owner.auth, { method: 'GET', url: `${base}/billingExternalId` })).json()).toEqual(external);
    expect((await call(other.owner.auth, { method: 'GET', url: `/organization/${other.organizationId}/billingExternalId` })).json()).not.toEqual(external);

    for (const payload of [{}, { plan: 'PLATINUM' }, { plan: '' }, { plan: 'STARTUP', extra: 1 }]) {
      expectErrorBody(await call(owner.auth, { method: 'POST', url: `${base}/changePlan`, payload }), 400);
    }
    const reference = await call(owner.auth, { method: 'POST', url: `${base}/changePlan`, payload: { plan: 'TEAM_2025' } });
    expect(reference.json()).toMatchObject({ plan: 'TEAM_2025' });
    // One trial per plan: leaving and coming back does not start another.
    const trialOf = async () => (await call(owner.auth, { method: 'GET', url: `${base}/currentCost` })).json<{ remaining_trial_day: number }>().remaining_trial_day;
    expect(await trialOf()).toBe(14);
    ctx().clock.advance(3 * DAY);
    await call(owner.auth, { method: 'POST', url: `${base}/changePlan`, payload: { plan: 'COMMUNITY' } });
    expect(await trialOf()).toBe(0);
    await call(owner.auth, { method: 'POST', url: `${base}/changePlan`, payload: { plan: 'TEAM_2025' } });
    expect(await trialOf()).toBe(11);
    const valid = { first_name: 'A', last_name: 'B', email: 'a@example.com', address: 'x', city: 'y', zip: '1000', country_code: 'BE' };
    for (const payload of [{}, { ...valid, email: 'not-an-email' }, { ...valid, country_code: 'BEL' }, { ...valid, first_name: '' }, { ...valid, city: 'a\u0000b' }, { ...valid, extra: 1 }]) {
      expectErrorBody(await call(owner.auth, { method: 'PUT', url: `${base}/billingInfo`, payload }), 400);
    }
    // A cluster's monthly range: nodes × unit price × 730 h, from its minimum to its maximum node count.
    const cluster = await call(other.owner.auth, {
      method: 'POST',
      url: `/organization/${other.organizationId}/cluster`,
      payload: { name: uniqueName('priced'), region: 'us-east-1', cloud_provider: 'AWS', kubernetes: 'MANAGED', instance_type: 't3.large', min_running_nodes: 2, max_running_nodes: 5 },
    });
    expect(cluster.statusCode, cluster.body).toBe(201);
    const clusterId = cluster.json<{ id: string }>().id;
    const range = await call(other.owner.auth, { method: 'GET', url: `/organization/${other.organizationId}/cluster/${clusterId}/currentCost` });
    expect(range.statusCode).toBe(200);
    expect(range.json()).toEqual({ min_cost_in_cents: 12147, min_cost: 121.47, max_cost_in_cents: 30368, max_cost: 303.68, currency_code: 'USD' });
    // Running at its maximum for a whole 31-day month (744 h) is still charged at most the maximum.
    const { from, to } = { from: new Date(Date.UTC(2031, 0, 1)), to: new Date(Date.UTC(2031, 1, 1)) };
    const charges = chargesFor(
      [{ resource_type: 'CLUSTER', resource_id: clusterId, price_key: 't3.large', units: 5, unit_price_millicents: 8320, started_at: from.toISOString(), stopped_at: null }],
      from,
      to,
      100,
    );
    expect(charges.map((charge) => charge.cents)).toEqual([30368]);
    // Another organization's cluster, and no cluster at all, are not found.
    expectErrorBody(await call(owner.auth, { method: 'GET', url: `${base}/cluster/${clusterId}/currentCost` }), 404);
    expectErrorBody(await call(owner.auth, { method: 'GET', url: `${base}/cluster/${crypto.randomUUID()}/currentCost` }), 404);
    expect(await operator.generateInvoices('2020-13').catch((error: unknown) => error)).toBeInstanceOf(AppError);
    await expectBadRequest(() => operator.generateInvoices(ctx().clock.now().toISOString().slice(0, 7)));
  });

  it('lets readers see cost and status, but keeps invoices, cards and billing info to governance', async () => {
    const { owner, organizationId } = await organizationOf();
    const developer = await ctx().signUp(uniqueName('dev'));
    await ctx().addMemberDirectly(organizationId, developer, 'DEVELOPER');
    const base = `/organization/${organizationId}`;
    for (const url of [`${base}/currentCost`, `${base}/billingStatus`]) expect((await call(developer.auth, { method: 'GET', url })).statusCode).toBe(200);
    for (const url of [`${base}/invoice`, `${base}/creditCard`, `${base}/billingInfo`, `${base}/billingExternalId`]) {
      expectErrorBody(await call(developer.auth, { method: 'GET', url }), 403);
    }
    expectErrorBody(await call(developer.auth, { method: 'POST', url: `${base}/changePlan`, payload: { plan: 'STARTUP' } }), 403);
    expect((await call(owner.auth, { method: 'GET', url: `${base}/invoice` })).statusCode).toBe(200);
  });
});

describe('card numbers on disk', () => {
  it('never writes the number or cvv into the SQLite database file or its WAL', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'slipway-billing-'));
    const issuer = await startTestIssuer();
    const database = openDatabase({ dialect: 'sqlite', file: path.join(directory, 'slipway.db') });
    try {
      await migrateToLatest(database.db, database.dialect);
      const app = await buildApp({ config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'silent' }, database, clock: new TestClock() });
      const jwt = await issuer.signToken({ sub: 'sub-card-owner', email: 'card-owner@example.com', email_verified: true });
      const created = await app.inject({ method: 'POST', url: '/organization', headers: { authorization: `Bearer ${jwt}` }, payload: { name: uniqueName('cards') } });
      const organizationId = created.json<{ id: string }>().id;
      const added = await app.inject({
        method: 'POST',
        url: `/organization/${organizationId}/creditCard`,
        headers: { authorization: `Bearer ${jwt}` },
        payload: { number: '6011111111111117', cvv: '913', expiry_month: 6, expiry_year: new Date().getUTCFullYear() + 2 },
      });
      expect(added.statusCode).toBe(201);
      expect(added.json()).toMatchObject({ brand: 'DISCOVER', last_digit: '1117' });
      await app.close();
      const files = readdirSync(directory).filter((name) => name.startsWith('slipway.db'));
      expect(files).toContain('slipway.db');
      const bytes = Buffer.concat(files.map((name) => readFileSync(path.join(directory, name))));
      expect(bytes.includes(Buffer.from('6011111111111117'))).toBe(false);
      // The card itself was written: its brand is there to be found.
      expect(bytes.includes(Buffer.from('DISCOVER'))).toBe(true);
    } finally {
      await database.close();
      await issuer.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
