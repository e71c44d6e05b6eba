import { useId, useState } from 'react';
import type { BrowserFamily, DeviceType, OperatingSystem, Segment } from './usage-api';

/** Every browser family and device class the API knows (the Records make the lists exhaustive). */
const BROWSERS: Record<BrowserFamily, string> = {
  Chrome: 'Chrome',
  Edge: 'Edge',
  Firefox: 'Firefox',
  Safari: 'Safari',
  Opera: 'Opera',
  'Samsung Internet': 'Samsung Internet',
};
export const DEVICES: Record<DeviceType, string> = {
  desktop: 'Desktop',
  mobile: 'Mobile',
  tablet: 'Tablet',
};
const SYSTEMS: Record<OperatingSystem, string> = {
  Windows: 'Windows',
  macOS: 'macOS',
  iOS: 'iOS',
  Android: 'Android',
  Linux: 'Linux',
  ChromeOS: 'ChromeOS',
};
const AUTH = { 'signed-in': 'Signed in', anonymous: 'Anonymous' } as const;
const KEYS = ['auth', 'role', 'browser', 'device', 'os', 'referrer'] as const;
/** Sessions that came from no other site (the API's DIRECT). */
export const DIRECT = '(direct)';
/** A referring site as the API takes it (its REFERRER_HOST): a host, lower case. */
const REFERRER = /^[a-z0-9._~:[\]-]{1,253}$/;

/** A referring site in words: its host, or "Direct / none". */
export const referrerLabel = (referrer: string) => (referrer === DIRECT ? 'Direct / none' : referrer);

const oneOf = <T extends string>(labels: Record<T, string>, value: string | null): T | undefined =>
  value !== null && Object.hasOwn(labels, value) ? (value as T) : undefined;

/** The segment in the page's address (`?device=mobile&role=admin`); unknown values are left out. */
export function segmentOf(params: URLSearchParams): Segment {
  const segment: Segment = {};
  const auth = oneOf(AUTH, params.get('auth'));
  const browser = oneOf(BROWSERS, params.get('browser'));
  const device = oneOf(DEVICES, params.get('device'));
  const os = oneOf(SYSTEMS, params.get('os'));
  const referrer = params.get('referrer');
  const role = params.get('role')?.trim();
  if (auth) segment.auth = auth;
  if (role) segment.role = role;
  if (browser) segment.browser = browser;
  if (device) segment.device = device;
  if (os) segment.os = os;
  if (referrer && (referrer === DIRECT || REFERRER.test(referrer))) segment.referrer = referrer;
  return segment;
}

/** The segment as query parameters for the usage API, each after `&`; empty for everyone. */
export function segmentQuery(segment: Segment): string {
  return Object.entries(segmentParams(segment))
    .map(([key, value]) => `&${key}=${encodeURIComponent(value)}`)
    .join('');
}

/** The segment as the page's own query parameters. */
export function segmentParams(segment: Segment): Record<string, string> {
  return Object.fromEntries(KEYS.flatMap((key) => (segment[key] ? [[key, segment[key]]] : [])));
}

const SEGMENT_WORDS: Record<string, string> = { 'signed-in': 'signed in', anonymous: 'anonymous' };
/** The segment in words, for the folded filter: "everyone", or its values ("mobile, role admin"). */
export function describeSegment(segment: Segment): string {
  const parts = [
    segment.auth && SEGMENT_WORDS[segment.auth],
    segment.role && `role ${segment.role}`,
    segment.browser,
    segment.device,
    segment.os,
    segment.referrer && `from ${referrerLabel(segment.referrer)}`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'everyone';
}

/**
 * Who the dashboard is about: every panel shows only the items of this segment. Choices apply at once;
 * the role when the field is left or Enter is pressed.
 */
export function SegmentFilter({
  segment,
  onChange,
}: {
  segment: Segment;
  onChange: (next: Segment) => void;
}) {
  const [role, setRole] = useState(segment.role ?? '');
  // Labels by id, not around their control: a wrapping label would add the chosen option to the name.
  const id = useId();
  const set = (key: (typeof KEYS)[number], value: string) => {
    const next: Segment = { ...segment };
    delete next[key];
    onChange(segmentOf(new URLSearchParams({ ...segmentParams(next), ...(value ? { [key]: value } : {}) })));
  };
  const select = <T extends string>(
    key: 'auth' | 'browser' | 'device' | 'os',
    label: string,
    labels: Record<T, string>,
  ) => (
    <span>
      <label htmlFor={`${id}-${key}`}>{label}</label>{' '}
      <select id={`${id}-${key}`} value={segment[key] ?? ''} onChange={(e) => set(key, e.target.value)}>
        <option value="">Any</option>
        {(Object.keys(labels) as T[]).map((value) => (
          <option key={value} value={value}>
            {labels[value]}
          </option>
        ))}
      </select>
    </span>
  );
  return (
    <fieldset className="segment-filter">
      <legend>Segment</legend>
      {select('auth', 'Users', AUTH)}
      <span>
        <label htmlFor={`${id}-role`}>Role</label>{' '}
        <input
          id={`${id}-role`}
          value={role}
          maxLength={64}
          placeholder="Any"
          onChange={(e) => setRole(e.target.value)}
          onBlur={() => set('role', role.trim())}
          onKeyDown={(e) => {
            if (e.key === 'Enter') set('role', role.trim());
          }}
        />
      </span>
      {select('browser', 'Browser', BROWSERS)}
      {select('device', 'Device', DEVICES)}
      {select('os', 'System', SYSTEMS)}
      {segment.referrer && (
        // Chosen from the Sources breakdown (there is no list of every site to pick from here).
        <span data-testid="segment-referrer">
          From {referrerLabel(segment.referrer)}{' '}
          <button type="button" className="link-button" onClick={() => set('referrer', '')}>
            Clear<span className="visually-hidden"> the referring site</span>
          </button>
        </span>
      )}
      {KEYS.some((key) => segment[key]) && (
        <button
          type="button"
          className="link-button"
          onClick={() => {
            setRole('');
            onChange({});
          }}
        >
          Everyone
        </button>
      )}
    </fieldset>
  );
}
