import { onPageHidden, type PageTarget } from './page-hidden';

/** How long a change of the SDK's buffers may wait in memory before it is written to sessionStorage. */
export const WRITE_BEHIND_MS = 1_000;

/**
 * The SDK's `bufferOverride` (its IStorageBuffer, not exported by name): where its send buffers are kept
 * across pages. `getItem` answers '' for nothing kept, which the SDK reads as an empty buffer.
 */
export interface BufferStorage {
  getItem: (logger: unknown, name: string) => string;
  setItem: (logger: unknown, name: string, data: string) => boolean;
  /** Writes every change still waiting (the page is being hidden or left). */
  flush: () => void;
}

/**
 * The SDK's send buffers kept in sessionStorage, written at most once per WRITE_BEHIND_MS rather than at
 * every item: the SDK rewrites its whole buffer for each item it queues, on the way from a tracked call's
 * answer to its caller, and a sessionStorage write there cost a tracked fetch most of the time telemetry
 * added to it. What waits is written as soon as the page is hidden or left (before the SDK's own
 * listeners send what it holds), and every change after that at once, so unsent items still survive a
 * reload or a navigation; a crashed tab loses at most the last second's changes, as it loses the SDK's
 * memory.
 */
export function writeBehindStorage(
  storage: Pick<Storage, 'getItem' | 'setItem'>,
  target: PageTarget,
  delayMs = WRITE_BEHIND_MS,
): BufferStorage {
  const waiting = new Map<string, string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The page is hidden or being left: every write goes through at once. */
  let leaving = false;
  const write = (name: string, data: string) => {
    try {
      storage.setItem(name, data);
      return true;
    } catch {
      // Full or refused: the SDK keeps its items in memory, as without storage.
      return false;
    }
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    for (const [name, data] of waiting) write(name, data);
    waiting.clear();
  };
  onPageHidden(
    target,
    () => {
      leaving = true;
      flush();
    },
    () => (leaving = false),
  );
  return {
    getItem: (_logger, name) => waiting.get(name) ?? storage.getItem(name) ?? '',
    setItem: (_logger, name, data) => {
      if (leaving) {
        waiting.delete(name);
        return write(name, data);
      }
      waiting.set(name, data);
      timer ??= setTimeout(flush, delayMs);
      return true;
    },
    flush,
  };
}
