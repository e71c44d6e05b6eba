#!/usr/bin/env node
// Several Gatehouse replicas on loopback, as an operator would run them (docs/replicas.md): Redis, the
// bundled development provider (started once, for all replicas), three replicas of the built server
// (the first holds the telemetry store, the other two forward to it) and HAProxy in front
// (deploy/haproxy.cfg). Installs redis-server and haproxy with apt-get when missing (as root), through
// scripts/test-tools.mjs.
//
//   node scripts/cluster.mjs start   starts everything, prints the address, and returns
//   node scripts/cluster.mjs stop    stops what `start` started (SIGTERM, then waits for each)
//
// Ports: E2E_PORT_BASE (default 4100) + 60..66; the state and logs are in $TMPDIR/gatehouse-cluster-<base>.
// The e2e spec (e2e/replicas.spec.ts) imports startCluster() and drives the replicas itself.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installable, installWithApt, isDebian, isRoot, lacking } from './test-tools.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const REPLICAS = 3;
/** The file in the layout's directory that names the running processes. */
const RECORD = 'cluster.json';
/** The order to stop them in: the balancer, the replicas (forwarding ones before the store holder), then what they use. */
const STOP_ORDER = [
  'haproxy',
  ...Array.from({ length: REPLICAS }, (_, i) => `gatehouse-${REPLICAS - i}`),
  'dev-idp',
  'redis',
];

/** Installs redis-server and haproxy when missing (scripts/test-tools.mjs), else says how to. */
export function ensurePackages() {
  const names = ['redis', 'haproxy'];
  let missing = names.filter((name) => lacking(name));
  if (missing.length > 0 && isDebian() && isRoot()) {
    installWithApt(missing.filter(installable));
    missing = names.filter((name) => lacking(name));
  }
  if (missing.length > 0) throw new Error(`The cluster cannot start:\n${missing.map(lacking).join('\n')}`);
}

