import { AuditTrailError, FieldError } from '../errors';

const ITEM = /^events\[(\d+)\]/;

/**
 * The items of a refused batch that the refusal names (docs/contract.md §9: every bad item is named in
 * `details.fields[].field` by its path, `events[3].actor`), each with the fields naming it; null when
 * the refusal names no item in range (then it concerns the whole batch: 401, 403, 413, a 400 on
 * `events` itself), so the whole batch is refused.
 */
export function refusedItems(error: AuditTrailError, size: number): Map<number, FieldError[]> | null {
  if (error.status !== 400) return null;
  const items = new Map<number, FieldError[]>();
  for (const field of error.fields) {
    const match = ITEM.exec(field.field);
    if (!match) return null;
    const index = Number(match[1]);
    if (index >= size) return null;
    items.set(index, [...(items.get(index) ?? []), field]);
  }
  return items.size > 0 ? items : null;
}

/** Worth sending again with the same key: no answer, 408, 429, 5xx, and a batch still being written (409). */
export function isTransient(error: AuditTrailError): boolean {
  return (
    error.status === 0 ||
    error.status === 408 ||
    error.status === 429 ||
    error.status >= 500 ||
    (error.status === 409 && error.code === 'IDEMPOTENCY_IN_PROGRESS')
  );
}
