import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { expect, type Page } from '@playwright/test';
import { ACCOUNTS, signIn } from './support';

/**
 * At most one round (an API read and a telemetry post) in this many ms: about 30 KB/s of telemetry from
 * one source, within the per-source budgets (60 KB/s, 500 items/s). Unpaced, a fast machine went past
 * them once its burst was spent, and the load measured the budget (429s), not the replica going away.
 */
const ROUND_MS = 10;

/**
 * Steady load through a balancer while a replica is taken away: an API read and a telemetry post at a
 * time, one after the other (ROUND_MS apart at least), each status kept. `stop()` ends it and returns
 * every status seen.
 */
export function loadThroughBalancer(origin: string, label: string) {
  const statuses: number[] = [];
  let loading = true;
  const event = (i: number) => ({
    time: new Date().toISOString(),
    iKey: LOCAL_INSTRUMENTATION_KEY,
    name: 'Microsoft.ApplicationInsights.Event',
    tags: { 'ai.session.id': label, 'ai.user.id': `${label}-test` },
    data: { baseType: 'EventData', baseData: { ver: 2, name: `${label} ${i}` } },
  });
  const running = (async () => {
    for (let i = 0; loading; i++) {
      const paced = new Promise((resolve) => setTimeout(resolve, ROUND_MS));
      const [openapi, posted] = await Promise.all([
        fetch(`${origin}/api/openapi.json`).catch(() => null),
        fetch(`${origin}/v2/track`, { method: 'POST', body: JSON.stringify([event(i)]) }).catch(() => null),
      ]);
      statuses.push(openapi?.status ?? 0, posted?.status ?? 0);
      await Promise.all([openapi?.arrayBuffer(), posted?.arrayBuffer(), paced]);
    }
  })();
  return {
    /** How many requests have been answered (or failed) so far. */
    get count() {
      return statuses.length;
    },
    async stop(): Promise<number[]> {
      loading = false;
      await running;
      return statuses;
    },
  };
}

/** Signs alice in through the balancer at `origin`, then starts the load and waits for its first answers. */
export async function signInThenLoad(page: Page, origin: string, provider: string, label: string) {
  await page.goto(origin);
  await signIn(page, ACCOUNTS.alice, provider);
  const load = loadThroughBalancer(origin, label);
  await expect.poll(() => load.count).toBeGreaterThan(20);
  return load;
}
