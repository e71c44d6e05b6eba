// Request bodies exactly as the official Node.js SDKs send them, captured from the real SDKs posting to a
// local capture server: the 2.x SDK's gzip NDJSON batches (250 items, as its maxBatchSize default) and
// the 3.x SDK's (Azure Monitor exporter) JSON arrays over https. The bench then replays them.
import { fork } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { selfSignedCertificate } from '@gatehouse/collector/testing/tls';
import { availabilityProbe, sdk3ChildEnv } from '@gatehouse/collector/testing/sdk-telemetry';

const IKEY = '4a7e4005-6a7e-4b0e-8d5e-00000000beef';

/** A server that answers 200 to every POST and keeps the bodies and their headers. */
async function captureServer(tls) {
  const captured = [];
  const listener = (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const headers = { 'Content-Type': req.headers['content-type'] ?? 'application/json' };
      if (req.headers['content-encoding']) headers['Content-Encoding'] = req.headers['content-encoding'];
      captured.push({ body: Buffer.concat(chunks), headers });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"itemsReceived":0,"itemsAccepted":0,"errors":[]}');
    });
  };
  const server = tls ? https.createServer(tls, listener) : http.createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, captured, port: server.address().port };
}

/** `batches` bodies of 250 mixed items from applicationinsights 2.x. */
export async function nodeSdk2Bodies(batches = 8) {
  const { server, captured, port } = await captureServer();
  process.env.APPLICATION_INSIGHTS_NO_STATSBEAT = 'true';
  const sdk = (await import('applicationinsights')).default;
  const client = new sdk.TelemetryClient(
    `InstrumentationKey=${IKEY};IngestionEndpoint=http://127.0.0.1:${port}`,
  );
  // 250 items a batch, as the SDK's maxBatchSize default sends them; flushed by hand so each send is awaited.
  client.config.maxBatchSize = 1000;
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < 250; i++) {
      const n = b * 250 + i;
      if (i % 8 === 0)
        client.trackEvent({ name: 'signed-in', properties: { provider: 'dev-idp', n: String(n) } });
      else if (i % 8 === 1) client.trackException({ exception: new TypeError(`profile missing ${n}`) });
      else if (i % 8 === 2) client.trackAvailability(availabilityProbe);
      else if (i % 8 === 3)
        client.trackRequest({
          name: 'GET /api/me',
          url: '/api/me',
          duration: 12,
          resultCode: 200,
          success: true,
        });
      else if (i % 8 === 4)
        client.trackDependency({
          target: 'idp.example',
          name: 'POST /token',
          data: 'POST https://idp.example/token',
          duration: 40,
          resultCode: 200,
          success: true,
          dependencyTypeName: 'HTTP',
        });
      else client.trackTrace({ message: `request ${n} handled`, severity: n % 5 });
    }
    await new Promise((resolve) => client.flush({ callback: resolve }));
  }
  server.close();
  return captured;
}

/** Bodies of about `items` mixed log items from applicationinsights 3.x (its exporter), over https. */
export async function nodeSdk3Bodies(items = 2000) {
  const certificate = selfSignedCertificate();
  const tmp = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-sdk3-'));
  const { server, captured, port } = await captureServer({ cert: certificate.cert, key: certificate.key });
  try {
    const child = fork(
      new URL(import.meta.resolve('@gatehouse/collector/testing/sdk3-child.mjs')),
      [`InstrumentationKey=${IKEY};IngestionEndpoint=https://127.0.0.1:${port}/`],
      {
        env: sdk3ChildEnv(certificate.certFile, tmp),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: [],
      },
    );
    const next = () =>
      new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`the SDK's process exited (${code})`)));
      });
    await next();
    child.send({ track: 'mixed', count: items, availability: availabilityProbe });
    await next();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ exit: true });
    await exited;
  } finally {
    server.close();
    certificate.remove();
    rmSync(tmp, { recursive: true, force: true });
  }
  // Only the log exporter's batches (JSON arrays of items); metrics the SDK adds on its own are left out.
  return captured.filter(({ body }) => body.includes('"MessageData"'));
}
