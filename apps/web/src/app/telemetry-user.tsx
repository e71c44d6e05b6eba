import { useEffect } from 'react';
import { useAuth } from '../auth/auth-context';
import { pseudonymousUserId } from '../telemetry/pseudonymous-id';
import { telemetry } from '../telemetry/telemetry';

/** Telemetry knows a signed-in user only by a pseudonymous id from issuer and subject; never a name. */
export function TelemetryUser() {
  const { state } = useAuth();
  const issuer = state.status === 'signed-in' ? state.user.issuer : null;
  const subject = state.status === 'signed-in' ? state.user.sub : null;
  const settled = state.status !== 'loading';

  useEffect(() => {
    if (!settled) return;
    if (issuer === null || subject === null) {
      telemetry.clearAuthenticatedUser();
      return;
    }
    let active = true;
    void pseudonymousUserId(issuer, subject).then((id) => active && telemetry.setAuthenticatedUser(id));
    return () => {
      active = false;
    };
  }, [settled, issuer, subject]);

  return null;
}
