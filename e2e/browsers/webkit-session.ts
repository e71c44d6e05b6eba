import { spawn, type ChildProcess } from 'node:child_process';
import type { BrowserSession, Tab } from './driver';
import { locate, type Target } from './in-page';

/**
 * The journey's browser in WebKit: WebKitGTK's MiniBrowser, driven by WebKitWebDriver over W3C WebDriver
 * (the classic HTTP protocol, https://www.w3.org/TR/webdriver2/), in a virtual X display of its own,
 * since MiniBrowser has no headless mode. The client is the few commands the journey needs, written
 * here (docs/decisions/0059-cross-browser-journey.md).
 */
export interface WebKitTools {
  /** WebKitWebDriver's path. */
  driver: string;
  /** Xvfb's path. */
  xvfb: string;
}

class WebDriverError extends Error {
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(`${error}: ${message}`);
  }
}

/** Starts Xvfb on a display number it picks itself (-displayfd), and resolves with that number. */
function startXvfb(xvfb: string): Promise<{ display: string; process: ChildProcess }> {
  const child = spawn(xvfb, ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x1024x24'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  return new Promise((resolve, reject) => {
    let written = '';
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      written += String(chunk);
      if (written.includes('\n')) resolve({ display: `:${written.trim()}`, process: child });
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`Xvfb exited with ${code} before it had a display:\n${stderr}`)),
    );
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function webkitSession(tools: WebKitTools, driverPort: number): Promise<BrowserSession> {
  const xvfb = await startXvfb(tools.xvfb);
  const driver = spawn(tools.driver, [`--port=${driverPort}`], {
    env: { ...process.env, DISPLAY: xvfb.display },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let driverErrors = '';
  driver.stderr?.on('data', (chunk: Buffer) => (driverErrors += String(chunk)));
  const base = `http://127.0.0.1:${driverPort}`;
  const stopAll = async () => {
    await stopped(driver);
    await stopped(xvfb.process);
  };

  const send = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const answer = (await response.json()) as { value: unknown };
    const value = answer.value as { error?: string; message?: string } | null;
    if (!response.ok || (value && typeof value === 'object' && 'error' in value && value.error)) {
      throw new WebDriverError(value?.error ?? String(response.status), value?.message ?? '');
    }
    return answer.value;
  };

  // The driver answers /status once it listens: poll it, as startServer polls a server.
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited:\n${driverErrors}`);
      const ready = await send('GET', '/status').then(
        (value) => (value as { ready?: boolean }).ready === true,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`WebKitWebDriver did not answer:\n${driverErrors}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await stopAll();
    throw error;
  }

  let session: { sessionId: string; capabilities: { browserName: string; browserVersion: string } };
  try {
    session = (await send('POST', '/session', {
      capabilities: { alwaysMatch: { 'webkitgtk:browserOptions': { args: ['--automation'] } } },
    })) as typeof session;
  } catch (error) {
    await stopAll();
    throw error;
  }
  const path = `/session/${session.sessionId}`;

  // One window is current at a time in WebDriver: each tab's command switches to its window first, and
  // commands are sent one after the other.
  let current = ((await send('GET', `${path}/window`)) as string) ?? '';
  let queue: Promise<unknown> = Promise.resolve();
  const inWindow = <T>(handle: string, command: () => Promise<T>): Promise<T> => {
    const run = queue.then(async () => {
      if (current !== handle) {
        await send('POST', `${path}/window`, { handle });
        current = handle;
      }
      return command();
    });
    queue = run.catch(() => undefined);
    return run;
  };
  const element = async (target: Target): Promise<string> => {
    const found = (await send('POST', `${path}/execute/sync`, {
      script: `return (${String(locate)}).apply(null, arguments);`,
      args: [{ target }],
    })) as Record<string, string> | null;
    // A web element reference is an object with one key (the spec's fixed "web element identifier").
    const id = found && Object.values(found)[0];
    if (!id) throw new Error(`Nothing matches ${JSON.stringify(target)}`);
    return id;
  };

  const tab = (handle: string): Tab => ({
    goto: (url) => inWindow(handle, async () => void (await send('POST', `${path}/url`, { url }))),
    reload: () => inWindow(handle, async () => void (await send('POST', `${path}/refresh`, {}))),
    evaluate: <A, R>(fn: (arg: A) => R | Promise<R>, arg: A) =>
      inWindow(handle, async () => {
        // Execute Async Script: the last argument is the callback; an error comes back as a value.
        const outcome = (await send('POST', `${path}/execute/async`, {
          script: `const done = arguments[arguments.length - 1];
Promise.resolve().then(() => (${String(fn)})(arguments[0])).then(
  (value) => done({ value: value === undefined ? null : value }),
  (error) => done({ error: String((error && error.stack) || error) }),
);`,
          args: [arg],
        })) as { value?: unknown; error?: string };
        if (outcome.error !== undefined) throw new Error(outcome.error);
        return outcome.value;
      }) as Promise<Awaited<R>>,
    click: (target) =>
      inWindow(
        handle,
        async () => void (await send('POST', `${path}/element/${await element(target)}/click`, {})),
      ),
    fill: (target, text) =>
      inWindow(handle, async () => {
        await send('POST', `${path}/element/${await element(target)}/value`, { text });
      }),
    close: () =>
      inWindow(handle, async () => {
        await send('DELETE', `${path}/window`);
        current = '';
      }),
  });

  let first: string | null = current;
  return {
    name: `${session.capabilities.browserName} ${session.capabilities.browserVersion} (WebKitGTK, WebKitWebDriver)`,
    async newTab() {
      // The session opens with one window: the first tab is that one, later ones are new windows.
      if (first) {
        const handle = first;
        first = null;
        return tab(handle);
      }
      const { handle } = (await send('POST', `${path}/window/new`, { type: 'tab' })) as { handle: string };
      return tab(handle);
    },
    async close() {
      await send('DELETE', path).catch(() => undefined);
      await stopAll();
    },
  };
}
