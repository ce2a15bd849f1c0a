import { ulid } from 'ulid';
import { EVENT_ID, ulidToUuid, ulidToUuidOrNull, uuidToUlid } from './ids';

describe('ids stored as uuid (ulidToUuid, uuidToUlid)', () => {
  it("gives the ULID's 16 bytes: the spec's example and the extremes", () => {
    expect(ulidToUuid('evt_01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBe('01563e3a-b5d3-d676-4c61-efb99302bd5b');
    expect(ulidToUuid('evt_00000000000000000000000000')).toBe('00000000-0000-0000-0000-000000000000');
    expect(ulidToUuid('evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ')).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    expect(uuidToUlid('evt', 'ffffffff-ffff-ffff-ffff-ffffffffffff')).toBe('evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(uuidToUlid('chn', '01563E3A-B5D3-D676-4C61-EFB99302BD5B')).toBe('chn_01ARZ3NDEKTSV4RRFFQ69G5FAV');
  });

  it('reads back every id it stores, in the same order', () => {
    const ids = Array.from({ length: 2000 }, () => `evt_${ulid()}`);
    ids.push('evt_0123456789ABCDEFGHJKMNPQRS', 'evt_7TVWXYZ0123456789ABCDEFGHJ');
    for (const id of ids) expect(uuidToUlid('evt', ulidToUuid(id))).toBe(id);
    const sorted = [...ids].sort();
    expect(sorted.map(ulidToUuid)).toEqual(ids.map(ulidToUuid).sort());
  });

  it.each([
    ['a ULID above 128 bits', 'evt_8ZZZZZZZZZZZZZZZZZZZZZZZZZ'],
    ['a letter outside the alphabet', 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAI'],
    ['lower case', 'evt_01arz3ndektsv4rrffq69g5fav'],
    ['no underscore', 'evt-01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ['a digit short', 'evt_01ARZ3NDEKTSV4RRFFQ69G5FA'],
    ['a character beyond ASCII', 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAé'],
  ])('refuses %s', (_, id) => {
    expect(() => ulidToUuid(id)).toThrow('not a prefixed ULID of 128 bits');
  });

  it('refuses what is not a uuid', () => {
    expect(() => uuidToUlid('evt', '01563e3ab5d3d6764c61efb99302bd5b')).toThrow('not a uuid');
    expect(() => uuidToUlid('evt', '01563e3a-b5d3-d676-4c61-efb99302bd5g')).toThrow('not a uuid');
  });

  it('ulidToUuidOrNull: null for what is no storable id of the kind asked', () => {
    expect(ulidToUuidOrNull('chn_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'chn')).toBe('01563e3a-b5d3-d676-4c61-efb99302bd5b');
    expect(ulidToUuidOrNull('evt_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'chn')).toBeNull();
    expect(ulidToUuidOrNull('chn_8ZZZZZZZZZZZZZZZZZZZZZZZZZ', 'chn')).toBeNull();
    expect(ulidToUuidOrNull('payments', 'chn')).toBeNull();
  });

  it('EVENT_ID matches only the ids that can be stored', () => {
    expect(EVENT_ID.test('evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ')).toBe(true);
    expect(EVENT_ID.test('evt_8ZZZZZZZZZZZZZZZZZZZZZZZZZ')).toBe(false);
  });
});
