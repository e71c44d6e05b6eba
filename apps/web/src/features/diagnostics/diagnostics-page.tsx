import { useState } from 'react';
import { useApiClient } from '../../auth/api-client';
import { telemetry } from '../../telemetry/telemetry';
import type { PageRoute } from '../../shared/page-route';

export const route = {
  path: '/diagnostics',
  name: 'Diagnostics',
  access: 'admin',
  nav: { label: 'Diagnostics', order: 40 },
} satisfies PageRoute;

/**
 * For operators checking a deployment: each button produces one kind of telemetry on purpose, so
 * they can see it arrive in Application Insights (or the usage dashboard).
 */
export default function DiagnosticsPage() {
  const call = useApiClient();
  const [broken, setBroken] = useState(false);
  const [apiResult, setApiResult] = useState<string | null>(null);

  return (
    <section className="page">
      <h1>Diagnostics</h1>
      <p>Each action below reports one kind of usage telemetry, to check that reporting works.</p>
      <p className="actions wrap">
        <button type="button" className="button" onClick={() => setBroken(true)}>
          Break this page
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setTimeout(() => {
              throw new Error('Diagnostics: an uncaught error');
            });
          }}
        >
          Throw an uncaught error
        </button>
        <button
          type="button"
          className="button"
          onClick={() => void Promise.reject(new Error('Diagnostics: an unhandled rejection'))}
        >
          Reject a promise
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            // The last answer goes at once: what is shown next is this call's.
            setApiResult('Calling the API…');
            void call('get', '/me').then(
              (me) => setApiResult(`The API answered for ${me.sub}.`),
              (error: unknown) => setApiResult(error instanceof Error ? error.message : String(error)),
            );
          }}
        >
          Call the API
        </button>
      </p>
      <p className="actions wrap">
        <button type="button" className="button" onClick={() => telemetry.trackEvent('Diagnostics event')}>
          Send an event
        </button>
        <button
          type="button"
          className="button"
          onClick={() => telemetry.trackMetric('Diagnostics metric', 42)}
        >
          Send a metric
        </button>
        <button type="button" className="button" onClick={() => telemetry.trackTrace('Diagnostics trace')}>
          Send a trace
        </button>
      </p>
      {apiResult && <p role="status">{apiResult}</p>}
      {broken && <Broken />}
    </section>
  );
}

function Broken(): never {
  throw new Error('Diagnostics: a render error');
}
