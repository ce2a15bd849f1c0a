import { PersonalFields, StoredSecrets, storedErasedFields } from '@app/hashing';
import { EventJudgement } from '@app/verification';
import { VerificationResultView } from './dto/verification-result.view';

/** The one place a judgement of one event becomes its wire shape. */
export function toVerificationResult(
  event: { hash: string } & PersonalFields & StoredSecrets,
  judgement: EventJudgement,
  verifiedAt: Date,
): VerificationResultView {
  // Only the erased fields: the salts (derived from the seed) are not shown here, so none is derived.
  const erased = storedErasedFields(event);
  return {
    valid: judgement.errors.length === 0,
    errors: judgement.errors,
    eventHash: event.hash,
    computedHash: judgement.computedHash,
    chainIntact: judgement.chainIntact,
    verifiedAt: verifiedAt.toISOString(),
    // Version-2 events (docs/contract.md §17): the fields whose kept commitment stood in for the value.
    ...(erased && { erased }),
  };
}
