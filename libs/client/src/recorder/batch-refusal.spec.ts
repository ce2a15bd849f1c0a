import { AuditTrailError } from '../errors';
import { isTransient, refusedItems } from './batch-refusal';

const refusal = (status: number, fields: { field: string; message: string }[], code = 'VALIDATION_ERROR') =>
  new AuditTrailError(status, code as AuditTrailError['code'], 'refused', { fields });

describe('a refused batch', () => {
  it('names the events the 400 names, with their fields', () => {
    const items = refusedItems(
      refusal(400, [
        { field: 'events[3].actor', message: 'actor must be a string' },
        { field: 'events[3].action', message: 'action is required' },
        { field: 'events[0]', message: 'not an object' },
      ]),
      5,
    );
    expect([...items!.keys()].sort()).toEqual([0, 3]);
    expect(items!.get(3)!.map((f) => f.field)).toEqual(['events[3].actor', 'events[3].action']);
  });

  it('is refused whole when the refusal names no single event', () => {
    expect(refusedItems(refusal(400, [{ field: 'events', message: 'at most 1000' }]), 5)).toBeNull();
    expect(refusedItems(refusal(400, [{ field: 'events[9].actor', message: 'x' }]), 5)).toBeNull();
    expect(refusedItems(refusal(403, [], 'FORBIDDEN'), 5)).toBeNull();
  });

  it('is retried on no answer, 408, 429, 5xx and 409 IDEMPOTENCY_IN_PROGRESS only', () => {
    const transient = [
      [0, 'NETWORK_ERROR'],
      [408, 'VALIDATION_ERROR'],
      [429, 'RATE_LIMITED'],
      [500, 'INTERNAL_ERROR'],
      [503, 'SERVICE_UNAVAILABLE'],
      [409, 'IDEMPOTENCY_IN_PROGRESS'],
    ] as const;
    const final = [
      [400, 'VALIDATION_ERROR'],
      [401, 'UNAUTHORIZED'],
      [409, 'CONFLICT'],
      [413, 'PAYLOAD_TOO_LARGE'],
      [422, 'IDEMPOTENCY_KEY_REUSED'],
    ] as const;
    expect(transient.map(([s, c]) => isTransient(new AuditTrailError(s, c, '')))).toEqual(transient.map(() => true));
    expect(final.map(([s, c]) => isTransient(new AuditTrailError(s, c, '')))).toEqual(final.map(() => false));
  });
});
