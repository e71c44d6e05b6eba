import type { ReactNode } from 'react';
import type { CollectedSection } from './collect-panels';
import type { PanelProps } from './panel-props';
import type { SectionId } from './sections';

/**
 * Every panel of the dashboard: each file of panels/ that ends in `-panel.tsx` (its test files do not),
 * loaded with the page's chunk. Adding a panel is adding its file (docs/decisions/0103-dashboard-panels-from-their-files.md).
 */
export const PANEL_MODULES: Record<string, unknown> = import.meta.glob('./panels/*-panel.tsx', {
  eager: true,
});

/**
 * The sections in order, each with its panels in order, all given the same props. `after` adds the page's
 * own parts at the end of a section (the period line and the refresh switch of the overview).
 */
export function DashboardSections({
  sections,
  props,
  after = {},
}: {
  sections: readonly CollectedSection[];
  props: PanelProps;
  after?: Partial<Record<SectionId, ReactNode>>;
}) {
  return inRows(
    sections,
    ({ section }) => section.half === true,
    ({ section }) => section.id,
    ({ section, panels }) => {
      const content = (
        <>
          {inRows(
            panels,
            (panel) => panel.placement.half === true,
            (panel) => panel.file,
            ({ file, Component }) => (
              <Component key={file} {...props} />
            ),
          )}
          {after[section.id as SectionId]}
        </>
      );
      if (section.heading === null)
        return (
          <div key={section.id} id={section.id} className="usage-section">
            {content}
          </div>
        );
      const headingId = `${section.id}-heading`;
      return (
        <section key={section.id} id={section.id} className="usage-section" aria-labelledby={headingId}>
          <h2 id={headingId} className={section.headingHidden ? 'visually-hidden' : undefined}>
            {section.heading}
          </h2>
          {section.intro && <p className="muted">{section.intro}</p>}
          {content}
        </section>
      );
    },
  );
}

/**
 * Items as the page lays them out: a half-width item shares a row (`.usage-grid`, two columns where there
 * is room for two) with the half-width item after it; any other item has its own row.
 */
function inRows<T>(
  items: readonly T[],
  isHalf: (item: T) => boolean,
  keyOf: (item: T) => string,
  render: (item: T) => ReactNode,
): ReactNode[] {
  const rows: ReactNode[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    const next = items[i + 1];
    if (!isHalf(item)) {
      rows.push(render(item));
      continue;
    }
    const pair = next !== undefined && isHalf(next) ? [item, next] : [item];
    rows.push(
      <div key={`row-${keyOf(item)}`} className="usage-grid">
        {pair.map(render)}
      </div>,
    );
    i += pair.length - 1;
  }
  return rows;
}
