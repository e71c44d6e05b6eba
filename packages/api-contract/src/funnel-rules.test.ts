import { describe, expect, it } from 'vitest';
import { FUNNEL_STEP_NAME_MAX, funnelStepsProblem, type FunnelStep } from './funnel-rules.js';
import { funnelQuery } from './analytics.js';

const page = (name: string): FunnelStep => ({ kind: 'page', name });

describe('the funnel rules', () => {
  it('accepts 2 to 5 named page or event steps', () => {
    expect(funnelStepsProblem([page('Home'), { kind: 'event', name: 'Report exported' }])).toBeNull();
    expect(funnelStepsProblem([1, 2, 3, 4, 5].map((i) => page(`P${i}`)))).toBeNull();
  });

  it('names what is wrong with a funnel that breaks them', () => {
    expect(funnelStepsProblem([page('Home')])).toBe('A funnel has 2 to 5 steps');
    expect(funnelStepsProblem([1, 2, 3, 4, 5, 6].map((i) => page(`P${i}`)))).toBe(
      'A funnel has 2 to 5 steps',
    );
    const badName = /^Each step is a page or an event, with a name of 1 to 512 characters$/;
    expect(funnelStepsProblem([page('Home'), page('')])).toMatch(badName);
    expect(funnelStepsProblem([page('Home'), page('x'.repeat(FUNNEL_STEP_NAME_MAX + 1))])).toMatch(badName);
    expect(funnelStepsProblem([page('Home'), { kind: 'metric' as 'page', name: 'x' }])).toMatch(badName);
  });

  it('are the ones the API query checks', () => {
    const query = (steps: string[]) => funnelQuery.safeParse({ range: '24h', step: steps }).success;
    expect(query(['page:Home', 'event:Report exported'])).toBe(true);
    expect(query(['page:Home'])).toBe(false);
    expect(query(['page:A', 'page:B', 'page:C', 'page:D', 'page:E', 'page:F'])).toBe(false);
    expect(query(['page:Home', `page:${'x'.repeat(FUNNEL_STEP_NAME_MAX)}`])).toBe(true);
    expect(query(['page:Home', `page:${'x'.repeat(FUNNEL_STEP_NAME_MAX + 1)}`])).toBe(false);
    expect(query(['page:Home', 'metric:LCP'])).toBe(false);
  });
});
