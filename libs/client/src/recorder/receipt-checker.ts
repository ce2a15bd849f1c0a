import { AuditTrailError, AuditTrailVerificationError } from '../errors';
import type { Receipt } from '../types';
import type { ReceiptVerdict, VerifyReceiptsOptions } from '../verify/verify-receipts';
import { UncoveredError } from '../verify/receipt-checks';
import { Wakeup } from './wakeup';

/** verifyReceipts as the client gives it. */
export type VerifyMany = (receipts: readonly Receipt[], options: VerifyReceiptsOptions) => Promise<ReceiptVerdict[]>;

/** The recorder's background check of acknowledged receipts (issue 38: a sample, checked continuously). */
export interface CheckReceiptsOptions extends VerifyReceiptsOptions {
  /** The share of receipts checked, 0..1 (default 0.01), each drawn at random. */
  sample?: number;
  /** Called for each receipt that does not check out, or whose event or proof the service refuses. */
  onFailure: (receipt: Receipt, error: AuditTrailVerificationError | AuditTrailError) => void;
  /** Receipts waiting to be checked, at most (default 10,000): past it, the sample skips (counted in `skipped`). */
  maxQueue?: number;
  /** Receipts verified per round (default 1,000). */
  batchSize?: number;
  /**
   * How long a receipt may wait for a checkpoint that covers it (the witnessed one lags the chain)
   * or for the service to answer at all, before that is reported as its failure (default 300,000 ms).
   */
  maxWaitMs?: number;
}

export interface ReceiptCheckCounters {
  /** Receipts verified. */
  checked: number;
  /** Receipts reported through onFailure. */
  failed: number;
  /** Receipts drawn for the sample but not queued: the queue was full. */
  skipped: number;
}

interface Pending {
  receipt: Receipt;
  since: number;
  /** Not before this (Date.now()): a receipt waiting for its checkpoint or for the service. */
  notBefore: number;
}

const RETRY_MS = 1000;

/**
 * Verifies a sample of the receipts a recorder gets, in the background, in rounds of verifyReceipts
 * (one checkpoint check per chain, see verify-receipts.ts), and reports each failure through
 * `onFailure`. offer() never blocks and never throws: the queue is bounded and a full one skips.
 * A receipt whose checkpoint does not cover it yet (witnessing lags) and a call that gets no answer
 * or a 5xx/429 are tried again each second, and reported once `maxWaitMs` has passed.
 */
export class ReceiptChecker {
  readonly counters: ReceiptCheckCounters = { checked: 0, failed: 0, skipped: 0 };
  private queue: Pending[] = [];
  private readonly wakeup = new Wakeup();
  private readonly stop = new AbortController();
  private readonly sample: number;
  private readonly maxQueue: number;
  private readonly batchSize: number;
  private readonly maxWaitMs: number;
  private readonly running: Promise<void>;

  constructor(
    private readonly verify: VerifyMany,
    private readonly options: CheckReceiptsOptions,
    private readonly random: () => number = Math.random,
  ) {
    this.sample = options.sample ?? 0.01;
    if (!(this.sample >= 0 && this.sample <= 1)) throw new TypeError('checkReceipts.sample must be from 0 to 1');
    this.maxQueue = options.maxQueue ?? 10_000;
    this.batchSize = options.batchSize ?? 1000;
    this.maxWaitMs = options.maxWaitMs ?? 300_000;
    if (typeof options.onFailure !== 'function') throw new TypeError('checkReceipts.onFailure must be a function');
    this.running = this.run();
  }

  /** A receipt acknowledged: queued for checking when the sample draws it and the queue has room. */
  offer(receipt: Receipt): void {
    if (this.stop.signal.aborted || this.sample === 0 || this.random() >= this.sample) return;
    if (this.queue.length >= this.maxQueue) {
      this.counters.skipped++;
      return;
    }
    const now = Date.now();
    this.queue.push({ receipt, since: now, notBefore: now });
    if (this.queue.length >= this.batchSize || this.queue.length === 1) this.wakeup.notify();
  }

  /** Receipts waiting to be checked. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Stops: what waits is not checked; the round under way is awaited for at most `waitMs` (its
   * failures are still reported when it ends, also later).
   */
  async close(waitMs = 5000): Promise<void> {
    this.stop.abort();
    this.wakeup.notify();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise<void>((done) => (timer = setTimeout(done, waitMs)))]);
    clearTimeout(timer);
  }

  private async run(): Promise<void> {
    while (!this.stop.signal.aborted) {
      const now = Date.now();
      const due = this.queue.filter((p) => p.notBefore <= now).slice(0, this.batchSize);
      if (due.length === 0) {
        const next = this.queue.reduce((min, p) => Math.min(min, p.notBefore), Infinity);
        await this.wakeup.wait(next === Infinity ? undefined : next - now, this.stop.signal);
        continue;
      }
      const taken = new Set(due);
      this.queue = this.queue.filter((p) => !taken.has(p));
      await this.round(due);
    }
  }

  private async round(due: Pending[]): Promise<void> {
    let verdicts: ReceiptVerdict[];
    try {
      verdicts = await this.verify(
        due.map((p) => p.receipt),
        this.options,
      );
    } catch (error) {
      // Not a verdict (a bug, a broken option): every receipt of the round is reported with it.
      const failure = new AuditTrailError(0, 'BAD_RESPONSE', error instanceof Error ? error.message : String(error));
      due.forEach((p) => this.report(p.receipt, failure));
      return;
    }
    const now = Date.now();
    verdicts.forEach((verdict, i) => {
      const pending = due[i]!;
      if (verdict.ok) {
        this.counters.checked++;
        return;
      }
      if (waitable(verdict.error) && now - pending.since < this.maxWaitMs && !this.stop.signal.aborted) {
        this.queue.push({ ...pending, notBefore: now + RETRY_MS });
        return;
      }
      this.counters.checked++;
      this.report(pending.receipt, verdict.error);
    });
  }

  private report(receipt: Receipt, error: AuditTrailVerificationError | AuditTrailError): void {
    this.counters.failed++;
    try {
      this.options.onFailure(receipt, error);
    } catch {
      // The application's callback: its own failure is not the check's.
    }
  }
}

/** A failure that time may mend: no covering checkpoint yet, or no answer (network, 429, 5xx). */
function waitable(error: AuditTrailVerificationError | AuditTrailError): boolean {
  if (error instanceof UncoveredError) return true;
  return error instanceof AuditTrailError && (error.status === 0 || error.status === 429 || error.status >= 500);
}
