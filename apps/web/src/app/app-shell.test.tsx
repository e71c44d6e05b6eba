import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { App } from './app';

/**
 * index.html holds the app's first render of `/` (the session not known yet) as React renders it on a
 * server, so the browser paints it before any script has run and React adopts it (hydrateRoot). Adopting
 * needs the very same markup: a change to the layout, the home page or the public links that the HTML
 * misses fails here, with the markup to put there.
 */
const indexHtml = readFileSync(join(import.meta.dirname, '../../index.html'), 'utf8');
const root = /<div id="root">(.*)<\/div>\n/.exec(indexHtml)?.[1] ?? '';
const HOME = /<!-- home -->(.*?)<!-- \/home -->/;

describe('the first render in index.html', () => {
  it('is the app’s render of the home page before the session is known, to the character', () => {
    // jsdom's address is `/`, and its storage holds no session hint.
    expect(window.location.pathname).toBe('/');
    expect(root.replace(HOME, '$1')).toBe(renderToString(<App />));
  });

  it('marks the home page’s part, which the server leaves out on every other path', () => {
    const home = HOME.exec(root)?.[1] ?? '';
    expect(home).toContain('<h1>Welcome to Gatehouse</h1>');
    expect(root.replace(HOME, '')).toContain('<main></main>');
  });

  it('shows neither a sign-in button nor a name: a signed-in reload never flashes the signed-out UI', () => {
    expect(root).toContain('<div class="account" aria-busy="true"></div>');
    expect(root).not.toMatch(/Sign in|data-testid="display-name"/);
  });
});
