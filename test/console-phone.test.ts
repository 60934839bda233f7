import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { checkScreen, type ConsoleWorld, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * The console at a phone's width (390×844, the narrow baseline of docs/console.md), in the real browser against the
 * real server: the settings navigation is one disclosure naming the section shown (not eleven links wrapped over five
 * rows), and a dialog taller than the screen scrolls its body while its action row stays in view. axe on each state;
 * photographs `93-…` to `95-…`.
 */
describe('web console at a phone width (real browser, real server)', () => {
  let world: ConsoleWorld;
  let server: SlipwayServer;
  let browser: Browser;
  const owner = `console-phone-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Pat Phone' });
    ({ server, browser } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  }, 60_000);

  /** Whether the element's box lies wholly inside the viewport (what the person sees without scrolling). */
  async function whollyInView(page: Page, element: Locator): Promise<boolean> {
    const box = await element.boundingBox();
    const viewport = page.viewportSize();
    if (box === null || viewport === null) return false;
    return box.y >= 0 && box.x >= 0 && box.y + box.height <= viewport.height && box.x + box.width <= viewport.width;
  }

  it('turns the settings navigation into a disclosure and keeps a long dialog’s actions in view', { timeout: 120_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    watchPage(page, problems, () => false);
    try {
      await signIn(page, server, owner);
      await page.getByLabel('Organization name').fill('Pocket Robotics');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'Pocket Robotics' }).waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'General' }).first().waitFor();

      // Wide: the links themselves, beside the section.
      const navigation = page.getByRole('navigation', { name: 'Settings' });
      expect(await navigation.getByRole('link').count()).toBe(14);
      expect(await navigation.getByRole('button').count()).toBe(0);

      // Phone: one button naming the section shown, collapsed; the links appear when it opens.
      await page.setViewportSize({ width: 390, height: 844 });
      const trigger = navigation.getByRole('button', { name: 'Section General' });
      await trigger.waitFor();
      expect(await trigger.getAttribute('aria-expanded')).toBe('false');
      expect(await navigation.getByRole('link').count()).toBe(0);
      const navigationBox = await navigation.boundingBox();
      expect(navigationBox?.height).toBeLessThan(60);
      await checkScreen(page, '93-phone-settings-navigation');
      await page.setViewportSize({ width: 390, height: 844 });
      await trigger.click();
      expect(await trigger.getAttribute('aria-expanded')).toBe('true');
      expect(await navigation.getByRole('link').allTextContents()).toEqual([
        'General',
        'Members',
        'Roles',
        'API tokens',
        'Policy tokens',
        'Git tokens',
        'Cloud credentials',
        'Container registries',
        'Helm repositories',
        'Webhooks',
        'Labels and annotations',
        'Billing',
        'Audit log',
        'Alerts',
      ]);
      expect(await navigation.getByRole('link', { name: 'General' }).getAttribute('aria-current')).toBe('page');
      await checkScreen(page, '94-phone-settings-navigation-open');
      // checkScreen leaves the page at the desktop size; the rest is the phone's.
      await page.setViewportSize({ width: 390, height: 844 });
      await trigger.click();
      expect(await trigger.getAttribute('aria-expanded')).toBe('false');
      // By keyboard: Enter opens it again; following a link closes the list.
      await trigger.focus();
      await page.keyboard.press('Enter');
      await navigation.getByRole('link', { name: 'Roles' }).waitFor();
      await navigation.getByRole('link', { name: 'Roles' }).click();
      await navigation.getByRole('button', { name: 'Section Roles' }).waitFor();
      expect(await navigation.getByRole('button', { name: 'Section Roles' }).getAttribute('aria-expanded')).toBe('false');
      await page.getByRole('heading', { name: 'No custom roles yet' }).waitFor();

      // A dialog taller than the phone's screen: its body scrolls, its action row stays in view at the foot.
      await page.getByRole('button', { name: 'New custom role' }).click();
      const editor = page.getByRole('dialog', { name: 'New custom role' });
      await editor.waitFor();
      const create = editor.getByRole('button', { name: 'Create role' });
      const scrolls = await page.locator('.modal').evaluate((modal) => modal.scrollHeight > modal.clientHeight);
      expect(scrolls).toBe(true);
      expect(await whollyInView(page, create)).toBe(true);
      expect(await whollyInView(page, editor.getByRole('button', { name: 'Cancel' }))).toBe(true);
      await page.locator('.modal').evaluate((modal) => modal.scrollTo({ top: modal.scrollHeight / 2 }));
      expect(await whollyInView(page, create)).toBe(true);
      await page.locator('.modal').evaluate((modal) => modal.scrollTo({ top: 0 }));
      await checkScreen(page, '95-phone-long-dialog');
      await page.keyboard.press('Escape');
      await editor.waitFor({ state: 'detached' });

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
