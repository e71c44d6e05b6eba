import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AuthProvider } from '../auth/auth-context';
import type { AuthSession } from '../auth/auth-state';
import { HomePage } from '../features/home/home-page';
import { navigation } from './app';
import { Layout } from './layout';

/**
 * index.html holds the app's first render as static markup (the header, and on `/` the home page), so
 * the browser paints it before the script has run; React then renders the same in its place. These
 * tests keep the two the same: a change to the layout or the home page that the markup misses fails here.
 */
const indexHtml = readFileSync(join(import.meta.dirname, '../../index.html'), 'utf8');

/**
 * Markup without comments and without whitespace next to a tag: the shell's containers are flex boxes and
 * blocks, where such whitespace shows nothing.
 */
const normalised = (html: string) =>
  html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/>\s+/g, '>')
    .replace(/\s+</g, '<')
    .replace(/\s+/g, ' ')
    .trim();

/** What React renders first: the session not known yet (no hint), so no sign-in button and no name. */
function firstRender(): string {
  const pending = () => new Promise<AuthSession>(() => undefined);
  const { container } = render(
    <AuthProvider loadSession={pending} initialUser={() => null}>
      <Layout navigation={navigation}>
        <HomePage />
      </Layout>
    </AuthProvider>,
  );
  // The footer is not in the shell: what it says depends on the visitor's telemetry choice.
  return container.innerHTML.slice(0, container.innerHTML.indexOf('<footer'));
}

describe('the static shell in index.html', () => {
  const root =
    /<div id="root">([\s\S]*)<\/div>\s*(?:<script[^>]*><\/script>\s*)?<\/body>/.exec(indexHtml)?.[1] ?? '';

  it('is React’s first render of the home page, before the session is known', () => {
    expect(normalised(root)).toBe(normalised(firstRender()));
  });

  it('marks the home page’s part, which the server leaves out on every other path', () => {
    const home = /<!-- home -->([\s\S]*?)<!-- \/home -->/.exec(root)?.[1] ?? '';
    expect(normalised(home)).toContain('<h1>Welcome to Gatehouse</h1>');
    expect(normalised(root.replace(home, ''))).toContain('<main></main>');
  });

  it('shows neither a sign-in button nor a name: a signed-in reload never flashes the signed-out UI', () => {
    expect(root).not.toMatch(/Sign in|data-testid="display-name"/);
  });
});
