import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killProcessesUnder } from './support/sample-apps.ts';
import { runSlipway, startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';

/**
 * `slipway https ca` against a real `slipway server` serving HTTPS (docs/https.md, "Private names"): the installation
 * CA's root exists as soon as HTTPS is served, the command prints it (PEM, a CA, name-constrained) to standard output
 * with how to trust it on standard error, or writes it to --output; against a server serving no HTTPS it says so and
 * fails. No sign-in is needed: the root is public.
 */
describe('slipway https ca', () => {
  let https: SlipwayServer | undefined;
  let plain: SlipwayServer | undefined;
  let scratch = '';

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'slipway-https-ca-'));
    [https, plain] = await Promise.all([
      startSlipwayServer('sqlite', { SLIPWAY_LOCAL_AGENT: 'true', SLIPWAY_APPS_HTTPS_PORT: '0' }),
      startSlipwayServer('sqlite', {}),
    ]);
  }, 120_000);

  afterAll(async () => {
    await https?.close();
    await plain?.close();
    // The apps proxy process outlives its server by design.
    if (https !== undefined) await killProcessesUnder(https.dataDir);
    if (scratch !== '') await rm(scratch, { recursive: true, force: true });
  }, 60_000);

  it('prints the root with how to trust it, or writes it to a file', { timeout: 60_000 }, async () => {
    const printed = await runSlipway(['https', 'ca', '--url', https?.baseUrl ?? ''], { HOME: scratch });
    expect(printed.code, printed.stderr).toBe(0);
    const root = new X509Certificate(printed.stdout);
    expect(root.ca).toBe(true);
    expect(printed.stdout.trim().startsWith('-----BEGIN CERTIFICATE-----')).toBe(true);
    expect(printed.stderr).toContain('update-ca-certificates');
    expect(printed.stderr).toContain('private names only');

    const file = path.join(scratch, 'ca.pem');
    const written = await runSlipway(['https', 'ca', '--url', https?.baseUrl ?? '', '--output', file], { HOME: scratch });
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe('');
    expect(await readFile(file, 'utf8')).toBe(printed.stdout);
  });

  it('says why when the server has no CA of its own', { timeout: 60_000 }, async () => {
    const refused = await runSlipway(['https', 'ca', '--url', plain?.baseUrl ?? ''], { HOME: scratch });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`slipway: ${plain?.baseUrl ?? ''} has no certificate authority of its own: it serves no HTTPS (SLIPWAY_APPS_HTTPS_PORT), or its private names are issued by its ACME directory\n`);
  });
});
