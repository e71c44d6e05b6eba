/// <reference lib="webworker" />
import { runtimeConfigFromHtml } from '../config/runtime-config';
import { IndexedDbKeyStore, IndexedDbRecords, canKeepKeys, memoryDpopStore } from './dpop-store';
import { callFailure, TokenVault, type SessionKeeper, type VaultEvent } from './token-vault';
import type { VaultCall, VaultReply } from './vault-protocol';

/**
 * The token vault's worker (ADR 0117): a shared worker, so every tab of the app uses one vault (one
 * renewal, one session), else a dedicated worker per tab where shared workers do not exist. The page can
 * send it calls, never read its memory.
 */
declare const self: (SharedWorkerGlobalScope | DedicatedWorkerGlobalScope) & typeof globalThis;

// oidc-client-ts signs its DPoP proofs with `window.crypto` (CryptoUtils), which a worker does not have:
// a `window` holding only the worker's own WebCrypto. Nothing else of it is used here (the vault gives
// oidc-client-ts its state store, so its defaults that read `window`'s storage never run).
(globalThis as { window?: unknown }).window ??= { crypto: globalThis.crypto };

type Port = Pick<MessagePort, 'postMessage'>;
/**
 * Every page's port, oldest first, and whether the page is shown. A hidden page still hears the events
 * (the back-forward cache may bring it back), but never reports them; the oldest hidden ones are
 * forgotten past HIDDEN_KEPT, since a closed page never says so.
 */
const ports: Array<{ port: Port; shown: boolean }> = [];
const HIDDEN_KEPT = 50;
let vault: Promise<TokenVault> | undefined;
const shared = 'onconnect' in self;

function announce(event: VaultEvent): void {
  // The oldest page still shown reports the vault's own events.
  const reporter = ports.find(({ shown }) => shown);
  for (const entry of ports) {
    entry.port.postMessage({ event, report: entry === reporter } satisfies VaultReply);
  }
}

/**
 * The vault, made once: its configuration is read from the app's own HTML, as the server wrote it, and
 * never from a page's message, so no script can point the vault at another provider.
 */
function load(): Promise<TokenVault> {
  vault ??= fetch('/', { headers: { Accept: 'text/html' }, credentials: 'same-origin' })
    .then((response) => response.text())
    .then(async (html) => {
      const config = runtimeConfigFromHtml(html).oidc;
      // Where the DPoP key cannot be kept (WebKit's workers), it lives in memory, and a session bound to
      // it is not kept either: a reload restores it through the provider.
      const keepsKeys = typeof indexedDB !== 'undefined' && (await canKeepKeys(indexedDB));
      const created = new TokenVault(config, {
        origin: self.location.origin,
        dpopStore: keepsKeys ? new IndexedDbKeyStore() : memoryDpopStore(),
        now: () => Date.now(),
        announce,
        keep: shared && keepsKeys ? keeper(config.clientId) : undefined,
      });
      created.prepare();
      await created.restore();
      return created;
    });
  vault.catch(() => (vault = undefined));
  return vault;
}

/**
 * A session of bound tokens, kept in IndexedDB under the client id. Only a shared worker keeps one: it
 * is the one vault of every tab, so a rotated refresh token is never spent by two.
 */
function keeper(clientId: string): SessionKeeper {
  const records = new IndexedDbRecords<string>(indexedDB, 'gatehouse-vault', 'session');
  return {
    load: () => records.get(clientId),
    save: (session) => records.set(clientId, session),
    clear: async () => void (await records.remove(clientId)),
  };
}

async function answer(call: Exclude<VaultCall, { op: 'bye' | 'hello' }>): Promise<unknown> {
  const tokens = await load();
  switch (call.op) {
    case 'current':
      return tokens.current();
    case 'thumbprint':
      return tokens.thumbprint();
    case 'redeem':
      return tokens.redeem(...call.args);
    case 'renew':
      return tokens.renew();
    case 'fetchApi':
      return tokens.fetchApi(...call.args);
    case 'signOut':
      return tokens.signOut();
  }
}

function serve(port: Port & Pick<MessagePort, 'addEventListener'>): void {
  // The configuration, discovery and the DPoP key are made ready now, before the page's first call: a
  // click on "Sign in" then waits for none of them. A failure is tried again at that call.
  load().catch(() => undefined);
  const entry = { port, shown: true };
  ports.push(entry);
  port.addEventListener('message', (message: MessageEvent<VaultCall>) => {
    const call = message.data;
    if (call.op === 'bye' || call.op === 'hello') {
      entry.shown = call.op === 'hello';
      const hidden = ports.filter(({ shown }) => !shown);
      for (const gone of hidden.slice(0, Math.max(0, hidden.length - HIDDEN_KEPT))) {
        ports.splice(ports.indexOf(gone), 1);
      }
      if (entry.shown && !ports.includes(entry)) ports.push(entry);
      return;
    }
    answer(call).then(
      (value) => port.postMessage({ id: call.id, ok: true, value } satisfies VaultReply),
      (error: unknown) =>
        port.postMessage({ id: call.id, ok: false, ...callFailure(call.op, error) } satisfies VaultReply),
    );
  });
}

if (shared) {
  self.addEventListener('connect', (event) => {
    const [port] = event.ports;
    if (!port) return;
    serve(port);
    port.start();
  });
} else {
  serve(self);
}
