import type { Target } from './in-page';

/**
 * The little the cross-browser journey asks of a browser, so that one journey (journey.ts) runs with
 * the same steps and assertions whatever drives the browser: Playwright (Chromium), WebDriver BiDi
 * (Firefox, through puppeteer-core) or WebDriver classic (WebKitGTK's WebKitWebDriver). Elements are
 * found by the same in-page function everywhere (in-page.ts `locate`); clicks and keys are each
 * protocol's own input commands, as a person's would be.
 */
export interface Tab {
  /** Navigates and resolves once the page has loaded. */
  goto(url: string): Promise<void>;
  /** Reloads and resolves once the page has loaded. */
  reload(): Promise<void>;
  /** Runs `fn(arg)` in the page; `fn` travels as text, so it must be self-contained. */
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<Awaited<R>>;
  /** Clicks the element `target` finds (it must be there: wait for it first). */
  click(target: Target): Promise<void>;
  /** Types `text` into the (empty) field `target` finds. */
  fill(target: Target, text: string): Promise<void>;
  close(): Promise<void>;
}

/** One browser with one profile: its tabs share cookies, storage and BroadcastChannel. */
export interface BrowserSession {
  /** e.g. "Firefox 153.7.0esr (WebDriver BiDi)". */
  readonly name: string;
  newTab(): Promise<Tab>;
  close(): Promise<void>;
}
