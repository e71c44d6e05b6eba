import { expect, test } from '@playwright/test';

/**
 * The page's first render is in its HTML (index.html's shell): it paints before any script has run, on
 * `/` with the home page, elsewhere with the header alone, and never with a sign-in button or a name.
 * Scripts are held back here, so what shows is the HTML and its stylesheet only.
 */
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