/** The ports and addresses of a cluster on `base` (E2E_PORT_BASE). */
export function clusterLayout(base = Number(process.env.E2E_PORT_BASE ?? 4100)) {
  const lbPort = base + 60;
  const replicaPorts = Array.from({ length: REPLICAS }, (_, i) => base + 63 + i);
  return {
    base,
    origin: `http://localhost:${lbPort}`,
    lbPort,
    idpPort: base + 61,
    idp: `http://localhost:${base + 61}`,
    redisPort: base + 62,
    replicaPorts,
    dir: join(tmpdir(), `gatehouse-cluster-${base}`),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` (every 100 ms) until it returns true, or throws after `timeoutMs` naming `what`. */
async function until(what, check, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

const answers =
  (url, status = 200) =>
  async () =>
    (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status === status;

/** Whether Redis answers PING on `port`. */
function redisPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(1_000, () => socket.destroy());
    socket.on('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.end();
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
  });
}

/**
 * Starts Redis, the provider, the replicas and HAProxy, each waited for. `env`: settings added to every
 * replica's. `detached`: the processes outlive this one (the CLI's `start`). `publicOrigin`: where the
 * browsers reach the cluster when it is not HAProxy itself (a proxy in front of it, in tests). `bff`: the
 * replicas run in BFF mode (OIDC_MODE=bff), one confidential client of the provider, sessions in Redis.
 */
export async function startCluster({
  base,
  env = {},
  detached = false,
  log = () => {},
  publicOrigin,
  bff = false,
} = {}) {
  ensurePackages();
  const balancer = clusterLayout(base);
  const layout = { ...balancer, origin: publicOrigin ?? balancer.origin };
  // A run that died before its teardown (a killed test worker, a lost terminal) leaves its processes on
  // these ports: stop them first, by the pids it recorded.
  await stopRecorded(layout, log);
  rmSync(layout.dir, { recursive: true, force: true });
  mkdirSync(layout.dir, { recursive: true });
  const secrets = {
    collectorToken: randomBytes(32).toString('base64url'),
    userIdSecret: randomBytes(32).toString('base64url'),
    // BFF mode: the replicas are one confidential client of the provider, with this secret.
    clientSecret: randomBytes(32).toString('base64url'),
  };
  const children = new Map();
  /** Each process's start time, taken once as it starts (record()). */
  const started = new Map();
  // Attached: the processes end with this one, however it ends short of SIGKILL (a failed teardown too).
  const killAll = () => children.forEach((child) => child.exitCode === null && child.kill('SIGKILL'));
  if (!detached) process.once('exit', killAll);

  function run(name, command, args, childEnv = {}) {
    const out = openSync(join(layout.dir, `${name}.log`), 'a');
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...childEnv },
      stdio: ['ignore', out, out],
      detached,
    });
    if (detached) child.unref();
    children.set(name, child);
    started.set(name, startTime(child.pid));
    record();
    log(`${name}: pid ${child.pid}`);
    return child;
  }

  /** Writes each process's pid and start time, for `stop` and for the next start's clean-up. */
  function record() {
    const processes = Object.fromEntries(
      [...children].map(([name, child]) => [name, { pid: child.pid, started: started.get(name) }]),
    );
    writeFileSync(join(layout.dir, RECORD), JSON.stringify({ processes }, null, 2));
  }

  const replicaEnv = (i) => ({
    NODE_ENV: 'production',
    PORT: String(layout.replicaPorts[i]),
    PUBLIC_ORIGIN: layout.origin,
    OIDC_AUTHORITY: layout.idp,
    OIDC_CLIENT_ID: 'gatehouse',
    OIDC_AUDIENCE: `${layout.origin}/api`,
    // Behind HAProxy (127.0.0.1): the client's address is the one it adds to X-Forwarded-For, believed
    // only from it; a client that reaches a replica directly is its own connection's address.
    TRUST_PROXY: '127.0.0.1',
    REDIS_URL: `redis://127.0.0.1:${layout.redisPort}`,
    TELEMETRY_USER_ID_SECRET: secrets.userIdSecret,
    COLLECTOR_TOKEN: secrets.collectorToken,
    // Readiness fails at once on SIGTERM; HAProxy needs two 500 ms checks to stop sending.
    SHUTDOWN_DELAY_SECONDS: '2',
    // The forwarding replicas hold telemetry while the store holder restarts (about 10 s on a busy
    // 2-core machine): the browsers see no failure, and nothing is answered before it is stored.
    COLLECTOR_WAIT_SECONDS: '20',
    GATEHOUSE_DATA_DIR: join(layout.dir, `replica-${i + 1}`),
    ...(i === 0 ? {} : { COLLECTOR_URL: `http://127.0.0.1:${layout.replicaPorts[0]}` }),
    ...(bff ? { OIDC_MODE: 'bff', OIDC_CLIENT_SECRET: secrets.clientSecret } : {}),
    ...env,
  });

  const replica = (i) => ({
    name: `gatehouse-${i + 1}`,
    port: layout.replicaPorts[i],
    origin: `http://127.0.0.1:${layout.replicaPorts[i]}`,
    role: i === 0 ? 'store holder' : 'forwarding',
  });

  /** Starts replica `i` and waits until it is ready. */
  async function startReplica(i) {
    const { name, origin } = replica(i);
    run(name, process.execPath, [join(root, 'apps/server/dist/main.js')], replicaEnv(i));
    await until(`${name} (${origin}/readyz)`, answers(`${origin}/readyz`));
  }

  /** Sends `signal` to replica `i` and resolves with its exit code (null when killed) once it is gone. */
  function stopReplica(i, signal = 'SIGTERM') {
    const child = children.get(replica(i).name);
    if (!child || child.exitCode !== null || child.signalCode !== null)
      return Promise.resolve(child?.exitCode ?? null);
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    return exited;
  }

  const stopAll = async () => {
    for (const name of STOP_ORDER) {
      const child = children.get(name);
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
    }
    process.off('exit', killAll);
  };

  try {
    run('redis', '/usr/bin/redis-server', [
      '--port',
      String(layout.redisPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      layout.dir,
    ]);
    run('dev-idp', process.execPath, [join(root, 'apps/dev-idp/dist/main.js')], {
      IDP_PORT: String(layout.idpPort),
      APP_ORIGIN: layout.origin,
      ...(bff ? { OIDC_CLIENT_SECRET: secrets.clientSecret } : {}),
    });
    await until('redis', () => redisPing(layout.redisPort));
    await until('dev-idp', answers(`${layout.idp}/.well-known/openid-configuration`));
    // The store holder first: the others check at start that they reach it.
    await startReplica(0);
    await Promise.all(Array.from({ length: REPLICAS - 1 }, (_, i) => startReplica(i + 1)));
    run('haproxy', '/usr/sbin/haproxy', ['-db', '-f', join(root, 'deploy/haproxy.cfg')], {
      GATEHOUSE_LB_BIND: `127.0.0.1:${layout.lbPort}`,
      ...Object.fromEntries(
        layout.replicaPorts.map((port, i) => [`GATEHOUSE_REPLICA_${i + 1}`, `127.0.0.1:${port}`]),
      ),
    });
    await until('haproxy', answers(`${balancer.origin}/healthz`));
  } catch (error) {
    await stopAll();
    throw error;
  }

  return {
    ...layout,
    ...secrets,
    replicas: Array.from({ length: REPLICAS }, (_, i) => replica(i)),
    pids: Object.fromEntries([...children].map(([name, child]) => [name, child.pid])),
    startReplica,
    stopReplica,
    stop: stopAll,
  };
}

