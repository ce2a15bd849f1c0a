/**
 * What was thrown, or handed to a callback as its error, as an Error: itself when it is one (the
 * usual case, passed on unchanged), else wrapped with the value as its cause.
 */
export function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown), { cause: thrown });
}
