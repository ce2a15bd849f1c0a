import { neutralizeCell, toCsvRecord } from './csv-export.format';

describe('neutralizeCell', () => {
  it.each(['=1+1', '+1', '-1', '@SUM(1)', '\tx', '\rx'])('prefixes %j with a quote', (cell) => {
    expect(neutralizeCell(cell)).toBe(`'${cell}`);
  });

  it.each(['a=1', ' =1', "'=1", 'é', '1-2', '\nx', ''])('leaves %j alone', (cell) => {
    expect(neutralizeCell(cell)).toBe(cell);
  });

  it('keeps null as null (an empty field)', () => {
    expect(neutralizeCell(null)).toBeNull();
  });
});

describe('toCsvRecord', () => {
  it('puts the columns in order, context as JCS text, nulls as null', () => {
    const sut = toCsvRecord({
      id: 'evt_1',
      actor: '-alice',
      action: 'a.b',
      resource: null,
      context: { b: [1, 'x'], a: { d: 1, c: 2 } },
      chain: { id: 'chn_1', name: 'default', position: 7 },
      hash: 'h',
      previousHash: 'p',
      timestamp: '2026-01-01T00:00:00.000Z',
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(sut).toEqual([
      'evt_1',
      '2026-01-01T00:00:00.000Z',
      "'-alice",
      'a.b',
      null,
      'chn_1',
      'default',
      '7',
      'h',
      'p',
      '{"a":{"c":2,"d":1},"b":[1,"x"]}',
    ]);
  });
});
