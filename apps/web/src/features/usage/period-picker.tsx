import { useId, useState, type FormEvent } from 'react';
import { viewerTimeZone } from './format';
import { RANGE_LABELS, type Range } from './usage-api';
import { daysPeriod, localDay, type PeriodChoice } from './view-state';

/** The longest custom period, in days: what the store keeps (TELEMETRY_RETENTION_DAYS' default). */
export const MAX_CUSTOM_DAYS = 90;

/**
 * The period: a preset range, or any days (both included, in the viewer's time zone) applied with a
 * button, so half-typed dates never start a query.
 */
export function PeriodPicker({
  period,
  onChange,
}: {
  period: PeriodChoice;
  onChange: (next: PeriodChoice) => void;
}) {
  const id = useId();
  const custom = 'from' in period;
  const [choosing, setChoosing] = useState(custom);
  const today = localDay(new Date().toISOString());
  const [first, setFirst] = useState(custom ? localDay(period.from) : today);
  // The last day included: the day before the period's (exclusive) end.
  const [last, setLast] = useState(
    custom ? localDay(new Date(Date.parse(period.to) - 1).toISOString()) : today,
  );
  const [problem, setProblem] = useState<string | null>(null);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = daysPeriod(first, last);
    if (!next) return setProblem('The last day must be on or after the first.');
    if (Date.parse(next.to) - Date.parse(next.from) > (MAX_CUSTOM_DAYS + 1) * 86_400_000)
      return setProblem(`A period can be at most ${MAX_CUSTOM_DAYS} days.`);
    setProblem(null);
    onChange(next);
  };
  return (
    <div className="period-picker">
      <label htmlFor={`${id}-period`}>Period</label>{' '}
      <select
        id={`${id}-period`}
        value={choosing ? 'custom' : 'range' in period ? period.range : 'custom'}
        onChange={(event) => {
          const value = event.target.value;
          if (value === 'custom') return setChoosing(true);
          setChoosing(false);
          onChange({ range: value as Range });
        }}
      >
        {(Object.keys(RANGE_LABELS) as Range[]).map((range) => (
          <option key={range} value={range}>
            {RANGE_LABELS[range]}
          </option>
        ))}
        <option value="custom">Custom days…</option>
      </select>
      {choosing && (
        <form className="custom-period" onSubmit={apply} aria-label="Custom period">
          <label>
            First day{' '}
            <input
              type="date"
              required
              max={today}
              value={first}
              onChange={(e) => setFirst(e.target.value)}
            />
          </label>{' '}
          <label>
            Last day{' '}
            <input type="date" required max={today} value={last} onChange={(e) => setLast(e.target.value)} />
          </label>{' '}
          <span className="muted">({viewerTimeZone()})</span>{' '}
          <button type="submit" className="button">
            Apply
          </button>
          {problem && (
            <p role="alert" className="form-problem">
              {problem}
            </p>
          )}
        </form>
      )}
    </div>
  );
}
