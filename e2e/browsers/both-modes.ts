/** The two ways Gatehouse signs in: the token vault in the browser, and the server as a BFF. */
export type Mode = 'browser' | 'bff';
const MODES: readonly Mode[] = ['browser', 'bff'];

/**
 * Runs one walk in both modes at once, each in a browser session of its own. Most of a walk in Firefox
 * or WebKit is waiting (past a token's lifetime, for a page to stay signed in), which the two walks
 * share; each still takes every step and every assertion. Fails naming the mode of each walk that
 * failed, after both have ended (so neither leaves a browser behind).
 */
export async function inBothModes(walk: (mode: Mode) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(MODES.map((mode) => walk(mode)));
  const failures = results.flatMap((result, index) =>
    result.status === 'rejected' ? [{ mode: MODES[index], error: result.reason as unknown }] : [],
  );
  const named = failures.map(({ mode, error }) => {
    if (!(error instanceof Error)) return new Error(`${mode} mode: ${String(error)}`);
    error.message = `${mode} mode: ${error.message}`;
    return error;
  });
  const [first, ...others] = named;
  if (!first) return;
  if (others.length === 0) throw first;
  throw new AggregateError(named, named.map((error) => error.message).join('\n\n'));
}

/**
 * The port offset of WebKitWebDriver for a walk in each mode (two at once need two). The real-browser
 * specs run one at a time (playwright.config.ts), so they share these.
 */
export const WEBKIT_DRIVER: Readonly<Record<Mode, number>> = { browser: 88, bff: 89 };
