import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of the id part (96 bits: no collision among any realistic number of users). */
const ID_BYTES = 12;
/** Bytes of the proof tag (48 bits: a forger posting guesses over HTTP would need ~2^47 tries). */
const TAG_BYTES = 6;
/** base64url of 18 bytes: 24 characters, within the SDK's 128-character id limit and its id charset. */
const ID_PATTERN = /^[A-Za-z0-9_-]{24}$/;

export class TelemetryUserIdError extends Error {
  override readonly name = 'TelemetryUserIdError';
  readonly code = 'telemetry_user_id_secret_invalid';
}

/**
 * The pseudonymous user id telemetry carries for a signed-in user (docs/decisions/0017): a keyed hash
 * (HMAC-SHA-256) of issuer and subject, so it cannot be reversed or recomputed without the server's
 * secret, followed by a tag (HMAC of the id part) that proves the server issued it. Anyone holding a
 * secret can check an id alone; a forged `authUserId` fails the check.
 */
export class TelemetryUserIds {
  readonly #secrets: Buffer[];

  /** `secrets[0]` issues ids; every one of them verifies ids (older secrets, after a rotation). */
  constructor(secrets: readonly string[]) {
    if (secrets.length === 0 || secrets.some((secret) => secret.length < 32)) {
      throw new TelemetryUserIdError('Each telemetry user id secret must be at least 32 characters long.');
    }
    this.#secrets = secrets.map((secret) => Buffer.from(secret, 'utf8'));
  }

  idFor(issuer: string, subject: string): string {
    const key = this.#secrets[0] as Buffer;
    const id = mac(key, `gatehouse-user-id\n${issuer}\n${subject}`).subarray(0, ID_BYTES);
    return Buffer.concat([id, tag(key, id)]).toString('base64url');
  }

  /** Whether this server (under its current or an older secret) issued the id. */
  isVerified(candidate: string | null | undefined): boolean {
    if (typeof candidate !== 'string' || !ID_PATTERN.test(candidate)) return false;
    const bytes = Buffer.from(candidate, 'base64url');
    const id = bytes.subarray(0, ID_BYTES);
    const given = bytes.subarray(ID_BYTES);
    return this.#secrets.some((key) => timingSafeEqual(tag(key, id), given));
  }
}

/** Where the key lives when TELEMETRY_USER_ID_SECRET is unset: beside the telemetry it protects. */
export const KEY_FILE = 'telemetry-user-id.key';

/**
 * The configured secrets, else the key kept in the data directory, made (random, owner-only) on the
 * first start: ids stay stable across restarts, and deleting the file rotates them.
 */
export async function loadTelemetryUserIds(
  configured: readonly string[] | undefined,
  dataDir: string,
): Promise<TelemetryUserIds> {
  if (configured) return new TelemetryUserIds(configured);
  const file = join(dataDir, KEY_FILE);
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(file, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return new TelemetryUserIds([(await readFile(file, 'utf8')).trim()]);
}

function mac(key: Buffer, message: string | Buffer): Buffer {
  return createHmac('sha256', key).update(message).digest();
}

function tag(key: Buffer, id: Buffer): Buffer {
  return mac(key, Buffer.concat([Buffer.from('gatehouse-user-id-proof\n'), id])).subarray(0, TAG_BYTES);
}
