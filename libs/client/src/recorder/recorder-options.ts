import type { AuditTrailError, FieldError } from '../errors';
import type { NewEvent } from '../types';
import type { BackoffPolicy } from './backoff';
import type { CheckReceiptsOptions } from './receipt-checker';
import type { FsyncMode } from './spool';

/** What an application configures and observes of a recorder (docs/contract.md §20). */
export interface RecorderOptions {
  /** Durable mode: record() resolves once the event is fsynced here, and a restart sends what was not acknowledged. */
  spoolDir?: string;
  /** Events per batch (default 500, at most 1,000: docs/contract.md §9). */
  maxBatchEvents?: number;
  /** Bytes of event JSON per batch (default 1 MiB; the service takes 8 MiB). */
  maxBatchBytes?: number;
  /** How long a batch that is not full waits for more events (default 200 ms). */
  lingerMs?: number;
  /** When the memory queue is full: `block` makes record() wait for room; `spill` (needs spoolDir) keeps the event in the spool only. Default: `spill` with a spoolDir, else `block`. */
  whenFull?: 'block' | 'spill';
  /** The memory queue's bound, in bytes of event JSON (default 32 MiB). */
  maxQueueBytes?: number;
  /** The spool's bound on disk (default 256 MiB): past it record() rejects with SpoolFullError. */
  maxSpoolBytes?: number;
  /** Retry waits: full jitter under min(cap, base · 2^attempt), Retry-After as a floor. */
  backoff?: BackoffPolicy;
  /** The application's own metrics: called for each batch sent, retry, rejection and spill. */
  metrics?: (metric: RecorderMetric) => void;
  /**
   * When the spool's writes reach the disk (default `batch`): `batch` fsyncs each group commit before
   * record() resolves; `interval` writes at once and fsyncs every `fsyncIntervalMs`; `none` leaves
   * it to the operating system. What `interval` and `none` risk: README, "Record".
   */
  fsync?: FsyncMode;
  /** With `fsync: 'interval'`: how often (default 1,000 ms). */
  fsyncIntervalMs?: number;
  /** A background check of a sample of the receipts, failures reported through `onFailure`. */
  checkReceipts?: CheckReceiptsOptions;
}

export type RecorderMetric =
  | { kind: 'sent'; events: number; bytes: number; ms: number; replayed: boolean }
  | { kind: 'retried'; attempt: number; delayMs: number; status: number; code: string }
  | { kind: 'rejected'; events: number; status: number; code: string }
  | { kind: 'spilled'; events: number };

export interface RecorderCounters {
  /** Events acknowledged by the service. */
  sent: number;
  /** Batch requests sent again after a transient failure. */
  retried: number;
  /** Events the service refused (reported by rejected()). */
  rejected: number;
  /** Events kept in the spool only because memory was full. */
  spilled: number;
}

/** An event the service refused: never retried (docs/contract.md §20). */
export interface RejectedEvent {
  event: NewEvent;
  error: AuditTrailError;
  /** The refusal's fields that name this event (`events[i].…`), empty when the whole batch was refused. */
  fields: FieldError[];
}
