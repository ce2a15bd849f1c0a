import { AppError } from '../errors';
import { CHAINS_CURSOR, EVENTS_CURSOR } from './cursor';
import { like } from '../testing/like.fixture';

describe('cursor codecs', () => {
  const key = { time: '2026-11-22T07:24:53.449Z', id: 'evt_01KAR0000000000000000000AB' };
  const chainKey = { time: key.time, id: 'chn_01KAR0000000000000000000AB' };
  const account = 'acc_01KAR0000000000000000000AB';
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** The account's digest as the codec writes it (second member). */
  const digest = (JSON.parse(Buffer.from(EVENTS_CURSOR.encode(account, key), 'base64url').toString()) as string[])[1];

  it('round-trips a key through an opaque Base64url string', () => {
    const sut = EVENTS_CURSOR.encode(account, key);
    expect(sut).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sut).not.toContain(key.id);
    expect(Buffer.from(sut, 'base64url').toString()).not.toContain(account);
    expect(EVENTS_CURSOR.decode(account, sut)).toEqual(key);
    expect(CHAINS_CURSOR.decode(account, CHAINS_CURSOR.encode(account, chainKey))).toEqual(chainKey);
  });

  it.each([
    ['not base64', '%%%'],
    ['base64 of garbage', Buffer.from('hello').toString('base64url')],
    ['a JSON object', b64(key)],
    ['a cursor of the chains endpoint', CHAINS_CURSOR.encode(account, chainKey)],
    ['a cursor issued to another account', EVENTS_CURSOR.encode('acc_01KAR0000000000000000000AC', key)],
    ['a chains cursor relabelled', b64(['events', digest, chainKey.time, chainKey.id])],
    ['an unlabelled cursor (the first form)', b64([key.time, key.id])],
    ['a cursor without its account (the second form)', b64(['events', key.time, key.id])],
    ['a wrong time', b64(['events', digest, 'yesterday', key.id])],
    ['an impossible date', b64(['events', digest, '2026-13-40T00:00:00.000Z', key.id])],
    ['a wrong id', b64(['events', digest, key.time, "x' OR 1=1"])],
    ['five members', b64(['events', digest, key.time, key.id, 1])],
    ['too long', 'A'.repeat(500)],
  ])('the events codec rejects %s with a 400 VALIDATION_ERROR on field cursor', (_name, cursor) => {
    let error: unknown;
    try {
      EVENTS_CURSOR.decode(account, cursor);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'cursor', message: like.any(String) }] },
    });
  });

  it('the chains codec rejects a cursor of the events endpoint', () => {
    expect(() => CHAINS_CURSOR.decode(account, EVENTS_CURSOR.encode(account, key))).toThrow(AppError);
  });

  it('page keeps limit rows and points the cursor at the last one only when more exist', () => {
    const rows = [1, 2, 3].map((n) => ({
      time: `2026-11-22T07:24:5${n}.000Z`,
      id: `evt_01KAR000000000000000000${n}AB`,
    }));
    const full = EVENTS_CURSOR.page(account, rows, 2, (r) => r);
    expect(full.items).toEqual(rows.slice(0, 2));
    expect(EVENTS_CURSOR.decode(account, full.nextCursor!)).toEqual(rows[1]);
    expect(EVENTS_CURSOR.page(account, rows, 3, (r) => r)).toEqual({ items: rows });
  });
});
