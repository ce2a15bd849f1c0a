/** The Verification result on the wire (spec §2, contract §4). */
export interface VerificationResultView {
  valid: boolean;
  errors: string[];
  eventHash: string;
  computedHash: string;
  chainIntact: boolean;
  verifiedAt: string;
}
