import type { ITelemetryItem } from '@microsoft/applicationinsights-web';
import { afterEach, describe, expect, it } from 'vitest';
import { VisitReferrer } from './referrer';

const APP = 'https://gatehouse.example';

/** A page view as the SDK hands it to initializers: `refUri` defaults to document.referrer. */
const pageView = (refUri: string | undefined): ITelemetryItem => ({
  name: 'Microsoft.ApplicationInsights.Pageview',
  baseType: 'PageviewData',
  baseData: { name: 'Home', uri: `${APP}/`, ...(refUri === undefined ? {} : { refUri }) },
});
const refUriOf = (item: ITelemetryItem) => (item.baseData as { refUri?: string }).refUri;

afterEach(() => window.sessionStorage.clear());

describe('VisitReferrer', () => {
  it("keeps the referrer on the visit's first page view only", () => {
    const referrer = new VisitReferrer(APP, window.sessionStorage, new Set());
    const first = pageView('https://news.example/article?id=3');
    referrer.apply(first);
    expect(refUriOf(first)).toBe('https://news.example/article?id=3');
    // The SDK repeats document.referrer on every later page view of a single-page app.
    const later = pageView('https://news.example/article?id=3');
    referrer.apply(later);
    expect(refUriOf(later)).toBeUndefined();
    // A reload keeps document.referrer too: the same tab's visit has had its referrer.
    const afterReload = pageView('https://news.example/article?id=3');
    new VisitReferrer(APP, window.sessionStorage, new Set()).apply(afterReload);
    expect(refUriOf(afterReload)).toBeUndefined();
  });

  it("never counts the identity provider or the app's own origin as where a visit came from", () => {
    const provider = new Set(['login.microsoftonline.com']);
    for (const from of [
      'https://login.microsoftonline.com/tenant/oauth2/v2.0/authorize?client_id=x',
      'https://LOGIN.microsoftonline.com/',
      `${APP}/profile`,
    ]) {
      window.sessionStorage.clear();
      const item = pageView(from);
      new VisitReferrer(APP, window.sessionStorage, provider).apply(item);
      expect(refUriOf(item)).toBeUndefined();
    }
  });

  it('learns provider hosts after it was made (the authorization endpoint from discovery)', () => {
    const provider = new Set<string>();
    const referrer = new VisitReferrer(APP, window.sessionStorage, provider);
    provider.add('idp.example:8443');
    const item = pageView('https://idp.example:8443/authorize');
    referrer.apply(item);
    expect(refUriOf(item)).toBeUndefined();
  });

  it('leaves items other than page views, and a referrer that is not a URL goes', () => {
    const referrer = new VisitReferrer(APP, window.sessionStorage, new Set());
    const event: ITelemetryItem = { name: 'e', baseType: 'EventData', baseData: { name: 'x', refUri: 'y' } };
    referrer.apply(event);
    expect(event.baseData).toEqual({ name: 'x', refUri: 'y' });
    const odd = pageView('not a url');
    referrer.apply(odd);
    expect(refUriOf(odd)).toBeUndefined();
  });
});
