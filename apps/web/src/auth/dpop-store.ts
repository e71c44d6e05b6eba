import type { DPoPState } from 'oidc-client-ts';
import type { DpopStore } from './dpop';

const DATABASE = 'oidc';
const STORE = 'dpop';

/**
 * Where the DPoP key pair is kept: oidc-client-ts's own IndexedDB database and object store, with the same
 * values, so either can read what the other wrote. What differs is the connection: oidc-client-ts's
 * `IndexedDbDPoPStore` opens a new one for every read and write and never closes it (four on the sign-in
 * callback's path), where this one opens one per page and keeps it. Nothing is cached: every read is a
 * transaction, so a key another tab replaced or removed is seen at once. Writes resolve once committed.
 */
export class IndexedDbKeyStore implements DpopStore {
  private readonly records: IndexedDbRecords<DPoPState>;

  constructor(factory: IDBFactory = indexedDB) {
    this.records = new IndexedDbRecords(factory, DATABASE, STORE);
  }

  /** The state kept under `key`, or undefined when there is none. */
  get(key: string): Promise<DPoPState> {
    return this.records.get(key) as Promise<DPoPState>;
  }

  set(key: string, value: DPoPState): Promise<void> {
    return this.records.set(key, value);
  }

  /** Removes the state kept under `key` (if any) and answers what it was. */
  async remove(key: string): Promise<DPoPState> {
    return (await this.records.remove(key)) as DPoPState;
  }

  getAllKeys(): Promise<string[]> {
    return this.records.getAllKeys();
  }
}

/**
 * A key store in memory: the DPoP key of a vault that cannot keep keys (WebKit refuses to store a
 * CryptoKey in IndexedDB from a worker) lives as long as the vault does; and the tests' store.
 */
export function memoryDpopStore(): DpopStore & { entries: Map<string, DPoPState> } {
  const entries = new Map<string, DPoPState>();
  return {
    entries,
    set: (key, value) => Promise.resolve(void entries.set(key, value)),
    get: (key) => Promise.resolve(entries.get(key) as DPoPState),
    remove: (key) => {
      const value = entries.get(key) as DPoPState;
      entries.delete(key);
      return Promise.resolve(value);
    },
    getAllKeys: () => Promise.resolve([...entries.keys()]),
  };
}

const PROBE = 'gatehouse-probe';

/**
 * Whether this context can keep a non-extractable key pair in IndexedDB, tried once with a throwaway
 * key: WebKit cannot from a worker.
 */
export async function canKeepKeys(factory: IDBFactory): Promise<boolean> {
  try {
    const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'sign',
      'verify',
    ]);
    const records = new IndexedDbRecords<CryptoKeyPair>(factory, DATABASE, STORE);
    await records.set(PROBE, keys);
    await records.remove(PROBE);
    return true;
  } catch {
    return false;
  }
}

/**
 * Values of one object store of one IndexedDB database, through one connection per page (or worker),
 * each read and write a transaction of its own that resolves once committed.
 */
export class IndexedDbRecords<T> {
  private connection: Promise<IDBDatabase> | undefined;

  constructor(
    private readonly factory: IDBFactory,
    private readonly database: string,
    private readonly storeName: string,
  ) {}

  /** The value kept under `key`, or undefined when there is none. */
  get(key: string): Promise<T | undefined> {
    return this.transaction('readonly', (store) => store.get(key)) as Promise<T | undefined>;
  }

  async set(key: string, value: T): Promise<void> {
    await this.transaction('readwrite', (store) => store.put(value, key));
  }

  /** Removes the value kept under `key` (if any) and answers what it was. */
  async remove(key: string): Promise<T | undefined> {
    let removed: T | undefined;
    await this.transaction('readwrite', (store) => {
      const read = store.get(key);
      read.onsuccess = () => {
        removed = read.result as T | undefined;
        store.delete(key);
      };
      return read;
    });
    return removed;
  }

  async getAllKeys(): Promise<string[]> {
    const keys = await this.transaction('readonly', (store) => store.getAllKeys());
    return keys.map(String);
  }

  /** Runs `request` in a transaction of its own and answers its result once the transaction commits. */
  private async transaction<T>(
    mode: IDBTransactionMode,
    request: (store: IDBObjectStore) => IDBRequest<T>,
  ): Promise<T> {
    const database = await this.open();
    return new Promise<T>((resolve, reject) => {
      const transaction = database.transaction(this.storeName, mode);
      const pending = request(transaction.objectStore(this.storeName));
      transaction.oncomplete = () => resolve(pending.result);
      transaction.onabort = transaction.onerror = () =>
        reject(transaction.error ?? pending.error ?? new Error(`The ${this.database} store failed.`));
    });
  }

  private open(): Promise<IDBDatabase> {
    this.connection ??= new Promise<IDBDatabase>((resolve, reject) => {
      const opening = this.factory.open(this.database);
      opening.onupgradeneeded = () => opening.result.createObjectStore(this.storeName);
      opening.onsuccess = () => {
        const database = opening.result;
        // Another page upgrading or deleting the database goes first; the next call opens it again.
        const forget = () => {
          database.close();
          this.connection = undefined;
        };
        database.onversionchange = forget;
        database.onclose = forget;
        resolve(database);
      };
      opening.onerror = () => {
        this.connection = undefined;
        reject(opening.error ?? new Error(`The ${this.database} store could not be opened.`));
      };
    });
    return this.connection;
  }
}
