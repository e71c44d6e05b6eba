/**
 * What one tab tells the others of the session, over a BroadcastChannel: claims-free signals, never a
 * token. Where the browser gives every tab the one token vault (a shared worker), the vault already
 * tells them; where it does not (WebKit gives each window its own), these keep the tabs in step: a tab
 * that signs in or out says so, and a new tab asks whether another is signed in.
 */
export type TabSignal = 'signed-in' | 'signed-out' | 'who' | 'here';

export interface TabSignals {
  send(signal: TabSignal): void;
  listen(listener: (signal: TabSignal) => void): void;
}

const SIGNALS = new Set<string>(['signed-in', 'signed-out', 'who', 'here']);

/** The signals of the app's tabs on `channel` (one per client id, so two apps on one origin stay apart). */
export function broadcastSignals(channel: BroadcastChannel): TabSignals {
  const listeners = new Set<(signal: TabSignal) => void>();
  channel.addEventListener('message', (message: MessageEvent<unknown>) => {
    if (typeof message.data !== 'string' || !SIGNALS.has(message.data)) return;
    for (const listener of listeners) listener(message.data as TabSignal);
  });
  return {
    send: (signal) => channel.postMessage(signal),
    listen: (listener) => void listeners.add(listener),
  };
}
