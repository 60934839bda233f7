import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { cardNumberProblem, groupedCardNumber, luhnValid } from '../console/src/pages/settings/card-number.ts';
import { csvRows } from '../console/src/pages/settings/usage-report.ts';
import { openDatabase } from '../src/db/db.client.ts';
import { callApi, checkScreen, consoleToken, type ConsoleWorld, expectAccessible, newConsoleContext, SCREENSHOTS, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { pdfText } from './support/pdf-text.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * Access and billing in the settings (docs/console.md, "Tests (test/console-access-billing.test.ts)"), in a real
 * browser against the real server: a policy token whose policy is edited until the dry run allows a request (its
 * syntax error shown at line and column as it is typed), shown once, working within its policy, refused with 401 once
 * deleted; cloud credentials added, edited and deleted with their secret never in the page; a private repository's
 * directories browsed with a git token; a card refused by the Luhn check in the browser, added (its number kept in no
 * storage), deleted; the usage report as a table. axe on every screen and dialog; photographs `110-…` to `121-…`.
 */

/**
 * A section low on a long page, photographed at both sizes: `photograph` keeps the scroll offset across its resizes, which
 * lands elsewhere in the other width's layout, so here the section is scrolled to the top at each size.
 */
async function photographSection(page: Page, name: string, headingId: string): Promise<void> {
  for (const viewport of [
    { width: 390, height: 844 },
    { width: 1280, height: 800 },
  ]) {
    await page.setViewportSize(viewport);
    await page.evaluate(`document.getElementById(${JSON.stringify(headingId)}).scrollIntoView({ block: 'start' })`);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${viewport.width}x${viewport.height}.png`), animations: 'disabled' });
  }
}

describe('console access and billing: pure pieces', () => {
  it('checks card numbers with Luhn and reads them grouped', () => {
    expect(luhnValid('4242424242424242')).toBe(true);
    expect(luhnValid('4242424242424241')).toBe(false);
    expect(luhnValid('79927398713')).toBe(true);
    expect(cardNumberProblem('')).toBeUndefined();
    expect(cardNumberProblem('4242 4242 4242 4242')).toBeUndefined();
    expect(cardNumberProblem('4242 4242 4242 4241')).toMatch(/not a valid card number/);
    expect(cardNumberProblem('4242')).toMatch(/12 to 19 digits/);
    expect(cardNumberProblem('4242 abcd')).toMatch(/only digits/);
    expect(groupedCardNumber('42424242x42424242')).toBe('4242 4242 4242 4242');
  });

  it('reads CSV with quotes, doubled quotes and line breaks in fields', () => {
    expect(csvRows('a,b\r\n1,"x, ""y"""\r\n2,"two\nlines"\r\n')).toEqual([
      ['a', 'b'],
      ['1', 'x, "y"'],
      ['2', 'two\nlines'],
    ]);
    expect(csvRows('h1,h2\n')).toEqual([['h1', 'h2']]);
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`web console: policy tokens, cloud credentials, directory picker, cards, usage [${dialect}]`, () => {
    let world: ConsoleWorld;
    let server: SlipwayServer;
    let browser: Browser;
    let git: TestGitServer;
    let repositories: string;
    const owner = `console-access-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      repositories = await mkdtemp(path.join(tmpdir(), 'slipway-console-access-'));
      await createBareRepository(repositories, 'infra', { main: ['README.md', 'terraform/prod/main.tf', 'terraform/staging/main.tf', 'charts/web/Chart.yaml'] });
      git = await startGitServer({ root: repositories, privateRepositories: { infra: 'git-secret-value' } });
      world = await startConsoleWorld(dialect, { email: owner, name: 'Ada Access' }, {
        // The git server is on loopback, over plain http.
        SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
      await git?.close();
      if (repositories !== undefined) await rm(repositories, { recursive: true, force: true });
    }, 60_000);

    async function openSection(page: Page, name: string): Promise<void> {
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).click();
      await expect.poll(() => page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).getAttribute('aria-current')).toBe('page');
    }

    it('edits a policy until its dry run allows, manages cloud credentials, browses a repository, adds and deletes a card, shows usage', { timeout: 300_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // Refusals provoked on purpose: the policy's syntax error (the dry run's 400) and a branch that does not exist
      // (the directory listing's 400). The policy token's refused POST is the test's own request, not the page's.
      watchPage(page, problems, (url, status) => status === 400 && (/\/policyApiToken\/evaluate$/.test(url) || /\/listDirectoriesFromGitRepository$/.test(url)));
      try {
        await signIn(page, server, owner);
        await page.getByLabel('Organization name').fill('Acme Access');
        await page.getByRole('button', { name: 'Create organization' }).click();
        await page.getByRole('heading', { level: 1, name: 'Acme Access' }).waitFor();
        const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
        const token = await consoleToken(page);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();

        // Policy tokens: empty; the editor reports a syntax error at its line and column as it is typed.
        await openSection(page, 'Policy tokens');
        await page.getByRole('heading', { name: 'No policy tokens yet' }).waitFor();
        await checkScreen(page, '110-settings-policy-tokens-empty');
        await page.getByRole('button', { name: 'New policy token' }).click();
        const create = page.getByRole('dialog', { name: 'New policy token' });
        await create.getByLabel('Name', { exact: true }).fill('deploy-agent');
        const code = create.getByLabel('Policy (Rego)');
        // The starter policy compiles and allows reads: the sample (GET the projects) is allowed.
        await create.getByText(/^Allowed: allow is true/).waitFor();
        await code.fill('package agent\n\nallow if {\n\tinput.method == "GET"\n\tinput.path[2] ==\n}\n');
        const problem = create.locator('.policy-problem');
        await problem.getByText(/^Line \d+, column \d+: /).waitFor();
        expect(await code.getAttribute('aria-invalid')).toBe('true');
        const [, line] = /^Line (\d+),/.exec((await problem.locator('.error-message').textContent()) ?? '') ?? [];
        expect(Number(line)).toBeGreaterThanOrEqual(5);
        expect(await problem.locator('mark').textContent()).toBe('}');
        expect(await create.getByText('No decision while the policy does not compile.').count()).toBe(1);
        await checkScreen(page, '111-settings-policy-editor-error');
        // Compiles, but denies the sample (it allows POSTs only); then the sample's method is changed and it is allowed.
        await code.fill('package agent\n\ndefault allow := false\n\nallow if {\n\tinput.method == "POST"\n\tinput.path[2] == "project"\n}\n');
        await create.getByText(/^Denied: /).waitFor();
        expect(await code.getAttribute('aria-invalid')).toBeNull();
        await code.fill('package agent\n\ndefault allow := false\n\nallow if {\n\tinput.method == "GET"\n\tinput.path[2] == "project"\n}\n');
        await create.getByText(/^Allowed: allow is true \(rule at line 5/).waitFor();
        await create.getByLabel('Method').selectOption('DELETE');
        await create.getByText(/^Denied: allow is false/).waitFor();
        await create.getByLabel('Method').selectOption('GET');
        await create.getByText(/^Allowed: /).waitFor();
        await checkScreen(page, '112-settings-policy-editor-allowed');
        await create.getByRole('button', { name: 'Create token' }).click();
        const shown = page.getByRole('dialog', { name: 'Policy token deploy-agent created' });
        await shown.waitFor();
        const value = await shown.getByRole('textbox', { name: 'Token' }).inputValue();
        expect(value).toMatch(/^slwp_/);
        // The token works within its policy, and only there.
        expect((await callApi(server, value, 'GET', `/organization/${organizationId}/project`)).status).toBe(200);
        expect((await callApi(server, value, 'POST', `/organization/${organizationId}/project`, { name: 'nope' })).status).toBe(403);
        await shown.getByRole('button', { name: 'Done' }).click();
        await shown.waitFor({ state: 'detached' });
        const tokens = page.getByRole('table', { name: 'Policy tokens' });
        await tokens.getByRole('row', { name: /deploy-agent/ }).waitFor();
        expect(await page.content()).not.toContain(value);
        await checkScreen(page, '113-settings-policy-tokens');
        // Its policy, read back and tried.
        await page.getByRole('button', { name: 'View policy of deploy-agent' }).click();
        const view = page.getByRole('dialog', { name: 'Policy of deploy-agent' });
        expect(await view.getByLabel('Policy (Rego)').inputValue()).toContain('input.path[2] == "project"');
        await view.getByText(/^Allowed: /).waitFor();
        await view.getByRole('button', { name: 'Close' }).click();
        await view.waitFor({ state: 'detached' });
        // Deleted by its name: the token answers 401 from then on.
        await page.getByRole('button', { name: 'Delete deploy-agent' }).click();
        const deleteToken = page.getByRole('dialog', { name: 'Delete deploy-agent' });
        await deleteToken.getByLabel('Type deploy-agent to confirm').fill('deploy-agent');
        await deleteToken.getByRole('button', { name: 'Delete token' }).click();
        await page.getByRole('heading', { name: 'No policy tokens yet' }).waitFor();
        expect((await callApi(server, value, 'GET', `/organization/${organizationId}/project`)).status).toBe(401);

        // Cloud credentials: an AWS access key; the secret never in the page; edited (the secret typed again); deleted.
        await openSection(page, 'Cloud credentials');
        await page.getByRole('heading', { name: 'No cloud credentials yet' }).waitFor();
        await page.getByRole('button', { name: 'New credentials' }).click();
        const credential = page.getByRole('dialog', { name: 'New cloud credentials' });
        expect(await credential.getByLabel('Provider').locator('option').allTextContents()).toEqual([
          'AWS: access key',
          'AWS: role to assume',
          'GCP: service account key',
          'GCP: workload identity federation',
          'Azure',
          'Scaleway',
          'On premise (a name only)',
        ]);
        await credential.getByLabel('Name', { exact: true }).fill('aws-prod');
        await credential.getByLabel('Access key ID').fill('AKIAEXAMPLE1234567');
        const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
        await credential.getByLabel('Secret access key').fill(secret);
        await checkScreen(page, '114-settings-cloud-credentials-dialog');
        await credential.getByRole('button', { name: 'Add credentials' }).click();
        await credential.waitFor({ state: 'detached' });
        const credentials = page.getByRole('table', { name: 'Cloud credentials' });
        await credentials.getByRole('row', { name: /aws-prod/ }).getByText('AKIAEXAMPLE1234567').waitFor();
        expect(await page.content()).not.toContain(secret);
        await checkScreen(page, '115-settings-cloud-credentials');
        await page.getByRole('button', { name: 'Edit aws-prod' }).click();
        const edit = page.getByRole('dialog', { name: 'Edit aws-prod' });
        expect(await edit.getByLabel('Access key ID').inputValue()).toBe('AKIAEXAMPLE1234567');
        expect(await edit.getByLabel('Secret access key').inputValue()).toBe('');
        await edit.getByLabel('Name', { exact: true }).fill('aws-production');
        await edit.getByLabel('Secret access key').fill(`${secret}2`);
        await edit.getByRole('button', { name: 'Save' }).click();
        await edit.waitFor({ state: 'detached' });
        await credentials.getByRole('row', { name: /aws-production/ }).waitFor();
        const listed = await callApi<{ results: { name: string }[] }>(server, token, 'GET', `/organization/${organizationId}/aws/credentials`);
        expect(listed.body.results.map((entry) => entry.name)).toEqual(['aws-production']);
        expect(JSON.stringify(listed.body)).not.toContain(secret);
        await page.getByRole('button', { name: 'Delete aws-production' }).click();
        const deleteCredential = page.getByRole('dialog', { name: 'Delete aws-production' });
        await deleteCredential.getByLabel('Type aws-production to confirm').fill('aws-production');
        await deleteCredential.getByRole('button', { name: 'Delete credentials' }).click();
        await page.getByRole('heading', { name: 'No cloud credentials yet' }).waitFor();

        // Git tokens: a token for the private repository; its directories browsed one level at a time.
        const gitToken = await callApi<{ id: string }>(server, token, 'POST', `/organization/${organizationId}/gitToken`, { name: 'infra-reader', type: 'GITHUB', token: 'git-secret-value' });
        expect(gitToken.status).toBe(201);
        await openSection(page, 'Git tokens');
        await page.getByRole('button', { name: 'Browse a repository with infra-reader' }).click();
        const browse = page.getByRole('dialog', { name: 'Browse a repository with infra-reader' });
        await browse.getByLabel('Repository URL').fill(git.urlOf('infra'));
        await browse.getByRole('button', { name: 'List directories' }).click();
        await browse.getByRole('button', { name: 'terraform/ (open)' }).waitFor();
        expect(await browse.getByRole('list').getByRole('button').allTextContents()).toEqual(['▸ charts/ (open)', '▸ terraform/ (open)']);
        await browse.getByRole('button', { name: 'terraform/ (open)' }).click();
        await browse.getByRole('heading', { name: 'Directory /terraform' }).waitFor();
        await browse.getByRole('button', { name: 'staging/ (open)' }).waitFor();
        await checkScreen(page, '116-settings-git-directory-picker');
        await browse.getByRole('button', { name: 'Up to /' }).click();
        await browse.getByRole('heading', { name: 'Directory /' }).waitFor();
        await browse.getByLabel('Branch (optional)').fill('no-such-branch');
        await browse.getByRole('button', { name: 'List directories' }).click();
        await browse.getByRole('alert').first().waitFor();
        await browse.getByRole('button', { name: 'Close' }).click();

        // Billing: in good standing; a card refused in the browser, then added, its number kept nowhere; deleted.
        await openSection(page, 'Billing');
        await page.getByText('In good standing').waitFor();
        await page.getByRole('button', { name: 'Add a card' }).click();
        const card = page.getByRole('dialog', { name: 'Add a card' });
        let cardRequests = 0;
        page.on('request', (request) => {
          if (request.method() === 'POST' && /\/creditCard$/.test(request.url())) cardRequests++;
        });
        await card.getByLabel('Card number').fill('4242424242424241');
        await card.getByLabel('CVC').fill('123');
        await card.getByRole('button', { name: 'Add card' }).click();
        await card.getByText('This is not a valid card number: check the digits.').waitFor();
        expect(await card.getByLabel('Card number').getAttribute('aria-invalid')).toBe('true');
        expect(cardRequests).toBe(0);
        await checkScreen(page, '117-settings-card-invalid');
        await card.getByLabel('Card number').fill('4242424242424242');
        expect(await card.getByLabel('Card number').inputValue()).toBe('4242 4242 4242 4242');
        await card.getByLabel('Expiry year').selectOption(String(new Date().getFullYear() + 2));
        await card.getByRole('button', { name: 'Add card' }).click();
        await card.waitFor({ state: 'detached' });
        expect(cardRequests).toBe(1);
        const cards = page.getByRole('table', { name: 'Credit cards' });
        await cards.getByRole('row', { name: /4242/ }).waitFor();
        const stored = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage } }));
        expect(stored).not.toContain('4242424242424242');
        expect(stored).not.toContain('4242 4242 4242 4242');
        expect(await page.content()).not.toContain('4242 4242 4242 4242');
        await expectAccessible(page, '118-settings-billing-cards');
        await photographSection(page, '118-settings-billing-cards', 'cards-heading');
        // The dialog again starts empty: nothing of the number was kept.
        await page.getByRole('button', { name: 'Add a card' }).click();
        expect(await page.getByRole('dialog', { name: 'Add a card' }).getByLabel('Card number').inputValue()).toBe('');
        await page.getByRole('dialog', { name: 'Add a card' }).getByRole('button', { name: 'Cancel' }).click();
        const apiCards = await callApi<{ results: { id: string; last_digit: string }[] }>(server, token, 'GET', `/organization/${organizationId}/creditCard`);
        expect(apiCards.body.results.map((entry) => entry.last_digit)).toEqual(['4242']);
        await cards.getByRole('button', { name: /^Delete .* ending 4242$/ }).click();
        const deleteCard = page.getByRole('dialog', { name: 'Delete 4242' });
        await deleteCard.getByLabel('Type 4242 to confirm').fill('4242');
        await deleteCard.getByRole('button', { name: 'Delete card' }).click();
        await deleteCard.waitFor({ state: 'detached' });
        await page.getByText(/^No card yet/).waitFor();

        // The usage report for this month, as a table (a new organization has used nothing metered yet).
        await page.getByRole('button', { name: 'Show usage' }).click();
        await page.getByText('No metered usage in this range.').waitFor();
        await expectAccessible(page, '119-settings-billing-usage');
        await photographSection(page, '119-settings-billing-usage', 'usage-heading');

        // An invoice: the organization existed on the Startup plan in January 2020 (only time makes that, so the row
        // is dated back), the operator invoices the month, and the person downloads its PDF from the list.
        const database = openDatabase(server.database);
        try {
          await database.db.updateTable('organizations').set({ created_at: '2020-01-01T00:00:00.000Z', plan: 'STARTUP' }).where('id', '=', organizationId).execute();
        } finally {
          await database.close();
        }
        const invoiced = await server.operator(['admin', 'invoices', 'generate', '--period', '2020-01']);
        expect(invoiced.code, invoiced.stderr).toBe(0);
        await page.reload();
        const invoiceRow = page.getByRole('row', { name: /2020-01/ });
        await invoiceRow.waitFor();
        const downloading = page.waitForEvent('download');
        await invoiceRow.getByRole('button', { name: 'Download PDF of 2020-01' }).click();
        const download = await downloading;
        // The signed link's Content-Disposition names the file: the period and the invoice's id.
        expect(download.suggestedFilename()).toMatch(/^invoice-2020-01-[0-9a-f-]{36}\.pdf$/);
        const text = await pdfText(await readFile((await download.path()) as string));
        expect(text).toContain('Billing period: 2020-01');
        expect(text).toContain('Startup plan');
        expect(text).toContain('Total due: 49.00 USD');

        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
