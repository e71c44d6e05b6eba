/** What /api/usage answers (see /api/openapi.json). */
export const RANGES = ['1h', '24h', '7d', '30d'] as const;
export type Range = (typeof RANGES)[number];

export interface Tile {
  value: number;
  previous: number;
  /** Relative change against the previous period, or null when there was nothing before. */
  change: number | null;
}

export const TILES = [
  ['users', 'Users'],
  ['signedInUsers', 'Signed-in users'],
  ['verifiedUsers', 'Verified signed-in users'],
  ['sessions', 'Sessions'],
  ['pageViews', 'Page views'],
  ['exceptions', 'Exceptions'],
  ['failedCalls', 'Failed calls'],
] as const;
export type TileKey = (typeof TILES)[number][0];

/** Every answer names the period it covers. */
export interface Period {
  range: Range;
  from: string;
  to: string;
}

export interface Overview extends Period {
  previousFrom: string;
  tiles: Record<TileKey, Tile>;
}

export interface TimeseriesPoint {
  start: string;
  users: number;
  sessions: number;
  pageViews: number;
  exceptions: number;
  failedCalls: number;
}

export interface Timeseries extends Period {
  bucketMs: number;
  buckets: TimeseriesPoint[];
}

export interface PageRow {
  name: string;
  views: number;
  users: number;
  avgDurationMs: number | null;
  p95DurationMs: number | null;
}

export interface ExceptionGroup {
  type: string | null;
  message: string | null;
  topFrame: string | null;
  count: number;
  usersAffected: number;
  firstSeen: string;
  lastSeen: string;
  sampleStack: string | null;
}

export interface DependencyRow {
  target: string | null;
  name: string | null;
  count: number;
  failureRate: number;
  p50DurationMs: number | null;
  p95DurationMs: number | null;
}

export interface SessionRow {
  sessionId: string;
  user: string | null;
  authenticated: boolean;
  /** The authenticated user id is one this server issued (a forged one is not). */
  verified: boolean;
  start: string;
  lengthMs: number;
  pages: number;
  errors: number;
}

export type Pages = Period & { pages: PageRow[] };
export type Exceptions = Period & { exceptions: ExceptionGroup[] };
export type Dependencies = Period & { dependencies: DependencyRow[] };
export type Sessions = Period & { sessions: SessionRow[] };

export interface SessionTimeline {
  sessionId: string;
  user: string | null;
  authenticated: boolean;
  /** The authenticated user id is one this server issued (a forged one is not). */
  verified: boolean;
  items: TimelineItem[];
  /** True when the session has more items than one answer carries. */
  truncated: boolean;
}

export interface TimelineItem {
  time: string;
  type: string;
  name: string | null;
  operationId: string | null;
  durationMs: number | null;
  success: boolean | null;
  message: string | null;
}

/** The web vitals the Experience section shows, in the order it shows them. */
export const VITALS = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'] as const;
export type Vital = (typeof VITALS)[number];
export type VitalRating = 'good' | 'needs-improvement' | 'poor';

export interface VitalSummary {
  count: number;
  /** Milliseconds, except CLS (a score). */
  p75: number | null;
  rating: VitalRating | null;
  /** Shares, 0–1. */
  good: number;
  needsImprovement: number;
  poor: number;
}

export interface Experience extends Period {
  overall: Partial<Record<Vital, VitalSummary>>;
  pages: { page: string; vitals: Partial<Record<Vital, VitalSummary>> }[];
  bucketMs: number;
  trend: { start: string; p75: Record<Vital, number | null> }[];
}
