import { createServer, type Plugin, type ViteDevServer } from 'vite';

/** Where index.html's #root gets the app's first render. */
export const FIRST_RENDER_SLOT = '<!--first-render-->';
const MODULE = '/src/app/first-render.tsx';

/**
 * The app's first render of `/` (the session not known yet), as React renders it on a server, put into
 * index.html by the build and by the dev server: the browser paints it before any script has run, and on
 * `/` React adopts it (hydrateRoot, src/main.tsx). The home page's part is marked, as the server leaves it
 * out on every other path (apps/server/src/spa.ts). ADR 0064.
 */
export function firstRenderPlugin(): Plugin {
  let dev: ViteDevServer | undefined;
  return {
    name: 'gatehouse-first-render',
    configureServer(server) {
      dev = server;
    },
    transformIndexHtml: {
      order: 'pre',
      async handler(html) {
        if (!html.includes(FIRST_RENDER_SLOT))
          throw new Error(`index.html has no ${FIRST_RENDER_SLOT} in #root.`);
        return html.replace(FIRST_RENDER_SLOT, markHome(await render(dev)));
      },
    },
  };
}

/** The render, from the dev server's own module graph, or (building) from a short-lived one. */
async function render(dev: ViteDevServer | undefined): Promise<string> {
  const server =
    dev ??
    (await createServer({
      configFile: new URL('vite.config.ts', import.meta.url).pathname,
      server: { middlewareMode: true, hmr: false, ws: false },
      appType: 'custom',
      logLevel: 'error',
      optimizeDeps: { noDiscovery: true, include: [] },
    }));
  try {
    const { firstRender } = (await server.ssrLoadModule(MODULE)) as { firstRender: () => string };
    return firstRender();
  } finally {
    if (!dev) await server.close();
  }
}

/** `<main>…</main>` → `<main><!-- home -->…<!-- /home --></main>`: the part only `/` shows. */
export function markHome(markup: string): string {
  const open = markup.indexOf('<main>');
  const close = markup.lastIndexOf('</main>');
  if (open < 0 || close < open) throw new Error('The first render has no <main> element.');
  const start = open + '<main>'.length;
  return `${markup.slice(0, start)}<!-- home -->${markup.slice(start, close)}<!-- /home -->${markup.slice(close)}`;
}
