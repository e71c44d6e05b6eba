// The image's size and start time (Containerfile, docs/decisions/0107): built with Podman (on the locally
// made base unless BENCH_IMAGE_BASE=official), its size as stored and as pulled (gzip, as registries
// send layers), and the seconds from `podman run` to a 200 from /readyz, the median of three starts, each
// on a fresh volume with a read-only root. The bare Node.js base is started the same way as the baseline.
// Skipped, with a line that says why, where Podman cannot be had. Knob: BENCH_PORT_BASE (4300; +30).
import { spawn } from 'node:child_process';
import { buildImage, podman, runHardened } from '../scripts/container-image.mjs';
import { lacking } from '../scripts/test-tools.mjs';
import { median } from './first-paint-and-sign-in.mjs';

const PORT = Number(process.env.BENCH_PORT_BASE ?? 4300) + 30;
const TAG = 'localhost/gatehouse:bench';
const STARTS = 3;

/** Bytes of `podman save` through gzip: about what a registry sends for the image's layers. */
function pulledBytes(tag) {
  return new Promise((resolve, reject) => {
    const save = spawn('podman', ['save', '--format', 'docker-archive', tag], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const gzip = spawn('gzip', ['-6'], { stdio: ['pipe', 'pipe', 'ignore'] });
    save.stdout.pipe(gzip.stdin);
    let bytes = 0;
    gzip.stdout.on('data', (chunk) => (bytes += chunk.length));
    gzip.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`gzip exited ${code}`))));
  });
}

/** Seconds from `podman run` until `url` answers 200 (`argv`: what the container runs). */
async function startSeconds(image, url, argv = []) {
  const name = `gatehouse-bench-${PORT}`;
  const volume = `${name}-data`;
  const remove = () => {
    for (const args of [
      ['rm', '--force', '--time', '0', name],
      ['volume', 'rm', '--force', volume],
    ]) {
      try {
        podman(args);
      } catch {
        // Not there.
      }
    }
  };
  remove();
  const started = performance.now();
  runHardened({
    name,
    volume,
    image,
    env: {
      PORT: String(PORT),
      GATEHOUSE_SINGLE_REPLICA: '1',
      OIDC_AUTHORITY: 'http://localhost:9',
      OIDC_CLIENT_ID: 'gatehouse',
    },
    argv,
  });
  try {
    for (;;) {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
      if (res?.status === 200) return (performance.now() - started) / 1000;
      if (performance.now() - started > 60_000) throw new Error(`${image} did not answer ${url} within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    remove();
  }
}

export async function run() {
  console.log('\nThe container image');
  const missing = lacking('podman');
  if (missing) {
    console.log(`skipped: ${missing}`);
    return { skipped: missing };
  }
  const image = buildImage({
    localBase: process.env.BENCH_IMAGE_BASE !== 'official',
    tag: TAG,
    log: () => {},
  });
  const serve = `require('node:http').createServer((q, s) => s.end()).listen(${PORT})`;
  const nodeStarts = [];
  const starts = [];
  for (let i = 0; i < STARTS; i++) {
    nodeStarts.push(await startSeconds(TAG, `http://127.0.0.1:${PORT}/`, ['node', '-e', serve]));
    starts.push(await startSeconds(TAG, `http://127.0.0.1:${PORT}/readyz`));
  }
  const results = {
    sizeMB: Math.round(image.bytes / 1e6),
    pulledMB: Math.round((await pulledBytes(TAG)) / 1e6),
    buildSeconds: Number(image.seconds.toFixed(1)),
    startSeconds: Number(median(starts).toFixed(2)),
    bareNodeStartSeconds: Number(median(nodeStarts).toFixed(2)),
  };
  console.table({ [TAG]: results });
  console.log(
    `ready ${results.startSeconds} s after podman run (median of ${STARTS}), ` +
      `${(results.startSeconds / results.bareNodeStartSeconds).toFixed(1)}× a bare node http server in the same image; ` +
      `${results.sizeMB} MB stored, ${results.pulledMB} MB pulled (gzip).`,
  );
  return results;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/bench\//, '/bench/'))) {
  await run();
}
