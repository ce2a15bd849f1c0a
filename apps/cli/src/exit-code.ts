export enum ExitCode {
  /** Everything checked out (or was ingested). */
  Ok = 0,
  /** Verification failed (tampering found, something not confirmed), or ingest lines rejected. */
  Failed = 1,
  /** Bad input or usage: nothing was verified; for ingest also a refused key or an unreachable server. */
  BadInput = 2,
}
