// What the end-to-end tests need from the machine beyond npm packages, where each is found, and how to
// get it. Used by scripts/ensure-test-tools.mjs (before `playwright test`), by playwright.config.ts
// (which Chromium) and by the specs that need a tool (to skip, or fail in CI, with one clear line).
//
// On Debian, as root, the missing tools are installed with apt-get; anywhere else the tests say what
// is missing and the command that brings it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium } from '@playwright/test';

export const isDebian = () => process.platform === 'linux' && existsSync('/etc/debian_version');
export const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
/** CI=true (as .ci/run has it): a tool that cannot be had fails the run instead of skipping tests. */
export const inCi = () => /^(1|true)$/i.test(process.env.CI ?? '');

/** An executable on PATH, or undefined. */
function onPath(name) {
  const extensions = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const folder of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const extension of extensions) {
      const candidate = join(folder, name + extension);
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

const firstExisting = (paths) => paths.find((path) => path && existsSync(path));

/**
 * Chromium for the tests: CHROMIUM_PATH, else Debian's headless shell, else Debian's full browser, else the
 * build Playwright manages (`npx playwright install chromium`), else none. The headless shell is Chromium
 * without its windowing layer, what Playwright itself runs headless (docs/decisions/0133): the end-to-end
 * stage's Chromium specs take a fifth less time in it. Debian's full browser still serves, and says
 * (`prefer`) which package would be faster. The benchmarks measure the full browser, which users run.
 */
export function findChromium() {
  if (process.env.CHROMIUM_PATH) {
    return existsSync(process.env.CHROMIUM_PATH)
      ? { path: process.env.CHROMIUM_PATH, source: 'CHROMIUM_PATH' }
      : {
          missing: 'Chromium',
          fix: `CHROMIUM_PATH is ${process.env.CHROMIUM_PATH}, where there is no file: correct it`,
        };
  }
  if (existsSync('/usr/bin/chromium-headless-shell'))
    return { path: '/usr/bin/chromium-headless-shell', source: 'Debian' };
  if (existsSync('/usr/bin/chromium'))
    return { path: '/usr/bin/chromium', source: 'Debian', prefer: 'chromium-headless-shell' };
  const managed = chromium.executablePath();
  if (managed && existsSync(managed)) return { path: managed, source: 'Playwright' };
  return { missing: 'Chromium' };
}

/** Firefox with WebDriver BiDi (128 ESR or later): FIREFOX_PATH, else the usual places. */
export function findFirefox() {
  if (process.env.FIREFOX_PATH) {
    return existsSync(process.env.FIREFOX_PATH)
      ? { path: process.env.FIREFOX_PATH }
      : {
          missing: 'Firefox',
          fix: `FIREFOX_PATH is ${process.env.FIREFOX_PATH}, where there is no file: correct it`,
        };
  }
  const path = firstExisting([
    '/usr/bin/firefox-esr',
    '/usr/bin/firefox',
    '/Applications/Firefox.app/Contents/MacOS/firefox',
    process.env.ProgramFiles && join(process.env.ProgramFiles, 'Mozilla Firefox', 'firefox.exe'),
  ]);
  return path ? { path } : { missing: 'Firefox' };
}

/** WebKitGTK's WebDriver and a virtual X display for its MiniBrowser (Linux only). */
export function findWebKit() {
  if (process.platform !== 'linux') {
    return { missing: 'WebKitGTK', fix: 'WebKitWebDriver runs on Linux only' };
  }
  const driver = onPath('WebKitWebDriver');
  const xvfb = onPath('Xvfb');
  if (driver && xvfb) return { driver, xvfb };
  return { missing: [!driver && 'WebKitWebDriver', !xvfb && 'Xvfb'].filter(Boolean).join(' and ') };
}

/** A program on PATH or in the given Debian place (sbin is not on every user's PATH). */
const program = (name, debianPath) => () => {
  const path = firstExisting([debianPath]) ?? onPath(name);
  return path ? { path } : { missing: name };
};

/**
 * Podman with what the container specs ask of it: runc (crun refuses some kernels' cgroups),
 * docker-compose (run against Podman's Docker-compatible socket), and debootstrap for the locally made
 * base image.
 */
export function findPodman() {
  if (process.platform !== 'linux')
    return { missing: 'Podman', fix: 'the container specs run on Linux only' };
  const parts = [
    ['podman', '/usr/bin/podman'],
    ['runc', '/usr/sbin/runc'],
    ['docker-compose', '/usr/bin/docker-compose'],
    ['debootstrap', '/usr/sbin/debootstrap'],
  ];
  const absent = parts
    .filter(([name, path]) => !(firstExisting([path]) ?? onPath(name)))
    .map(([name]) => name);
  return absent.length === 0
    ? { path: firstExisting(['/usr/bin/podman']) ?? onPath('podman') }
    : { missing: absent.join(', ') };
}

/** Django OAuth Toolkit for Debian's python3 (the independent-provider spec). */
export function findDjangoOAuthToolkit() {
  if (!isDebian())
    return { missing: 'Django OAuth Toolkit', fix: 'it is taken from Debian, on Debian or Ubuntu only' };
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import oauth2_provider, django'], { stdio: 'ignore' });
    return { path: '/usr/bin/python3' };
  } catch {
    return { missing: 'Django OAuth Toolkit' };
  }
}

