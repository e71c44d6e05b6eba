/** A product event as the facade queues it: plain data (no closure), so it can wait in storage. */
export interface QueuedEvent {
  name: string;
  properties: Record<string, string>;
  measurements: Record<string, number>;
}

const KEY = 'gatehouse.telemetry.unsent-events';

/**
 * Events waiting for the SDK, kept in this tab's session storage beside the facade's queue: a page that
 * leaves before its SDK runs (for the identity provider, right after a failed sign-in, say) takes its
 * queue with it, and the tab's next page sends what it held. An event goes from here once it is handed to
 * the SDK, whose own session-storage buffer keeps it from then on. At most `limit`, as the queue.
 */
export class UnsentEvents {
  /** Read at first use: the module also loads where there is no storage (the first render at build). */
  private kept: QueuedEvent[] | undefined;
  /** Those of them an earlier page of this tab left, until they are taken up. */
  private earlier: QueuedEvent[] = [];

  constructor(
    private readonly limit: number,
    private readonly storage: () => Storage = () => sessionStorage,
  ) {}

  /** What an earlier page of this tab left unsent, once: the caller queues them (they stay kept). */
  takeEarlier(): QueuedEvent[] {
    this.events();
    const earlier = this.earlier;
    this.earlier = [];
    return earlier;
  }

  keep(event: QueuedEvent): void {
    const events = this.events();
    if (events.length >= this.limit) return;
    events.push(event);
    this.write();
  }

  /** Handed to the SDK (or dropped with the queue). */
  sent(event: QueuedEvent): void {
    const events = this.events();
    const index = events.indexOf(event);
    if (index < 0) return;
    events.splice(index, 1);
    this.write();
  }

  forget(): void {
    this.kept = [];
    this.write();
  }

  private events(): QueuedEvent[] {
    if (!this.kept) {
      this.kept = this.read();
      this.earlier = [...this.kept];
    }
    return this.kept;
  }

  private read(): QueuedEvent[] {
    try {
      const stored: unknown = JSON.parse(this.storage().getItem(KEY) ?? '[]');
      return Array.isArray(stored) ? stored.filter(isQueuedEvent).slice(0, this.limit) : [];
    } catch {
      return [];
    }
  }

  private write(): void {
    try {
      const events = this.events();
      if (events.length === 0) this.storage().removeItem(KEY);
      else this.storage().setItem(KEY, JSON.stringify(events));
    } catch {
      // Storage full or unavailable: the events wait in memory only, as the rest of the queue.
    }
  }
}

function isQueuedEvent(value: unknown): value is QueuedEvent {
  if (typeof value !== 'object' || value === null) return false;
  const { name, properties, measurements } = value as Record<string, unknown>;
  return (
    typeof name === 'string' &&
    isRecordOf(properties, (entry) => typeof entry === 'string') &&
    isRecordOf(measurements, (entry) => typeof entry === 'number' && Number.isFinite(entry))
  );
}

function isRecordOf(value: unknown, valid: (entry: unknown) => boolean): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every(valid)
  );
}
