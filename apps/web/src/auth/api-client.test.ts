// @vitest-environment node
import type { ApiUser, Funnel, SessionTimeline } from '@gatehouse/api-contract';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { apiUrl, type AnswerOf, type RequestAt } from './api-client';

describe('apiUrl', () => {
  it('fills path parameters and writes the query in order, each value encoded once, a list as a repeated key', () => {
    expect(apiUrl('/me')).toBe('/api/me');
    expect(apiUrl('/usage/sessions/{id}/timeline', { params: { id: 'a/b c' } })).toBe(
      '/api/usage/sessions/a%2Fb%20c/timeline',
    );
    expect(
      apiUrl('/usage/funnel', {
        query: {
          range: '24h',
          role: undefined,
          device: 'mobile',
          step: ['page:Home', 'event:Report, exported'],
        },
      }),
    ).toBe('/api/usage/funnel?range=24h&device=mobile&step=page%3AHome&step=event%3AReport%2C%20exported');
    expect(() => apiUrl('/usage/users/{id}/export')).toThrow('needs its id parameter');
  });
});

describe('the client takes its types from the contract', () => {
  it('infers the answer and the request from the method and path', () => {
    expectTypeOf<AnswerOf<'get', '/me'>>().toEqualTypeOf<ApiUser>();
    expectTypeOf<AnswerOf<'get', '/usage/funnel'>>().toEqualTypeOf<Funnel>();
    expectTypeOf<AnswerOf<'get', '/usage/sessions/{id}/timeline'>>().toEqualTypeOf<SessionTimeline>();
    expectTypeOf<RequestAt<'get', '/usage/sessions/{id}/timeline'>['params']>().toEqualTypeOf<{
      id: string;
    }>();
    // @ts-expect-error: a path the contract does not have is no path of the client's.
    expectTypeOf<AnswerOf<'get', '/usage/nothing'>>().toBeNever();
    // @ts-expect-error: the erasure is a DELETE, not a GET.
    expectTypeOf<AnswerOf<'get', '/usage/users/{id}'>>().toBeNever();
  });
});
