import { vi } from 'vitest';
import type { PanelProps } from './panel-props';
import type { View } from './view-state';

const loading = { status: 'loading' as const, reload: () => {} };

/** What the page gives a panel, for a panel's test: the view given (the defaults else), nothing shared yet. */
export function panelProps(view: Partial<View> = {}, more: Partial<PanelProps> = {}): PanelProps {
  const whole: View = { period: { range: '24h' }, figure: 'users', segment: {}, ...view };
  return {
    view: whole,
    query: { ...whole.period, ...whole.segment },
    every: undefined,
    setView: vi.fn(),
    marks: [],
    annotations: loading,
    overview: loading,
    ...more,
  };
}
