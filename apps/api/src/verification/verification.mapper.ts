import { EventEntity } from '@app/database';
import { VerificationResultView } from './dto/verification-result.view';
import { EventIntegrity } from './event-integrity';

/** The one place an integrity check becomes its wire shape. */
export function toVerificationResult(
  event: EventEntity,
  integrity: EventIntegrity,
  verifiedAt: Date,
): VerificationResultView {
  return {
    valid: integrity.hashMatches && integrity.chainIntact,
    errors: integrity.errors,
    eventHash: event.hash,
    computedHash: integrity.computedHash,
    chainIntact: integrity.chainIntact,
    verifiedAt: verifiedAt.toISOString(),
  };
}
