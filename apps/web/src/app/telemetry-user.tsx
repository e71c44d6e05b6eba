import { useEffect, useRef } from 'react';
import { useAuth } from '../auth/auth-context';
import { signedOutElsewhere } from '../auth/auth-notices';
import { useApiClient } from '../auth/api-client';
import { telemetry } from '../telemetry/telemetry';

/**
 * Telemetry knows a signed-in user only by the pseudonymous id the server issues (a keyed hash it can
 * verify, docs/decisions/0017), never a name. At sign-out the SDK's anonymous ids start afresh: made by
 * the tab that signed out, taken up by the others.
 */
export function TelemetryUser() {
  const { state } = useAuth();
  const call = useApiClient();
  const user = state.status === 'signed-in' ? `${state.user.issuer}\n${state.user.sub}` : null;
  const roles = state.status === 'signed-in' ? [...state.user.roles].sort().join(',') : '';
  const settled = state.status !== 'loading';
  // Another tab signed out: that tab starts the fresh ids, and this one takes them up.
  const elsewhere = state.status === 'signed-out' && state.notice?.code === signedOutElsewhere.code;
  const wasSignedIn = useRef(false);

  useEffect(() => {
    if (!settled) return;
    if (user === null) {
      telemetry.clearAuthenticatedUser();
      if (wasSignedIn.current) {
        if (elsewhere) telemetry.followFreshIdentity();
        else telemetry.startFreshIdentity();
      }
      wasSignedIn.current = false;
      return;
    }
    wasSignedIn.current = true;
    // Without the id (the API failed) the visitor is reported as anonymous: telemetry never stands in the way.
    telemetry.identifyUser(
      call('get', '/telemetry-user').then(({ id }) => id),
      roles ? roles.split(',') : [],
    );
  }, [settled, user, roles, call, elsewhere]);

  return null;
}
