/** One of a few options, as a row of toggles (radio buttons underneath: one tab stop, arrow keys move). */
export function SegmentedChoice<T extends string>({
  legend,
  name,
  labels,
  value,
  onChange,
}: {
  legend: string;
  name: string;
  /** Each option's label, in the order shown. */
  labels: Record<T, string>;
  value: T;
  onChange: (value: T) => void;
}) {
  return (
    <fieldset className="segmented">
      <legend>{legend}</legend>
      {(Object.keys(labels) as T[]).map((option) => (
        <label key={option}>
          <input
            type="radio"
            name={name}
            value={option}
            checked={value === option}
            onChange={() => onChange(option)}
          />
          {labels[option]}
        </label>
      ))}
    </fieldset>
  );
}
