import { Link, useParams } from 'wouter';
import { useEndpoint } from '../../auth/api-client';
import { formatMs, formatTime } from './format';
import { LongText } from './long-text';
import { Panel } from './panel';
import { UserLabel } from './user-label';
import type { PageRoute } from '../../shared/page-route';

/** The collector's item types, as a person would say them. */
const KIND: Record<string, string> = {
  pageview: 'Page view',
  pageviewperformance: 'Page timing',
  dependency: 'Call',
  exception: 'Exception',
  event: 'Event',
  trace: 'Trace',
  metric: 'Metric',
  request: 'Request',
};

export const route = {
  path: '/usage/sessions/:id',
  name: 'Usage session',
  access: 'admin',
} satisfies PageRoute;

/** One session, in the order things happened, each with the operation that ties it to its calls. */
export default function SessionPage() {
  // Route parameters arrive as they stand in the URL: decode once, encode once for the API.
  const { id: raw = '' } = useParams<{ id: string }>();
  const id = safeDecode(raw);
  const timeline = useEndpoint('/usage/sessions/{id}/timeline', { params: { id } });
  return (
    <section className="page wide">
      <p>
        <Link href="/usage">← Usage</Link>
      </p>
      <h1>Session {id.slice(0, 8)}</h1>
      <Panel title="Timeline" query={timeline} isEmpty={(data) => data.items.length === 0}>
        {({ items, truncated, ...session }) => (
          <>
            <p className="muted">
              User: <UserLabel {...session} />
              {truncated && ' · showing the first items only'}
            </p>
            <ol className="timeline" data-testid="timeline">
              {items.map((item, index) => (
                <li key={`${item.time}-${index}`} className={item.success === false ? 'failed' : undefined}>
                  <time dateTime={item.time}>{formatTime(item.time)}</time>{' '}
                  <strong>{KIND[item.type] ?? item.type}</strong>{' '}
                  <LongText
                    text={
                      (item.type === 'exception'
                        ? (item.message ?? item.name)
                        : (item.name ?? item.message)) ?? ''
                    }
                  />
                  {item.durationMs !== null && <span className="muted"> · {formatMs(item.durationMs)}</span>}
                  {item.success === false && <span className="badge">failed</span>}
                  {item.operationId && (
                    <span className="muted"> · operation {item.operationId.slice(0, 8)}</span>
                  )}
                </li>
              ))}
            </ol>
          </>
        )}
      </Panel>
    </section>
  );
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
