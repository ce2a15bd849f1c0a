import { AuditTrailError, AuditTrailVerificationError } from '../errors';
import type { Receipt } from '../types';
import { UncoveredError } from '../verify/receipt-checks';
import type { ReceiptVerdict } from '../verify/verify-receipts';
import { ReceiptChecker, VerifyMany } from './receipt-checker';

/** The background checker over a verify function that judges each receipt as a test says. */
describe('the recorder’s background receipt checker', () => {
  const receipt = (position: number): Receipt => ({ id: `evt_${position}`, chainId: 'chn_x', position, hash: 'h' });
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  function judge(verdict: (r: Receipt, attempt: number) => true | AuditTrailVerificationError | AuditTrailError) {
    const rounds: number[][] = [];
    const attempts = new Map<number, number>();
    const verify: VerifyMany = (receipts) => {
      rounds.push(receipts.map((r) => r.position));
      return Promise.resolve(
        receipts.map((r): ReceiptVerdict => {
          const attempt = (attempts.get(r.position) ?? 0) + 1;
          attempts.set(r.position, attempt);
          const v = verdict(r, attempt);
          return v === true
            ? {
                receipt: r,
                ok: true,
                check: {
                  checkpoint: { chainId: 'chn_x', size: 9, hash: 'h' },
                  hashVersion: 2,
                  witnessedBy: [],
                  trustedSize: null,
                },
              }
            : { receipt: r, ok: false, error: v };
        }),
      );
    };
    return { verify, rounds };
  }

  it('checks what the sample draws, in rounds, and reports each failure with its receipt', async () => {
    const failures: [number, string][] = [];
    const { verify, rounds } = judge((r) =>
      r.position === 3 ? new AuditTrailVerificationError('inclusion', 'forged') : true,
    );
    const checker = new ReceiptChecker(
      verify,
      {
        key: 'k',
        sample: 0.5,
        onFailure: (r, e) => failures.push([r.position, e instanceof AuditTrailVerificationError ? e.reason : e.code]),
      },
      (
        (draws) => () =>
          draws.shift()!
      )([0.1, 0.9, 0.2, 0.7, 0.4]),
    );
    [1, 2, 3, 4, 5].forEach((p) => checker.offer(receipt(p)));
    await until(() => checker.counters.checked === 3);
    await checker.close();
    expect(rounds.flat()).toEqual([1, 3, 5]);
    expect(failures).toEqual([[3, 'inclusion']]);
    expect(checker.counters).toEqual({ checked: 3, failed: 1, skipped: 0 });
  });

  it('tries again a receipt its checkpoint does not cover yet, and one the service did not answer for', async () => {
    const failures: Receipt[] = [];
    const { verify } = judge((r, attempt) => {
      if (attempt > 1) return true;
      return r.position === 1
        ? new UncoveredError('witnesses', 'not yet')
        : new AuditTrailError(503, 'SERVICE_UNAVAILABLE', 'busy');
    });
    const checker = new ReceiptChecker(verify, { key: 'k', sample: 1, onFailure: (r) => failures.push(r) });
    checker.offer(receipt(1));
    checker.offer(receipt(2));
    await until(() => checker.counters.checked === 2);
    await checker.close();
    expect(failures).toEqual([]);
  });

  it('reports what still fails after maxWaitMs', async () => {
    const failures: string[] = [];
    const { verify } = judge(() => new UncoveredError('witnesses', 'never witnessed'));
    const checker = new ReceiptChecker(verify, {
      key: 'k',
      sample: 1,
      maxWaitMs: 0,
      onFailure: (_, e) => failures.push(e.message),
    });
    checker.offer(receipt(1));
    await until(() => failures.length === 1);
    await checker.close();
    expect(failures).toEqual(['witnesses: never witnessed']);
  });

  it('never blocks nor grows past its queue: a full queue skips, and close() stops it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: number[] = [];
    const verify: VerifyMany = async (receipts) => {
      seen.push(...receipts.map((r) => r.position));
      await gate;
      return receipts.map((r) => ({ receipt: r, ok: false, error: new AuditTrailVerificationError('hash', 'x') }));
    };
    const failures: number[] = [];
    const checker = new ReceiptChecker(verify, {
      key: 'k',
      sample: 1,
      maxQueue: 3,
      batchSize: 2,
      onFailure: (r) => failures.push(r.position),
    });
    checker.offer(receipt(1));
    checker.offer(receipt(2));
    await until(() => seen.length === 2); // a round of 2 under way, the queue empty
    for (let p = 3; p <= 8; p++) checker.offer(receipt(p));
    expect(checker.waiting).toBe(3);
    expect(checker.counters.skipped).toBe(3);
    const closed = checker.close();
    release();
    await closed;
    checker.offer(receipt(9));
    expect(failures).toEqual([1, 2]); // the round under way is reported; what waited is not checked
    expect(seen).toEqual([1, 2]);
  });

  it('refuses a sample outside 0..1', () => {
    const { verify } = judge(() => true);
    expect(() => new ReceiptChecker(verify, { key: 'k', sample: 2, onFailure: () => undefined })).toThrow(TypeError);
  });
});
