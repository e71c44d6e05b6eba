/**
 * The memory request bodies take while they are read and inflated, counted as it is taken: a request's
 * share grows with each chunk received and each chunk inflated, and a growth that would pass the cap, or
 * its source's share of it, is refused then. One address cannot fill the cap for everyone.
 */
export class InFlightBudget {
  private total = 0;
  private readonly sources = new Map<string, number>();

  constructor(
    /** Bytes held at once across all requests; 0: no cap. */
    readonly cap: number,
    /** Bytes held at once by one source's requests; 0: no cap of its own. */
    readonly perSource: number,
  ) {}

  /** Bytes held now, across all requests. */
  get held(): number {
    return this.total;
  }

  /** Whether a new request of `source` would be refused before its first byte. */
  full(source: string): boolean {
    return (
      (this.cap > 0 && this.total >= this.cap) ||
      (this.perSource > 0 && (this.sources.get(source) ?? 0) >= this.perSource)
    );
  }

  /** A request's share, empty until charged; hand back with `release()`, which is safe to call twice. */
  open(source: string): InFlightTicket {
    let held = 0;
    let released = false;
    const change = (bytes: number) => {
      held += bytes;
      this.total += bytes;
      const ofSource = (this.sources.get(source) ?? 0) + bytes;
      if (ofSource > 0) this.sources.set(source, ofSource);
      else this.sources.delete(source);
    };
    return {
      charge: (bytes) => {
        if (released) return false;
        const ofSource = this.sources.get(source) ?? 0;
        // A request alone (of all, or of its source) is always let through, so a cap set below one
        // body's size slows a deployment down rather than refusing every body.
        const overCap = this.cap > 0 && this.total > held && this.total + bytes > this.cap;
        const overShare = this.perSource > 0 && ofSource > held && ofSource + bytes > this.perSource;
        if (overCap || overShare) return false;
        change(bytes);
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        change(-held);
      },
    };
  }
}

export interface InFlightTicket {
  /** Counts `bytes` more for this request; false (nothing counted) when that would pass a cap. */
  readonly charge: (bytes: number) => boolean;
  /** Gives back all this request holds; later charges are refused. Idempotent. */
  readonly release: () => void;
}
