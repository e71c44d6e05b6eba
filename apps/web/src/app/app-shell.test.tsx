import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { markHome } from '../../first-render-plugin';
import { App } from './app';
import { firstRender } from './first-render';

/**
 * The build puts the app's first render of `/` (the session not known yet) into index.html
 * (first-render-plugin.ts), so the browser paints it before any script has run and React adopts it
 * (hydrateRoot). Adopting needs the very same markup as the browser's own first render.
 */
describe('the first render the build puts into index.html', () => {
  const markup = firstRender();

  it('is the render of the home page the browser makes before the session is known, to the character', () => {
    // jsdom's address is `/`, and its storage holds no session hint.
    expect(window.location.pathname).toBe('/');
    expect(markup).toBe(renderToString(<App />));
    expect(markup).toContain('<h1>Welcome to Gatehouse</h1>');
  });

  it('marks the home page’s part, which the server leaves out on every other path', () => {
    const root = markHome(markup);
    const home = /<!-- home -->(.*?)<!-- \/home -->/.exec(root)?.[1] ?? '';
    expect(home).toContain('<h1>Welcome to Gatehouse</h1>');
    // What the server sends on other paths (apps/server/src/app.ts): the header, and an empty <main>.
    expect(root.replace(/<!-- home -->[\s\S]*?<!-- \/home -->/, '')).toContain('<main></main>');
    expect(() => markHome('<div></div>')).toThrow('no <main> element');
  });

  it('shows neither a sign-in button nor a name: a signed-in reload never flashes the signed-out UI', () => {
    expect(markup).toContain('<div class="account" aria-busy="true"></div>');
    expect(markup).not.toMatch(/Sign in|data-testid="display-name"/);
  });
});
