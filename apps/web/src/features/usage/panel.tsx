import { useId, type ReactNode } from 'react';
import { SignInAgain } from '../../auth/sign-in-again';
import { ApiError, type ApiQuery } from '../../auth/use-api';
import { useReportLoading } from './settled';

/** A dashboard section with its loading, empty and error states. */
export function Panel<T>({
  title,
  id,
  level = 2,
  titleHidden = false,
  query,
  isEmpty,
  children,
}: {
  title: string;
  /** The section's id, for a link to it (`#errors`). */
  id?: string | undefined;
  /** Its heading's level: 2 for a section of the page, more within one. */
  level?: 2 | 3 | 4;
  /** A heading for assistive technology only, where the content says what it is. */
  titleHidden?: boolean;
  query: ApiQuery<T> & { reload: () => void };
  isEmpty: (data: T) => boolean;
  children: (data: T) => ReactNode;
}) {
  // An id of its own: `aria-labelledby` reads a list of ids, so a title with spaces cannot be one.
  const headingId = useId();
  useReportLoading(query.status === 'loading');
  const Heading = `h${level}` as const;
  return (
    <section id={id} className="panel" aria-labelledby={headingId} aria-busy={query.status === 'loading'}>
      <Heading id={headingId} className={titleHidden ? 'visually-hidden' : undefined}>
        {title}
      </Heading>
      {query.status === 'loading' && <p className="muted">Loading…</p>}
      {query.status === 'failed' &&
        query.error instanceof ApiError &&
        query.error.code === 'not_available' && (
          // Not a failure to retry: the dashboard's source (Azure Monitor Logs) has no answer to this.
          <p className="muted" data-testid="not-available">
            Not available with this source. {query.error.message.replace(/^The server answered [^:]*: /, '')}{' '}
            {query.error.link && (
              <a href={query.error.link} target="_blank" rel="noreferrer">
                Open it in the Azure portal
              </a>
            )}
          </p>
        )}
      {query.status === 'failed' &&
        !(query.error instanceof ApiError && query.error.code === 'not_available') && (
          <p role="alert">
            This could not be loaded: {query.error.message}{' '}
            {query.error instanceof ApiError && query.error.signInRequired ? (
              <SignInAgain error={query.error} />
            ) : (
              <button type="button" className="link-button" onClick={query.reload}>
                Try again
              </button>
            )}
          </p>
        )}
      {query.status === 'ready' &&
        (isEmpty(query.data) ? (
          <p className="muted">Nothing recorded in this period.</p>
        ) : (
          children(query.data)
        ))}
    </section>
  );
}
