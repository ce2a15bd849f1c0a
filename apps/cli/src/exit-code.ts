export enum ExitCode {
  /**
   * Everything checked out: for the verifiers, every event (or proof) confirmed by a checkpoint
   * whose signature verifies with the given key, or with --internal-only, consistent (no signature
   * checked); for ingest, every line appended.
   */
  Ok = 0,
  /** Verification failed (tampering found, or something not confirmed by a signature), or ingest lines rejected. */
  Failed = 1,
  /** Bad input or usage: nothing was verified; for ingest also a refused key or an unreachable server. */
  BadInput = 2,
}
