import {
  browserFamilies,
  DIRECT,
  operatingSystems,
  webVitals,
  type OperatingSystem,
  type Segment,
} from '@gatehouse/api-contract';
import { LIST_LIMIT } from '../analytics/sql.js';
import { SIGNED_IN_IDS_LIMIT, TIMELINE_LIMIT } from '../analytics/usage-answers.js';
import { vitalThresholds } from '../store/vitals.js';
import { ownValue } from '../own-property.js';

/**
 * The usage dashboard's queries in KQL, over the Application Insights tables of a Log Analytics
 * workspace (https://learn.microsoft.com/azure/azure-monitor/reference/tables/apppageviews and the
 * pages beside it). Counts are `sum(ItemCount)`: a sampled row stands for ItemCount items. Distinct
 * counts are `dcount`, Kusto's estimate (within about 1 % at the default accuracy), where the local
 * store counts exactly. Every value put into a query is one the API validated (an enum, a role matching
 * ROLE, a session id matching SESSION_ID), and written as a KQL string literal all the same.
 */

/** The tables the dashboard reads, as the `union` of the queries that read them all. */
export const APP_TABLES = [
  'AppPageViews',
  'AppExceptions',
  'AppDependencies',
  'AppEvents',
  'AppBrowserTimings',
  'AppMetrics',
] as const;

/** A panel whose question KQL over these tables cannot answer honestly. */
export class NotAvailableError extends Error {
  override readonly name = 'NotAvailableError';
  readonly code = 'not_available';
  constructor(
    message: string,
    /** The Azure portal's own view of it, when there is one. */
    readonly portalView?: string,
  ) {
    super(message);
  }
}

/** A KQL string literal (double-quoted, backslash escapes: the same as JSON's for these values). */
export const str = (value: string) => JSON.stringify(value);
export const datetime = (ms: number) => `datetime(${new Date(ms).toISOString()})`;

/** The segment's condition on a row of the App tables, as `| where …` (or nothing). */
export function segmentKql(segment: Segment = {}): string {
  const parts: string[] = [];
  if (segment.auth) {
    parts.push(`${segment.auth === 'signed-in' ? 'isnotempty' : 'isempty'}(UserAuthenticatedId)`);
  }
  if (segment.role) {
    parts.push(`strcat(",", tostring(Properties.roles), ",") contains_cs ${str(`,${segment.role},`)}`);
  }
  // Azure's ClientBrowser is the family and its version ("Chrome 120.0").
  if (segment.browser) parts.push(`ClientBrowser startswith ${str(segment.browser)}`);
  if (segment.device) {
    throw new NotAvailableError(
      'The device segment is not available with Azure Monitor as the source: its tables have no device class.',
    );
  }
  if (segment.os) {
    const prefix = ownValue(OS_PREFIXES, segment.os);
    if (prefix === undefined) throw new RangeError(`Unknown operating system ${segment.os}`);
    parts.push(`ClientOS startswith ${str(prefix)}`);
  }
  if (segment.referrer) {
    // The session's, as the local store's (segmentSql): sessions with a page view from that site.
    const referred = `AppPageViews${sourceKql}`;
    parts.push(
      segment.referrer === DIRECT
        ? `isnotempty(SessionId) and SessionId !in ((${referred} | distinct SessionId))`
        : `SessionId in ((${referred} | where source == ${str(segment.referrer)} | distinct SessionId))`,
    );
  }
  return parts.length > 0 ? `\n| where ${parts.join(' and ')}` : '';
}

/** How Azure's ClientOS ("Windows 10", "Mac OS X 10.15", "iOS 18.1", "Chrome OS") starts, per system. */
const OS_PREFIXES: Record<OperatingSystem, string> = {
  Windows: 'Windows',
  macOS: 'Mac OS',
  iOS: 'iOS',
  Android: 'Android',
  Linux: 'Linux',
  ChromeOS: 'Chrome OS',
};
const hostKql = (url: string) => `tolower(tostring(parse_url(${url}).Host))`;
/**
 * A page view's referring host (`source`), as the store derives it at load: the host of the `refUri`
 * property (the browser SDK's), none when it is the page's own; rows without one are left out.
 */
const sourceKql = `
| extend source = ${hostKql('tostring(Properties.refUri)')}
| where isnotempty(source) and source != ${hostKql('Url')}`;

const between = (from: number, to: number) =>
  `TimeGenerated >= ${datetime(from)} and TimeGenerated < ${datetime(to)}`;
const allTables = `union ${APP_TABLES.join(', ')}`;
const FAILED_CALL = `Type == "AppDependencies" and Success == false`;

