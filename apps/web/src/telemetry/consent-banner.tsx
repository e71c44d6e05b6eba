import { useSyncExternalStore } from 'react';
import { telemetry, type TelemetryConsent } from './telemetry';

/** Consent as it is before telemetry has started: what the page's HTML was rendered with (index.html). */
const notStartedYet = (): TelemetryConsent => 'pending';

/** Asks before any usage data is collected; nothing is stored or sent until the visitor answers. */
export function ConsentBanner() {
  const consent = useSyncExternalStore(telemetry.subscribe, telemetry.getConsent, notStartedYet);
  if (consent !== 'ask') return null;
  return (
    <section className="consent" role="dialog" aria-modal="false" aria-labelledby="consent-title">
      <h2 id="consent-title">Usage data</h2>
      <p>
        May Gatehouse record how this app is used (pages viewed, errors, response times, an anonymous id for
        this browser) to improve it? Nothing is recorded until you choose.
      </p>
      <p className="actions">
        <button type="button" className="button primary" onClick={() => telemetry.choose('granted')}>
          Accept
        </button>
        <button type="button" className="button" onClick={() => telemetry.choose('denied')}>
          Decline
        </button>
      </p>
    </section>
  );
}

/** Where the choice can be changed later. */
export function ConsentSetting() {
  const consent = useSyncExternalStore(telemetry.subscribe, telemetry.getConsent, notStartedYet);
  if (consent !== 'granted' && consent !== 'denied') return null;
  return (
    <p className="consent-setting">
      Usage data: {consent === 'granted' ? 'accepted' : 'declined'}.{' '}
      <button type="button" className="link-button" onClick={() => telemetry.reconsider()}>
        Change
      </button>
    </p>
  );
}
