/** The ingest worker: splits and validates request bodies off the event loop that serves HTTP. */
import { parentPort, workerData } from 'node:worker_threads';
import { createIngest, type IngestOptions } from './ingest.js';
import type { IngestRequest, IngestReply } from './ingest-offload.js';

const ingest = createIngest(workerData as IngestOptions);
const port = parentPort;

port?.on('message', (request: IngestRequest) => {
  ingest(request.body, request.contentType, request.client).then(
    // The packed rows' bytes are handed over, not copied.
    (result) => port.postMessage({ id: request.id, result } satisfies IngestReply),
    (error: unknown) => port.postMessage({ id: request.id, error: String(error) } satisfies IngestReply),
  );
});
