import type { Browser, Page } from '@playwright/test';
import type { BrowserSession, Tab } from './driver';
import { locate, type Target } from './in-page';

/** The journey's browser through Playwright (the Chromium of the rest of the suite). */
export async function playwrightSession(browser: Browser): Promise<BrowserSession> {
  const context = await browser.newContext();
  const element = async (page: Page, target: Target) => {
    const found = (await page.evaluateHandle(locate, { target })).asElement();
    if (!found) throw new Error(`Nothing on ${page.url()} matches ${JSON.stringify(target)}`);
    return found;
  };
  return {
    name: `Chromium ${browser.version()} (Playwright)`,
    async newTab(): Promise<Tab> {
      const page = await context.newPage();
      return {
        goto: async (url) => void (await page.goto(url)),
        reload: async () => void (await page.reload()),
        // Playwright types the argument as it arrives in the page (unboxed handles): ours is plain JSON.
        evaluate: (fn, arg) => page.evaluate(fn as (arg: unknown) => unknown, arg) as never,
        click: async (target) => (await element(page, target)).click(),
        fill: async (target, text) => (await element(page, target)).fill(text),
        close: () => page.close(),
      };
    },
    close: () => context.close(),
  };
}
