import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { readFile } from 'node:fs/promises';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { ACCOUNTS, apiFromPage, logInAtProvider, signIn, startServer, type StartedServer } from './support';

/**
 * The usage dashboard at a glance (ADR 0081): the first screen at both sizes, the view in the address,
 * sections to link to, a custom period, CSV downloads, and the accessibility scan of every section.
 */

/** The built-in collector's instrumentation key (apps/server/src/config.ts): not a secret. */
/** A page name a spreadsheet would run as a formula, were it not neutralised. */
const FORMULA_PAGE = '=HYPERLINK("http://example.com","click")';
const HOUR = 3_600_000;
const SECTIONS = [
  'overview',
  'experience',
  'behaviour',
  'sources',
  'errors',
  'calls',
  'sessions',
  'annotations',
] as const;
/** Where user-a came from: a referring URL whose path and query the dashboard must never show. */
const REFERRER = 'https://News.Example/story/42?token=not-for-the-dashboard';
const SIZES = [
  { name: 'a laptop', width: 1280, height: 800 },
  { name: 'a phone', width: 360, height: 800 },
] as const;

let fresh: StartedServer;
/** When the seeded items were sent: the custom period is asked about relative to it. */
const now = Date.now();

test.use({ timezoneId: 'Europe/Berlin', locale: 'en-GB' });

/** Page views of `user` at `time` (epoch ms), sent as the browser SDK sends them (`refUri` in the properties). */
function pageViews(time: number, user: string, names: string[], refUri = '') {
  return names.map((name) => ({
    time: new Date(time).toISOString(),
    iKey: LOCAL_INSTRUMENTATION_KEY,
    name: 'Microsoft.ApplicationInsights.Pageview',
    tags: { 'ai.session.id': `session-${user}-${time}`, 'ai.user.id': user },
    data: {
      baseType: 'PageviewData',
      baseData: { ver: 2, name, url: `https://example.com/${name.length}`, properties: { refUri } },
    },
  }));
}

test.beforeAll(async () => {
  // Consent asked (and declined below), so the admin's own browsing adds nothing to the figures.
  fresh = await startServer(32, { TELEMETRY_CONSENT: 'ask' });
  // This period: three users, four page views (one named like a formula); the one before: two users,
  // two page views; and 40 hours ago (the collector takes items up to 48 hours old), one page view that
  // only a custom period shows.
  // From a desktop Firefox on Windows (the breakdowns' browser, system and device); user-a came from
  // another site, the others directly.
  const sent = await fetch(`${fresh.origin}/v2/track`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
    },
    body: JSON.stringify([
      ...pageViews(now - HOUR, 'user-a', ['Home', FORMULA_PAGE], REFERRER),
      ...pageViews(now - 2 * HOUR, 'user-b', ['Home']),
      ...pageViews(now - 3 * HOUR, 'user-c', ['Reports']),
      ...pageViews(now - 30 * HOUR, 'user-a', ['Home']),
      ...pageViews(now - 31 * HOUR, 'user-d', ['Home']),
      ...pageViews(now - 40 * HOUR, 'user-e', ['Days ago']),
    ]),
  });
  expect(sent.status, await sent.text()).toBe(200);
});

test.afterAll(async () => {
  await fresh.stop();
});

/** Signs the admin in and opens the dashboard at `path`, once it shows `pageViews` page views. */
async function openDashboard(page: Page, path = '/usage', pageViews = '4') {
  await page.goto(fresh.origin);
  await page.getByRole('button', { name: 'Decline' }).click();
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, ACCOUNTS.admin, fresh.provider);
  await expect(page.getByTestId('display-name')).toHaveText(ACCOUNTS.admin.name);
  await page.goto(`${fresh.origin}${path}`);
  // The store loads its journal within seconds: reload until this period's page views are there.
  await expect
    .poll(
      async () => {
        await page.reload();
        return page.getByTestId('tile-pageViews').locator('.tile-value').textContent({ timeout: 10_000 });
      },
      { timeout: 30_000 },
    )
    .toBe(pageViews);
}

/** The element lies wholly within the first screen (no scrolling). */
async function expectOnFirstScreen(page: Page, element: Locator) {
  await expect(element).toBeVisible();
  const box = await element.boundingBox();
  const viewport = page.viewportSize();
  expect(box, 'laid out').not.toBeNull();
  expect(box && viewport && box.y >= 0 && box.y + box.height <= viewport.height).toBe(true);
  expect(box && viewport && box.x >= 0 && box.x + box.width <= viewport.width).toBe(true);
}

