import { useState, type FormEvent } from 'react';
import { useApiClient } from '../../../auth/api-client';
import { formatTime, viewerTimeZone } from '../format';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

/** As the API's ANNOTATION_NOTE_MAX (the contract checks it again): a line, not a report. */
const NOTE_MAX = 200;

const pad = (n: number) => String(n).padStart(2, '0');
/** A `datetime-local` value for `ms` in the viewer's time zone ("2026-11-26T09:41"). */
export function localInputValue(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export const panel = { section: 'annotations', order: 10 } satisfies PanelPlacement;

/**
 * The period's annotations (docs/annotations.md): a form to mark a moment (now by default, in the viewer's
 * time zone) with a short note, and the list with a way to delete each. Every chart of the page draws
 * them from the same query, the page's, reloaded after each change.
 */
export default function AnnotationsPanel({ annotations: query }: PanelProps) {
  const call = useApiClient();
  const [time, setTime] = useState(() => localInputValue(Date.now()));
  const [note, setNote] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function change(action: () => Promise<unknown>) {
    setBusy(true);
    setProblem(null);
    try {
      await action();
      query.reload();
      return true;
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function add(event: FormEvent) {
    event.preventDefault();
    const at = new Date(time); // A datetime-local value is read in the viewer's time zone.
    if (Number.isNaN(at.getTime())) return setProblem('Choose a date and a time.');
    const done = await change(() =>
      call('post', '/usage/annotations', { body: { time: at.toISOString(), note } }),
    );
    if (done) {
      setNote('');
      setTime(localInputValue(Date.now()));
    }
  }

  return (
    <Panel title="Annotations" query={query} isEmpty={() => false}>
      {(data) => (
        <>
          <p className="muted">
            Mark a moment (a release, an incident): every chart of a period that holds it shows it.
          </p>
          <form className="annotation-form" onSubmit={(event) => void add(event)} aria-label="New annotation">
            <label>
              Time ({viewerTimeZone()}){' '}
              <input
                type="datetime-local"
                required
                value={time}
                onChange={(event) => setTime(event.target.value)}
              />
            </label>{' '}
            <label>
              Note{' '}
              <input
                type="text"
                required
                maxLength={NOTE_MAX}
                value={note}
                onChange={(event) => setNote(event.target.value)}
              />
            </label>{' '}
            <button type="submit" className="button" disabled={busy}>
              Add annotation
            </button>
            {problem && (
              <p role="alert" className="form-problem">
                {problem}
              </p>
            )}
          </form>
          {data.annotations.length === 0 ? (
            <p className="muted">No annotations in this period.</p>
          ) : (
            <ul className="annotations" data-testid="annotations-list">
              {data.annotations.map((annotation) => (
                <li key={annotation.id}>
                  <time dateTime={annotation.time}>{formatTime(annotation.time)}</time>{' '}
                  <span className="annotation-note">{annotation.note}</span>{' '}
                  <span className="muted">
                    {annotation.mine
                      ? '(by you)'
                      : annotation.author
                        ? '(by another admin)'
                        : '(author erased)'}
                  </span>{' '}
                  <button
                    type="button"
                    className="link-button"
                    disabled={busy}
                    aria-label={`Delete the annotation “${annotation.note}”`}
                    onClick={() =>
                      void change(() =>
                        call('delete', '/usage/annotations/{id}', { params: { id: annotation.id } }),
                      )
                    }
                  >
                    Delete
                  </button>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </Panel>
  );
}
