import { ackLine, batchLine, eventLine, headerLine, parseSpoolLine, SpoolFormatError, voidLine } from './spool-format';
import { recoverSpool } from './spool-recovery';

const parse = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => parseSpoolLine(l)!);

describe('the spool format', () => {
  it('keeps an event’s JSON text byte for byte (a resend must be the same body)', () => {
    const text = '{"actor":"a","action":"x.y","context":{"n":1.50,"é":"\\u00e9"}}';
    expect(parseSpoolLine(eventLine(7, text).slice(0, -1))).toEqual({ t: 'e', n: 7, text });
  });

  it('reads every line type back', () => {
    const why = { status: 400, code: 'VALIDATION_ERROR', message: 'bad' };
    const lines = parse(headerLine(3) + batchLine('k1', [3, 4]) + ackLine('k1') + voidLine('k2', [5], why));
    expect(lines).toEqual([
      { t: 'h', v: 1, below: 3 },
      { t: 'b', k: 'k1', n: [3, 4] },
      { t: 'a', k: 'k1' },
      { t: 'v', k: 'k2', r: [5], why },
    ]);
  });

  it('ignores a line cut short by a crash, and refuses one it does not know', () => {
    expect(parseSpoolLine('{"t":"e","n":4,"e":{"actor":"a","act')).toBeNull();
    expect(() => parseSpoolLine('{"t":"z"}')).toThrow(SpoolFormatError);
    expect(() => parseSpoolLine('{"t":"h","v":99,"below":0}')).toThrow(/version 99/);
  });
});

describe('recovering a spool', () => {
  const e = (n: number) => eventLine(n, `{"actor":"a${n}","action":"x"}`);
  const why = { status: 400, code: 'VALIDATION_ERROR', message: 'bad' };

  it('resends a live batch with its key and bytes, then the events never batched, in order', () => {
    const spool = parse(headerLine(0) + e(0) + e(1) + e(2) + batchLine('k', [0, 1]) + e(3));
    const recovered = recoverSpool(spool);
    expect(recovered.live).toEqual([
      {
        key: 'k',
        events: [
          { seq: 0, text: '{"actor":"a0","action":"x"}' },
          { seq: 1, text: '{"actor":"a1","action":"x"}' },
        ],
      },
    ]);
    expect(recovered.unsent.map((x) => x.seq)).toEqual([2, 3]);
    expect(recovered.nextSeq).toBe(4);
  });

  it('sends nothing twice: acknowledged events are settled', () => {
    const spool = parse(headerLine(0) + e(0) + e(1) + batchLine('k', [0, 1]) + ackLine('k') + e(2));
    expect(recoverSpool(spool)).toEqual({
      live: [],
      unsent: [{ seq: 2, text: '{"actor":"a2","action":"x"}' }],
      nextSeq: 3,
    });
  });

  it('after a refusal, the rejected events are settled and the rest go again (under a new key once one is written)', () => {
    const refused = headerLine(0) + e(0) + e(1) + e(2) + batchLine('k1', [0, 1, 2]) + voidLine('k1', [1], why);
    expect(recoverSpool(parse(refused)).unsent.map((x) => x.seq)).toEqual([0, 2]);
    const rebatched = recoverSpool(parse(refused + batchLine('k2', [0, 2])));
    expect(rebatched.live.map((b) => [b.key, b.events.map((x) => x.seq)])).toEqual([['k2', [0, 2]]]);
    expect(rebatched.unsent).toEqual([]);
  });

  it('takes a removed file’s events as settled (the header’s below) and numbers on from there', () => {
    expect(recoverSpool(parse(headerLine(40) + batchLine('old', [12]) + e(41)))).toEqual({
      live: [],
      unsent: [{ seq: 41, text: '{"actor":"a41","action":"x"}' }],
      nextSeq: 42,
    });
    expect(recoverSpool(parse(headerLine(40))).nextSeq).toBe(40);
  });
});
