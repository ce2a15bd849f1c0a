import canonicalize from 'canonicalize';
import { unstorableInText } from '@app/common/json/storable-text';

/** RFC 8785 (JCS) text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) {
    throw new TypeError('value has no JSON representation');
  }
  return text;
}

/**
 * Why a value cannot be stored and hashed byte-faithfully, or null when it can.
 * PostgreSQL rejects NUL in text and jsonb and lone surrogates in jsonb; integers beyond
 * ±(2^53−1) do not survive a round trip through a JSON parser; anything that is not plain
 * JSON (undefined, functions, NaN) has no canonical form.
 */
export function unstorableReason(value: unknown, depth = 0, maxDepth = Infinity): string | null {
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'string') return stringReason(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'numbers must be finite';
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      return 'integers must lie within ±(2^53−1)';
    }
    return null;
  }
  if (typeof value !== 'object') return `unsupported value of type ${typeof value}`;
  if (depth + 1 > maxDepth) return `nesting deeper than ${maxDepth} levels`;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    const reason = stringReason(key) ?? unstorableReason(child, depth + 1, maxDepth);
    if (reason) return reason;
  }
  return null;
}

function stringReason(text: string): string | null {
  const unstorable = unstorableInText(text);
  return unstorable === null ? null : `strings must not contain ${unstorable}`;
}
