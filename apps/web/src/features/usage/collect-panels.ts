import type { ComponentType } from 'react';
import type { PanelPlacement, PanelProps } from './panel-props';
import { SECTIONS, type Section } from './sections';

export type PanelPlacementErrorCode = 'no_placement' | 'no_component' | 'unknown_section' | 'duplicate_order';

/** A panel file the dashboard cannot place: the message names the file and what to change. */
export class PanelPlacementError extends Error {
  override readonly name = 'PanelPlacementError';
  constructor(
    readonly code: PanelPlacementErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface CollectedPanel {
  /** The panel's file, as the glob names it (`./panels/pages-panel.tsx`): a key, and what errors name. */
  file: string;
  placement: PanelPlacement;
  Component: ComponentType<PanelProps>;
}

export interface CollectedSection {
  section: Section;
  /** In their order. */
  panels: CollectedPanel[];
}

/**
 * Every section of sections.ts, in order, with the panels that name it, in their order: from the panel
 * files as `import.meta.glob` loads them (dashboard.tsx). A placement TypeScript would refuse still fails
 * here, for a file that skipped `satisfies`; two panels at one order fail here only.
 */
export function collectPanels(modules: Record<string, unknown>): CollectedSection[] {
  const known = new Map<string, Section>(SECTIONS.map((section) => [section.id, section]));
  const taken = new Map<string, string>();
  const panels = Object.entries(modules).map(([file, module]): CollectedPanel => {
    const { panel, default: Component } = (module ?? {}) as { panel?: unknown; default?: unknown };
    if (!isPlacement(panel))
      throw new PanelPlacementError(
        'no_placement',
        `${file} exports no placement: add \`export const panel = { section, order } satisfies PanelPlacement\`.`,
      );
    if (typeof Component !== 'function')
      throw new PanelPlacementError(
        'no_component',
        `${file} exports no component: export the panel's component as default.`,
      );
    if (!known.has(panel.section))
      throw new PanelPlacementError(
        'unknown_section',
        `${file} places its panel in the section "${panel.section}", which the dashboard does not have (sections.ts has ${[...known.keys()].join(', ')}).`,
      );
    const slot = `${panel.section}\n${panel.order}`;
    const other = taken.get(slot);
    if (other !== undefined)
      throw new PanelPlacementError(
        'duplicate_order',
        `${file} and ${other} both take order ${panel.order} of the section "${panel.section}": give one another order.`,
      );
    taken.set(slot, file);
    return { file, placement: panel, Component: Component as ComponentType<PanelProps> };
  });
  return SECTIONS.map((section) => ({
    section,
    panels: panels
      .filter((p) => p.placement.section === section.id)
      .sort((a, b) => a.placement.order - b.placement.order),
  }));
}

function isPlacement(value: unknown): value is PanelPlacement {
  if (typeof value !== 'object' || value === null) return false;
  const { section, order } = value as Record<string, unknown>;
  return typeof section === 'string' && typeof order === 'number' && Number.isFinite(order);
}