/**
 * Every tool: what finds it, the Debian packages that bring it, and the sentence for a machine where
 * they cannot be installed. `required`: the suite cannot run without it (anything else skips the tests
 * that need it, except in CI).
 */
export const TOOLS = {
  chromium: {
    what: 'Chromium (every browser test)',
    required: true,
    find: findChromium,
    debian: ['chromium-headless-shell', 'fonts-dejavu-core'],
    otherwise: 'npx playwright install chromium (or set CHROMIUM_PATH)',
  },
  firefox: {
    what: 'Firefox (the journey in Firefox)',
    find: findFirefox,
    debian: ['firefox-esr'],
    otherwise: 'install Firefox (128 ESR or later) and set FIREFOX_PATH if it is not in the usual place',
  },
  webkit: {
    what: 'WebKitGTK WebDriver and Xvfb (the journey in WebKit)',
    find: findWebKit,
    debian: ['webkit2gtk-driver', 'xvfb'],
    otherwise: 'install WebKitGTK’s WebKitWebDriver and Xvfb from your distribution',
  },
  redis: {
    what: 'redis-server (the shared-state unit tests, the replicas spec)',
    find: program('redis-server', '/usr/bin/redis-server'),
    debian: ['redis-server'],
    otherwise: 'install Redis 7 from your package manager (brew install redis, or a Redis for Windows build)',
  },
  haproxy: {
    what: 'HAProxy (the load balancer of the replicas spec, scripts/cluster.mjs)',
    find: program('haproxy', '/usr/sbin/haproxy'),
    debian: ['haproxy'],
    otherwise: 'install HAProxy 2.6 or later from your package manager',
  },
  podman: {
    what: 'Podman, runc, docker-compose and debootstrap (the container image and compose specs)',
    find: findPodman,
    debian: ['podman', 'runc', 'debootstrap', 'docker-compose', 'uidmap', 'slirp4netns', 'fuse-overlayfs'],
    otherwise: 'install Podman 4.3 or later, runc and debootstrap (the image base is made locally)',
  },
  'django-oauth-toolkit': {
    what: 'Django OAuth Toolkit (the independent-provider spec)',
    find: findDjangoOAuthToolkit,
    debian: ['python3-django-oauth-toolkit'],
    otherwise: 'it is taken from Debian, on Debian or Ubuntu only',
  },
};

/** Null when `name` is here, else the one line that says what is missing and how to get it. */
export function lacking(name) {
  const tool = TOOLS[name];
  const found = tool.find();
  if (!found.missing) return null;
  const how = found.fix ?? (isDebian() ? `sudo apt-get install ${tool.debian.join(' ')}` : tool.otherwise);
  return `${tool.what}: ${found.missing} is missing; ${how}.`;
}

/** Missing, and apt-get would bring it (not a wrong *_PATH, not a tool this system cannot have). */
export const installable = (name) => {
  const found = TOOLS[name].find();
  return Boolean(found.missing) && !found.fix;
};

/** Installs the Debian packages of the `names` that are missing, in one apt-get run (as root, on Debian). */
export function installWithApt(names) {
  const packages = names.flatMap((name) => TOOLS[name].debian);
  if (packages.length === 0) return;
  const run = (args) =>
    execFileSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  const known = (name) => {
    try {
      return /^Version:/m.test(
        execFileSync('apt-cache', ['show', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
      );
    } catch {
      return false;
    }
  };
  console.info(`Installing Debian packages for the tests: ${packages.join(' ')}`);
  if (!packages.every(known)) run(['update', '-qq']);
  run(['install', '-y', '-qq', '--no-install-recommends', ...packages]);
}