export function overviewKql(before: number, from: number, to: number, segment?: Segment): string {
  return `${allTables}
| where ${between(before, to)}${segmentKql(segment)}
| extend current = TimeGenerated >= ${datetime(from)}
| summarize users = dcountif(UserId, isnotempty(UserId)),
    signed_in = dcountif(UserAuthenticatedId, isnotempty(UserAuthenticatedId)),
    sessions = dcountif(SessionId, isnotempty(SessionId)),
    page_views = sumif(ItemCount, Type == "AppPageViews"),
    exceptions = sumif(ItemCount, Type == "AppExceptions"),
    failed_calls = sumif(ItemCount, ${FAILED_CALL})
    by current`;
}

export function timeseriesKql(from: number, to: number, bucketMs: number, segment?: Segment): string {
  return `${allTables}
| where ${between(from, to)}${segmentKql(segment)}
| summarize users = dcountif(UserId, isnotempty(UserId)),
    sessions = dcountif(SessionId, isnotempty(SessionId)),
    page_views = sumif(ItemCount, Type == "AppPageViews"),
    exceptions = sumif(ItemCount, Type == "AppExceptions"),
    failed_calls = sumif(ItemCount, ${FAILED_CALL})
    by bucket = bin_at(TimeGenerated, ${bucketMs}ms, ${datetime(from)})`;
}

/** (`views` is a word of Kusto's: bracketed, it names the column as the store's SQL does.) */
export function pagesKql(from: number, to: number, segment?: Segment): string {
  return `AppPageViews
| where ${between(from, to)}${segmentKql(segment)}
| summarize ['views'] = sum(ItemCount), users = dcountif(UserId, isnotempty(UserId)),
    avg_ms = avg(DurationMs), p95_ms = percentile(DurationMs, 95) by name = Name
| order by ['views'] desc, name asc
| take ${LIST_LIMIT}`;
}

export function exceptionsKql(from: number, to: number, segment?: Segment): string {
  return `AppExceptions
| where ${between(from, to)}${segmentKql(segment)}
| extend message = coalesce(OuterMessage, Message), top_frame = tostring(Details[0].parsedStack[0].method),
    stack = tostring(Details[0].rawStack), problem_id = ProblemId
| summarize n = sum(ItemCount), users = dcountif(UserId, isnotempty(UserId)),
    first_seen = min(TimeGenerated), last_seen = max(TimeGenerated),
    arg_max(TimeGenerated, problem_id, stack) by type = ExceptionType, message, top_frame
| order by n desc, last_seen desc
| take ${LIST_LIMIT}`;
}

export function dependenciesKql(from: number, to: number, segment?: Segment): string {
  return `AppDependencies
| where ${between(from, to)}${segmentKql(segment)}
| summarize n = sum(ItemCount), failures = sumif(ItemCount, Success == false),
    p50_ms = percentile(DurationMs, 50), p95_ms = percentile(DurationMs, 95) by target = Target, name = Name
| order by n desc, target asc, name asc
| take ${LIST_LIMIT}`;
}

export function sessionsKql(from: number, to: number, limit: number, segment?: Segment): string {
  return `${allTables}
| where ${between(from, to)} and isnotempty(SessionId)${segmentKql(segment)}
| summarize auth_user = max(UserAuthenticatedId), anon_user = max(UserId),
    start = min(TimeGenerated), end = max(TimeGenerated),
    pages = sumif(ItemCount, Type == "AppPageViews"),
    errors = sumif(ItemCount, Type == "AppExceptions" or (${FAILED_CALL})) by session_id = SessionId
| order by start desc, session_id asc
| take ${limit}`;
}

export function signedInIdsKql(from: number, to: number, segment?: Segment): string {
  return `${allTables}
| where ${between(from, to)} and isnotempty(UserAuthenticatedId)${segmentKql(segment)}
| distinct UserAuthenticatedId
| take ${SIGNED_IN_IDS_LIMIT}`;
}

/** One session's items; over the retention the workspace keeps (the query's time span). */
export function timelineKql(sessionId: string): string {
  return `${allTables}
| where SessionId == ${str(sessionId)}
| extend type = case(Type == "AppPageViews", "pageview", Type == "AppExceptions", "exception",
    Type == "AppDependencies", "dependency", Type == "AppEvents", "event", Type == "AppMetrics", "metric",
    "pageviewperformance")
| order by TimeGenerated asc
| project t = TimeGenerated, type, name = Name, url = Url, operation_id = OperationId, duration_ms = DurationMs,
    success = Success, result_code = ResultCode, target = Target, message = coalesce(OuterMessage, Message),
    auth_user_id = UserAuthenticatedId, user_id = UserId
| take ${TIMELINE_LIMIT + 1}`;
}

