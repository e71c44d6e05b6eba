/**
 * What /api/usage answers: the types come from the API's one description (@gatehouse/api-contract), as
 * types only, so none of its schemas reach the browser's bundle.
 */
import type { ResponseOf, TileKey, UsageRange } from '@gatehouse/api-contract';

export type {
  Annotation,
  Annotations,
  BreakdownRow,
  Breakdowns,
  BrowserFamily,
  Dependencies,
  DeviceType,
  DependencyRow,
  ExceptionGroup,
  CustomEvents,
  Exceptions,
  Experience,
  Funnel,
  OperatingSystem,
  Overview,
  PageRow,
  Pages,
  Retention,
  RetentionUnit,
  Segment,
  SessionRow,
  Sessions,
  SessionTimeline,
  StoreFull,
  Tile,
  TileKey,
  TimelineItem,
  Timeseries,
  TimeseriesBucket as TimeseriesPoint,
  UsageRange as Range,
  UserFlows,
  VitalRating,
  VitalSummary,
  WebVitalName as Vital,
} from '@gatehouse/api-contract';

/** The periods the dashboard offers: every one the API answers for (the Record makes it exhaustive). */
export const RANGE_LABELS: Record<UsageRange, string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

/** The overview's tiles and their labels, in the order shown; a tile the API adds is a type error here. */
const TILE_LABELS: Record<TileKey, string> = {
  users: 'Users',
  signedInUsers: 'Signed-in users',
  verifiedUsers: 'Verified signed-in users',
  sessions: 'Sessions',
  pageViews: 'Page views',
  exceptions: 'Exceptions',
  failedCalls: 'Failed calls',
};
export const TILES = Object.entries(TILE_LABELS) as [TileKey, string][];

/** The Sign-in section's answer (its schema is its endpoint's, in the contract). */
export type SignInHealth = ResponseOf<'usageSignIn'>;
