/**
 * The funnel's rules, once: the usage API's query schema, the collector's check before any SQL, and the
 * SPA's editor all take them from here. Plain values (no schema), so the SPA's bundle gets no zod for them.
 */

/** What a step matches: a page (its page view's name) or a custom event (its name). */
export const funnelStepKinds = ['page', 'event'] as const;
export type FunnelStepKind = (typeof funnelStepKinds)[number];

/** A funnel step, in order: its kind and the name it matches. */
export interface FunnelStep {
  kind: FunnelStepKind;
  name: string;
}

/** How many steps a funnel has. */
export const FUNNEL_STEPS = { min: 2, max: 5 } as const;

/** The longest name a step may match (a page view's or a custom event's name). */
export const FUNNEL_STEP_NAME_MAX = 512;

/** Why `steps` is not a funnel, or null when it is one. */
export function funnelStepsProblem(steps: readonly FunnelStep[]): string | null {
  if (steps.length < FUNNEL_STEPS.min || steps.length > FUNNEL_STEPS.max)
    return `A funnel has ${FUNNEL_STEPS.min} to ${FUNNEL_STEPS.max} steps`;
  for (const step of steps)
    if (!funnelStepKinds.includes(step.kind) || !step.name || step.name.length > FUNNEL_STEP_NAME_MAX)
      return `Each step is a page or an event, with a name of 1 to ${FUNNEL_STEP_NAME_MAX} characters`;
  return null;
}
