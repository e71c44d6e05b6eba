import { expect, test, type Page } from '@playwright/test';
import { ACCOUNTS, signIn } from './support';

/**
 * The page's first render is in its HTML (index.html): it paints before any script has run, on `/` with
 * the home page, elsewhere with the header alone, and never with a sign-in button or a name. On `/`
 * React then adopts those very nodes (hydration) instead of drawing new ones.
 */
test.describe('with scripts held back', () => {
  test.beforeEach(async ({ page }) => {
    await page.route('**/assets/*.js', (route) => route.abort());
  });

  test('the home page paints from its HTML, styled, before any script runs', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByRole('heading', { level: 1, name: 'Welcome to Gatehouse' })).toBeVisible();
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link')).toHaveText([
      'Home',
      'Profile',
    ]);
    // The stylesheet applies: the brand is the top bar's bold link.
    const brand = page.getByRole('banner').getByRole('link', { name: 'Gatehouse' });
    expect(await brand.evaluate((a) => getComputedStyle(a).fontWeight)).toBe('700');
    await expect(page.getByRole('button')).toHaveCount(0);
  });

  test('other paths paint the header alone, not the home page', async ({ page }) => {
    await page.goto('/profile');
    await expect(page.getByRole('banner').getByRole('link', { name: 'Gatehouse' })).toBeVisible();
    await expect(page.getByRole('main')).toBeEmpty();
    await expect(page.getByText('Welcome to Gatehouse')).toHaveCount(0);
  });
});

/**
 * Keeps, once the HTML is parsed and before any script has run, the heading painted from it; and records
 * every console error and uncaught error (a hydration mismatch is reported as one).
 */
async function watchAdoption(page: Page): Promise<string[]> {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.addInitScript(() => {
    document.addEventListener('readystatechange', () => {
      if (document.readyState === 'interactive') {
        (window as { paintedHeading?: Element | null }).paintedHeading = document.querySelector('h1');
      }
    });
  });
  return errors;
}

const headingKept = (page: Page) =>
  page.evaluate(() => {
    const painted = (window as { paintedHeading?: Element | null }).paintedHeading;
    return painted !== null && painted !== undefined && document.querySelector('h1') === painted;
  });

test('React adopts the painted home page, signed out and on a signed-in reload, without an error', async ({
  page,
}) => {
  const errors = await watchAdoption(page);
  await page.goto('/');
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(await headingKept(page)).toBe(true);

  await signIn(page, ACCOUNTS.alice);
  await page.reload();
  await expect(page.getByTestId('display-name')).toHaveText(ACCOUNTS.alice.name);
  await expect(page.getByText('You are signed in as')).toBeVisible();
  expect(await headingKept(page)).toBe(true);
  expect(errors).toEqual([]);
});
