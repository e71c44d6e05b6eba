import { ErrorTimeout } from 'oidc-client-ts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenRenewal, type RenewableTokens, type RenewalHost } from './token-renewal';

interface Tokens extends RenewableTokens {
  access_token: string;
}

const NOW = 1_800_000_000_000;

/** A session holding tokens that expire in `lifeSeconds`, renewed by a refresh the test controls. */
function setUp({ leader, lifeSeconds = 300 }: { leader: boolean; lifeSeconds?: number }) {
  let tokens: Tokens | null = {
    access_token: 'at-1',
    refresh_token: 'rt-1',
    expires_at: NOW / 1000 + lifeSeconds,
  };
  const host = {
    current: () => tokens,
    refresh: vi.fn<RenewalHost<Tokens>['refresh']>(() =>
      Promise.resolve({ access_token: 'at-2', refresh_token: 'rt-2', expires_at: Date.now() / 1000 + 300 }),
    ),
    renewed: vi.fn((renewed: Tokens) => {
      tokens = renewed;
      renewal.schedule();
    }),
    failed: vi.fn(() => {
      tokens = null;
      renewal.stop();
    }),
    askLeader: vi.fn(),
    now: () => Date.now(),
  };
  const election = {
    leader: false,
    electLeader(onLeader: () => void) {
      if (!leader) return; // another tab holds the lock
      this.leader = true;
      onLeader();
    },
  };
  const renewal = new TokenRenewal<Tokens>(host, election);
  // As the session does: it plans renewal when it stores the tokens, then stands for leader.
  renewal.schedule();
  renewal.start();
  return {
    host,
    renewal,
    tokens: () => tokens,
    /** What another tab's renewal looks like here: the session it broadcast is adopted. */
    adoptFromLeader: (adopted: Tokens) => {
      tokens = adopted;
      renewal.sessionChanged();
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('TokenRenewal in the leader tab', () => {
  it('renews a minute before the access token expires', async () => {
    const { host, renewal, tokens } = setUp({ leader: true });
    expect(renewal.renewsAt).toBe(NOW / 1000 + 240);
    await vi.advanceTimersByTimeAsync(239_000);
    expect(host.refresh).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(host.refresh).toHaveBeenCalledTimes(1);
    expect(tokens()?.access_token).toBe('at-2');
  });

  it('spends the refresh token once for callers that ask at the same time', async () => {
    const { host, renewal } = setUp({ leader: true, lifeSeconds: 2 });
    await Promise.all([renewal.ensureFresh(), renewal.ensureFresh(), renewal.renew()]);
    expect(host.refresh).toHaveBeenCalledTimes(1);
  });

  it('tries again later when the provider cannot be reached, while the tokens are still valid', async () => {
    const { host, renewal, tokens } = setUp({ leader: true });
    host.refresh.mockRejectedValueOnce(new ErrorTimeout('Network timed out'));
    await renewal.renew();
    expect(host.failed).not.toHaveBeenCalled();
    expect(tokens()?.access_token).toBe('at-1');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(host.refresh).toHaveBeenCalledTimes(2);
    expect(tokens()?.access_token).toBe('at-2');
  });

  it('ends the session when the provider refuses the refresh token', async () => {
    const { host, renewal, tokens } = setUp({ leader: true });
    const refused = new Error('invalid_grant');
    host.refresh.mockRejectedValueOnce(refused);
    await renewal.renew();
    expect(host.failed).toHaveBeenCalledWith(refused);
    expect(tokens()).toBeNull();
    expect(renewal.renewsAt).toBeNull();
  });

  it('ends the session when the provider cannot be reached and the tokens have expired', async () => {
    const { host, renewal } = setUp({ leader: true, lifeSeconds: -1 });
    host.refresh.mockRejectedValueOnce(new TypeError('Failed to fetch'));
    await renewal.renew();
    expect(host.failed).toHaveBeenCalledTimes(1);
  });

  it('answers other tabs that ask for a renewal', async () => {
    const { host, renewal } = setUp({ leader: true });
    renewal.onRenewRequest();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.refresh).toHaveBeenCalledTimes(1);
  });
});

describe('TokenRenewal in a follower tab', () => {
  it('never spends the refresh token, not even when its timer would have come', async () => {
    const { host, renewal } = setUp({ leader: false });
    await vi.advanceTimersByTimeAsync(300_000);
    renewal.onRenewRequest();
    expect(host.refresh).not.toHaveBeenCalled();
    expect(renewal.renewsAt).toBe(NOW / 1000 + 240); // it still knows when the leader will renew
  });

  it('asks the leader for nearly expired tokens and goes on once the renewed session arrives', async () => {
    const { host, renewal, tokens, adoptFromLeader } = setUp({ leader: false, lifeSeconds: 3 });
    let fresh = false;
    const asked = renewal.ensureFresh().then(() => (fresh = true));
    expect(host.askLeader).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fresh).toBe(false);
    adoptFromLeader({ access_token: 'at-from-leader', refresh_token: 'rt-2', expires_at: NOW / 1000 + 300 });
    await asked;
    expect(tokens()?.access_token).toBe('at-from-leader');
    expect(host.refresh).not.toHaveBeenCalled();
  });

  it('goes on without a renewal when no leader answers in time', async () => {
    const { renewal } = setUp({ leader: false, lifeSeconds: 3 });
    let done = false;
    void renewal.ensureFresh().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it('hands out tokens with life left without asking anyone', async () => {
    const { host, renewal } = setUp({ leader: false });
    await renewal.ensureFresh();
    expect(host.askLeader).not.toHaveBeenCalled();
  });
});
