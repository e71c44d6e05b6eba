import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** Bytes of the files under `dir` (the journal folder included); missing files count as nothing. */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(file);
    else if (entry.isFile())
      total += await stat(file).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

/**
 * A disk quota on the store's folder. The folder is measured at start and every `intervalMs` (a few
 * stat calls, off the request path); between measurements what is accepted is added as it is written,
 * so a burst cannot overshoot the quota by more than one interval's rate-limited items.
 */
export class StoreQuota {
  private used = 0;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly dir: string,
    readonly maxBytes: number,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.measure(), intervalMs);
    this.timer.unref();
  }

  static async start(dir: string, maxBytes: number, intervalMs: number): Promise<StoreQuota> {
    const quota = new StoreQuota(dir, maxBytes, intervalMs);
    await quota.measure();
    return quota;
  }

  /** Whether the store has reached its quota: nothing more is accepted until it is below again. */
  get full(): boolean {
    return this.used >= this.maxBytes;
  }

  /** When the store reached its quota (ms since the epoch), while it has; else undefined. */
  get fullSince(): number | undefined {
    return this.since;
  }

  private since: number | undefined;

  /** Notes when the quota is reached, and forgets it once the store is below again. */
  private note(): void {
    if (!this.full) this.since = undefined;
    else this.since ??= Date.now();
  }

  get usedBytes(): number {
    return this.used;
  }

  /** Counts bytes just written, until the next measurement replaces the estimate. */
  add(bytes: number): void {
    this.used += bytes;
    this.note();
  }

  async measure(): Promise<void> {
    this.used = await directoryBytes(this.dir);
    this.note();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
