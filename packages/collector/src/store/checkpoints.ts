import { statSync } from 'node:fs';

export interface IdleCheckpointPolicy {
  /** Time without writes before a checkpoint, in ms. */
  idleMs: number;
  /** The WAL size worth a checkpoint, in bytes. */
  minWalBytes: number;
  /** How often to look, in ms. */
  everyMs: number;
}

export const DEFAULT_IDLE_CHECKPOINT: IdleCheckpointPolicy = {
  idleMs: 2000,
  minWalBytes: 16 * 1024 * 1024,
  everyMs: 5000,
};

/**
 * Checkpoints DuckDB in quiet moments. Its own threshold (256 MB, store.ts) keeps checkpoints rare under
 * load, but one that does come stalls loads for about a second and a crash leaves that much WAL to
 * replay. So: after `idleMs` without writes (`lastWrite`), once the WAL of `file` is worth it. A failure
 * (an export holds a transaction) is simply tried again at the next look; DuckDB's own threshold remains
 * the backstop. Returns what stops it.
 */
export function startIdleCheckpoints(
  file: string,
  policy: IdleCheckpointPolicy,
  lastWrite: () => number,
  checkpoint: () => Promise<unknown>,
): () => void {
  const timer = setInterval(() => {
    const walBytes = statSync(`${file}.wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (Date.now() - lastWrite() < policy.idleMs || walBytes < Math.max(1, policy.minWalBytes)) return;
    checkpoint().catch(() => undefined);
  }, policy.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