export function eventsKql(from: number, to: number, segment?: Segment): string {
  return `AppEvents
| where ${between(from, to)}${segmentKql(segment)}
| summarize n = sum(ItemCount), users = dcountif(UserId, isnotempty(UserId)),
    sessions = dcountif(SessionId, isnotempty(SessionId)) by name = Name
| order by n desc, name asc
| take ${LIST_LIMIT}`;
}

const thresholds = webVitals
  .map((name) => `${str(name)}, ${vitalThresholds[name].good}, ${vitalThresholds[name].poor}`)
  .join(',\n  ');

/**
 * Web vitals (ADR 0034) from AppMetrics: one row per measurement, its value `Sum / ItemCount` (one
 * measurement: the value). Rows `inPeriod` feed the table (overall and per `page` property), the
 * others the chart, per bucket.
 */
export function experienceKql(
  from: number,
  to: number,
  chartFrom: number,
  chartTo: number,
  bucketMs: number,
  segment?: Segment,
): string {
  return `let t = datatable(Name: string, good: real, poor: real) [
  ${thresholds}
];
let v = AppMetrics
| where TimeGenerated >= ${datetime(Math.min(from, chartFrom))} and TimeGenerated < ${datetime(Math.max(to, chartTo))}
| where Name in (${webVitals.map(str).join(', ')})${segmentKql(segment)}
| extend value = Sum / ItemCount, page = tostring(Properties.page)
| lookup kind = inner t on Name;
let inPeriod = v | where ${between(from, to)};
union
  (inPeriod | summarize n = count(), p75 = percentile(value, 75), goodCount = countif(value <= good),
      poorCount = countif(value > poor) by Name | extend scope = "all"),
  (inPeriod | summarize n = count(), p75 = percentile(value, 75), goodCount = countif(value <= good),
      poorCount = countif(value > poor) by Name, page | extend scope = "page"),
  (v | where ${between(chartFrom, chartTo)}
      | summarize n = count(), p75 = percentile(value, 75) by Name, bucket = bin_at(TimeGenerated, ${bucketMs}ms, ${datetime(chartFrom)})
      | extend scope = "bucket")`;
}

/** How fresh the workspace is: its latest item, and the median ingestion delay of the last hour's items. */
export function freshnessKql(now: number): string {
  return `${allTables}
| where TimeGenerated > ${datetime(now - 3_600_000)}
| summarize latest = max(TimeGenerated), delayMs = percentile(tolong((ingestion_time() - TimeGenerated) / 1ms), 50)`;
}

/**
 * The breakdowns (analytics/breakdowns.ts): visitors by browser family and operating system (Azure's
 * ClientBrowser and ClientOS, named as the local store names them), and the period's total. Azure's
 * tables have no device class: that list is empty.
 */
export function breakdownsKql(from: number, to: number, segment?: Segment): string {
  const family = (column: string, names: readonly string[], prefix: (name: string) => string) =>
    `case(${names.map((n) => `${column} startswith ${str(prefix(n))}, ${str(n)}`).join(', ')}, "")`;
  return `let rows = ${allTables}
| where ${between(from, to)}${segmentKql(segment)}
| where isnotempty(UserId)
| project UserId, browser = ${family('ClientBrowser', browserFamilies, (n) => n)},
    os = ${family('ClientOS', operatingSystems, (n) => OS_PREFIXES[n as OperatingSystem])};
union
  (rows | summarize visitors = dcount(UserId) | extend dim = "total", value = ""),
  (rows | where isnotempty(browser) | summarize visitors = dcount(UserId) by value = browser | extend dim = "browser"),
  (rows | where isnotempty(os) | summarize visitors = dcount(UserId) by value = os | extend dim = "os")`;
}

/** Visitors by their session's referring host ('' for none): from `sourcesFrom` (a day before `from`) to `to`. */
export function referrersKql(sourcesFrom: number, from: number, to: number, segment?: Segment): string {
  return `let sources = AppPageViews
| where ${between(sourcesFrom, to)}${sourceKql}
| distinct SessionId, source;
${allTables}
| where ${between(from, to)}${segmentKql(segment)}
| where isnotempty(SessionId) and isnotempty(UserId)
| distinct SessionId, UserId
| join kind = leftouter sources on SessionId
| summarize visitors = dcount(UserId) by value = source
| order by visitors desc, value asc
| take ${LIST_LIMIT}`;
}
