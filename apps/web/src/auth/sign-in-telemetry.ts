import {
  RENEWAL_EVENT,
  SESSION_END_EVENT,
  SIGN_IN_DURATION_MEASUREMENT,
  SIGN_IN_EVENT,
  signInTriggers,
  type RenewalOutcome,
  type SessionEndReason,
  type SignInFailureReason,
  type SignInOutcome,
  type SignInStep,
  type SignInTrigger,
} from '@gatehouse/api-contract';
import { AuthError } from './auth-error';

/** One custom event as the telemetry facade sends it. */
export interface SignInTelemetryEvent {
  name: string;
  properties: Record<string, string>;
  measurements: Record<string, number>;
}

/**
 * Hands an event to telemetry, which keeps it across the page leaving for the provider (in the SDK's
 * session-storage buffer, or the facade's unsent events while the SDK is not running yet).
 */
export type ReportSignInEvent = (event: SignInTelemetryEvent) => void;

/** A sign-in under way in this tab: kept across the redirect, beside oidc-client-ts's pending state. */
interface Journey {
  startedAt: number;
  trigger: SignInTrigger;
}

const JOURNEY_KEY = 'gatehouse.sign-in-journey';

/** The events' only inputs: enumerated codes and a number, so no caller's text can reach an item. */
export function signInEvent(fields: {
  outcome: SignInOutcome;
  trigger?: SignInTrigger | undefined;
  step?: SignInStep | undefined;
  reason?: SignInFailureReason | undefined;
  durationMs?: number | undefined;
}): SignInTelemetryEvent {
  const { outcome, trigger, step, reason, durationMs } = fields;
  return {
    name: SIGN_IN_EVENT,
    properties: {
      outcome,
      ...(trigger ? { trigger } : {}),
      ...(step ? { step } : {}),
      ...(reason ? { reason } : {}),
    },
    measurements: durationMs === undefined ? {} : { [SIGN_IN_DURATION_MEASUREMENT]: durationMs },
  };
}

export function renewalEvent(outcome: RenewalOutcome, reason?: SignInFailureReason): SignInTelemetryEvent {
  return {
    name: RENEWAL_EVENT,
    properties: { outcome, ...(reason ? { reason } : {}) },
    measurements: {},
  };
}

export function sessionEndEvent(reason: SessionEndReason): SignInTelemetryEvent {
  return { name: SESSION_END_EVENT, properties: { reason }, measurements: {} };
}

/** Why a step failed, as the sign-in telemetry reports it. */
export interface SignInFailure {
  reason: SignInFailureReason;
  step: SignInStep;
}

/** Classifies what a step threw (`stage`: where the journey was). */
export type FailureOf = (error: unknown, stage: SignInStep) => SignInFailure;

/**
 * Why a step failed, as a stable code, and the step the error itself names (else `stage`, where the
 * journey was): the app's AuthError, a failed fetch (TypeError), and what `libraryFailure` recognizes (an
 * OAuth library's own errors, oidc-errors.ts: this module loads none, so the BFF session's chunk stays
 * without one). Messages never leave.
 */
export function failureOf(
  error: unknown,
  stage: SignInStep,
  libraryFailure?: (error: unknown, stage: SignInStep) => SignInFailure | undefined,
): SignInFailure {
  if (error instanceof AuthError) {
    if (error.reason) {
      const checked = error.reason.startsWith('id_token_') || error.reason === 'nonce_mismatch';
      return { reason: error.reason, step: checked || error.reason === 'clock_skew' ? 'id-token' : stage };
    }
    switch (error.code) {
      case 'state_mismatch':
        return { reason: 'state_mismatch', step: 'return' };
      case 'issuer_mismatch':
      case 'config_invalid':
      case 'userinfo_mismatch':
      case 'userinfo_failed':
        return { reason: error.code, step: error.code.startsWith('userinfo') ? 'userinfo' : stage };
      case 'id_token_invalid':
        return { reason: 'id_token_missing', step: 'id-token' };
      default:
        if (error.cause !== undefined) return failureOf(error.cause, stage, libraryFailure);
        return { reason: 'response_invalid', step: stage };
    }
  }
  const known = libraryFailure?.(error, stage);
  if (known) return known;
  if (error instanceof TypeError) return { reason: 'network', step: stage };
  return { reason: 'response_invalid', step: stage };
}

/**
 * The sign-in journey, renewals and session ends of one tab, as custom events (docs/decisions/0104).
 * The journey's start time and trigger wait in session storage while the browser is at the provider.
 */
export class SignInTelemetry {
  constructor(
    private readonly report: ReportSignInEvent,
    private readonly storage: Storage,
    private readonly now: () => number,
    /** How a failure is classified: the browser session's knows oidc-client-ts's errors. */
    private readonly classify: FailureOf = failureOf,
  ) {}

  /** The browser is about to leave for the provider. */
  started(trigger: SignInTrigger): void {
    this.report(signInEvent({ outcome: 'started', trigger }));
    this.save({ startedAt: this.now(), trigger });
  }

  /** Signing in stopped before the browser left (discovery, the issuer check, the network). */
  failedToStart(error: unknown): void {
    this.failed(error, 'start');
  }

  /** Back on the redirect URI. */
  returned(): void {
    this.reportStep('returned');
  }

  redeemed(): void {
    this.reportStep('redeemed');
  }

  signedIn(): void {
    this.reportStep('signed-in');
    this.forget();
  }

  failed(error: unknown, stage: SignInStep): void {
    const { reason, step } = this.classify(error, stage);
    this.reportStep('failed', { reason, step });
    this.forget();
  }

  /**
   * The app loaded elsewhere than the redirect URI while a sign-in was under way: the user came back
   * from the provider without an answer (the back button, a link home).
   */
  abandoned(): void {
    if (!this.journey()) return;
    this.reportStep('failed', { reason: 'cancelled', step: 'provider' });
    this.forget();
  }

  renewal(outcome: RenewalOutcome, error?: unknown): void {
    this.report(
      renewalEvent(outcome, error === undefined ? undefined : this.classify(error, 'redeem').reason),
    );
  }

  sessionEnded(reason: SessionEndReason): void {
    this.report(sessionEndEvent(reason));
  }

  private reportStep(
    outcome: SignInOutcome,
    failure: { reason?: SignInFailureReason; step?: SignInStep } = {},
  ): void {
    const journey = this.journey();
    this.report(
      signInEvent({
        outcome,
        trigger: journey?.trigger,
        ...failure,
        durationMs: journey ? Math.max(0, Math.round(this.now() - journey.startedAt)) : undefined,
      }),
    );
  }

  private journey(): Journey | undefined {
    try {
      const stored: unknown = JSON.parse(this.storage.getItem(JOURNEY_KEY) ?? 'null');
      if (typeof stored !== 'object' || stored === null) return undefined;
      const { startedAt, trigger } = stored as Record<string, unknown>;
      if (typeof startedAt !== 'number' || !signInTriggers.includes(trigger as SignInTrigger)) {
        return undefined;
      }
      return { startedAt, trigger: trigger as SignInTrigger };
    } catch {
      return undefined;
    }
  }

  private save(journey: Journey): void {
    try {
      this.storage.setItem(JOURNEY_KEY, JSON.stringify(journey));
    } catch {
      // Storage full or unavailable: the journey's later events go without a trigger and a duration.
    }
  }

  private forget(): void {
    this.storage.removeItem(JOURNEY_KEY);
  }
}
