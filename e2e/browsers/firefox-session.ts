import puppeteer, { type ElementHandle, type Page } from 'puppeteer-core';
import type { BrowserSession, Tab } from './driver';
import { locate, type Target } from './in-page';

/**
 * The journey's browser in Firefox (Debian's firefox-esr, or FIREFOX_PATH), headless, driven over
 * WebDriver BiDi by puppeteer-core: Firefox speaks BiDi itself, so no geckodriver is needed (Debian has
 * none, and Playwright's own Firefox protocol needs its patched build, which cannot be had here).
 */
export async function firefoxSession(executablePath: string): Promise<BrowserSession> {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath,
    headless: true,
    // Firefox keeps its profile in a temporary folder that puppeteer removes on close.
    extraPrefsFirefox: {
      // Telemetry and update checks of Firefox itself would only be noise on the loopback.
      'datareporting.policy.dataSubmissionEnabled': false,
      'app.update.enabled': false,
    },
  });
  const element = async (page: Page, target: Target) => {
    const found = (
      await page.evaluateHandle(locate, { target })
    ).asElement() as ElementHandle<Element> | null;
    if (!found) throw new Error(`Nothing on ${page.url()} matches ${JSON.stringify(target)}`);
    return found;
  };
  return {
    name: `Firefox ${(await browser.version()).replace(/^firefox\//i, '')} (WebDriver BiDi)`,
    async newTab(): Promise<Tab> {
      const page = await browser.newPage();
      return {
        goto: async (url) => void (await page.goto(url, { waitUntil: 'load' })),
        reload: async () => void (await page.reload({ waitUntil: 'load' })),
        // puppeteer types the argument as it arrives in the page (unwrapped handles): ours is plain JSON.
        evaluate: (fn, arg) => page.evaluate(fn as (arg: unknown) => unknown, arg) as never,
        click: async (target) => (await element(page, target)).click(),
        fill: async (target, text) => (await element(page, target)).type(text),
        close: () => page.close(),
      };
    },
    close: () => browser.close(),
  };
}
