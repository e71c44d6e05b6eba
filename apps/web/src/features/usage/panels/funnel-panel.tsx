import { FUNNEL_STEP_NAME_MAX, FUNNEL_STEPS, type FunnelStep as Step } from '@gatehouse/api-contract';
import { useState, type FormEvent } from 'react';
import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { EstimatesNote, estimatedHeading } from '../estimates-note';
import { formatCount, formatMs, formatRate } from '../format';
import { LongText } from '../long-text';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

const MEDIAN_HEADING = 'Median time from previous';

function FunnelResult({ query, steps, every }: Pick<PanelProps, 'query' | 'every'> & { steps: Step[] }) {
  const answer = useEndpoint(
    '/usage/funnel',
    { query: { ...query, step: steps.map((s) => `${s.kind}:${s.name}`) } },
    every,
  );
  return (
    <Panel title="Funnel" query={answer} isEmpty={(data) => data.steps[0]?.users === 0}>
      {(data) => (
        <>
          <table data-testid="funnel-table">
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">{estimatedHeading('Users', 'users', data.estimates)}</th>
                <th scope="col">Dropped</th>
                <th scope="col">
                  {estimatedHeading(MEDIAN_HEADING, 'medianMsFromPrevious', data.estimates)}
                </th>
              </tr>
            </thead>
            <tbody>
              {data.steps.map((step, i) => (
                <tr key={`${i}-${step.kind}-${step.name}`}>
                  <th scope="row">
                    {i + 1}. {step.kind === 'page' ? 'Page' : 'Event'} <LongText text={step.name} />
                  </th>
                  <td>{formatCount(step.users)}</td>
                  <td>{i === 0 ? '—' : formatRate(step.dropOff)}</td>
                  <td>{formatMs(step.medianMsFromPrevious)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <EstimatesNote
            estimates={data.estimates}
            headings={{ users: 'Users', medianMsFromPrevious: MEDIAN_HEADING }}
          />
          <DownloadCsv
            table="Funnel"
            period={data}
            header={['Step', 'Kind', 'Name', 'Users', 'Dropped', 'Median ms from previous']}
            rows={() =>
              data.steps.map((step, i) => [
                i + 1,
                step.kind,
                step.name,
                step.users,
                i === 0 ? null : step.dropOff,
                step.medianMsFromPrevious,
              ])
            }
          />
        </>
      )}
    </Panel>
  );
}

export const panel = { section: 'behaviour', order: 30, half: true } satisfies PanelPlacement;

/**
 * A funnel the admin defines: 2 to 5 steps (FUNNEL_STEPS) (pages by their page view's name, or custom events), and how
 * many users went through them in order within a session, with the drop-off and the time between steps.
 */
export default function FunnelPanel({ query, every }: PanelProps) {
  const [draft, setDraft] = useState<Step[]>([
    { kind: 'page', name: '' },
    { kind: 'page', name: '' },
  ]);
  const [asked, setAsked] = useState<Step[] | null>(null);
  const update = (i: number, change: Partial<Step>) =>
    setDraft((steps) => steps.map((s, j) => (j === i ? { ...s, ...change } : s)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAsked(draft.map((s) => ({ ...s, name: s.name.trim() })));
  };
  return (
    <section className="panel" aria-labelledby="funnels-heading">
      <h3 id="funnels-heading">Funnels</h3>
      <form className="funnel-form" onSubmit={submit} aria-label="Funnel steps">
        {draft.map((step, i) => (
          <fieldset key={i} className="funnel-step">
            <legend>Step {i + 1}</legend>
            <select
              aria-label={`Step ${i + 1} kind`}
              value={step.kind}
              onChange={(e) => update(i, { kind: e.target.value === 'event' ? 'event' : 'page' })}
            >
              <option value="page">Page</option>
              <option value="event">Custom event</option>
            </select>{' '}
            <input
              aria-label={`Step ${i + 1} name`}
              required
              maxLength={FUNNEL_STEP_NAME_MAX}
              value={step.name}
              onChange={(e) => update(i, { name: e.target.value })}
            />
          </fieldset>
        ))}
        <p className="actions wrap">
          <button
            type="button"
            className="button"
            disabled={draft.length >= FUNNEL_STEPS.max}
            onClick={() => setDraft((steps) => [...steps, { kind: 'page', name: '' }])}
          >
            Add a step
          </button>
          <button
            type="button"
            className="button"
            disabled={draft.length <= FUNNEL_STEPS.min}
            onClick={() => setDraft((steps) => steps.slice(0, -1))}
          >
            Remove the last step
          </button>
          <button type="submit" className="button">
            Show the funnel
          </button>
        </p>
      </form>
      {asked && <FunnelResult query={query} steps={asked} every={every} />}
    </section>
  );
}
