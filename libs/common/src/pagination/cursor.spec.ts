import { AppError } from '../errors';
import { decodeCursor, encodeCursor, toPage } from './cursor';

describe('cursor codec', () => {
  const key = { time: '2026-11-22T07:24:53.449Z', id: 'evt_01KAR0000000000000000000AB' };

  it('round-trips a key through an opaque Base64url string', () => {
    const sut = encodeCursor(key);
    expect(sut).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sut).not.toContain(key.id);
    expect(decodeCursor(sut)).toEqual(key);
  });

  it.each([
    ['not base64', '%%%'],
    ['base64 of garbage', Buffer.from('hello').toString('base64url')],
    ['a JSON object', Buffer.from(JSON.stringify(key)).toString('base64url')],
    ['a wrong time', Buffer.from(JSON.stringify(['yesterday', key.id])).toString('base64url')],
    ['an impossible date', Buffer.from(JSON.stringify(['2026-13-40T00:00:00.000Z', key.id])).toString('base64url')],
    ['a wrong id', Buffer.from(JSON.stringify([key.time, "x' OR 1=1"])).toString('base64url')],
    ['three members', Buffer.from(JSON.stringify([key.time, key.id, 1])).toString('base64url')],
    ['too long', 'A'.repeat(500)],
  ])('rejects %s with a 400 VALIDATION_ERROR on field cursor', (_name, cursor) => {
    let error: unknown;
    try {
      decodeCursor(cursor);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'cursor', message: expect.any(String) }] },
    });
  });

  it('toPage keeps limit rows and points the cursor at the last one only when more exist', () => {
    const rows = [1, 2, 3].map((n) => ({
      time: `2026-11-22T07:24:5${n}.000Z`,
      id: `evt_01KAR000000000000000000${n}AB`,
    }));
    const full = toPage(rows, 2, (r) => r);
    expect(full.items).toEqual(rows.slice(0, 2));
    expect(decodeCursor(full.nextCursor!)).toEqual(rows[1]);
    expect(toPage(rows, 3, (r) => r)).toEqual({ items: rows });
  });
});