/**
 * When process `pid` started (clock ticks since boot, from /proc: a pid with its start time names one
 * process, even once the pid is reused); `alive` where there is no /proc; undefined when it is gone.
 */
function startTime(pid) {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(pid, 0);
      return 'alive';
    } catch {
      return undefined;
    }
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19]; // a zombie has exited; field 22 is the start time
  } catch {
    return undefined;
  }
}

/** Stops what an earlier cluster on `base` left running (scripts/cluster.mjs's own record); true if any. */
export function stopLeftovers(base, log) {
  return stopRecorded(clusterLayout(base), log);
}

/**
 * Stops the processes recorded in the layout's directory (a detached `start`, or a run that died before
 * its teardown): SIGTERM, then SIGKILL after 15 s. A pid that now names another process is left alone.
 */
async function stopRecorded(layout, log = () => {}) {
  const file = join(layout.dir, RECORD);
  if (!existsSync(file)) return false;
  const { processes = {} } = JSON.parse(readFileSync(file, 'utf8'));
  for (const name of STOP_ORDER) {
    const { pid, started } = processes[name] ?? {};
    const runs = () => started !== undefined && startTime(pid) === started;
    if (!pid || !runs()) continue;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      continue; // gone in between
    }
    for (let waited = 0; runs(); waited += 100) {
      if (waited === 15_000) process.kill(pid, 'SIGKILL');
      await sleep(100);
    }
    log(`${name} (pid ${pid}) stopped.`);
  }
  rmSync(file);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  const layout = clusterLayout();
  if (command === 'start') {
    const cluster = await startCluster({ detached: true, log: console.info });
    console.info(`Gatehouse (3 replicas behind HAProxy) is at ${cluster.origin}; logs in ${layout.dir}.`);
    console.info('Sign in as admin/admin or alice/alice. Stop it with: node scripts/cluster.mjs stop');
    process.exit(0);
  } else if (command === 'stop') {
    if (!(await stopRecorded(layout, console.info))) console.info(`No cluster recorded in ${layout.dir}.`);
  } else {
    console.error('usage: node scripts/cluster.mjs start|stop');
    process.exit(2);
  }
}
