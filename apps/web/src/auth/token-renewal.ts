import { ErrorTimeout } from 'oidc-client-ts';

/** What renewal needs to know of a session's tokens. */
export interface RenewableTokens {
  refresh_token?: string | undefined;
  /** Epoch seconds. */
  expires_at?: number | undefined;
}

/** The session renewal works for: it owns the tokens, renewal only decides when and who renews. */
export interface RenewalHost<T extends RenewableTokens> {
  /** The tokens of the current session, or null when signed out. */
  current(): T | null;
  /** Spends the refresh token and returns the renewed, validated tokens (they are not stored yet). */
  refresh(tokens: T): Promise<T>;
  /** Keeps renewed tokens (and tells the other tabs). */
  renewed(tokens: T): void;
  /** Renewal failed for good: the session ends (here and in the other tabs). */
  failed(error: unknown): void;
  /** Asks the leader tab to renew (over the tab channel). */
  askLeader(): void;
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The leader election it relies on (TabSync's). */
export interface LeaderElection {
  readonly leader: boolean;
  electLeader(onLeader: () => void): void;
}

export interface RenewalTimings {
  /** Renew this long before the access token expires (or at half its remaining life, if shorter). */
  marginSeconds: number;
  /** A renewal that failed for want of a network is tried again after this long. */
  retryMs: number;
  /** How long a follower tab waits for the leader's renewed session before it goes on without. */
  followerWaitMs: number;
  /** A token with this little life left is renewed before it is handed out. */
  minimumLifeSeconds: number;
}

const defaultTimings: RenewalTimings = {
  marginSeconds: 60,
  retryMs: 10_000,
  followerWaitMs: 10_000,
  minimumLifeSeconds: 5,
};

/**
 * Renews the session's tokens with its refresh token, in one tab only: the leader (docs/decisions/0006),
 * so a rotated refresh token is never spent twice. Followers ask the leader and wait for the session it
 * broadcasts. A renewal that fails for want of a network (a timeout, a fetch that could not be made) is
 * tried again later while the tokens are still valid; any other failure ends the session.
 */
export class TokenRenewal<T extends RenewableTokens> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private readonly waiting = new Set<() => void>();
  private readonly timings: RenewalTimings;
  /** Epoch seconds when this tab plans to renew, or null when the tokens cannot be renewed. */
  renewsAt: number | null = null;

  constructor(
    private readonly host: RenewalHost<T>,
    private readonly election: LeaderElection,
    timings: Partial<RenewalTimings> = {},
  ) {
    this.timings = { ...defaultTimings, ...timings };
  }

  /** Stands for leader; the tab that wins plans the renewal of whatever session it holds then. */
  start(): void {
    this.election.electLeader(() => this.schedule());
  }

  /** Plans the next renewal for the current tokens (every tab computes it; only the leader acts). */
  schedule(): void {
    clearTimeout(this.timer);
    const tokens = this.host.current();
    if (!tokens?.refresh_token || tokens.expires_at === undefined) {
      this.renewsAt = null;
      return;
    }
    const now = this.host.now() / 1000;
    const remaining = tokens.expires_at - now;
    const at = tokens.expires_at - Math.min(this.timings.marginSeconds, Math.max(remaining / 2, 0));
    this.renewsAt = Math.round(at);
    if (this.election.leader) {
      this.timer = setTimeout(() => void this.renew(), Math.max(0, (at - now) * 1000));
    }
  }

  /** The session changed (stored, adopted from another tab, or ended): followers waiting go on. */
  sessionChanged(): void {
    for (const resume of this.waiting) resume();
    this.waiting.clear();
  }

  /** Signed out: nothing more to renew. */
  stop(): void {
    clearTimeout(this.timer);
    this.renewsAt = null;
  }

  /** Before tokens are handed out: renews them (or has the leader renew them) when they are about to expire. */
  async ensureFresh(): Promise<void> {
    const tokens = this.host.current();
    if (!tokens) return;
    const life = (tokens.expires_at ?? 0) - this.host.now() / 1000;
    if (life > this.timings.minimumLifeSeconds) return;
    if (this.election.leader) await this.renew();
    else await this.askLeaderToRenew();
  }

  /** Another tab asked for a renewal: only the leader answers. */
  onRenewRequest(): void {
    if (this.election.leader) void this.renew();
  }

  /** One renewal at a time; callers during a renewal share it. */
  renew(): Promise<void> {
    this.running ??= this.renewNow().finally(() => (this.running = undefined));
    return this.running;
  }

  private async renewNow(): Promise<void> {
    const tokens = this.host.current();
    if (!tokens?.refresh_token) return;
    try {
      const renewed = await this.host.refresh(tokens);
      if (this.host.current() !== tokens) return; // signed out or replaced meanwhile
      this.host.renewed(renewed);
    } catch (error) {
      if (this.host.current() !== tokens) return;
      const stillValid = (tokens.expires_at ?? 0) > this.host.now() / 1000;
      if (isTransient(error) && stillValid) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.renew(), this.timings.retryMs);
        return;
      }
      this.host.failed(error);
    }
  }

  /** A follower never spends the refresh token itself: it asks the leader and waits for the result. */
  private askLeaderToRenew(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.timings.followerWaitMs);
      this.waiting.add(done);
      this.host.askLeader();
    });
  }
}

/** A failure for want of a network: oidc-client-ts's timeout, or a fetch that could not be made. */
export function isTransient(error: unknown): boolean {
  return error instanceof ErrorTimeout || error instanceof TypeError;
}
