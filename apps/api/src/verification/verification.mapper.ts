import { EventJudgement } from '@app/verification';
import { VerificationResultView } from './dto/verification-result.view';

/** The one place a judgement of one event becomes its wire shape. */
export function toVerificationResult(
  event: { hash: string },
  judgement: EventJudgement,
  verifiedAt: Date,
): VerificationResultView {
  return {
    valid: judgement.hashMatches && judgement.chainIntact,
    errors: judgement.errors,
    eventHash: event.hash,
    computedHash: judgement.computedHash,
    chainIntact: judgement.chainIntact,
    verifiedAt: verifiedAt.toISOString(),
  };
}
