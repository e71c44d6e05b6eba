import type { ComponentType } from 'react';
import type { ApiQuery } from '../../auth/use-api';
import type { ChartMark } from './line-chart';
import type { SectionId } from './sections';
import type { Annotations, Overview } from './usage-api';
import type { View } from './view-state';

/**
 * Where a panel goes: its file says it (`export const panel = { section: 'behaviour', order: 20 } satisfies
 * PanelPlacement`), and the dashboard collects every `panels/*-panel.tsx` (collect-panels.ts).
 */
export interface PanelPlacement {
  section: SectionId;
  /** Its place within the section, smallest first; two panels of a section never share one. */
  order: number;
  /** Half the width where there is room: two half-width panels in a row share it (`.usage-grid`). */
  half?: boolean;
}

type Query<T> = ApiQuery<T> & { reload: () => void };

/** What the page gives every panel, the same for all: a panel asks for its own data with these. */
export interface PanelProps {
  /** The period, the large chart's figure and the segment, as the page's address holds them. */
  view: View;
  /** The period and the segment as a usage endpoint's query: `useEndpoint(path, { query }, every)`. */
  query: View['period'] & View['segment'];
  /** How often to ask again, in ms; undefined when the admin turned the refresh off. */
  every: number | undefined;
  /** Changes the view (and the address): a tile choosing the figure, a breakdown choosing a segment. */
  setView: (change: Partial<View>) => void;
  /** The period's annotations, for every time chart to draw. */
  marks: readonly ChartMark[];
  /** The annotations' own query, asked once by the page: the panel that adds one reloads it, and every chart redraws. */
  annotations: Query<Annotations>;
  /** The overview, asked once by the page (for its banner and period line): the tiles show it. */
  overview: Query<Overview>;
}

/** A panel file as `import.meta.glob` loads it. */
export interface PanelModule {
  panel: PanelPlacement;
  default: ComponentType<PanelProps>;
}