for (const size of SIZES) {
  test(`on ${size.name} the first screen shows the headline figures with their change and one large chart; a tile chooses its figure, kept in the address`, async ({
    page,
  }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await openDashboard(page);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);

    // Every tile, its figure and its change as a signed percentage, on the first screen.
    for (const key of ['users', 'signedInUsers', 'verifiedUsers', 'sessions', 'pageViews']) {
      await expectOnFirstScreen(page, page.getByTestId(`tile-${key}`));
    }
    await expectOnFirstScreen(page, page.getByTestId('tile-failedCalls'));
    // Four page views against three before: +33.3 %; three users against three: 0 %; nothing either time: —.
    await expect(page.getByTestId('tile-pageViews').locator('.tile-change')).toHaveText(
      '+33.3 % against the previous period',
    );
    await expect(page.getByTestId('tile-users').locator('.tile-change')).toHaveText(
      '0 % against the previous period',
    );
    await expect(page.getByTestId('tile-exceptions').locator('.tile-change')).toHaveText(
      '— against the previous period',
    );

    // The large chart, whole, without scrolling: users by default.
    const chart = page.getByTestId('big-chart');
    await expectOnFirstScreen(page, chart.getByRole('img'));
    await expect(chart.locator('figcaption')).toHaveText('Users over time');
    const users = page.getByTestId('tile-users').getByRole('button');
    await expect(users).toHaveAttribute('aria-pressed', 'true');

    // A click (or Enter) on a tile chooses the figure: the chart and the address follow.
    const views = page.getByTestId('tile-pageViews').getByRole('button');
    await views.click();
    await expect(views).toHaveAttribute('aria-pressed', 'true');
    await expect(users).toHaveAttribute('aria-pressed', 'false');
    await expect(chart.locator('figcaption')).toHaveText('Page views over time');
    await expect(page).toHaveURL(/\/usage\?figure=pageViews$/);
    await page.getByTestId('tile-sessions').getByRole('button').focus();
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/usage\?figure=sessions$/);
    await page.getByTestId('tile-pageViews').getByRole('button').focus();
    await page.keyboard.press('Space');
    await expect(page).toHaveURL(/\/usage\?figure=pageViews$/);

    // The chart's table has the figure of each bucket: four page views in all.
    await chart.getByText('Page views over time: as a table').click();
    const cells = await chart.locator('tbody td').allTextContents();
    expect(cells.map(Number).reduce((a, b) => a + b, 0)).toBe(4);

    // A reload (or the link shared) shows the same view.
    await page.reload();
    await expect(page.getByTestId('tile-pageViews').getByRole('button')).toHaveAttribute(
      'aria-pressed',
      'true',
    );
    await expect(chart.locator('figcaption')).toHaveText('Page views over time');
    // The chart is reachable by keyboard, named, and reads its points.
    const image = chart.getByRole('img');
    await expect(image).toHaveAttribute('aria-label', /^Page views over time, \d+ points from /);
    await image.focus();
    await page.keyboard.press('End');
    await expect(chart.locator('.chart-readout')).toContainText('Page views');
    // Nothing wider than the screen.
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
  });
}

