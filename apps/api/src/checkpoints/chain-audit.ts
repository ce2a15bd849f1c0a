import { GENESIS_HASH, NoteVerifier, verifyChainCheckpoint } from '@app/hashing';
import type { WindowReport } from './chain-window';
import { ChainVerificationError, ChainVerificationView } from './dto/chain-verification.view';

/** More would only make the answer large; `errorsTruncated` and firstInvalidPosition still tell. */
export const MAX_REPORTED_ERRORS = 100;

export interface AuditedEvent {
  id: string;
  /** False when the event's account is not its chain's. */
  ownAccount: boolean;
  position: number;
  hash: string;
  previousHash: string;
}

export interface StoredCheckpoint {
  size: number;
  hash: string;
  note: string;
}

/**
 * Whole-chain verification as a fold: feed it the chain's windows (or events) in position order
 * and the stored checkpoints with the event at each checkpoint's size, then the head facts; it
 * keeps O(1) state besides the (capped) error list.
 */
export class ChainAudit {
  private expectedPosition = 1;
  private previousHash = GENESIS_HASH;
  private last: { position: number; hash: string; id: string } | null = null;
  private checkedEvents = 0;
  private checkpointsChecked = 0;
  private errorCount = 0;
  private firstInvalidPosition: number | null = null;
  private readonly errors: ChainVerificationError[] = [];

  constructor(
    private readonly chain: { id: string },
    /** The service's checkpoint key, then its retired ones. */
    private readonly verifiers: readonly NoteVerifier[],
  ) {}

  /** A window's events, then its checkpoints. */
  addWindow({ events: { run, events }, checkpoints }: WindowReport): void {
    if (run) {
      // Its first event is checked against what came before; the others were checked, against
      // their predecessors, where the window was hashed: as if each had been added.
      this.addEvent(run.first, run.first.hash);
      this.checkedEvents += run.count - 1;
      this.previousHash = run.last.hash;
      this.expectedPosition = run.last.position + 1;
      this.last = { position: run.last.position, hash: run.last.hash, id: run.last.id };
    }
    for (const event of events) this.addEvent(event, event.computedHash);
    for (const { checkpoint, event } of checkpoints) this.addCheckpoint(checkpoint, event);
  }

  /** `computedHash` is the hash recomputed from the event's stored payload. */
  addEvent(event: AuditedEvent, computedHash: string): void {
    this.checkedEvents++;
    const { position, id } = event;
    const gap = position > this.expectedPosition;
    if (gap) {
      const missing =
        this.expectedPosition === position - 1
          ? `position ${this.expectedPosition} is`
          : `positions ${this.expectedPosition}–${position - 1} are`;
      this.fail(
        this.expectedPosition,
        null,
        `the event at ${missing} missing: the chain has a gap before position ${position}`,
      );
    } else if (position < this.expectedPosition) {
      this.fail(position, id, `position ${position} occurs more than once`);
    }
    if (!event.ownAccount) this.fail(position, id, 'the event belongs to another account than its chain');
    if (computedHash !== event.hash) {
      this.fail(
        position,
        id,
        `the stored hash ${event.hash} does not match the hash recomputed from the event, ${computedHash}: the event was altered`,
      );
    }
    if (!gap && event.previousHash !== this.previousHash) {
      this.fail(
        position,
        id,
        position === 1
          ? 'the first event of a chain must have a previousHash of 64 zeros'
          : `previousHash does not match the hash of the event at position ${position - 1}: an event before it was altered, removed or renumbered`,
      );
    }
    this.previousHash = event.hash;
    this.expectedPosition = position + 1;
    this.last = { position, hash: event.hash, id };
  }

  /** `event` is the stored event at position `checkpoint.size`, or null when there is none. */
  addCheckpoint(checkpoint: StoredCheckpoint, event: { id: string; hash: string } | null): void {
    this.checkpointsChecked++;
    const { size } = checkpoint;
    const opened = verifyChainCheckpoint(checkpoint.note, this.verifiers);
    if (!opened.ok) {
      this.fail(
        size,
        event?.id ?? null,
        `the stored checkpoint of size ${size} is not signed by this service's checkpoint key nor a retired one (${opened.message}): it was forged or altered, or signed by an earlier key missing from RETIRED_VERIFIER_KEYS`,
      );
      return;
    }
    const signed = opened.checkpoint;
    if (signed.chainId !== this.chain.id || signed.size !== size || signed.hash !== checkpoint.hash) {
      this.fail(size, event?.id ?? null, `the stored checkpoint row of size ${size} does not match its signed note`);
      return;
    }
    const actual = size === 0 ? GENESIS_HASH : (event?.hash ?? null);
    if (actual === null) {
      this.fail(size, null, `a checkpoint was signed at size ${size}, but the event at position ${size} is missing`);
    } else if (actual !== signed.hash) {
      this.fail(
        size,
        event?.id ?? null,
        `the checkpoint signed at size ${size} has head ${signed.hash}, but the event at position ${size} has hash ${actual}: the chain was rewritten after it was signed`,
      );
    }
  }

  /** The head read before the walk: `position` events, the last with `hash`. */
  checkHead(head: { position: number; hash: string }): void {
    const lastPosition = this.last?.position ?? 0;
    if (lastPosition < head.position) {
      this.fail(
        lastPosition + 1,
        null,
        `the chain head says ${head.position} events, but no event was found after position ${lastPosition}`,
      );
    } else if ((this.last?.hash ?? GENESIS_HASH) !== head.hash) {
      this.fail(
        head.position,
        this.last?.id ?? null,
        `the chain head hash ${head.hash} is not the hash of the event at position ${head.position}`,
      );
    }
  }

  /** Checkpoints signed for more events than the chain now has. */
  checkpointsAboveHead(count: number, smallestSize: number, headPosition: number): void {
    if (count === 0) return;
    this.checkpointsChecked += count;
    this.fail(
      smallestSize,
      null,
      `${count} checkpoint(s) were signed for more events than the chain now has (${headPosition}), the smallest at size ${smallestSize}: events were removed`,
    );
  }

  eventsBeyondHead(count: number, firstPosition: number, headPosition: number): void {
    if (count > 0)
      this.fail(firstPosition, null, `${count} event(s) lie beyond the chain head at position ${headPosition}`);
  }

  result(verifiedAt: Date): ChainVerificationView {
    return {
      valid: this.errorCount === 0,
      chainId: this.chain.id,
      checkedEvents: this.checkedEvents,
      lastPosition: this.last?.position ?? 0,
      lastHash: this.last?.hash ?? GENESIS_HASH,
      firstInvalidPosition: this.firstInvalidPosition,
      checkpointsChecked: this.checkpointsChecked,
      errors: [...this.errors],
      errorCount: this.errorCount,
      errorsTruncated: this.errorCount > this.errors.length,
      verifiedAt: verifiedAt.toISOString(),
    };
  }

  private fail(position: number, eventId: string | null, message: string): void {
    this.errorCount++;
    if (this.firstInvalidPosition === null || position < this.firstInvalidPosition)
      this.firstInvalidPosition = position;
    if (this.errors.length < MAX_REPORTED_ERRORS) this.errors.push({ position, eventId, message });
  }
}
