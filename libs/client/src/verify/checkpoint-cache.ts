/** A chain checkpoint whose signature verified: the chain, its size, and the Merkle root it signs (hex). */
export interface VerifiedCheckpoint {
  chainId: string;
  size: number;
  hash: string;
}

/** A checkpoint whose signature (and witness quorum, and trusted-state consistency) verified once. */
export interface CheckedCheckpoint {
  checkpoint: VerifiedCheckpoint;
  note: string;
  witnessedBy: string[];
  /** With trustDir: the size trusted before this checkpoint was (null on first use). */
  trustedSize: number | null;
  /** Date.now() when it was last fetched (or found unchanged). */
  at: number;
}

/**
 * The checkpoints verifyReceipt verified, per chain and per set of trust options (keys, witnesses,
 * quorum, trustDir: a checkpoint verified under one set is not reused under another). A receipt at
 * a position the cached checkpoint covers is proven against it without fetching or verifying a
 * checkpoint again, for `maxAgeMs`; then the chain's checkpoint is fetched again (and only a note
 * that differs is verified again). Concurrent verifications of one chain share one fetch.
 */
export class CheckpointCache {
  private readonly entries = new Map<string, CheckedCheckpoint>();
  private readonly fetching = new Map<string, Promise<CheckedCheckpoint>>();

  /** At most this many chains × option sets are kept; the oldest entry goes first. */
  constructor(private readonly maxEntries = 10_000) {}

  /**
   * A checked checkpoint of `scope` (options and chain) covering `position`: the cached one while
   * it does and is younger than `maxAgeMs`, else one `fetch` gives (given the cached one, to reuse
   * when the note is unchanged). A failed fetch is not cached. The checkpoint returned may still
   * not cover `position` (a fresh one that does not): the caller checks.
   */
  async covering(
    scope: string,
    position: number,
    maxAgeMs: number,
    fetch: (cached: CheckedCheckpoint | null) => Promise<CheckedCheckpoint>,
  ): Promise<CheckedCheckpoint> {
    const cached = this.entries.get(scope) ?? null;
    if (cached && cached.checkpoint.size >= position && Date.now() - cached.at < maxAgeMs) return cached;
    const pending = this.fetching.get(scope);
    if (!pending) return this.fetchInto(scope, cached, fetch);
    // Another caller's fetch: its failure is this caller's too; its checkpoint serves when it covers.
    const shared = await pending;
    if (shared.checkpoint.size >= position) return shared;
    // Fetched for another receipt just now and short of this one: one more fetch of its own.
    return this.fetchInto(scope, shared, fetch);
  }

  private async fetchInto(
    scope: string,
    cached: CheckedCheckpoint | null,
    fetch: (cached: CheckedCheckpoint | null) => Promise<CheckedCheckpoint>,
  ): Promise<CheckedCheckpoint> {
    const started = fetch(cached).then((checked) => {
      this.entries.delete(scope);
      this.entries.set(scope, checked);
      if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      return checked;
    });
    this.fetching.set(scope, started);
    try {
      return await started;
    } finally {
      if (this.fetching.get(scope) === started) this.fetching.delete(scope);
    }
  }
}
