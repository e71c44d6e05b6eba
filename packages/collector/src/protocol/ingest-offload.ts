import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import type { Client } from './client.js';
import { createIngest, type Ingest, type IngestOptions, type IngestResult } from './ingest.js';

export interface IngestRequest {
  id: number;
  body: Uint8Array;
  contentType: string | undefined;
  client: Client | undefined;
}
export type IngestReply = { id: number; result: IngestResult } | { id: number; error: string };

export interface IngestRunner {
  ingest: Ingest;
  close(): Promise<void>;
}

/**
 * Runs `ingest` in a worker thread, so parsing and validating (about half the CPU an item costs) use
 * the second core while the event loop reads requests and feeds the store. Falls back to the calling
 * thread when the compiled worker is not there (running from TypeScript sources, as under vitest) or
 * when the worker dies; bodies stay on this side until answered, so nothing is lost in a fallback.
 */
export function startIngest(options: IngestOptions, useWorker: boolean, log: Logger): IngestRunner {
  const inline = createIngest(options);
  const file = new URL('./ingest-worker.js', import.meta.url);
  if (!useWorker || !existsSync(fileURLToPath(file)))
    return { ingest: inline, close: () => Promise.resolve() };

  let worker: Worker | undefined = new Worker(file, { workerData: options });
  worker.unref(); // The server decides when the process ends, not this helper.
  const pending = new Map<
    number,
    { request: IngestRequest; resolve: (r: IngestResult) => void; reject: (e: Error) => void }
  >();
  let nextId = 0;

  /** Stops using the worker and does what it still owed on this thread. */
  const takeOver = () => {
    worker = undefined;
    for (const { request, resolve, reject } of pending.values()) {
      inline(request.body, request.contentType, request.client).then(resolve, reject);
    }
    pending.clear();
  };
  const fallBack = (reason: string) => {
    if (!worker) return;
    log('error', `ingest worker stopped (${reason}); validating on the main thread from now on`);
    takeOver();
  };
  worker.on('message', (reply: IngestReply) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if ('result' in reply) waiting.resolve(reply.result);
    else waiting.reject(new Error(reply.error));
  });
  worker.on('error', (error) => fallBack(String(error)));
  worker.on('exit', (code) => fallBack(`exit code ${code}`));

  return {
    ingest(body, contentType, client) {
      if (!worker) return inline(body, contentType, client);
      const request: IngestRequest = { id: nextId++, body, contentType, client };
      return new Promise<IngestResult>((resolve, reject) => {
        pending.set(request.id, { request, resolve, reject });
        worker?.postMessage(request);
      });
    },
    async close() {
      const w = worker;
      takeOver(); // A deliberate stop is not a failure to report.
      if (w) await w.terminate();
    },
  };
}
