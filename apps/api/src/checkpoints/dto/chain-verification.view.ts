export interface ChainVerificationError {
  /** The position the error is about (for a gap: the first missing position). */
  position: number;
  /** The event at that position, or null when it is missing. */
  eventId: string | null;
  message: string;
}

/** GET /v1/chain/:chainId/verify */
export interface ChainVerificationView {
  /** True exactly when errorCount is 0. */
  valid: boolean;
  chainId: string;
  checkedEvents: number;
  /** Position and hash of the last event walked (0 and 64 zeros when there was none). */
  lastPosition: number;
  lastHash: string;
  firstInvalidPosition: number | null;
  checkpointsChecked: number;
  /** At most MAX_REPORTED_ERRORS (100), in the order found. */
  errors: ChainVerificationError[];
  /** How many errors were found in all; more than errors.length when errorsTruncated. */
  errorCount: number;
  errorsTruncated: boolean;
  verifiedAt: string;
}
