import { onCLS, onFCP, onINP, onLCP, onTTFB, type Metric } from 'web-vitals';

/** The Core Web Vitals and the two diagnostic ones Gatehouse reports, by web-vitals' names. */
export type WebVitalName = Metric['name'];

/** One final value of one vital for this page load, as web-vitals reports it. */
export interface WebVital {
  name: WebVitalName;
  /** Milliseconds, except CLS (a unitless score). */
  value: number;
  /** web-vitals' own verdict from Google's thresholds: good, needs-improvement or poor. */
  rating: Metric['rating'];
  /** How the page was reached (navigate, reload, back-forward, ...). */
  navigationType: Metric['navigationType'];
}

/**
 * Watches this page load's vitals; `report` gets each final value (LCP, CLS and INP when the page is
 * hidden, FCP and TTFB as soon as known). Lives in its own chunk, loaded with the SDK (after the first
 * paint, with consent): web-vitals reads the browser's buffered performance entries, so starting late
 * loses nothing.
 * See https://github.com/GoogleChrome/web-vitals#basic-usage.
 */
export function watchWebVitals(report: (vital: WebVital) => void): void {
  const send = ({ name, value, rating, navigationType }: Metric) =>
    report({ name, value, rating, navigationType });
  for (const on of [onLCP, onINP, onCLS, onFCP, onTTFB]) on(send);
}
