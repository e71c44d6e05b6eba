import type { VaultEvent } from './token-vault';
import {
  callError,
  type Vault,
  type VaultCall,
  type VaultOperation,
  type VaultOperations,
  type VaultReply,
} from './vault-protocol';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The page's end of the token vault (vault-worker.ts): a shared worker where the browser has them (one
 * vault for every tab), else a dedicated one. Calls are matched to answers by number; failures come back
 * as VaultErrors with their code, reason and step, and a failed API call as the TypeError fetch throws.
 */
export class WorkerVault implements Vault {
  private readonly port: Pick<MessagePort, 'postMessage' | 'addEventListener'>;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(event: VaultEvent, report: boolean) => void>();
  private nextId = 1;

  constructor() {
    if (typeof SharedWorker === 'function') {
      const worker = new SharedWorker(new URL('./vault-worker.ts', import.meta.url), {
        type: 'module',
        name: 'gatehouse-vault',
        // The vault outlives the page for a moment where the browser allows it (Chromium 148+), so a
        // reload or a navigation finds it holding the session, bearer tokens included, in memory only.
        extendedLifetime: true,
      } as WorkerOptions);
      this.port = worker.port;
      worker.port.start();
    } else {
      this.port = new Worker(new URL('./vault-worker.ts', import.meta.url), {
        type: 'module',
        name: 'gatehouse-vault',
      });
    }
    this.port.addEventListener('message', (message: MessageEvent<VaultReply>) => this.receive(message.data));
    // The vault stops counting on this page to report its events while it is hidden (it picks another),
    // and counts on it again if the back-forward cache brings it back.
    window.addEventListener('pagehide', () =>
      this.port.postMessage({ id: 0, op: 'bye' } satisfies VaultCall),
    );
    window.addEventListener('pageshow', (event) => {
      if (event.persisted) this.port.postMessage({ id: 0, op: 'hello' } satisfies VaultCall);
    });
  }

  call<K extends VaultOperation>(
    op: K,
    ...args: VaultOperations[K]['args']
  ): Promise<VaultOperations[K]['answer']> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.port.postMessage({ id, op, args });
    });
  }

  listen(listener: (event: VaultEvent, report: boolean) => void): void {
    this.listeners.add(listener);
  }

  private receive(reply: VaultReply): void {
    if ('event' in reply) {
      for (const listener of this.listeners) listener(reply.event, reply.report);
      return;
    }
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(callError(reply));
  }
}
