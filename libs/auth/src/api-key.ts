import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Keys we issue: `ats_` + 43 base64url characters (256 random bits). */
export function generateApiKey(): string {
  return `ats_${randomBytes(32).toString('base64url')}`;
}

/**
 * The only form in which a key is stored: hex SHA-256. Keys carry 256 bits, so no KDF is needed.
 * Computed for every request (the key cache is keyed by digest): crypto.hash, the one-shot form.
 */
export function digestApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What people see of a key in listings and logs. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 8);
}

/** Constant-time equality of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
