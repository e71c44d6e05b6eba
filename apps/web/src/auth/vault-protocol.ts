import type { ApiAnswer, ApiRequest, CallFailure, VaultEvent, VaultUser } from './token-vault';

/** What a page may ask the vault, and what each answers. */
export interface VaultOperations {
  current: { args: []; answer: VaultUser | null };
  /** The thumbprint of the vault's DPoP key (the authorization request's `dpop_jkt`), null without one. */
  thumbprint: { args: []; answer: string | null };
  redeem: { args: [request: { url: string; state: string; nonce: string }]; answer: VaultUser };
  renew: { args: []; answer: VaultUser | null };
  fetchApi: { args: [request: ApiRequest]; answer: ApiAnswer };
  signOut: { args: []; answer: { idToken: string | undefined; warning: string | undefined } };
}
export type VaultOperation = keyof VaultOperations;

/**
 * Page → vault: a call, or the page saying it is hidden (`bye`: it stops reporting the vault's events)
 * or shown again from the back-forward cache (`hello`).
 */
export type VaultCall =
  | { [K in VaultOperation]: { id: number; op: K; args: VaultOperations[K]['args'] } }[VaultOperation]
  | { id: number; op: 'bye' }
  | { id: number; op: 'hello' };

/**
 * Vault → page: a call's answer, or an event every page hears. `report` marks the one page that reports
 * an event of the vault's own (a renewal) to telemetry, so it is counted once whatever the number of tabs.
 */
export type VaultReply =
  | { id: number; ok: true; value: unknown }
  | ({ id: number; ok: false } & CallFailure)
  | { event: VaultEvent; report: boolean };

/** The vault as the session uses it, in a worker (vault-client.ts) or, in unit tests, in the page. */
export interface Vault {
  call<K extends VaultOperation>(
    op: K,
    ...args: VaultOperations[K]['args']
  ): Promise<VaultOperations[K]['answer']>;
  /** Events the vault announces (renewals, sign-ins, ends); `report`: this page reports them. */
  listen(listener: (event: VaultEvent, report: boolean) => void): void;
}
