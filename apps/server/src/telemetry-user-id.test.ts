import { createHash } from 'node:crypto';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  KEY_FILE,
  loadTelemetryUserIds,
  TelemetryUserIdError,
  TelemetryUserIds,
} from './telemetry-user-id.js';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';
const OTHER = 'another-secret-of-at-least-thirty-two-chars';

describe('TelemetryUserIds', () => {
  it('gives a stable 24-character id per issuer and subject, different for each', () => {
    const ids = new TelemetryUserIds([SECRET]);
    const alice = ids.idFor('https://idp.example', 'alice');
    expect(alice).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(ids.idFor('https://idp.example', 'alice')).toBe(alice);
    expect(ids.idFor('https://idp.example', 'bob')).not.toBe(alice);
    expect(ids.idFor('https://other.example', 'alice')).not.toBe(alice);
  });

  it('cannot be recomputed without the secret: not the old unsalted SHA-256, not under another key', () => {
    const alice = new TelemetryUserIds([SECRET]).idFor('https://idp.example', 'alice');
    const unsalted = createHash('sha256').update('https://idp.example\nalice').digest().subarray(0, 16);
    expect(alice).not.toContain(unsalted.toString('base64url').slice(0, 16));
    expect(new TelemetryUserIds([OTHER]).idFor('https://idp.example', 'alice')).not.toBe(alice);
  });

  it('verifies ids it issued, and refuses forged, altered or foreign ones', () => {
    const ids = new TelemetryUserIds([SECRET]);
    const alice = ids.idFor('https://idp.example', 'alice');
    expect(ids.isVerified(alice)).toBe(true);
    const flipped = `${alice.slice(0, 23)}${alice.endsWith('A') ? 'B' : 'A'}`;
    expect(ids.isVerified(flipped)).toBe(false);
    expect(ids.isVerified(`${alice.slice(0, 16)}AAAAAAAA`)).toBe(false);
    expect(ids.isVerified(new TelemetryUserIds([OTHER]).idFor('https://idp.example', 'alice'))).toBe(false);
    for (const junk of ['admin', '', null, undefined, `${alice}x`, 'x'.repeat(24)]) {
      expect(ids.isVerified(junk)).toBe(false);
    }
  });

  it('after a rotation issues new ids and still verifies those of the older secret', () => {
    const before = new TelemetryUserIds([SECRET]).idFor('https://idp.example', 'alice');
    const rotated = new TelemetryUserIds([OTHER, SECRET]);
    expect(rotated.idFor('https://idp.example', 'alice')).not.toBe(before);
    expect(rotated.isVerified(before)).toBe(true);
    expect(rotated.isVerified(rotated.idFor('https://idp.example', 'alice'))).toBe(true);
  });

  it('refuses a short secret', () => {
    expect(() => new TelemetryUserIds(['short'])).toThrow(TelemetryUserIdError);
    expect(() => new TelemetryUserIds([])).toThrow(TelemetryUserIdError);
  });
});

describe('loadTelemetryUserIds', () => {
  it('keeps a key of its own in the data directory, the same on the next start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-key-'));
    const first = await loadTelemetryUserIds(undefined, dir);
    const second = await loadTelemetryUserIds(undefined, dir);
    expect(second.idFor('i', 's')).toBe(first.idFor('i', 's'));
    expect((await stat(join(dir, KEY_FILE))).mode & 0o077).toBe(0);
    const configured = await loadTelemetryUserIds([SECRET], dir);
    expect(configured.idFor('i', 's')).toBe(new TelemetryUserIds([SECRET]).idFor('i', 's'));
    expect(configured.isVerified(first.idFor('i', 's'))).toBe(false);
  });
});
