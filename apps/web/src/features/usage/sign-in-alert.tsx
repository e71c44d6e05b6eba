import { formatCount, formatRate } from './format';
import type { SignInHealth } from './usage-api';

/**
 * Said at the top of the Sign-in section and of the overview when the last hour's failed sign-ins are far
 * above the week before's (the collector's rule, ADR 0109); nothing otherwise.
 */
export function SignInAlert({ alert }: { alert: SignInHealth['alert'] }) {
  if (!alert.raised) return null;
  const { lastHour, weekBefore } = alert;
  return (
    <p role="alert" className="notice" data-testid="sign-in-alert">
      Signing in is failing: {formatCount(lastHour.failed)} of {formatCount(lastHour.ended)} sign-ins failed
      in the last hour ({formatRate(lastHour.rate ?? 0)}), against{' '}
      {weekBefore.rate === null
        ? 'none in the week before'
        : `${formatRate(weekBefore.rate)} in the week before`}
      . <a href="#sign-in">See Sign-in</a>.
    </p>
  );
}
