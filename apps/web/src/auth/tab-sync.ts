import type { AuthNotice } from './auth-state';

/**
 * Messages between tabs of the same origin (BroadcastChannel never crosses origins). A session of
 * `null` signs the other tabs out, with the reason they show.
 */
export type TabMessage =
  | { type: 'session'; user: string | null; notice?: AuthNotice }
  | { type: 'session-request' }
  | { type: 'renew-request' };

const CHANNEL = 'gatehouse-auth';
const LEADER_LOCK = 'gatehouse-auth-leader';

/**
 * Keeps the tabs of one browser in step: sign-in, renewal and sign-out reach every tab at once,
 * and a single leader tab renews tokens, so a rotated refresh token is never used twice.
 */
export class TabSync {
  private readonly channel: BroadcastChannel | undefined;
  leader = false;

  constructor(onMessage: (message: TabMessage) => void) {
    this.channel = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(CHANNEL);
    this.channel?.addEventListener('message', (event: MessageEvent<TabMessage>) => onMessage(event.data));
  }

  post(message: TabMessage): void {
    this.channel?.postMessage(message);
  }

  /** Asks the other tabs for their session; resolves with the first answer, or null after `waitMs`. */
  askForSession(waitMs: number): Promise<string | null> {
    if (!this.channel) return Promise.resolve(null);
    const channel = this.channel;
    return new Promise((resolve) => {
      const done = (user: string | null) => {
        clearTimeout(timer);
        channel.removeEventListener('message', onAnswer);
        resolve(user);
      };
      const onAnswer = (event: MessageEvent<TabMessage>) => {
        if (event.data.type === 'session' && event.data.user) done(event.data.user);
      };
      const timer = setTimeout(() => done(null), waitMs);
      channel.addEventListener('message', onAnswer);
      this.post({ type: 'session-request' });
    });
  }

  /** Calls `onLeader` once this tab holds the leader lock; it keeps it until the tab closes. */
  electLeader(onLeader: () => void): void {
    const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
    if (!locks) {
      this.leader = true;
      onLeader();
      return;
    }
    void locks.request(LEADER_LOCK, () => {
      this.leader = true;
      onLeader();
      return new Promise<never>(() => {});
    });
  }
}
