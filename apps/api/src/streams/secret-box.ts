import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRETS_KEY_FILE = 'secrets-key';
/** Sealed text: version 1 ‖ 12-byte IV ‖ 16-byte GCM tag ‖ ciphertext. */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals a destination's credentials (docs/contract.md §16: AES-256-GCM with a key from SECRETS_KEY). The
 * destination's id is the additional data: a sealed value copied onto another row does not open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  }

  seal(owner: string, value: unknown): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** The sealed value; throws (without the value) when the key or the owner is not the one that sealed it. */
  open<T>(owner: string, sealed: Buffer): T {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw new Error('not a sealed value');
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(owner, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      const text = Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
      return JSON.parse(text.toString('utf8')) as T;
    } catch {
      throw new Error('a stored credential does not open with SECRETS_KEY (was the key changed?)');
    }
  }
}

/**
 * SECRETS_KEY (base64 of 32 bytes) when set, else <dataDir>/secrets-key, generated there once (mode
 * 0600, created exclusively so that instances starting together agree on one key). The error never
 * repeats the value.
 */
export function loadSecretsKey(configured: string | null, dataDir: string, warn: (message: string) => void): Buffer {
  if (configured !== null) return parseSecretsKey(configured, 'SECRETS_KEY');
  const path = join(dataDir, SECRETS_KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    warn(
      `SECRETS_KEY is not set: generated the key of stored stream credentials in ${path} (mode 0600). ` +
        'Back it up with the database: without it, destinations must be given their credentials again.',
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if ((statSync(path).mode & 0o077) !== 0) warn(`${path} is readable by other users; it should be mode 0600.`);
  }
  return parseSecretsKey(readFileSync(path, 'utf8'), path);
}

function parseSecretsKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = /^[A-Za-z0-9+/]{43}=$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : null;
  if (key === null || key.length !== 32)
    throw new Error(`${source} must be base64 of 32 random bytes (e.g. \`openssl rand -base64 32\`)`);
  return key;
}
