import { IDBFactory, IDBObjectStore } from 'fake-indexeddb';
import { DPoPState, IndexedDbDPoPStore } from 'oidc-client-ts';
import { describe, expect, it, vi } from 'vitest';
import { IndexedDbKeyStore, canKeepKeys } from './dpop-store';

const keyPair = () =>
  crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);

/** oidc-client-ts's own store, on the same (fake) IndexedDB: it opens `indexedDB` from the global. */
function libraryStore(factory: IDBFactory): IndexedDbDPoPStore {
  vi.stubGlobal('indexedDB', factory);
  return new IndexedDbDPoPStore();
}

describe('IndexedDbKeyStore', () => {
  it('keeps, lists, reads and removes states; a missing key reads as undefined', async () => {
    const store = new IndexedDbKeyStore(new IDBFactory());
    expect(await store.get('gatehouse')).toBeUndefined();
    expect(await store.getAllKeys()).toEqual([]);
    const state = new DPoPState(await keyPair(), 'nonce-1');
    await store.set('gatehouse', state);
    expect(await store.getAllKeys()).toEqual(['gatehouse']);
    const read = await store.get('gatehouse');
    expect(read.nonce).toBe('nonce-1');
    expect(read.keys.privateKey.extractable).toBe(false);
    expect((await store.remove('gatehouse')).nonce).toBe('nonce-1');
    expect(await store.get('gatehouse')).toBeUndefined();
    expect(await store.remove('gatehouse')).toBeUndefined();
  });

  it('reads what oidc-client-ts wrote and the other way round: the same database and values', async () => {
    const factory = new IDBFactory();
    const ours = new IndexedDbKeyStore(factory);
    const theirs = libraryStore(factory);
    await theirs.set('written-by-library', new DPoPState(await keyPair(), 'a'));
    expect((await ours.get('written-by-library')).nonce).toBe('a');
    await ours.set('written-by-us', new DPoPState(await keyPair(), 'b'));
    expect((await theirs.get('written-by-us')).nonce).toBe('b');
    expect((await theirs.getAllKeys()).sort()).toEqual(['written-by-library', 'written-by-us']);
    vi.unstubAllGlobals();
  });

  it('opens one connection for all its reads and writes, and caches no value', async () => {
    const factory = new IDBFactory();
    const open = vi.spyOn(factory, 'open');
    const store = new IndexedDbKeyStore(factory);
    const other = new IndexedDbKeyStore(factory); // another tab
    await store.set('gatehouse', new DPoPState(await keyPair(), 'first'));
    await store.get('gatehouse');
    await store.getAllKeys();
    await other.set('gatehouse', new DPoPState(await keyPair(), 'replaced'));
    expect((await store.get('gatehouse')).nonce).toBe('replaced');
    await other.remove('gatehouse');
    expect(await store.get('gatehouse')).toBeUndefined();
    expect(open).toHaveBeenCalledTimes(2);
  });

  it('steps aside when another page deletes the database, and opens it afresh after', async () => {
    const factory = new IDBFactory();
    const store = new IndexedDbKeyStore(factory);
    await store.set('gatehouse', new DPoPState(await keyPair()));
    await new Promise<void>((resolve, reject) => {
      const deletion = factory.deleteDatabase('oidc');
      deletion.onsuccess = () => resolve();
      deletion.onerror = () => reject(deletion.error ?? new Error('delete failed'));
      deletion.onblocked = () => reject(new Error('blocked by the open connection'));
    });
    expect(await store.getAllKeys()).toEqual([]);
  });
});

describe('canKeepKeys', () => {
  it('says yes where IndexedDB keeps a CryptoKey, and leaves nothing behind', async () => {
    const factory = new IDBFactory();
    expect(await canKeepKeys(factory)).toBe(true);
    expect(await new IndexedDbKeyStore(factory).getAllKeys()).toEqual([]);
  });

  it('says no where storing a CryptoKey fails (WebKit, from a worker)', async () => {
    const factory = new IDBFactory();
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('cannot serialize a CryptoKey here', 'DataCloneError');
    });
    try {
      expect(await canKeepKeys(factory)).toBe(false);
    } finally {
      put.mockRestore();
    }
  });
});
