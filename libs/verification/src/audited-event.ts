/**
 * The words the chain audit and its parts share (chain-audit.ts reads what chain-window.ts and
 * prune-record.ts report, each in these terms), here so that none of them imports the others back.
 */

/** An event as the whole-chain audit checks it. */
export interface AuditedEvent {
  id: string;
  /** False when the event's account is not its chain's. */
  ownAccount: boolean;
  position: number;
  hash: string;
  previousHash: string;
  /** ISO 8601 UTC with milliseconds, as hashed. */
  timestamp: string;
  /** Erased fields that the database's erasure record does not explain (unrecordedErasures); absent: none. */
  unrecordedErasures?: string[];
}

export interface StoredCheckpoint {
  size: number;
  hash: string;
  note: string;
}