test('the sections can be jumped to and linked to: a reload keeps the section and the view', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await openDashboard(page, '/usage?range=7d&figure=pageViews', '7');
  const nav = page.getByRole('navigation', { name: 'Sections of the dashboard' });
  await expect(nav.getByRole('link')).toHaveText([
    'Overview',
    'Experience',
    'Behaviour',
    'Sign-in',
    'Sources',
    'Errors',
    'Calls',
    'Sessions',
    'Annotations',
  ]);
  await nav.getByRole('link', { name: 'Errors' }).click();
  await expect(page).toHaveURL(/\/usage\?range=7d&figure=pageViews#errors$/);
  // The section is on the screen, the page scrolled to it (as far as the page goes).
  const errors = page.locator('#errors');
  await expect(errors.getByRole('heading', { name: 'Errors' })).toBeInViewport();
  expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(800);

  // A choice made here keeps the section in the address.
  await page.getByLabel('Period').selectOption('30d');
  await expect(page).toHaveURL(/\/usage\?range=30d&figure=pageViews#errors$/);

  await page.reload();
  await expect(page.getByLabel('Period')).toHaveValue('30d');
  await expect(page.getByTestId('tile-pageViews').getByRole('button')).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await expect(errors.getByRole('heading', { name: 'Errors' })).toBeInViewport();

  // A link opened anew (a shared one, no scroll position to restore) lands on its section too, once
  // the panels above it have their content.
  await page.goto(`${fresh.origin}/usage?range=30d#behaviour`);
  await expect(page.getByTestId('pages-table')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Behaviour' })).toBeInViewport();
  await expect(page.getByTestId('big-chart')).not.toBeInViewport();
});

test('any period: days chosen in the viewer’s time zone reach the API as from and to, and the bounds are shown', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await openDashboard(page);
  // The day of 40 hours ago, in Berlin: the page view sent then, and nothing of the last 3 hours.
  const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(now - 40 * HOUR);
  await page.getByLabel('Period').selectOption('custom');
  await page.getByLabel('First day').fill(day);
  await page.getByLabel('Last day').fill(day);
  await page.getByRole('button', { name: 'Apply' }).click();
  // The page's address names the period it asks the API for (the token vault's worker sends the calls,
  // out of the driver's sight; the panels below show that the API answered for that day).
  await expect(page).toHaveURL(/[?&]from=/);
  const url = new URL(page.url());
  // Berlin's midnight, in UTC: 23:00 (or 22:00 in summer) the day before.
  const from = url.searchParams.get('from') ?? '';
  const to = url.searchParams.get('to') ?? '';
  expect(url.searchParams.get('range')).toBeNull();
  expect(Date.parse(to) - Date.parse(from)).toBeGreaterThanOrEqual(23 * HOUR);
  expect(Date.parse(to) - Date.parse(from)).toBeLessThanOrEqual(25 * HOUR);
  expect(new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(Date.parse(from))).toBe(day);
  await expect(page).toHaveURL(new RegExp(`from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`));

  const pages = page.getByTestId('pages-table');
  await expect(pages.getByRole('row', { name: /^Days ago 1 1/ })).toBeVisible();
  await expect(pages).not.toContainText('Reports');
  // The bounds in the viewer's zone, named: midnight to midnight.
  await expect(page.getByTestId('usage-period')).toContainText('00:00 –');
  await expect(page.getByTestId('usage-period')).toContainText('00:00 (Europe/Berlin)');

  // Kept on reload; the form shows the days chosen.
  await page.reload();
  await expect(page.getByLabel('First day')).toHaveValue(day);
  await expect(pages.getByRole('row', { name: /^Days ago/ })).toBeVisible();

  // The API refuses what is not a period, saying why.
  const half = await apiFromPage(page, '/api/usage/overview?from=2026-01-01T00:00:00Z');
  expect(half.status).toBe(400);
  expect(JSON.stringify(half.body)).toContain('to must be given with from and to both');
  const long = await apiFromPage(page, '/api/usage/pages?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z');
  expect(long.status).toBe(400);
  expect(JSON.stringify(long.body)).toContain('to must be at most 92 days after from');
});

/** RFC 4180 records, for the test's own check of a download. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  return records;
}

test('breakdowns: where visitors came from and what they use, ranked with shares; an entry becomes a segment, shown and cleared', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await openDashboard(page, '/usage#sources');
  const sources = page.locator('#sources');
  const rows = (testId: string) =>
    sources
      .getByTestId(testId)
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent?.trim())));
  await expect
    .poll(() => rows('breakdown-referrer'))
    .toEqual([
      ['Direct / none', '2', '66.7%'],
      ['news.example', '1', '33.3%'],
    ]);
  expect(await rows('breakdown-browser')).toEqual([['Firefox', '3', '100%']]);
  expect(await rows('breakdown-os')).toEqual([['Windows', '3', '100%']]);
  expect(await rows('breakdown-device')).toEqual([['Desktop', '3', '100%']]);
  // Only the referrer's host, never its path or query.
  await expect(page.locator('body')).not.toContainText('token=');
  await expect(page.locator('body')).not.toContainText('/story/42');

  // Pressing an entry applies it as a segment: in the address, the summary, and every panel.
  await sources.getByRole('button', { name: 'news.example' }).click();
  await expect(page).toHaveURL(/\/usage\?referrer=news\.example#sources$/);
  await expect(page.getByTestId('segment-summary')).toHaveText('from news.example');
  await expect(page.getByTestId('tile-users').locator('.tile-value')).toHaveText('1');
  await expect(page.getByTestId('tile-pageViews').locator('.tile-value')).toHaveText('2');
  await expect(page.getByTestId('pages-table').locator('tbody th')).toHaveText([FORMULA_PAGE, 'Home']);
  await expect.poll(() => rows('breakdown-referrer')).toEqual([['news.example', '1', '100%']]);
  await expect(sources.getByRole('button', { name: 'news.example' })).toHaveAttribute('aria-pressed', 'true');
  // A second entry adds to it; a reload keeps both.
  await sources.getByRole('button', { name: 'Windows' }).click();
  await expect(page).toHaveURL(/\/usage\?os=Windows&referrer=news\.example#sources$/);
  await page.reload();
  await expect(page.getByTestId('segment-summary')).toHaveText('Windows, from news.example');
  await expect(page.getByTestId('tile-users').locator('.tile-value')).toHaveText('1');

  // The referring site shows in the segment filter, and is cleared there.
  await page
    .getByTestId('segment-referrer')
    .getByRole('button', { name: 'Clear the referring site' })
    .click();
  await expect(page).toHaveURL(/\/usage\?os=Windows#sources$/);
  await expect(page.getByTestId('tile-users').locator('.tile-value')).toHaveText('3');
  await sources.getByRole('button', { name: 'Direct / none' }).click();
  await expect(page).toHaveURL(/referrer=%28direct%29|referrer=\(direct\)/);
  await expect(page.getByTestId('tile-users').locator('.tile-value')).toHaveText('2');
  await expect(page.getByTestId('pages-table').locator('tbody th')).toHaveText(['Home', 'Reports']);
});

test('every table downloads as CSV: the rows the page shows, RFC 4180 in UTF-8, formulas neutralised; estimated columns marked and explained', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await openDashboard(page);
  const panel = page.getByRole('region', { name: 'Pages' });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    panel.getByRole('button', { name: 'Download CSV of Pages' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^pages_\d{4}-\d\d-\d\dT\d{4}Z_\d{4}-\d\d-\d\dT\d{4}Z\.csv$/);
  const bytes = await readFile(await download.path());
  // UTF-8 with its byte order mark, CRLF after every record.
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const text = bytes.toString('utf8').slice(1);
  expect(text.endsWith('\r\n')).toBe(true);
  expect(text.replaceAll('\r\n', '')).not.toMatch(/(?<!")\n/);
  const [header, ...records] = parseCsv(text);
  expect(header).toEqual(['Page', 'Views', 'Users', 'Average ms', 'p95 ms']);

  // The same rows as the table, in its order: names and counts.
  const shown = await panel
    .getByTestId('pages-table')
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from(row.children)
          .slice(0, 3)
          .map((cell) => cell.textContent?.trim() ?? ''),
      ),
    );
  expect(records.map((r) => [r[0]?.replace(/^'(?=[=+\-@\t\r])/, ''), r[1], r[2]])).toEqual(shown);
  // The formula-like name is there, led by a quote, so a spreadsheet shows it as text.
  expect(records.map((r) => r[0])).toContain(`'${FORMULA_PAGE}`);
  expect(text).toContain(`"'=HYPERLINK(""http://example.com"",""click"")"`);

  // The other tables have the same control.
  await expect(page.getByRole('button', { name: 'Download CSV of Sessions' })).toBeVisible();
  await expect(page.getByRole('button', { name: /^Download CSV of / })).not.toHaveCount(0);

  // Over seven days the users and the 95th percentile come from the daily sketches (ADR 0074): their
  // columns are marked, and the note under the table says how they are estimated and how closely.
  await page.goto(`${fresh.origin}/usage?range=7d`);
  const week = page.getByRole('region', { name: 'Pages' });
  await expect(week.getByTestId('pages-table').getByRole('columnheader')).toHaveText([
    'Page',
    'Views',
    '≈ Users',
    'Average ms',
    '≈ p95 ms',
  ]);
  await expect(week.getByText(/^≈ Estimated over this period: Users by HyperLogLog/)).toContainText(
    /standard error 2\.3\s?%.*p95 by durations counted in bins 5 % wide per page and day \(within 2\.5\s?% of the value\)/,
  );
});

for (const size of SIZES) {
  test(`on ${size.name} every section passes axe-core's WCAG 2.0, 2.1 and 2.2 A and AA rules`, async ({
    page,
  }) => {
    // Axe scans the whole page and then each section, in the page's own thread: minutes of CPU on a busy machine.
    test.setTimeout(120_000);
    await page.setViewportSize({ width: size.width, height: size.height });
    await openDashboard(page);
    // The parts that show only on demand: a funnel, the flows of a page, a chart's table.
    await page.getByLabel('Step 1 name').fill('Home');
    await page.getByLabel('Step 2 name').fill('Reports');
    await page.getByRole('button', { name: 'Show the funnel' }).click();
    await expect(page.getByTestId('funnel-table')).toBeVisible();
    await page.getByLabel('Page', { exact: true }).fill('Home');
    await page.getByRole('button', { name: 'Show the flows' }).click();
    await expect(page.getByTestId('flows-summary')).toBeVisible();
    await page.getByText('Users over time: as a table').click();
    await page.getByLabel('Period').selectOption('custom');
    await expect(page.getByRole('button', { name: 'Apply' })).toBeVisible();
    const scan = (selector?: string) => {
      const builder = new AxeBuilder({ page }).withTags([
        'wcag2a',
        'wcag2aa',
        'wcag21a',
        'wcag21aa',
        'wcag22aa',
      ]);
      return (selector ? builder.include(selector) : builder).analyze();
    };
    const whole = await scan();
    expect(
      whole.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    ).toEqual([]);
    for (const id of SECTIONS) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      const result = await scan(`#${id}`);
      expect(result.passes.length, `#${id} was scanned`).toBeGreaterThan(0);
      expect(result.violations.map((v) => `${id} ${v.id}: ${v.help}`)).toEqual([]);
    }
  });
}

/** A web vital (LCP) of user-a's first session, so the Experience charts have a line: no new user or session. */
function lcp(time: number, value: number) {
  return {
    time: new Date(time).toISOString(),
    iKey: LOCAL_INSTRUMENTATION_KEY,
    name: 'Microsoft.ApplicationInsights.Metric',
    tags: { 'ai.session.id': `session-user-a-${now - HOUR}`, 'ai.user.id': 'user-a' },
    data: {
      baseType: 'MetricData',
      baseData: { ver: 2, metrics: [{ name: 'LCP', value, count: 1 }], properties: { page: 'Home' } },
    },
  };
}

// Last in this file: it adds a web vital and an annotation, which the tests above do not expect.
test('an admin marks a moment: every time chart of the period shows it, its note read by keyboard; a member is refused by the API', async ({
  page,
  browser,
}) => {
  const sent = await fetch(`${fresh.origin}/v2/track`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify([lcp(now - HOUR, 1800)]),
  });
  expect(sent.status, await sent.text()).toBe(200);
  await openDashboard(page);
  const charts = page.locator('figure.chart');
  // The large chart and the Experience section's two (once the store has loaded the vital).
  await expect(charts).toHaveCount(3, { timeout: 30_000 });

  // Markup in a note is text: shown as typed, never run.
  const note = 'Release 2.4 <img src=x onerror="document.title=1">';
  const section = page.locator('#annotations');
  await expect(section.getByText('No annotations in this period.')).toBeVisible();
  await expect(section.getByLabel(/^Time \(Europe\/Berlin\)/)).toHaveValue(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
  await section.getByLabel('Note').fill(note);
  await section.getByRole('button', { name: 'Add annotation' }).click();
  await expect(section.getByTestId('annotations-list')).toContainText(`${note} (by you)`);

  for (const chart of await charts.all()) {
    const title = await chart.locator('figcaption').textContent();
    await expect(chart.getByRole('list', { name: `Annotations on ${title}` })).toContainText(note);
    await expect(chart.locator('line.mark')).toHaveCount(1);
    await expect(chart.getByRole('img')).toHaveAttribute('aria-label', /1 annotation, read at its point\.$/);
  }
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await page.title()).not.toBe('1');

  // By keyboard: Tab to the large chart, End reads the last point (now) with the note; its table names it too.
  const big = page.getByTestId('big-chart');
  await big.getByRole('img').focus();
  await page.keyboard.press('End');
  await expect(big.locator('.chart-readout')).toContainText(`Annotation: ${note} (`);
  await big.getByText('as a table').click();
  await expect(big.getByRole('table').getByRole('row').last()).toContainText(note);

  // A member, signed in in another browser: refused by the API, for reading and writing; nothing is written.
  const member = await browser.newPage();
  try {
    await member.goto(fresh.origin);
    await member.getByRole('button', { name: 'Decline' }).click();
    await signIn(member, ACCOUNTS.alice, fresh.provider);
    await member.goto(`${fresh.origin}/api/openapi.json`);
    expect((await apiFromPage(member, '/api/usage/annotations')).status).toBe(403);
    const written = await apiFromPage(member, '/api/usage/annotations', undefined, {
      method: 'POST',
      body: { time: new Date().toISOString(), note: 'A member’s note' },
    });
    expect(written.status).toBe(403);
    expect(written.body).toMatchObject({ error: 'forbidden' });
  } finally {
    await member.close();
  }
  const listed = await apiFromPage(page, '/api/usage/annotations');
  expect(listed.status).toBe(200);
  expect((listed.body as { annotations: { note: string }[] }).annotations.map((a) => a.note)).toEqual([note]);

  // Deleted: gone from the list and from every chart.
  await section.getByRole('button', { name: `Delete the annotation “${note}”` }).click();
  await expect(section.getByText('No annotations in this period.')).toBeVisible();
  await expect(page.locator('line.mark')).toHaveCount(0);
});
