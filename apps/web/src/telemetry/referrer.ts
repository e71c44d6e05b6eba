import type { ITelemetryItem } from '@microsoft/applicationinsights-web';

/** Set once this tab's visit has sent its first page view (and with it, its referrer if any). */
export const REFERRED_KEY = 'gatehouse.telemetry-referred';
/** The SDK's page view base type (`PageView.dataType`). */
const PAGE_VIEW = 'PageviewData';

/**
 * A page view's `refUri` is where the visit came from, once per visit (docs/decisions/0106). The SDK
 * sets it to `document.referrer` on every page view, and a single-page app keeps one document: every
 * later page view, and every page after the return from the identity provider, would name the same
 * site again, or the provider. So the first page view of the tab's visit keeps it, unless it is this
 * app or the identity provider; every other page view has none.
 */
export class VisitReferrer {
  private readonly appHost: string;

  constructor(
    appOrigin: string,
    private readonly storage: Storage,
    /** The provider's hosts (`host[:port]`, lower case): its issuer, and the endpoints the app sent the browser to. */
    private readonly providerHosts: ReadonlySet<string>,
  ) {
    this.appHost = new URL(appOrigin).host;
  }

  apply(item: ITelemetryItem): void {
    if (item.baseType !== PAGE_VIEW || !item.baseData) return;
    const refUri: unknown = item.baseData.refUri;
    const first = !this.referred();
    if (first) this.markReferred();
    if (first && typeof refUri === 'string' && this.countsAsSource(refUri)) return;
    delete item.baseData.refUri;
  }

  private countsAsSource(refUri: string): boolean {
    const host = hostOf(refUri);
    return host !== undefined && host !== this.appHost && !this.providerHosts.has(host);
  }

  private referred(): boolean {
    try {
      return this.storage.getItem(REFERRED_KEY) !== null;
    } catch {
      return false;
    }
  }

  private markReferred(): void {
    try {
      this.storage.setItem(REFERRED_KEY, '1');
    } catch {
      // Without storage, each page load's first page view keeps its referrer: the filter above still holds.
    }
  }
}

/** The `host[:port]` of a URL, lower case (as URL gives it); undefined for anything that is not a URL. */
export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}
