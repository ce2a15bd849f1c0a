import type { ChainsResource } from '../resources/chains';
import type { EventsResource } from '../resources/events';
import type { Receipt } from '../types';
import { CheckpointCache, VerifiedCheckpoint } from './checkpoint-cache';
import { trustOf, verifyWithTrust } from './receipt-checks';

export interface VerifyReceiptOptions {
  /** The checkpoint verifier key(s) pinned out of band (GET /v1/checkpoint-key, checked once by a person). */
  key: string | readonly string[];
  /** Witness keys (cosignature/v1 verifier keys): the checkpoint must be witnessed by `quorum` of them (§18). */
  witnesses?: readonly string[];
  /** Default: every witness given. */
  quorum?: number;
  /** Where the last trusted checkpoint of each chain is kept: every newer one must be proven consistent with it. */
  trustDir?: string;
  /**
   * How long a verified checkpoint serves the receipts it covers before the chain's checkpoint is
   * fetched again (default 10,000 ms; 0: fetched for every receipt). Its signature, witnesses and
   * consistency are checked once per checkpoint, not per receipt; a history rewritten since is
   * caught at the next fetch.
   */
  checkpointMaxAgeMs?: number;
}

export type { VerifiedCheckpoint };

/** What a verified receipt was proven against. */
export interface ReceiptCheck {
  checkpoint: VerifiedCheckpoint;
  hashVersion: 1 | 2;
  /** The witness keys whose cosignatures counted (with `witnesses`). */
  witnessedBy: string[];
  /** With trustDir: the size trusted before this checkpoint was (null on first use). */
  trustedSize: number | null;
}

/**
 * docs/contract.md §20: the event's hash recomputed from what the service serves (version 1 or 2,
 * libs/hashing), its RFC 9162 inclusion in the tree of a checkpoint signed by the pinned key
 * (the proof's own roots are never read), the witnessed bundle's quorum when witness keys are
 * given, and with trustDir the consistency of that checkpoint with the last one trusted. Each
 * failure rejects with AuditTrailVerificationError naming the check; a call the service refuses
 * or that gets no answer rejects with AuditTrailError. The checkpoint comes from `cache` while a
 * verified one covers the receipt (checkpointMaxAgeMs): then a receipt costs the event and its
 * proof, fetched together, and hashing.
 */
export async function verifyReceipt(
  client: { events: EventsResource; chains: ChainsResource },
  receipt: Receipt,
  options: VerifyReceiptOptions,
  cache: CheckpointCache = new CheckpointCache(),
): Promise<ReceiptCheck> {
  return verifyWithTrust(client, receipt, trustOf(options), cache);
}
