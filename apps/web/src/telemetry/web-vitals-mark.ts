/**
 * The performance mark the telemetry facade sets once web-vitals watches the page load: from then on an
 * input ends LCP's measure and reports it. A module of its own, so the end-to-end tests can name it.
 */
export const WEB_VITALS_MARK = 'gatehouse:web-vitals-watching';
