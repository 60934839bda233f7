import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { readableFieldMessage } from '../console/src/api/field-messages.ts';
import { callApi, checkScreen, consoleToken, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

interface Stage {
  id: string;
  name: string;
  description: string;
  deployment_order: number;
  services: { service_id: string; is_skipped: boolean }[];
}
interface Rule {
  id: string;
  name: string;
  mode: string;
  wildcard: string;
  auto_stop: boolean;
  timezone: string;
  start_time: string;
  stop_time: string;
  weekdays: string[];
}

/**
 * Deployment stages and deployment rules in the console (docs/deployment-stages.md, docs/deployment-rules.md), in a
 * real browser against the real server, SQLite only: on the environment's page two stages created, one moved before
 * the other with the keyboard (the focus stays on its button), a container moved into a stage and skipped, a stage
 * renamed, a stage holding a service refused deletion then deleted; the environment's rule with a time zone the API
 * refuses (its message at the field) then saved; the service page's stage; on the project's page rules created,
 * reordered, edited and deleted. axe and photographs `310-…` of each new screen and dialog.
 */
describe('web console: deployment stages and deployment rules [sqlite]', () => {
  let world: ConsoleWorld;
  let server: SlipwayServer;
  let browser: Browser;
  const owner = `console-deployment-stages-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Stella Stages' });
    ({ server, browser } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  }, 60_000);

  /** The field is marked invalid and described by `message`. */
  async function expectRefusedAt(page: Page, field: Locator, message: string): Promise<void> {
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id !== '');
    const descriptions = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(descriptions.join(' ')).toContain(message);
  }

  /** checkScreen with `region` at the top: the phone is photographed first and its scroll position stays for the desktop. */
  async function checkRegion(page: Page, region: Locator, name: string): Promise<void> {
    await page.setViewportSize({ width: 390, height: 844 });
    await region.evaluate((element) => element.scrollIntoView());
    await checkScreen(page, name);
  }

  it('arranges an environment’s stages, edits its rule, and manages the project’s rules', { timeout: 180_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    // Refusals provoked on purpose: a time zone that is not one, a stage deleted while it holds a service.
    watchPage(page, problems, (url, status) => (status === 400 && /\/environment\/[0-9a-f-]{36}\/deploymentRule\/[0-9a-f-]{36}$/.test(url)) || (status === 409 && /\/deploymentStage\/[0-9a-f-]{36}$/.test(url)));
    try {
      await signIn(page, server, owner);
      const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Stages');
      const token = await consoleToken(page);
      const cluster = await localCluster(server, organizationId, made);
      const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      const registry = await made<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: 'hub', kind: 'DOCKER_HUB', url: 'https://docker.io' });
      const container = await made<{ id: string }>('POST', `/environment/${environment.id}/container`, {
        name: 'proxy',
        registry_id: registry.id,
        image_name: 'nginx',
        tag: '1.27',
        ports: [{ internal_port: 80, publicly_accessible: false, protocol: 'HTTP' }],
        healthchecks: {},
      });
      const readStages = async () => (await made<{ results: Stage[] }>('GET', `/environment/${environment.id}/deploymentStage`)).results;
      const projectPath = `${server.baseUrl}/console/organization/${organizationId}/project/${project.id}`;

      // The environment's stages: the two defaults, the container in SERVICE DEFAULT.
      await page.goto(`${projectPath}/environment/${environment.id}?tab=settings`);
      const stages = page.getByRole('region', { name: 'Deployment stages' });
      const stageCard = (name: string) => stages.getByRole('listitem').filter({ has: page.getByRole('heading', { level: 3, name, exact: true }) });
      await stageCard('SERVICE DEFAULT').getByRole('listitem').filter({ hasText: 'proxy' }).waitFor();
      expect(await stages.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['DATABASE DEFAULT', 'SERVICE DEFAULT']);

      // Two stages created; the dialog photographed.
      await stages.getByRole('button', { name: 'New stage' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name', { exact: true }).fill('migrations');
      await dialog.getByLabel('Description (optional)').fill('Schema changes before the services start');
      await checkScreen(page, '310-new-stage-dialog');
      await dialog.getByRole('button', { name: 'Create stage' }).click();
      await stageCard('migrations').waitFor();
      await stages.getByRole('button', { name: 'New stage' }).click();
      await dialog.getByLabel('Name', { exact: true }).fill('workers');
      await dialog.getByRole('button', { name: 'Create stage' }).click();
      await stageCard('workers').waitFor();
      await dialog.waitFor({ state: 'detached' });

      // migrations moved after workers with the keyboard: the focus stays on the button that moved it.
      await stages.getByRole('button', { name: 'Move migrations later' }).focus();
      await page.keyboard.press('Enter');
      await stages.getByRole('status').getByText('migrations is now stage 4 of 4.').waitFor();
      expect(await stages.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['DATABASE DEFAULT', 'SERVICE DEFAULT', 'workers', 'migrations']);
      expect((await readStages()).map((stage) => stage.name)).toEqual(['DATABASE DEFAULT', 'SERVICE DEFAULT', 'workers', 'migrations']);
      // At the end it cannot go later: the focus went to its other move button.
      await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe('Move migrations earlier');
      // workers moved before SERVICE DEFAULT with the mouse.
      await stages.getByRole('button', { name: 'Move workers earlier' }).click();
      await stages.getByRole('status').getByText('workers is now stage 2 of 4.').waitFor();
      expect((await readStages()).map((stage) => stage.name)).toEqual(['DATABASE DEFAULT', 'workers', 'SERVICE DEFAULT', 'migrations']);

      // The container moved to migrations with its Stage choice, then left out of the environment's deploys.
      await stages.getByLabel('Stage of proxy').selectOption({ label: '4. migrations' });
      await stageCard('migrations').getByRole('listitem').filter({ hasText: 'proxy' }).waitFor();
      await expect.poll(() => page.evaluate("document.activeElement?.id ?? ''")).toContain('stage-of');
      const serviceStage = await made<Stage>('GET', `/service/${container.id}/deploymentStage`);
      expect(serviceStage.name).toBe('migrations');
      await stages.getByLabel('Skip in environment deploys (proxy)').check();
      await stages.getByRole('status').getByText('proxy is now left out of the environment’s deploys.').waitFor();
      expect((await readStages()).find((stage) => stage.name === 'migrations')?.services).toEqual([expect.objectContaining({ service_id: container.id, is_skipped: true })]);
      await checkRegion(page, stages, '310-deployment-stages');

      // workers renamed (the edit reads the stage first).
      await stages.getByRole('button', { name: 'Actions for stage workers' }).click();
      await page.getByRole('menuitem', { name: 'Edit…' }).click();
      await dialog.getByLabel('Name', { exact: true }).fill('background workers');
      await dialog.getByLabel('Description (optional)').fill('Queues and schedulers');
      await checkScreen(page, '310-edit-stage-dialog');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await stageCard('background workers').getByText('Queues and schedulers').waitFor();

      // migrations holds the container: the API's refusal shows in the dialog; once it is moved back, deleted.
      await stages.getByRole('button', { name: 'Actions for stage migrations' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      await dialog.getByLabel('Type migrations to confirm').fill('migrations');
      await dialog.getByRole('button', { name: 'Delete stage' }).click();
      await dialog.getByRole('alert').waitFor();
      expect(await dialog.getByRole('alert').textContent()).toMatch(/attach them to other stages first/i);
      await checkScreen(page, '310-delete-stage-refused');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await stages.getByLabel('Stage of proxy').selectOption({ label: '3. SERVICE DEFAULT' });
      await stageCard('SERVICE DEFAULT').getByRole('listitem').filter({ hasText: 'proxy' }).waitFor();
      await stages.getByRole('button', { name: 'Actions for stage migrations' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      await dialog.getByLabel('Type migrations to confirm').fill('migrations');
      await dialog.getByRole('button', { name: 'Delete stage' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await readStages()).map((stage) => stage.name)).toEqual(['DATABASE DEFAULT', 'background workers', 'SERVICE DEFAULT']);

      // The environment's rule: a time zone the API refuses, at its field in the API's words; then saved.
      const ruleSection = page.getByRole('region', { name: 'Deployment rule' });
      const environmentRule = await made<Rule>('GET', `/environment/${environment.id}/deploymentRule`);
      const refusal = await callApi<{ details?: { field: string; message: string }[] }>(server, token, 'PUT', `/environment/${environment.id}/deploymentRule/${environmentRule.id}`, {
        auto_stop: true,
        timezone: 'Mars/Olympus',
        start_time: '08:00',
        stop_time: '19:00',
        weekdays: ['MONDAY'],
      });
      expect(refusal.status).toBe(400);
      const timezoneMessage = readableFieldMessage(refusal.body.details?.find((detail) => detail.field === '/timezone')?.message as string);
      await ruleSection.getByLabel('Stop and start on a schedule').check();
      await ruleSection.getByLabel('Time zone').fill('Mars/Olympus');
      await ruleSection.getByRole('button', { name: 'Save' }).click();
      await expectRefusedAt(page, ruleSection.getByLabel('Time zone'), timezoneMessage);
      await checkRegion(page, ruleSection, '310-environment-rule-refused');
      await ruleSection.getByLabel('Time zone').fill('Europe/Paris');
      await ruleSection.getByLabel('Start time').fill('08:30');
      await ruleSection.getByLabel('Stop time').fill('20:00');
      await ruleSection.getByLabel('Friday').uncheck();
      await ruleSection.getByRole('button', { name: 'Save' }).click();
      await ruleSection.getByRole('status').getByText('Saved.').waitFor();
      expect(await made<Rule>('GET', `/environment/${environment.id}/deploymentRule`)).toMatchObject({
        auto_stop: true,
        timezone: 'Europe/Paris',
        start_time: '1970-01-01T08:30:00Z',
        stop_time: '1970-01-01T20:00:00Z',
        weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY'],
      });

      // The service page names its stage.
      await page.goto(`${projectPath}/environment/${environment.id}/container/${container.id}`);
      await page.getByText('SERVICE DEFAULT (stage 3)').waitFor();

      // The project's rules: created, reordered, edited, deleted.
      await page.goto(projectPath);
      const rules = page.getByRole('region', { name: 'Deployment rules' });
      await rules.getByRole('heading', { name: 'No deployment rules yet' }).waitFor();
      await rules.getByRole('button', { name: 'New rule' }).click();
      await dialog.getByLabel('Name', { exact: true }).fill('previews');
      await dialog.getByLabel('Environment names').fill('pr-*');
      await dialog.getByLabel('Mode').selectOption('PREVIEW');
      await dialog.getByLabel('Stop and start on a schedule').check();
      await dialog.getByLabel('Time zone').fill('Europe/Paris');
      await dialog.getByLabel('Stop time').fill('21:00');
      await checkScreen(page, '310-new-rule-dialog');
      await dialog.getByRole('button', { name: 'Create rule' }).click();
      await rules.getByRole('row', { name: /previews/ }).waitFor();
      await rules.getByRole('button', { name: 'New rule' }).click();
      await dialog.getByLabel('Name', { exact: true }).fill('everything else');
      await dialog.getByRole('button', { name: 'Create rule' }).click();
      await rules.getByRole('row', { name: /everything else/ }).waitFor();
      const readRules = async () => (await made<{ results: Rule[] }>('GET', `/project/${project.id}/deploymentRule`)).results;
      expect(await readRules()).toMatchObject([
        { name: 'previews', mode: 'PREVIEW', wildcard: 'pr-*', auto_stop: true, timezone: 'Europe/Paris', start_time: '1970-01-01T08:00:00Z', stop_time: '1970-01-01T21:00:00Z' },
        { name: 'everything else', mode: 'DEVELOPMENT', wildcard: '', auto_stop: false },
      ]);
      await rules.getByRole('button', { name: 'Try everything else earlier' }).click();
      await rules.getByRole('status').getByText('everything else is now tried 1st.').waitFor();
      expect((await readRules()).map((rule) => rule.name)).toEqual(['everything else', 'previews']);
      await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe('Try everything else later');
      await rules.getByRole('button', { name: 'Actions for rule previews' }).click();
      await page.getByRole('menuitem', { name: 'Edit…' }).click();
      await dialog.getByLabel('Name', { exact: true }).fill('pull requests');
      await dialog.getByLabel('Saturday').check();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await rules.getByRole('row', { name: /pull requests/ }).waitFor();
      expect((await readRules())[1]).toMatchObject({ name: 'pull requests', wildcard: 'pr-*', weekdays: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] });
      await checkRegion(page, rules, '310-deployment-rules');
      await rules.getByRole('button', { name: 'Actions for rule everything else' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      await dialog.getByLabel('Type everything else to confirm').fill('everything else');
      await checkScreen(page, '310-delete-rule-dialog');
      await dialog.getByRole('button', { name: 'Delete rule' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await readRules()).map((rule) => rule.name)).toEqual(['pull requests']);

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
