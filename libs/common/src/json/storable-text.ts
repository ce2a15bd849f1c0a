/** U+0000, or a UTF-16 surrogate that is not half of a pair (the `u` flag reads a pair as one code point). */
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/**
 * What of `text` cannot be stored as it is, or null when nothing: PostgreSQL refuses U+0000 in
 * `text` and `jsonb` (22021, 22P05) and a lone surrogate in `jsonb` (22P02), and UTF-8 has no
 * encoding for a lone surrogate (it would become U+FFFD). The one rule, worded to end
 * "must not contain …" (docs/contract.md §8: one check for every string).
 */
export function unstorableInText(text: string): string | null {
  const at = text.search(UNSTORABLE);
  if (at === -1) return null;
  return text.charCodeAt(at) === 0 ? 'the NUL character (\\u0000)' : 'lone UTF-16 surrogates';
}
