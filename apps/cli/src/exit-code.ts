export enum ExitCode {
  /** Everything checked out. */
  Ok = 0,
  /** Verification failed: tampering found, or something could not be confirmed. */
  Failed = 1,
  /** Bad input or usage: nothing was verified. */
  BadInput = 2,
}
