import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

/**
 * A real redis-server (Debian's) for a test, on a free loopback port, keeping nothing on disk. Missing
 * redis-server fails the test with how to install it (scripts/ensure-test-tools.mjs redis does, with apt-get):
 * the shared state is tested against Redis itself, never skipped.
 */
export async function startRedisServer(): Promise<{
  url: string;
  port: number;
  /** Stops it (SIGKILL: as a crash or a cut network looks to clients). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Starts it again if it is not running (after a test that failed while it was away). */
  ensureRunning(): Promise<void>;
  close(): Promise<void>;
}> {
  const port = await freePort();
  let child = await launch(port);
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: async () => {
      await kill();
      child = await launch(port);
    },
    ensureRunning: async () => {
      if (child.exitCode !== null || child.signalCode !== null) child = await launch(port);
    },
    close: kill,
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    process.env.REDIS_SERVER_PATH || 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error(
              'redis-server is missing: the shared-state tests need it. Install it with ' +
                '`node scripts/ensure-test-tools.mjs redis` (apt-get, as root) or `sudo apt-get install redis-server`.',
            )
          : error,
      ),
    );
    child.on('exit', (code) =>
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)),
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += String(chunk);
      if (output.includes('Ready to accept connections')) resolve(child);
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += String(chunk)));
  });
}
