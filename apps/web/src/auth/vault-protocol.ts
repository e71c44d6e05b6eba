import type { SignInFailureReason, SignInStep } from '@gatehouse/api-contract';
import { AuthError, type AuthErrorCode } from './auth-error';
import type { ApiAnswer, ApiRequest, VaultEvent, VaultUser } from './token-vault';

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

/** Why a step of the vault failed, in words a page can show and codes its telemetry can report. */
export interface VaultFailure {
  code: AuthErrorCode;
  message: string;
  reason: SignInFailureReason;
  step: SignInStep;
  /** For want of a network: renewal tries again later. */
  transient: boolean;
}

/** An error that crossed from the vault: the page's AuthError, with the reason and step kept. */
export class VaultError extends AuthError {
  constructor(readonly failure: VaultFailure) {
    super(failure.code, failure.message, { reason: failure.reason });
  }
}

/**
 * How a call of the page that failed crosses back to it: a failed API call as the TypeError a fetch would
 * throw (the app's server could not be reached, or the URL was refused), so the page does not read it as
 * a failure of the identity provider; anything else as the vault's failure.
 */
export type CallFailure = { failure: VaultFailure } | { fetchFailed: string };

/** The error the page's call rejects with. */
export function callError(failed: CallFailure): Error {
  return 'fetchFailed' in failed ? new TypeError(failed.fetchFailed) : new VaultError(failed.failure);
}
